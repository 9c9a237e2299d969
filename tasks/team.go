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

	// reached: some member's agent answered; held are failure events of
	// members that failed before that (shown once the run is accepted).
	reached  bool
	held     []*memberRun
	firstErr error

	routed string // the member a router picked
	stage  int    // a sequential team's member running now

	mu              sync.Mutex
	cancelRequested bool
}

// memberRun is one member's part of a team run.
type memberRun struct {
	name  string
	spec  *AgentSpec
	tr    *mapping.Member
	agent Agent

	// What to send: parts to taskID in contextID (a new task when taskID
	// is ""), with metadata (a resume's), or cancel the task instead.
	contextID string
	taskID    a2a.TaskID
	parts     []*a2a.Part
	metadata  map[string]any
	cancel    bool
	// sendsInput: the message carries the user's new input.
	sendsInput bool

	ctx    context.Context
	stop   context.CancelCauseFunc
	buffer []agui.Event // events waiting for the lane (older clients)
	// answer is the text of the member's artifacts, a sequential
	// pipeline's input for the next member.
	answer  strings.Builder
	reached bool
	ended   bool // the upstream goroutine ended
	// cancelSent: CancelTask went out for the member's task.
	cancelSent bool
}

// memberMsg is what a member's upstream goroutine reports (m nil: a
// cancel was requested).
type memberMsg struct {
	m   *memberRun
	ev  a2a.Event
	err error // the member's upstream failed
	end bool  // the goroutine ended
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

// join adds a member to the run and starts its upstream work.
func (t *teamRun) join(ctx context.Context, name string, plan *resumePlan, parts []*a2a.Part, sendsInput bool) {
	d := t.d
	spec := t.specs[name]
	rec := d.thread.Members[name]
	m := &memberRun{name: name, spec: spec, parts: parts, sendsInput: sendsInput}
	if rec != nil {
		m.contextID = rec.ContextID
	}
	opt := mapping.Options{
		Agent:          name,
		StatusText:     spec.StatusText,
		InterruptTTL:   spec.InterruptTTL,
		KnownToolCalls: d.thread.ToolCalls,
		StateKey:       t.spec.StateKey,
		MaxInlineBytes: spec.MaxInlineBytes,
		RedactKeys:     spec.RedactKeys,
		MaxStateBytes:  t.d.spec.MaxStateBytes,
		A2UIActivities: a2uiActivities(d.in),
	}
	if plan != nil {
		m.contextID, m.taskID, m.metadata, m.cancel = plan.contextID, plan.taskID, plan.metadata, plan.cancel
		m.parts = append(slices.Clone(plan.parts), parts...)
		opt.ResumedTask = plan.taskID
		if !plan.cancel {
			opt.SentResults = plan.results
		}
		if d.plan.resume != nil {
			opt.ClientResults = d.plan.resume.echoed // the whole request's, made by the plan
		}
		if rec != nil && rec.TaskID == string(plan.taskID) {
			for _, id := range rec.TaskArtifacts {
				opt.EarlierArtifacts = append(opt.EarlierArtifacts, a2a.ArtifactID(id))
			}
		}
	}
	m.tr = t.tm.Member(name, t.description(ctx, name), opt)
	m.ctx, m.stop = context.WithCancelCause(ctx)
	if spec.RunTimeout > 0 {
		var stop context.CancelFunc
		m.ctx, stop = context.WithTimeoutCause(m.ctx, spec.RunTimeout, errRunTimeout)
		go func() { <-m.ctx.Done(); stop() }()
	}
	t.members = append(t.members, m)
	t.running++
	t.deliver(m, m.tr.Start())
	go t.converse(m)
}

// description is the member's card description, for SUBAGENT_STARTED.
func (t *teamRun) description(ctx context.Context, name string) string {
	if ag, err := t.specs[name].Connect(ctx); err == nil {
		if c, ok := ag.(interface{ Card() *a2a.AgentCard }); ok && c.Card() != nil {
			return c.Card().Description
		}
	}
	return ""
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
	if !t.reached && t.firstErr != nil && d.reject(t.firstErr) {
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

// handle takes one report of a member's upstream work.
func (t *teamRun) handle(ctx context.Context, msg memberMsg) {
	m := msg.m
	if m == nil {
		for _, m := range t.members {
			t.cancelIfAsked(m)
		}
		return
	}
	switch {
	case msg.end:
		t.running--
		m.ended = true
		if !m.tr.Done() {
			m.stop(nil)
			t.fail(m, errors.New("the agent's stream ended before the task did"))
		}
	case msg.err != nil:
		t.fail(m, msg.err)
	default:
		if !m.reached {
			m.reached = true
			t.accept()
		}
		size := eventSize(msg.ev)
		t.d.budget.receive(size)
		code, message := eventTooLarge(m.name, m.spec.MaxEventBytes, size)
		if code == "" {
			// The budget is the run's: once it is spent, every member that
			// sends more ends its part with run_too_large.
			code, message = t.d.budget.spent(t.d.spec.Name)
		}
		if code != "" {
			// The member's part ends with the limit's code; the others go on.
			m.stop(nil)
			t.cancelTask(m)
			t.deliver(m, m.tr.Fail(code, message))
			break
		}
		t.noteArtifacts(m, msg.ev)
		out := m.tr.Translate(msg.ev)
		if code, message := stateTooLarge(m.name, t.d.spec.MaxStateBytes, t.tm.StateSize); code != "" {
			// As for a single agent: the state events that broke the
			// limit are not shown, the thread keeps its last state, and
			// this member's part ends.
			t.d.stateRejected = true
			t.deliver(m, slices.DeleteFunc(out, isStateEvent))
			m.stop(nil)
			t.cancelTask(m)
			t.deliver(m, m.tr.Fail(code, message))
			break
		}
		t.deliver(m, out)
		t.cancelIfAsked(m)
	}
	if m.tr.Done() {
		m.stop(nil)
		t.memberDone(ctx, m)
	}
}

// fail ends a member's part with its upstream error (a timeout cancels
// its task). A member failing before any member was reached is held: if
// none is, the run is an HTTP error instead of a stream.
func (t *teamRun) fail(m *memberRun, err error) {
	if m.tr.Done() {
		return
	}
	cause := context.Cause(m.ctx)
	if errors.Is(cause, errShutdown) {
		return // the run is suspended; members stay as they are
	}
	code, message, timedOut := upstreamFailure(m.name, cause, err)
	if timedOut {
		t.cancelTask(m)
	} else if t.firstErr == nil {
		t.firstErr = err
	}
	events := m.tr.Fail(code, message)
	if !t.reached {
		m.buffer = append(m.buffer, events...)
		t.held = append(t.held, m)
		return
	}
	t.deliver(m, events)
}

// accept is the first answer of any member: the run is on.
func (t *teamRun) accept() {
	if t.reached {
		return
	}
	t.reached = true
	t.d.reached = true
	if o := t.d.spec.Observer; o != nil {
		o.FirstEvent(time.Since(t.d.started))
	}
	t.d.accept()
	t.flushHeld()
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
	if !t.reached {
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
	if t.reached && (t.v1 || t.lane == nil) {
		t.emit(events)
		return
	}
	// Before the run is accepted, or while a member holds the lane: the
	// first member's buffer carries them, ahead of its own events.
	if len(t.members) > 0 {
		m := t.members[0]
		m.buffer = append(events, m.buffer...)
		if !t.reached && !slices.Contains(t.held, m) {
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

// converse does a member's A2A work and reports every event until the
// member's part settles; it runs on its own goroutine and touches nothing
// but m's agent and the channel.
func (t *teamRun) converse(m *memberRun) {
	defer func() { t.msgs <- memberMsg{m: m, end: true} }()
	ctx := m.ctx
	report := func(ev a2a.Event) bool {
		select {
		case t.msgs <- memberMsg{m: m, ev: ev}:
			return true
		case <-ctx.Done():
			return false
		}
	}
	fail := func(err error) {
		select {
		case t.msgs <- memberMsg{m: m, err: err}:
		case <-ctx.Done():
			t.msgs <- memberMsg{m: m, err: context.Cause(ctx)}
		}
	}
	agent, err := m.spec.Connect(ctx)
	if err != nil {
		fail(err)
		return
	}
	m.agent = agent
	var idle *time.Timer
	op := &opening{cancel: m.taskID}
	if !m.cancel {
		msg := a2a.NewUserMessage(m.contextID, m.taskID, m.parts...)
		msg.Metadata = m.metadata
		op = &opening{msg: msg, in: t.d.in, stateKey: t.spec.StateKey}
		if m.spec.IdleTimeout > 0 {
			idle = time.AfterFunc(m.spec.IdleTimeout, func() { m.stop(errIdleTimeout) })
			defer idle.Stop()
		}
	}
	// Every call of the member's part carries the A2UI version it
	// activates, and its message the client's capabilities (tasks/a2ui.go).
	ctx = activateA2UI(ctx, m.spec, agent, t.d.in, op.msg)
	for ev, err := range upstream(ctx, agent, m.spec, op) {
		if err != nil {
			fail(err)
			return
		}
		if idle != nil {
			idle.Reset(m.spec.IdleTimeout)
		}
		if !report(ev) {
			return
		}
		if _, _, settled := progress(ev); settled {
			return
		}
		if _, reply := ev.(*a2a.Message); reply {
			return
		}
	}
}

// cancelTask asks a member's agent to cancel its task (a timeout).
func (t *teamRun) cancelTask(m *memberRun) {
	if id := m.tr.TaskID(); id != "" && m.agent != nil {
		cancelAbandoned(t.d.detached(), m.agent, m.spec.RequestTimeout, id, t.d.log.With("member", m.name, "task_id", string(id)))
	}
}

// requestCancel is a cancel request for the running team run: every
// member's task is cancelled, those not yet named as soon as they are.
func (t *teamRun) requestCancel() {
	t.mu.Lock()
	t.cancelRequested = true
	t.mu.Unlock()
	go func() {
		select {
		case t.msgs <- memberMsg{}:
		case <-t.d.done:
		}
	}()
}

// cancelIfAsked sends CancelTask for a member whose task is known once a
// cancel was requested; it runs on the driver's goroutine.
func (t *teamRun) cancelIfAsked(m *memberRun) {
	t.mu.Lock()
	asked := t.cancelRequested
	t.mu.Unlock()
	if !asked || m.cancelSent || m.tr.Done() || m.agent == nil || m.tr.TaskID() == "" {
		return
	}
	m.cancelSent = true
	id, agent, detached := m.tr.TaskID(), m.agent, t.d.detached()
	go func() {
		task, err := callAgent(detached, m.spec.RequestTimeout, func(c context.Context) (*a2a.Task, error) { return agent.CancelTask(c, id) })
		if err != nil {
			t.d.log.Warn("cancel member task", "member", m.name, "task_id", id, "err", err)
			return
		}
		if task != nil && task.Status.State == a2a.TaskStateCanceled {
			// The agent says it is cancelled: its stream need not.
			select {
			case t.msgs <- memberMsg{m: m, ev: task}:
			case <-m.ctx.Done():
			}
			m.stop(nil)
		}
	}()
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
