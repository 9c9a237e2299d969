package mapping

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// TeamOptions configure a Team.
type TeamOptions struct {
	ThreadID string
	RunID    string
	// Turn is Options.Turn for the run.
	Turn string
	// Name is the team's name; Strategy its strategy (router, parallel,
	// sequential), shown in the state.
	Name     string
	Strategy string
	V1       bool
	Now      func() int64
	// Input is the run's request: its state is the client's, and its
	// messages start the conversation.
	Input *agui.RunAgentInput
	// StateKey is the shared-state key the team owns; default "a2a".
	StateKey string
	// PreviousView is the team's part of the shared state as the thread's
	// last run left it (see Team for its shape); StateVersion its version.
	PreviousView json.RawMessage
	StateVersion int64
	// Reconcile starts the run with a MESSAGES_SNAPSHOT of Input's messages.
	Reconcile bool
	// Resumed: the run's RUN_STARTED is already in the journal (a run
	// continued after a restart); only its end is left to write.
	Resumed bool
	// Prior are the events the run already wrote to its journal, when it
	// is taken over after a restart (1.0 clients only: see Resumable).
	// The team's state is rebuilt from them, and each member that joins
	// gets its own events and the run's state changes as its Options.Prior.
	Prior []agui.Event
}

// Team produces the AG-UI run of a team: the run's own events (RUN_STARTED,
// the state snapshots, MESSAGES_SNAPSHOT, the terminal event) around the
// events of its members, each a plain Translator nested in the run and
// decorated as the member's (see Member). It is not safe for concurrent
// use.
//
// The team owns one key of the shared state (StateKey):
//
//	{"team": name, "strategy": …, "route": {…}, "members": {member: view}}
//
// where each member's view is what a single agent's run keeps under its
// own key (task, artifacts, files, pending interrupts), so a client sees
// every member's task side by side.
type Team struct {
	opt          TeamOptions
	doc          map[string]any
	members      map[string]*Member
	order        []string // members in the order they joined the run
	stateVersion int64
	started      bool
	done         bool
	lastStamp    int64 // the latest timestamp the run has shown
	// rest is the encoded size of State without the members of this run
	// (-1: to be measured), and restViews the number of other members'
	// views it holds; StateSize adds the running members' view sizes.
	rest, restViews int
}

// NewTeam returns the Team of one run.
func NewTeam(opt TeamOptions) *Team {
	t := &Team{opt: opt, members: map[string]*Member{}, stateVersion: opt.StateVersion, doc: map[string]any{},
		started: opt.Resumed, rest: -1}
	if len(opt.PreviousView) > 0 {
		var prev map[string]any
		if err := json.Unmarshal(opt.PreviousView, &prev); err == nil && prev != nil {
			t.doc = prev
		}
	}
	if len(opt.Prior) > 0 {
		t.resumeFrom(opt.Prior)
	}
	t.doc["team"] = opt.Name
	t.doc["strategy"] = opt.Strategy
	if _, ok := t.doc["members"].(map[string]any); !ok {
		t.doc["members"] = map[string]any{}
	}
	return t
}

// resumeFrom takes the team's part of the state, its version and its last
// timestamp from the events of a run taken over.
func (t *Team) resumeFrom(events []agui.Event) {
	t.started = true
	var state []byte
	for _, e := range events {
		switch e.(type) {
		case *agui.StateSnapshot, *agui.StateDelta:
			state, t.stateVersion = replayState(state, e)
		}
		t.lastStamp = max(t.lastStamp, agui.BaseOf(e).Timestamp)
	}
	var doc map[string]json.RawMessage
	var view map[string]any
	if json.Unmarshal(state, &doc) == nil && json.Unmarshal(doc[t.stateKey()], &view) == nil && view != nil {
		t.doc = view
	}
}

// Resumable reports whether a run taken over can go on from its journal:
// a 1.0 client's, whose events say which member each is from, while every
// member that joined is still going. An older client's run shows its
// members one after the other unattributed, so a member's translator
// could not be rebuilt from them; nor is a member's end (its outcome, the
// interrupts it left) rebuilt from its SUBAGENT_FINISHED or _ERROR.
func (t *Team) Resumable() bool {
	if !t.opt.V1 {
		return false
	}
	for _, e := range t.opt.Prior {
		switch e.(type) {
		case *agui.SubagentFinished, *agui.SubagentError:
			return false
		}
	}
	return true
}

