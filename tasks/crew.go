package tasks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// soloTeam is the crew of a run of agent alone: a pipeline of one member,
// the agent, whose translation is the run's (aloneOutput).
func soloTeam(spec *AgentSpec) *TeamSpec {
	return &TeamSpec{Name: spec.Name, Strategy: StrategySequential, Members: []string{spec.Name}, StateKey: spec.StateKey}
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

// crew is the A2A side of every run: its members — one agent's run has
// one, a team's one per member it reaches — each with its own upstream
// conversation and translator, scheduled by the strategy (a single agent
// is a pipeline of one). Members that run one at a time (an agent alone, a
// router's pick, a pipeline's stage) talk to their agent on the driver's
// goroutine; a parallel team's members each have a goroutine doing I/O
// only, reporting on msgs. Translators, the lane and the record are
// touched by the driver's goroutine alone.
type crew struct {
	d    *driver
	spec *TeamSpec
	// specs are the agents of the catalog the run started with (a reload
	// does not change a run in progress).
	specs map[string]*AgentSpec
	out   output
	v1    bool

	msgs    chan memberMsg
	members []*memberRun // in the order they joined the run
	queue   []*memberRun // members waiting to run on the driver's goroutine
	running int          // parallel members whose goroutine has not ended

	// lane is the member whose events older clients see now: they allow
	// one open message at a time, so members are shown one after the
	// other; the others' events wait in their member's buffer.
	lane *memberRun

	// held are failure events of members that failed before any member's
	// agent answered (d.reached; shown once the run is accepted).
	held     []*memberRun
	firstErr error

	routed  string // the member a router picked
	stage   int    // a sequential team's member running now
	settled bool   // the run's end was emitted (or handed to StartRun)
}

// newCrew prepares the members' side of d's run for team (soloTeam for an
// agent's own run).
func newCrew(d *driver, team *TeamSpec, cat *agentCatalog, alone bool) *crew {
	c := &crew{d: d, spec: team, specs: cat.agents, v1: d.in.IsV1(), msgs: make(chan memberMsg, 64)}
	base := mapping.Options{
		ThreadID:     d.in.ThreadID,
		RunID:        d.in.RunID,
		Turn:         d.turn(),
		V1:           c.v1,
		Now:          func() int64 { return time.Now().UnixMilli() },
		Input:        d.in,
		Agent:        d.spec.Name,
		Prior:        d.plan.prior,
		Reconcile:    d.plan.reconcile,
		StateKey:     team.StateKey,
		PreviousView: viewIn(d.thread.State, team.StateKey),
		StateVersion: d.thread.StateVersion,
	}
	if alone {
		c.out = &aloneOutput{base: base}
		return c
	}
	c.out = teamOutput{mapping.NewTeam(mapping.TeamOptions{
		ThreadID: base.ThreadID, RunID: base.RunID, Turn: base.Turn, Name: team.Name, Strategy: string(team.Strategy),
		V1: base.V1, Now: base.Now, Input: base.Input, StateKey: team.StateKey, PreviousView: base.PreviousView,
		StateVersion: base.StateVersion, Reconcile: base.Reconcile, Resumed: d.plan.takeover, Prior: d.plan.prior,
	})}
	return c
}

// run drives the members to the end of the run.
func (c *crew) run(ctx context.Context) {
	d := c.d
	switch {
	case d.plan.takeover:
		if !c.reattach(ctx) {
			return
		}
	case d.plan.resume != nil:
		c.resume(ctx)
	case len(d.plan.parts) == 0:
		// Nothing new to tell any agent: the run ends at once.
	case c.spec.Strategy == StrategyRouter:
		name, score, reason := c.route(ctx)
		c.routed = name
		c.join(ctx, name, nil, d.plan.parts, true)
		c.pending(c.out.route(name, score, reason))
	default:
		first := c.spec.Members
		if c.spec.Strategy == StrategySequential {
			first = first[:1]
		}
		for _, name := range first {
			c.join(ctx, name, nil, d.plan.parts, true)
		}
	}
	for len(c.queue) > 0 || c.running > 0 {
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue = c.queue[1:]
			c.converse(m, func(msg memberMsg) bool {
				c.handle(ctx, msg)
				return !m.tr.Done()
			})
			continue
		}
		c.handle(ctx, <-c.msgs)
	}
	c.settle(ctx)
}

// resume sends each member its answers, to its own task.
func (c *crew) resume(ctx context.Context) {
	d := c.d
	names := make([]string, 0, len(d.plan.resume.members))
	for name := range d.plan.resume.members {
		names = append(names, name)
	}
	// In the team's order, so the run reads the same every time.
	slices.SortFunc(names, func(a, b string) int {
		return slices.Index(c.spec.Members, a) - slices.Index(c.spec.Members, b)
	})
	// d.plan.parts opens with every member's answers (the resume plan's
	// parts); each member gets its own answers and what the user wrote next.
	userParts := d.plan.parts[len(d.plan.resume.parts):]
	for _, name := range names {
		c.at(name)
		c.join(ctx, name, d.plan.resume.members[name], userParts, len(userParts) > 0)
	}
}

