package tasks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// Strategy says how a user turn reaches a team's members.
type Strategy string

// Team strategies (TeamSpec.Strategy).
const (
	StrategyRouter     Strategy = "router"
	StrategyParallel   Strategy = "parallel"
	StrategySequential Strategy = "sequential"
)

// TeamSpec is one configured team: several agents behind one endpoint.
type TeamSpec struct {
	Name        string
	Description string
	// Strategy is StrategyRouter (one member per run), StrategyParallel
	// (every member at once) or StrategySequential (a pipeline).
	Strategy Strategy
	// Members are names of configured agents, in order (a sequential
	// team's pipeline order; a router's tie-break order).
	Members []string
	// StateKey is the shared-state key the team owns; default "a2a".
	StateKey string
	// Observer is told what the team's runs do (metrics); nil: nothing.
	Observer RunObserver
}

// teamAgentSpec is the AgentSpec a team run's shell uses: its name, and the
// widest of its members' run timeout (each member also has its own).
func (c *agentCatalog) teamAgentSpec(t *TeamSpec) *AgentSpec {
	spec := &AgentSpec{Name: t.Name, StateKey: t.StateKey, RequestTimeout: 30 * time.Second, Observer: t.Observer}
	for _, name := range t.Members {
		m := c.agents[name]
		spec.RunTimeout = max(spec.RunTimeout, m.RunTimeout)
		spec.RequestTimeout = max(spec.RequestTimeout, m.RequestTimeout)
		if spec.MaxInlineBytes == 0 || (m.MaxInlineBytes > 0 && m.MaxInlineBytes < spec.MaxInlineBytes) {
			spec.MaxInlineBytes = m.MaxInlineBytes
		}
		// Server-wide settings: the same for every member.
		spec.RedactKeys, spec.MaxStateBytes = m.RedactKeys, m.MaxStateBytes
		spec.MaxRunBytes, spec.MaxThreadJournalBytes = m.MaxRunBytes, m.MaxThreadJournalBytes
	}
	return spec
}

// teamRun is the part of a driver that runs a team: its members' upstream
// work (one goroutine each, I/O only) and the merging of their events into
// the run, on the driver's goroutine, which alone touches the translators.
type teamRun struct {
	d    *driver
	spec *TeamSpec
	// specs are the agents of the catalog the team run started with
	// (a reload does not change a run in progress).
	specs map[string]*AgentSpec
	tm    *mapping.Team
	v1    bool

	msgs    chan memberMsg
	members []*memberRun // in the order they joined the run
	running int          // members whose upstream goroutine has not ended

	// lane is the member whose events older clients see now: they allow
	// one open message at a time, so members are shown one after the
	// other; the others' events wait in their member's buffer.
	lane *memberRun

	// held are failure events of members that failed before any member's
	// agent answered (d.reached; shown once the run is accepted).
	held     []*memberRun
	firstErr error

	routed string // the member a router picked
	stage  int    // a sequential team's member running now

	mu              sync.Mutex
	cancelRequested bool
}

// newTeamRun prepares a team run on d.
func newTeamRun(d *driver, spec *TeamSpec, cat *agentCatalog) *teamRun {
	return &teamRun{d: d, spec: spec, specs: cat.agents, v1: d.in.IsV1(), msgs: make(chan memberMsg, 64)}
}

// setup builds the run's Team; the driver's shell does the rest.
func (t *teamRun) setup() runOutput {
	d := t.d
	t.tm = mapping.NewTeam(mapping.TeamOptions{
		ThreadID:     d.in.ThreadID,
		RunID:        d.in.RunID,
		Turn:         d.turn(),
		Name:         t.spec.Name,
		Strategy:     string(t.spec.Strategy),
		V1:           t.v1,
		Now:          func() int64 { return time.Now().UnixMilli() },
		Input:        d.in,
		StateKey:     t.spec.StateKey,
		PreviousView: viewIn(d.thread.State, t.spec.StateKey),
		StateVersion: d.thread.StateVersion,
		Reconcile:    d.plan.reconcile,
		Resumed:      d.plan.takeover,
	})
	return t.tm
}