// memberPrior is what member's translator resumes from: the run's
// opening, its state changes (a member's view sits in the team's state)
// and the member's own events.
func (t *Team) memberPrior(id string) (prior []agui.Event, joined bool) {
	for _, e := range t.opt.Prior {
		switch e.(type) {
		case *agui.RunStarted, *agui.StateSnapshot, *agui.StateDelta:
			prior = append(prior, e)
			continue
		}
		if agui.BaseOf(e).SubagentRunID == id {
			prior, joined = append(prior, e), true
		}
	}
	return prior, joined
}

func (t *Team) stateKey() string {
	if t.opt.StateKey != "" {
		return t.opt.StateKey
	}
	return StateKey
}

// SubagentRunID is the id of member's invocation in this run.
func (t *Team) SubagentRunID(member string) string {
	return nameUUID("subagent", t.opt.ThreadID, runKey(t.opt.RunID, t.opt.Turn), member)
}

// Member returns the translator of member's part of the run; opt holds
// what is particular to the member (its agent name, known tool calls, the
// task it resumes, …); the run-wide fields are the team's. Calling it
// again for the same member returns the same one.
func (t *Team) Member(name, description string, opt Options) *Member {
	if m := t.members[name]; m != nil {
		return m
	}
	opt.ThreadID, opt.RunID, opt.Turn, opt.V1, opt.Now, opt.Input = t.opt.ThreadID, t.opt.RunID, t.opt.Turn, t.opt.V1, t.opt.Now, t.opt.Input
	opt.ViewPath = "/" + escapePointer(t.stateKey()) + "/members/" + escapePointer(name)
	// Members of one run may see the same artifact or task ids.
	opt.IDScope = []string{"member", name}
	// Namespaced, so a team's resume routes each answer to its member's
	// task.
	opt.InterruptPrefix = name + ":"
	if v, ok := t.views()[name]; ok {
		opt.PreviousView, _ = json.Marshal(v)
	}
	opt.Prior, opt.Reconcile = nil, false
	id := t.SubagentRunID(name)
	// A member that had joined the run before a takeover goes on where its
	// events end; one that had not starts as it would have.
	prior, joined := t.memberPrior(id)
	if joined {
		opt.Prior = prior
	}
	m := &Member{Translator: New(opt), name: name, description: description,
		subagentRunID: id, v1: opt.V1, now: opt.Now, started: joined}
	t.members[name] = m
	t.order = append(t.order, name)
	t.rest = -1
	return m
}

func (t *Team) views() map[string]any {
	v, _ := t.doc["members"].(map[string]any)
	return v
}

// Start produces RUN_STARTED and the full state. It is idempotent.
func (t *Team) Start() []agui.Event {
	if t.started {
		return nil
	}
	t.started = true
	return openRun(t, t.opt.ThreadID, t.opt.RunID, t.opt.V1, t.opt.Reconcile)
}

func (t *Team) emitSnapshot(out []agui.Event) []agui.Event {
	return t.emit(out, &agui.StateSnapshot{Base: agui.Base{Metadata: t.stateMeta()}, Snapshot: t.State()})
}

// Pass hands on a member's events, giving its state changes the run's
// state version.
func (t *Team) Pass(events []agui.Event) []agui.Event {
	for _, e := range events {
		switch e := e.(type) {
		case *agui.StateDelta:
			t.stateVersion++
			e.Metadata = t.stateMeta()
		case *agui.MessagesSnapshot:
			// A member replaced a message of the client's (a tool result,
			// Options.ClientResults): the snapshot is the run's whole
			// conversation, the run's own event.
			e.Messages = t.Conversation()
			e.SubagentRunID = ""
		}
		t.inOrder(e)
	}
	return events
}

// inOrder keeps the run's timestamps from going back: a member's event
// made before the run's (held while no member had answered, or waiting
// for its turn) takes the time of the last one shown.
func (t *Team) inOrder(e agui.Event) {
	b := agui.BaseOf(e)
	if b.Timestamp == 0 {
		return
	}
	if b.Timestamp < t.lastStamp {
		b.Timestamp = t.lastStamp
	}
	t.lastStamp = b.Timestamp
}

// Route shows which member a router picked and why: a CUSTOM a2a.route
// event, and the choice in the team's state.
func (t *Team) Route(member string, score float64, reason string) []agui.Event {
	route := map[string]any{"member": member, "score": score, "reason": reason}
	raw, _ := json.Marshal(route)
	out := t.emit(nil, &agui.Custom{Name: "a2a.route", Value: raw})
	t.doc["route"] = route
	t.rest = -1
	t.stateVersion++
	val, _ := json.Marshal(route)
	return t.emit(out, &agui.StateDelta{Base: agui.Base{Metadata: t.stateMeta()},
		Delta: []agui.PatchOp{{Op: "add", Path: "/" + escapePointer(t.stateKey()) + "/route", Value: val}}})
}