// at notes member name taking part now: a router's pick, a pipeline's stage.
func (c *crew) at(name string) {
	switch c.spec.Strategy {
	case StrategyRouter:
		c.routed = name
	case StrategySequential:
		c.stage = max(slices.Index(c.spec.Members, name), 0)
	}
}

// reattach continues a run taken over after a restart, each member that
// followed a task subscribing to it again; false: the run ended instead.
func (c *crew) reattach(ctx context.Context) bool {
	d := c.d
	if len(d.plan.prior) > 0 && isTerminalEvent(d.plan.prior[len(d.plan.prior)-1]) {
		// The run had ended; only the release is missing.
		d.outcome, d.code = outcomeOf(d.plan.prior[len(d.plan.prior)-1])
		d.moveTo(phaseReleased)
		d.svc.release(d.thread, nil)
		return false
	}
	if !c.out.resumable() {
		c.abandon("the bridge restarted during this team's run; its members' tasks go on: ask again to see their answers")
		return false
	}
	tasks := d.thread.Active.Tasks
	if len(tasks) == 0 {
		c.abandon("the bridge stopped before the agent named its task, so its answer cannot be followed; please ask again")
		return false
	}
	// The agents named their tasks, so they took the run's message.
	d.reached = true
	d.moveTo(phaseRunning)
	d.log.Info("took over the run")
	for _, name := range c.spec.Members {
		if id := tasks[name]; id != "" {
			c.at(name)
			c.join(ctx, name, &resumePlan{taskID: a2a.TaskID(id), subscribe: true, results: d.thread.Active.Results}, nil, true)
		}
	}
	return true
}

// abandon ends a run that cannot go on.
func (c *crew) abandon(why string) {
	c.settled = true
	c.d.emit(c.cut(agui.CodeServerShutdown, why))
}

// settle ends the run once every member's part is over (or the run was
// cut): a run no member's agent answered goes back to StartRun as an HTTP
// error; one the bridge is leaving is suspended; any other ends. Once.
func (c *crew) settle(ctx context.Context) {
	if c.settled {
		return
	}
	c.settled = true
	d := c.d
	if !d.reached && c.firstErr != nil && d.reject(c.firstErr) {
		return // StartRun answers with an HTTP error: no member was reachable
	}
	c.flushHeld()
	c.drainLane()
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errShutdown):
		d.suspend()
	case errors.Is(cause, errLeaseLost):
		d.leave(cause)
	default:
		d.emit(c.endEvents())
	}
}

// over reports whether every member's part is over and none waits to run.
func (c *crew) over() bool {
	if len(c.queue) > 0 {
		return false
	}
	for _, m := range c.members {
		if !m.tr.Done() {
			return false
		}
	}
	return true
}

// flushHeld shows the failures held while no member had answered.
func (c *crew) flushHeld() {
	held := c.held
	c.held = nil
	for _, m := range held {
		events := m.buffer
		m.buffer = nil
		c.deliver(m, events)
	}
}