// run drives the team's members to the end of the run (each member's
// upstream has its own stop).
func (t *teamRun) run(ctx context.Context, _ context.CancelCauseFunc) {
	d := t.d
	switch {
	case d.plan.resume != nil:
		t.resume(ctx)
	case t.spec.Strategy == StrategyRouter:
		name, score, reason := t.route(ctx)
		t.routed = name
		t.join(ctx, name, nil, d.plan.parts, true)
		t.pending(t.tm.Route(name, score, reason))
	case t.spec.Strategy == StrategySequential:
		t.join(ctx, t.spec.Members[0], nil, d.plan.parts, true)
	default:
		for _, name := range t.spec.Members {
			t.join(ctx, name, nil, d.plan.parts, true)
		}
	}
	for t.running > 0 {
		msg := <-t.msgs
		t.handle(ctx, msg)
	}
	if !t.d.reached && t.firstErr != nil && d.reject(t.firstErr) {
		return // StartRun answers with an HTTP error: no member was reachable
	}
	t.flushHeld()
	t.drainLane()
	if errors.Is(context.Cause(ctx), errShutdown) {
		d.suspend()
		return
	}
	d.emit(t.finishEvents())
}

// resume sends each member its answers, to its own task.
func (t *teamRun) resume(ctx context.Context) {
	d := t.d
	names := make([]string, 0, len(d.plan.resume.members))
	for name := range d.plan.resume.members {
		names = append(names, name)
	}
	// In the team's order, so the run reads the same every time.
	slices.SortFunc(names, func(a, b string) int {
		return slices.Index(t.spec.Members, a) - slices.Index(t.spec.Members, b)
	})
	// d.plan.parts opens with every member's answers (the resume plan's parts);
	// each member gets its own answers and what the user wrote next.
	userParts := d.plan.parts[len(d.plan.resume.parts):]
	for _, name := range names {
		if t.spec.Strategy == StrategyRouter {
			t.routed = name
		}
		if t.spec.Strategy == StrategySequential {
			t.stage = slices.Index(t.spec.Members, name)
		}
		t.join(ctx, name, d.plan.resume.members[name], userParts, len(userParts) > 0)
	}
}

// accept is the first answer of any member: the run is on.
func (t *teamRun) accept() {
	if t.d.answered() {
		t.flushHeld()
	}
}

// flushHeld shows the failures held while no member had answered.
func (t *teamRun) flushHeld() {
	held := t.held
	t.held = nil
	for _, m := range held {
		events := m.buffer
		m.buffer = nil
		t.deliver(m, events)
	}
}

// memberDone moves a sequential pipeline on, or records where it paused.
func (t *teamRun) memberDone(ctx context.Context, m *memberRun) {
	if t.spec.Strategy != StrategySequential || errors.Is(context.Cause(ctx), errShutdown) {
		return
	}
	// An interrupted member pauses the pipeline: the resume of its
	// interrupt continues it from there (resume sets stage).
	if o := m.tr.Outcome(); o.Interrupted || o.Failed {
		return
	}
	if t.stage+1 < len(t.spec.Members) {
		t.stage++
		text := strings.TrimSpace(m.answer.String())
		if text == "" {
			text = lastAssistantText(m.tr.Messages())
		}
		var parts []*a2a.Part
		if text != "" {
			parts = []*a2a.Part{a2a.NewTextPart(text)}
		}
		if len(parts) == 0 {
			t.fail(m, errors.New("the member gave no answer to pass on"))
			return
		}
		t.join(ctx, t.spec.Members[t.stage], nil, parts, false)
	}
}

func lastAssistantText(msgs []agui.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if c := msgs[i].Content; msgs[i].Role == agui.RoleAssistant && c != nil && strings.TrimSpace(c.Text) != "" {
			return c.Text
		}
	}
	return ""
}

// noteArtifacts keeps the text of a member's artifacts, the input of a
// sequential pipeline's next member.
func (t *teamRun) noteArtifacts(m *memberRun, ev a2a.Event) {
	if t.spec.Strategy != StrategySequential {
		return
	}
	var arts []*a2a.Artifact
	switch e := ev.(type) {
	case *a2a.ArtifactUpdate:
		if !e.Append {
			// A replacement: what came before is not the answer.
			m.answer.Reset()
		}
		arts = []*a2a.Artifact{e.Artifact}
	case *a2a.Task:
		if len(e.Artifacts) > 0 {
			m.answer.Reset()
			arts = e.Artifacts
		}
	}
	for _, a := range arts {
		if a == nil {
			continue
		}
		for _, p := range a.Parts {
			if p != nil {
				m.answer.WriteString(p.Text())
			}
		}
	}
}