// Done reports whether the run's terminal event was produced.
func (t *Team) Done() bool { return t.done }

// Fail ends the run with RUN_ERROR; members still open must have been
// ended first (their Fail).
func (t *Team) Fail(code, message string) []agui.Event {
	if t.done {
		return nil
	}
	out := t.Start()
	t.done = true
	return t.emit(out, &agui.RunError{Message: message, Code: code})
}

// Finish ends the run once every member that took part is done: with the
// interrupts of every member that waits for input (one interrupt outcome,
// ids namespaced per member), else with RUN_FINISHED if any member
// succeeded, else with RUN_ERROR (every member failed).
func (t *Team) Finish() []agui.Event {
	if t.done {
		return nil
	}
	out := t.Start()
	var interrupts []agui.Interrupt
	var pending []string
	var failures []string
	failed, cancelled := 0, 0
	for _, name := range t.order {
		o := t.members[name].Outcome()
		for _, p := range t.members[name].Interrupts() {
			interrupts = append(interrupts, p.Interrupt)
		}
		pending = append(pending, o.PendingToolCalls...)
		if o.Failed {
			failed++
			if o.Code == CodeCancelled {
				cancelled++
			}
			failures = append(failures, fmt.Sprintf("%s: %s", name, o.Message))
		}
	}
	t.done = true
	switch {
	case len(interrupts) > 0:
		t.stateVersion++
		out = t.emitSnapshot(out)
		out = t.emit(out, &agui.MessagesSnapshot{Messages: t.Conversation()})
		return t.emit(out, &agui.RunFinished{ThreadID: t.opt.ThreadID, RunID: t.opt.RunID,
			Outcome: &agui.Outcome{Type: agui.OutcomeInterrupt, Interrupts: interrupts}})
	case len(t.order) > 0 && cancelled == len(t.order):
		if t.opt.V1 {
			return t.emit(out, &agui.RunFinished{ThreadID: t.opt.ThreadID, RunID: t.opt.RunID,
				Outcome: &agui.Outcome{Type: agui.OutcomeCancelled}})
		}
		return t.emit(out, &agui.RunError{Message: "The task was cancelled.", Code: CodeCancelled})
	case len(t.order) > 0 && failed == len(t.order):
		code := CodeTeamFailed
		if len(t.order) == 1 {
			code = t.members[t.order[0]].Outcome().Code
		}
		return t.emit(out, &agui.RunError{Message: "Every member failed: " + strings.Join(failures, "; "), Code: code})
	}
	finished := &agui.RunFinished{ThreadID: t.opt.ThreadID, RunID: t.opt.RunID}
	if len(pending) > 0 && t.opt.V1 {
		finished.Outcome = &agui.Outcome{Type: agui.OutcomeSuccess, PendingToolCallIDs: pending}
	}
	return t.emit(out, finished)
}

// CodeTeamFailed is RUN_ERROR.code when every member of a team failed.
const CodeTeamFailed = agui.CodeTeamFailed

// Interrupts are the interrupts the run ended with, every member's.
func (t *Team) Interrupts() []PendingInterrupt {
	var out []PendingInterrupt
	for _, name := range t.order {
		for _, p := range t.members[name].Interrupts() {
			p.Member = name
			out = append(out, p)
		}
	}
	return out
}

// Conversation is the thread's messages after this run: the client's own,
// then each member's in the order the members joined the run.
func (t *Team) Conversation() []agui.Message {
	var client, run []agui.Message
	if t.opt.Input != nil {
		client = t.opt.Input.Messages
	}
	var keys []string // every member's: the client's messages went to all
	var frontend []ToolCallRef
	for _, name := range t.order {
		m := t.members[name]
		run = append(run, redactMessages(m.Messages(), m.opt.RedactKeys, m.frontendCalls)...)
		keys = append(keys, m.opt.RedactKeys...)
		frontend = append(frontend, m.frontendCalls...)
	}
	return redactMessages(conversation(client, run), keys, frontend)
}

// View is the team's part of the shared state now, with every member's
// current view.
func (t *Team) View() json.RawMessage {
	b, _ := json.Marshal(t.currentDoc())
	return b
}