// memberDone moves a sequential pipeline on, or records where it paused.
func (c *crew) memberDone(ctx context.Context, m *memberRun) {
	if c.spec.Strategy != StrategySequential || errors.Is(context.Cause(ctx), errShutdown) {
		return
	}
	// An interrupted member pauses the pipeline: the resume of its
	// interrupt continues it from there (resume sets stage).
	if o := m.tr.Outcome(); o.Interrupted || o.Failed || c.stage+1 >= len(c.spec.Members) {
		return
	}
	c.stage++
	text := cmp.Or(strings.TrimSpace(m.answer.String()), lastAssistantText(m.tr.Messages()))
	if text == "" {
		c.fail(m, errors.New("the member gave no answer to pass on"))
		return
	}
	c.join(ctx, c.spec.Members[c.stage], nil, []*a2a.Part{a2a.NewTextPart(text)}, false)
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
// pipeline's next member.
func (c *crew) noteArtifacts(m *memberRun, ev a2a.Event) {
	if c.spec.Strategy != StrategySequential || len(c.spec.Members) < 2 {
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

// deliver routes a member's events to the run: held until some member's
// agent answered; then at once for 1.0 clients, which tell members apart
// by subagentRunId, and through the lane for older ones, one member's part
// after another.
func (c *crew) deliver(m *memberRun, events []agui.Event) {
	if len(events) == 0 {
		return
	}
	if !c.d.reached {
		m.buffer = append(m.buffer, events...)
		if !slices.Contains(c.held, m) {
			c.held = append(c.held, m)
		}
		return
	}
	if c.v1 || len(c.spec.Members) == 1 {
		c.emit(events)
		return
	}
	if c.lane == nil {
		c.lane = m
	}
	if c.lane != m {
		m.buffer = append(m.buffer, events...)
		return
	}
	c.emit(events)
	if m.tr.Done() {
		c.lane = nil
		c.drainLane()
	}
}

// drainLane gives the lane to the next member with events waiting, showing
// whole the parts of members that are done.
func (c *crew) drainLane() {
	for c.lane == nil {
		var next *memberRun
		for _, m := range c.members {
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
		c.emit(events)
		if !next.tr.Done() {
			c.lane = next
		}
	}
}

// pending emits run-level events (the router's choice) in lane order.
func (c *crew) pending(events []agui.Event) {
	if c.d.reached && (c.v1 || c.lane == nil) {
		c.emit(events)
		return
	}
	// Before the run is accepted, or while a member holds the lane: the
	// first member's buffer carries them, ahead of its own events.
	if len(c.members) > 0 {
		m := c.members[0]
		m.buffer = append(events, m.buffer...)
		if !c.d.reached && !slices.Contains(c.held, m) {
			c.held = append(c.held, m)
		}
	}
}

// emit writes events to the run, opening it first.
func (c *crew) emit(events []agui.Event) {
	open := c.out.start() // first: a member's events follow the run's start
	events = c.out.pass(events)
	if len(open) > 0 {
		events = append(open, events...)
	}
	c.d.emit(events)
}

// endEvents end the run: every member's part is over.
func (c *crew) endEvents() []agui.Event {
	if c.spec.Strategy == StrategySequential && len(c.members) > 0 {
		last := c.members[len(c.members)-1]
		if o := last.tr.Outcome(); o.Failed && !c.out.Done() {
			return append(c.out.start(), c.out.Fail(o.Code, fmt.Sprintf("the pipeline stopped at %s: %s", last.name, o.Message))...)
		}
	}
	return append(c.out.start(), c.out.finish()...)
}

// cut ends the run where it stands with code: each member still going
// first ends its part (closing what it has open, which a client's verifier
// wants closed before the run's end), then the run.
func (c *crew) cut(code, message string) []agui.Event {
	var out []agui.Event
	for _, m := range c.members {
		if !m.tr.Done() {
			out = append(out, c.out.pass(m.tr.Fail(code, message))...)
		}
	}
	return append(out, c.out.Fail(code, message)...)
}

// record writes what the run learned to the thread (the release's update),
// once some member's agent took part in it.
func (c *crew) record(th *Thread, interrupts []mapping.PendingInterrupt) {
	d := c.d
	if th.Members == nil {
		th.Members = map[string]*MemberRecord{}
	}
	for _, m := range c.members {
		rec := th.Members[m.name]
		if rec == nil {
			rec = &MemberRecord{}
			th.Members[m.name] = rec
		}
		learnTask(rec, m.tr.Translator)
	}
	if !d.reached {
		return
	}
	for _, m := range c.members {
		mergeToolCalls(th, m.tr.ToolCalls())
	}
	th.Interrupts = interrupts
	if d.plan.resume != nil {
		th.Resolved = appendResolved(th.Resolved, d.plan.resume.resolved)
	}
	th.Messages = mapping.RecentMessages(c.out.Conversation(), d.spec.MaxRunBytes)
	if !d.stateRejected {
		th.State = c.out.State()
		th.StateVersion = c.out.StateVersion()
	}
	th.FrontendCalls = c.out.FrontendCalls()
	if c.routed != "" {
		th.Routed = c.routed
	}
	for _, m := range c.members {
		if m.sentInput {
			th.SeenMessageIDs = appendSeen(th.SeenMessageIDs, d.plan.newIDs)
			break
		}
	}
}

// learnTask records in rec what tr learned of its agent's task: the
// context, the task and its state, and the task's artifacts shown so far
// (forgotten when the task changed).
func learnTask(rec *MemberRecord, tr *mapping.Translator) {
	if c := tr.ContextID(); c != "" {
		rec.ContextID = c
	}
	if id := tr.TaskID(); id != "" {
		if string(id) != rec.TaskID {
			rec.TaskArtifacts = nil
		}
		rec.TaskID = string(id)
		for _, a := range tr.ShownArtifacts() {
			if !slices.Contains(rec.TaskArtifacts, string(a)) {
				rec.TaskArtifacts = append(rec.TaskArtifacts, string(a))
			}
		}
	}
	if st := tr.TaskState(); st != "" {
		rec.TaskState = string(st)
	}
}

// mergeToolCalls adds the server tool calls a run showed to the thread's,
// replacing an earlier record of the same call (it may have been reported
// now).
func mergeToolCalls(th *Thread, refs []mapping.ToolCallRef) {
	for _, ref := range refs {
		i := slices.IndexFunc(th.ToolCalls, func(r mapping.ToolCallRef) bool { return r.ToolCallID == ref.ToolCallID })
		if i < 0 {
			th.ToolCalls = append(th.ToolCalls, ref)
		} else {
			th.ToolCalls[i] = ref
		}
	}
}