// deliver routes a member's events to the run: at once for 1.0 clients,
// which tell members apart by subagentRunId; through the lane for older
// ones, one member's part after another.
func (t *teamRun) deliver(m *memberRun, events []agui.Event) {
	if len(events) == 0 {
		return
	}
	if !t.d.reached {
		m.buffer = append(m.buffer, events...)
		if !slices.Contains(t.held, m) {
			t.held = append(t.held, m)
		}
		return
	}
	if t.v1 {
		t.emit(events)
		return
	}
	if t.lane == nil {
		t.lane = m
	}
	if t.lane != m {
		m.buffer = append(m.buffer, events...)
		return
	}
	t.emit(events)
	if m.tr.Done() {
		t.lane = nil
		t.drainLane()
	}
}

// drainLane gives the lane to the next member with events waiting, showing
// whole the parts of members that are done.
func (t *teamRun) drainLane() {
	for t.lane == nil {
		var next *memberRun
		for _, m := range t.members {
			if len(m.buffer) > 0 {
				next = m
				break
			}
		}
		if next == nil {
			return
		}
		events := next.buffer
		next.buffer = nil
		t.emit(events)
		if !next.tr.Done() {
			t.lane = next
		}
	}
}

// pending emits run-level events (the router's choice) in lane order.
func (t *teamRun) pending(events []agui.Event) {
	if t.d.reached && (t.v1 || t.lane == nil) {
		t.emit(events)
		return
	}
	// Before the run is accepted, or while a member holds the lane: the
	// first member's buffer carries them, ahead of its own events.
	if len(t.members) > 0 {
		m := t.members[0]
		m.buffer = append(events, m.buffer...)
		if !t.d.reached && !slices.Contains(t.held, m) {
			t.held = append(t.held, m)
		}
	}
}

// emit writes events to the run, opening it first.
func (t *teamRun) emit(events []agui.Event) {
	out := t.tm.Start()
	t.d.emit(append(out, t.tm.Pass(events)...))
}

// finishEvents ends the run: every member's part is over.
func (t *teamRun) finishEvents() []agui.Event {
	if t.spec.Strategy == StrategySequential && len(t.members) > 0 {
		last := t.members[len(t.members)-1]
		if o := last.tr.Outcome(); o.Failed && !t.tm.Done() {
			return append(t.tm.Start(), t.tm.Fail(o.Code, fmt.Sprintf("the pipeline stopped at %s: %s", last.name, o.Message))...)
		}
	}
	return append(t.tm.Start(), t.tm.Finish()...)
}

// record writes what a team run learned to the thread (the release's
// update), once some member's agent took part in it.
func (t *teamRun) record(th *Thread, interrupts []mapping.PendingInterrupt) {
	if !t.d.reached {
		return
	}
	if th.Members == nil {
		th.Members = map[string]*MemberRecord{}
	}
	for _, m := range t.members {
		rec := th.Members[m.name]
		if rec == nil {
			rec = &MemberRecord{}
			th.Members[m.name] = rec
		}
		learnTask(m.tr.Translator, &rec.ContextID, &rec.TaskID, &rec.TaskState, &rec.TaskArtifacts)
		mergeToolCalls(th, m.tr.ToolCalls())
	}
	th.Interrupts = interrupts
	if t.d.plan.resume != nil {
		th.Resolved = appendResolved(th.Resolved, t.d.plan.resume.resolved)
	}
	th.Messages = recentMessages(t.tm.Conversation(), t.d.spec.MaxRunBytes)
	if !t.d.stateRejected {
		th.State = t.tm.State()
		th.StateVersion = t.tm.StateVersion()
	}
	if t.routed != "" {
		th.Routed = t.routed
	}
	for _, m := range t.members {
		if m.sendsInput && m.reached {
			th.SeenMessageIDs = appendSeen(th.SeenMessageIDs, t.d.plan.newIDs)
			break
		}
	}
}

// cut ends the run where it stands with code: each member still going
// first ends its part (closing what it has open, which a client's verifier
// wants closed before the run's end), then the run. A run suspended by a
// shutdown tells its readers so.
func (t *teamRun) cut(code, message string) []agui.Event {
	var out []agui.Event
	for _, m := range t.members {
		if !m.tr.Done() {
			out = append(out, t.tm.Pass(m.tr.Fail(code, message))...)
		}
	}
	return append(out, t.tm.Fail(code, message)...)
}