func (t *Team) currentDoc() map[string]any {
	doc := maps.Clone(t.doc)
	views := maps.Clone(t.views())
	if views == nil {
		views = map[string]any{}
	}
	for _, name := range t.order {
		var v any
		if json.Unmarshal(t.members[name].View(), &v) == nil {
			views[name] = v
		}
	}
	doc["members"] = views
	return doc
}

// StateSize is the encoded size of State, without encoding it: the part
// no running member changes is measured once (again when a member joins
// or the route changes), and each running member keeps its view's size.
func (t *Team) StateSize() int {
	if t.rest < 0 {
		doc := maps.Clone(t.doc)
		views := maps.Clone(t.views())
		if views == nil {
			views = map[string]any{}
		}
		for _, name := range t.order {
			delete(views, name)
		}
		doc["members"] = views
		t.rest, t.restViews = len(sharedState(t.opt.Input, t.stateKey(), doc)), len(views)
	}
	n := t.rest
	for i, name := range t.order {
		if i > 0 || t.restViews > 0 {
			n++ // the comma
		}
		n += memberSize(name, t.members[name].viewSize())
	}
	return n
}

// State is the client's shared state with the team's key replaced by
// View.
func (t *Team) State() json.RawMessage {
	return sharedState(t.opt.Input, t.stateKey(), t.currentDoc())
}

// StateVersion is the version of the shared state after the run's last
// snapshot or delta.
func (t *Team) StateVersion() int64 { return t.stateVersion }

func (t *Team) stateMeta() map[string]any {
	return map[string]any{MetadataKey: map[string]any{"stateVersion": t.stateVersion}}
}

func (t *Team) emit(out []agui.Event, e agui.Event) []agui.Event {
	if t.opt.Now != nil {
		agui.BaseOf(e).Timestamp = t.opt.Now()
	}
	t.inOrder(e)
	return append(out, e)
}

// Member is one member's part of a team run: a plain Translator, nested in
// the team's run (Options.ViewPath), whose output Member decorates as the
// member's. Its events carry SubagentRunID (1.0 clients) and its messages
// the member's name; it opens with SUBAGENT_STARTED and ends with
// SUBAGENT_FINISHED or SUBAGENT_ERROR (1.0) instead of RUN_STARTED and a
// terminal event. The run's state snapshots, MESSAGES_SNAPSHOT and
// terminal event are the Team's.
type Member struct {
	*Translator
	name, description string
	// subagentRunID identifies this member's invocation in this run.
	subagentRunID string
	v1            bool
	now           func() int64
	started       bool
	outcome       MemberOutcome
	// alone: the member is the whole run (Alone), its events undecorated.
	alone bool
}

// Alone returns the translator of a run of one agent as a Member that is
// the run itself: its events, messages and interrupts are the
// Translator's, undecorated, with RUN_STARTED and the terminal event its
// own. The engine runs every run as members; this is the shape of a run
// that is one agent's rather than a team's.
func Alone(opt Options) *Member {
	return &Member{Translator: New(opt), started: true, alone: true}
}

// MemberOutcome is how a member's part of a team run ended.
type MemberOutcome struct {
	// Failed is set when the member's task failed, was rejected or
	// cancelled, or could not be reached; Code and Message say why.
	Failed  bool
	Code    string
	Message string
	// Interrupted: the member waits for input (its interrupts are the
	// Member's Interrupts()).
	Interrupted bool
	// PendingToolCalls are calls to the client's own tools the member
	// waits for.
	PendingToolCalls []string
}

// Start produces SUBAGENT_STARTED (1.0) and the member's view, whole, in
// the team's state. It is idempotent.
func (m *Member) Start() []agui.Event {
	if m.started {
		return nil
	}
	m.started = true
	var out []agui.Event
	if m.v1 {
		started := &agui.SubagentStarted{Name: m.name, Description: m.description}
		if m.now != nil {
			started.Timestamp = m.now()
		}
		out = m.decorate(out, started)
	}
	return m.decorate(out, m.Translator.Start()...)
}

// Translate is Translator.Translate as the member's.
func (m *Member) Translate(ev a2a.Event) []agui.Event {
	if m.Done() {
		return nil
	}
	return m.decorate(m.Start(), m.Translator.Translate(ev)...)
}

// Fail is Translator.Fail as the member's.
func (m *Member) Fail(code, message string) []agui.Event {
	if m.Done() {
		return nil
	}
	return m.decorate(m.Start(), m.Translator.Fail(code, message)...)
}

// Complete is Translator.Complete as the member's.
func (m *Member) Complete() []agui.Event {
	if m.Done() {
		return nil
	}
	return m.decorate(m.Start(), m.Translator.Complete()...)
}

// Outcome is how the member's part of the run ended, once Done.
func (m *Member) Outcome() MemberOutcome { return m.outcome }

// Messages are the messages the member's part created, named for the
// member; 1.0 messages are attributable like the events that made them: a
// MESSAGES_SNAPSHOT without the member's id would hand its messages to the
// parent agent (§6.5 rule 18).
func (m *Member) Messages() []agui.Message {
	out := m.Translator.Messages()
	if m.alone {
		return out
	}
	for i := range out {
		if out[i].Role == agui.RoleAssistant {
			out[i].Name = m.name
		}
		if m.v1 {
			out[i].SubagentRunID = m.subagentRunID
		}
	}
	return out
}

// Interrupts are the member's pending interrupts, attributed to its
// invocation for 1.0 clients.
func (m *Member) Interrupts() []PendingInterrupt {
	if m.alone {
		return m.Translator.Interrupts()
	}
	out := slices.Clone(m.Translator.Interrupts())
	if m.v1 {
		for i := range out {
			out[i].Interrupt.SubagentRunID = m.subagentRunID
		}
	}
	return out
}

// decorate appends the translator's events to out as the member's: the
// terminal event becomes the member's end, and every event carries the
// member's invocation (1.0) or, where a client shows it, its name.
func (m *Member) decorate(out []agui.Event, events ...agui.Event) []agui.Event {
	if m.alone {
		for _, e := range events {
			m.end(e) // records the outcome; the event stays the run's
		}
		if len(out) == 0 {
			return events
		}
		return append(out, events...)
	}
	for _, e := range events {
		switch e.(type) {
		case *agui.RunError, *agui.RunFinished:
			end := m.end(e)
			if end == nil {
				continue
			}
			if m.now != nil {
				agui.BaseOf(end).Timestamp = m.now()
			}
			e = end
		}
		b := agui.BaseOf(e)
		if m.v1 {
			b.SubagentRunID = m.subagentRunID
		}
		switch e := e.(type) {
		case *agui.TextMessageStart:
			e.Name = m.name
			b.Metadata = memberMeta(b.Metadata, m.name)
		case *agui.ToolCallStart, *agui.ActivitySnapshot:
			b.Metadata = memberMeta(b.Metadata, m.name)
		}
		out = append(out, e)
	}
	return out
}

// end records how the member's part ended and returns the event that
// says so to 1.0 clients (older ones get nothing: the Team's terminal
// event speaks for the run; a failure is a CUSTOM a2a.member_error event).
func (m *Member) end(terminal agui.Event) agui.Event {
	switch e := terminal.(type) {
	case *agui.RunError:
		m.outcome = MemberOutcome{Failed: true, Code: e.Code, Message: e.Message}
		if !m.v1 {
			raw, _ := json.Marshal(map[string]any{"member": m.name, "code": e.Code, "message": e.Message})
			return &agui.Custom{Name: "a2a.member_error", Value: raw}
		}
		return &agui.SubagentError{Message: e.Message, Code: e.Code}
	case *agui.RunFinished:
		outcome := &agui.SubagentOutcome{Type: agui.SubagentOutcomeSuccess}
		if o := e.Outcome; o != nil {
			switch o.Type {
			case agui.OutcomeInterrupt:
				m.outcome.Interrupted = true
				outcome = &agui.SubagentOutcome{Type: agui.SubagentOutcomeSuspended}
				for _, in := range o.Interrupts {
					outcome.InterruptIDs = append(outcome.InterruptIDs, in.ID)
				}
			case agui.OutcomeCancelled:
				m.outcome = MemberOutcome{Failed: true, Code: CodeCancelled, Message: "The task was cancelled."}
				if !m.v1 {
					return nil
				}
				return &agui.SubagentError{Message: m.outcome.Message, Code: CodeCancelled}
			}
			m.outcome.PendingToolCalls = o.PendingToolCallIDs
		}
		if !m.v1 {
			return nil
		}
		return &agui.SubagentFinished{Outcome: outcome}
	}
	return nil
}

// memberMeta adds the member's name under the bridge's metadata key, for
// clients that do not read subagentRunId.
func memberMeta(meta map[string]any, name string) map[string]any {
	out := maps.Clone(meta)
	if out == nil {
		out = map[string]any{}
	}
	ours, _ := out[MetadataKey].(map[string]any)
	ours = maps.Clone(ours)
	if ours == nil {
		ours = map[string]any{}
	}
	ours["member"] = name
	out[MetadataKey] = ours
	return out
}
