package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// Causes set on a run's context, so the driver can tell why it ended.
var (
	errRunTimeout    = errors.New("run timeout")
	errIdleTimeout   = errors.New("no progress from the agent")
	errFollowStopped = errors.New("the resume run took over the task")
	// errCancelGrace: the agent answered CancelTask with a cancelled task
	// but its stream did not say so within the grace period.
	errCancelGrace = errors.New("the agent cancelled the task")
)

// driver runs one AG-UI run: it sends the new input to the agent, follows
// the A2A task to a terminal or interrupted state, translates every A2A
// event and appends the AG-UI events to the thread's journal.
type driver struct {
	// releaseSlot ends the run's admission (Options.Admission); nil for a
	// run taken over from an earlier process.
	releaseSlot func()
	// stateRejected says the agent grew the state past its limit: the
	// thread keeps the state it had.
	stateRejected bool
	// budget counts the run against spec.MaxRunBytes (the driver's
	// goroutine alone touches it).
	budget runBudget
	// journaled is the bytes of every event the run journaled, added to
	// its thread's JournalBytes at the end (compact.go).
	journaled int64

	svc    *Service
	spec   *AgentSpec
	agent  Agent
	thread *Thread
	in     *agui.RunAgentInput
	plan   runPlan
	log    *slog.Logger

	tr      *mapping.Translator
	out     runOutput // tr, or the team's Team (set up by setup)
	guard   *agui.Guard
	journal *journalWriter

	// accepted hands StartRun the outcome of the first upstream call: nil
	// once the agent answered, or the error that stopped it. Once StartRun
	// stops waiting, failures go into the stream instead.
	mu       sync.Mutex
	phase    phase // d.mu; see phase.go
	accepted chan error
	done     chan struct{} // closed when the driver goroutine ends
	reached  bool          // the agent accepted the message
	// sentInput is set once the agent accepted the message carrying the
	// run's input; only then are the user's messages marked as seen.
	sentInput  bool
	sendsInput bool // the run's first upstream call carries its input

	idle *time.Timer

	// stop ends the run's upstream work with a cause (set once drive
	// starts); cancelled is the agent's answer to CancelTask once it says
	// the task is cancelled, and grace the timer that ends the run with it.
	stop      context.CancelCauseFunc
	cancelled *a2a.Task
	grace     *time.Timer
	// taskNoted is set once the run's task was recorded on the thread
	// (ActiveTaskID); bg runs that and the cancel it may send, and is
	// waited for before the thread is released.
	taskNoted bool
	bg        sync.WaitGroup
	// finishing is closed when the run releases its thread.
	finishing chan struct{}
	// leasing is the goroutine renewing the run's lease (shared stores),
	// which ends once finishing is closed; leaseLost is set when another
	// instance adopted the run.
	leasing   sync.WaitGroup
	leaseLost bool

	// shutdownTail is what in-process readers get instead of a journaled
	// terminal event once the run is suspended (phaseSuspended): the thread
	// keeps it as active, for the next process to take over.
	shutdownTail []agui.Envelope

	// live is what readers in this process follow; seq is the number of
	// the run's last event. storeFailed: the journal lost a batch and the
	// run is being failed.
	live        *liveLog
	seq         int64
	storeFailed bool

	// body is what runs between the driver's preamble and its release:
	// soloRun{d}, or team when the run is a team's (its members do the
	// A2A work; tr stays nil). team is also what a cancel of the thread
	// reaches, to cancel every member's task.
	body runBody
	team *teamRun

	// started is when the run began (its duration and time to first event
	// count from it); span is its trace span, the parent of its A2A calls.
	// outcome and code say how it ended once its terminal event was
	// emitted; observed is set once the end was reported (observeEnd).
	started  time.Time
	span     trace.Span
	outcome  string
	code     string
	observed bool
	// taskLogged: d.log names the run's task (nameTask).
	taskLogged bool
}

// runOutput is the translation a run's events come from, as the parts of
// the driver a team run shares see it: a single agent's
// mapping.Translator, or a team's mapping.Team.
type runOutput interface {
	Done() bool
	Fail(code, message string) []agui.Event
	Interrupts() []mapping.PendingInterrupt
}

// runBody is what differs between a single agent's run and a team's. The
// driver does the rest the same for both: the journal, the lease,
// timeouts, panics, limits, the phase and the release.
type runBody interface {
	// setup builds the run's output before the run starts.
	setup() runOutput
	// run does the run's A2A work until the run is done; cancel ends it
	// with a cause.
	run(ctx context.Context, cancel context.CancelCauseFunc)
	// cut is what readers of a run suspended by a shutdown are told last.
	cut(code, message string) []agui.Event
	// record writes what the run learned into the thread's record (the
	// release's update); interrupts are those the run ended with.
	record(th *Thread, interrupts []mapping.PendingInterrupt)
}

// soloRun is the body of a single agent's run: the driver's own upstream
// path (upstream.go) and translator.
type soloRun struct{ d *driver }

func (s soloRun) cut(code, message string) []agui.Event { return s.d.tr.Fail(code, message) }

// runTeam makes d a team's run.
func (d *driver) runTeam(t *teamRun) {
	d.team, d.body = t, t
}

// runPlan is what a run is to do, decided before it starts — by StartRun,
// or by takeOver for a run continued after a restart — and only read by
// the engine.
type runPlan struct {
	// parts are the message for the agent (a resume's answers first, then
	// the results of the client's own tools, then the user's new input);
	// newIDs the user message ids among them, seen once the agent takes
	// them.
	parts  []*a2a.Part
	newIDs []string
	// resume is set when the run answers interrupts.
	resume *resumePlan
	// continueTask is the task the message continues (one waiting for the
	// client's tool results); "" starts a new task in the context.
	continueTask a2a.TaskID
	// reconcile: the client lacks part of the thread's conversation; the
	// run starts with a MESSAGES_SNAPSHOT of it.
	reconcile bool
	// caller is the Authorization header of the request that started the
	// run, for agents configured to forward it (a2a.Credentials). It is
	// kept in memory only: a run taken over after a restart has none.
	caller string
	// takeover: the run's driver is gone (a restart) and this one
	// continues it; prior are the events it journaled.
	takeover bool
	prior    []agui.Event
}

// newDriver returns the driver of a run whose events follow seq after.
func newDriver(s *Service, spec *AgentSpec, th *Thread, in *agui.RunAgentInput, after int64, plan runPlan) *driver {
	d := &driver{svc: s, spec: spec, thread: th, in: in, plan: plan, accepted: make(chan error, 1), done: make(chan struct{}),
		live: newLiveLog(in.ThreadID, after), seq: after, finishing: make(chan struct{})}
	d.body = soloRun{d}
	return d
}

// begin starts the run's span, a child of ctx's (the request's trace, when
// it carried a traceparent), and counts the run as started.
func (d *driver) begin(ctx context.Context, kind trace.SpanKind) {
	d.started = time.Now()
	d.budget.limit = d.spec.MaxRunBytes // a team's spec is known only now
	_, d.span = d.svc.tracer.Start(ctx, "bridge.run", trace.WithSpanKind(kind), trace.WithAttributes(
		attribute.String("bridge.agent", d.spec.Name),
		attribute.String("agui.thread_id", d.in.ThreadID),
		attribute.String("agui.run_id", d.in.RunID),
		attribute.Bool("bridge.run.takeover", d.plan.takeover),
	))
	if o := d.spec.Observer; o != nil {
		o.RunStarted()
	}
}

// observeEnd reports the run's end and ends its span, once. An empty
// outcome takes what the run recorded: its terminal event's outcome, or
// suspended when the bridge shut down under it.
func (d *driver) observeEnd(outcome, code string) {
	if d.observed || d.span == nil {
		return
	}
	d.observed = true
	if outcome == "" {
		outcome, code = d.outcome, d.code
		if d.phaseNow() == phaseSuspended {
			outcome, code = OutcomeSuspended, ""
		}
	}
	if outcome == "" {
		// No terminal event reached the journal (the store failed).
		outcome, code = OutcomeError, agui.CodeInternal
	}
	if o := d.spec.Observer; o != nil {
		o.RunEnded(outcome, code, time.Since(d.started))
	}
	d.span.SetAttributes(attribute.String("bridge.run.outcome", outcome))
	if code != "" {
		d.span.SetAttributes(attribute.String("bridge.run.error_code", code))
		d.span.SetStatus(codes.Error, code)
	}
	d.span.End()
}

// nameTask adds the run's task and context to its logs (once) and span.
// Only the driver's goroutine calls it, before any goroutine it starts
// reads d.log.
func (d *driver) nameTask(id a2a.TaskID, contextID string) {
	if d.taskLogged {
		return
	}
	d.taskLogged = true
	d.log = d.log.With("task_id", string(id), "context_id", contextID)
	d.span.SetAttributes(attribute.String("a2a.task_id", string(id)), attribute.String("a2a.context_id", contextID))
}

// detached is a context for calls the run makes after its own context may
// have ended (cancelling the task): the bridge's lifetime, the run's span.
func (d *driver) detached() context.Context {
	return trace.ContextWithSpan(context.WithoutCancel(a2a.WithCallerAuthorization(d.svc.ctx, d.plan.caller)), d.span)
}

// close ends the driver's journal and its live log: readers get the
// shutdown notice after the events when the run was suspended.
func (d *driver) close() {
	d.stopFinishing()
	d.leasing.Wait()
	d.journal.close()
	d.live.end(d.shutdownTail)
}

// stopFinishing closes finishing, once.
func (d *driver) stopFinishing() {
	select {
	case <-d.finishing:
	default:
		close(d.finishing)
	}
}

// accept tells a still-waiting StartRun that the agent answered.
func (d *driver) accept() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.to(phaseRunning) {
		d.accepted <- nil
	}
}

// reject hands a failure before the agent answered to a still-waiting
// StartRun, which answers with an HTTP error; the thread is released first,
// so a client retrying at once is not refused as busy. It reports false
// when StartRun already returned: the failure must then go into the stream.
func (d *driver) reject(err error) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.phase != phaseStarting {
		return false
	}
	d.svc.release(d.thread, nil)
	d.to(phaseRejected)
	// Counted before StartRun answers, so the run is in the metrics by
	// the time its client reads the HTTP error.
	d.observeEnd(OutcomeError, a2a.Classify(err).Code)
	d.accepted <- err
	return true
}

// stopWaiting is StartRun giving up waiting. If the run decided meanwhile,
// it returns that decision (nil, or the failure to answer with).
func (d *driver) stopWaiting() (decided bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.to(phaseRunning) {
		select {
		case err = <-d.accepted:
		default:
		}
		return true, err
	}
	return false, nil
}

func (d *driver) setup() {
	d.log = d.svc.log.With("agent", d.spec.Name, "thread_id", d.in.ThreadID, "run_id", d.in.RunID)
	if sc := d.span.SpanContext(); sc.IsValid() {
		// Logs and traces of a run find each other.
		d.log = d.log.With("trace_id", sc.TraceID().String())
	}
	d.guard = newGuard(d.in)
	for _, e := range d.plan.prior {
		_ = d.guard.Check(e) // what the journal holds is what clients hold
	}
	d.journal = newJournalWriter(d.svc.ctx, d.svc.store, d.thread.Key, d.svc.storeOutage, d.log, d.live.publish)
	d.out = d.body.setup()
}

// setup builds the run's translator.
func (s soloRun) setup() runOutput {
	d := s.d
	if id := d.thread.Active.TaskID; id != "" {
		d.nameTask(a2a.TaskID(id), d.thread.ContextID)
	}
	d.tr = mapping.New(mapping.Options{
		ThreadID:         d.in.ThreadID,
		RunID:            d.in.RunID,
		Turn:             d.turn(),
		Agent:            d.spec.Name,
		V1:               d.in.IsV1(),
		StatusText:       d.spec.StatusText,
		Now:              func() int64 { return time.Now().UnixMilli() },
		Input:            d.in,
		InterruptTTL:     d.spec.InterruptTTL,
		KnownToolCalls:   d.thread.ToolCalls,
		ResumedTask:      d.resumedTask(),
		SentResults:      d.sentResults(),
		ClientResults:    d.clientResults(),
		EarlierArtifacts: d.earlierArtifacts(),
		Prior:            d.plan.prior,
		Reconcile:        d.plan.reconcile,
		StateKey:         d.spec.StateKey,
		PreviousView:     viewIn(d.thread.State, d.spec.StateKey),
		StateVersion:     d.thread.StateVersion,
		MaxInlineBytes:   d.spec.MaxInlineBytes,
		RedactKeys:       d.spec.RedactKeys,
		A2UIActivities:   a2uiActivities(d.in),
	})
	return d.tr
}

// viewIn extracts the bridge's key from a stored shared state.
func viewIn(state json.RawMessage, key string) json.RawMessage {
	if key == "" {
		key = mapping.StateKey
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(state, &m) != nil {
		return nil
	}
	return m[key]
}

func (d *driver) resumedTask() a2a.TaskID {
	if d.plan.resume == nil {
		return ""
	}
	return d.plan.resume.taskID
}

// sentResults are the tool-call answers this run sends the agent; a resume
// that cancels the task sends none.
func (d *driver) sentResults() []mapping.SentToolResult {
	if d.plan.takeover {
		return d.thread.Active.Results
	}
	if d.plan.resume == nil || d.plan.resume.cancel {
		return nil
	}
	return d.plan.resume.results
}

// turn tells the run's ids from those of the thread's previous run when
// the client reused its runId (CopilotKit resumes with the interrupted
// run's): where the run's journal starts, which a takeover knows too.
func (d *driver) turn() string {
	if d.thread.LastRunID == "" || d.thread.LastRunID != d.in.RunID {
		return ""
	}
	return strconv.FormatInt(d.thread.Active.After, 10)
}

// clientResults are the tool messages the client sent for the calls this
// run's resume approves (see resumePlan.echoed).
func (d *driver) clientResults() map[string]string {
	if d.plan.takeover {
		// The request holds them: a tool message for a call the run
		// answers got past checkToolResults only as such an echo.
		calls := map[string]bool{}
		for _, r := range d.thread.Active.Results {
			calls[r.Call.ToolCallID] = true
		}
		var echoed map[string]string
		for _, m := range d.in.Messages {
			if m.Role == agui.RoleTool && calls[m.ToolCallID] {
				if echoed == nil {
					echoed = map[string]string{}
				}
				if _, dup := echoed[m.ToolCallID]; !dup {
					echoed[m.ToolCallID] = m.ID
				}
			}
		}
		return echoed
	}
	if d.plan.resume == nil {
		return nil
	}
	return d.plan.resume.echoed
}

// earlierArtifacts are the artifacts of the thread's current task shown by
// earlier runs, when this run continues that task.
func (d *driver) earlierArtifacts() []a2a.ArtifactID {
	task := d.thread.Active.TaskID
	if d.plan.resume != nil {
		task = string(d.plan.resume.taskID)
	}
	if task == "" || task != d.thread.TaskID {
		return nil
	}
	out := make([]a2a.ArtifactID, len(d.thread.TaskArtifacts))
	for i, id := range d.thread.TaskArtifacts {
		out[i] = a2a.ArtifactID(id)
	}
	return out
}

// lifecycle is the run's goroutine: it sets the run up, runs body, and
// whatever way body ends, closes the journal and the live log, reports the
// run's end, drops it from the registry, frees its admission slot and
// tells Service.Close it is done — in that order, the reverse of setup.
func (d *driver) lifecycle(body func()) {
	defer d.svc.wg.Done()
	defer d.releaseRun()
	defer close(d.done)
	defer d.unregister()
	defer d.observeEnd("", "")
	d.setup()
	defer d.close()
	body()
}

// nothingToDo finishes a run that has nothing new to tell the agent.
func (d *driver) nothingToDo() {
	d.emit(d.tr.Complete()) // releases the thread before RUN_FINISHED
}

// releaseRun frees the run's admission slot, once: when the run ends
// (finalize, before its terminal event is journaled, so a client that
// reads the end can start its next run at once), or when its goroutine
// ends without finalizing (a run suspended by the shutdown). Only the
// driver's goroutine calls it.
func (d *driver) releaseRun() {
	if d.releaseSlot != nil {
		d.releaseSlot()
		d.releaseSlot = nil
	}
}

// unregister drops the driver from the service's registry, unless the run
// was suspended: its readers still ask it for the shutdown notice.
func (d *driver) unregister() {
	// A run left to the instance that adopted it is followed through the
	// journal that instance writes, not through this driver.
	if d.phaseNow() != phaseSuspended || d.leaseLost {
		d.svc.unregister(d)
	}
}

func (d *driver) drive() {
	// The run's A2A calls are spans of the run.
	ctx, cancel := context.WithCancelCause(trace.ContextWithSpan(a2a.WithCallerAuthorization(d.svc.ctx, d.plan.caller), d.span))
	defer cancel(nil)
	ctx = d.activateA2UI(ctx) // every call of the run (tasks/a2ui.go)
	d.armStop(cancel)
	defer d.disarm()
	if d.svc.lease > 0 {
		d.leasing.Add(1)
		go d.keepLease(cancel)
	}
	if d.spec.RunTimeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, d.spec.RunTimeout, errRunTimeout)
		defer stop()
	}
	if d.spec.IdleTimeout > 0 {
		d.idle = time.AfterFunc(d.spec.IdleTimeout, func() { cancel(errIdleTimeout) })
		defer d.idle.Stop()
	}
	defer func() {
		if p := recover(); p != nil {
			d.log.Error("run panicked", "panic", p, "stack", string(debug.Stack()))
			d.emit(d.out.Fail(agui.CodeInternal, "the bridge failed while running this request"))
		}
		d.finish()
	}()

	d.body.run(ctx, cancel)
}

// run sends the run's message to the agent (or continues, cancels or
// re-authorizes its task) and delivers what comes back.
func (s soloRun) run(ctx context.Context, cancel context.CancelCauseFunc) {
	d := s.d
	if d.plan.takeover {
		d.reattach(ctx)
		return
	}
	if d.plan.resume != nil && d.plan.resume.cancel {
		d.cancelInterrupted(ctx)
		return
	}
	if d.plan.resume != nil && d.plan.resume.auth {
		d.resumeAuth(ctx, cancel)
		return
	}
	// From here the run's message goes to the agent: once it answers, the
	// input counts as seen.
	d.sendsInput = true
	msg := a2a.NewUserMessage(d.thread.ContextID, d.plan.continueTask, d.plan.parts...)
	if d.plan.resume != nil {
		// The answer goes to the interrupted task, in its context.
		msg = a2a.NewUserMessage(d.plan.resume.contextID, d.plan.resume.taskID, d.plan.parts...)
		msg.Metadata = d.plan.resume.metadata
	}
	d.addA2UICapabilities(msg)
	op := &opening{msg: msg, in: d.in, stateKey: d.spec.StateKey, brokeOff: func(err error) {
		d.log.Warn("agent stream broke; following the task by polling", "err", err)
	}}
	var f *follower
	for ev, err := range upstream(ctx, d.agent, d.spec, op) {
		if f != nil {
			if err != nil || !f.push(ctx, ev) {
				break
			}
			continue
		}
		if err != nil {
			d.failUpstream(ctx, err)
			return
		}
		if !d.deliver(ev) {
			if d.tr.TaskState() != a2a.TaskStateAuthRequired {
				return
			}
			// The run ended waiting for a credential, but the task may
			// go on by itself once it arrives out of band: keep reading
			// the stream for the resume run (bounded by the run timeout).
			if d.idle != nil {
				d.idle.Stop()
			}
			op.streamOnly = true
			f = d.svc.startFollowing(d.thread.Key, d.tr.TaskID(), func() { cancel(errFollowStopped) })
		}
	}
	if f != nil {
		d.svc.stopFollowing(d.thread.Key, f)
	}
}

// converse delivers what upstream yields until the run is done; an
// upstream error ends the run (failUpstream).
func (d *driver) converse(ctx context.Context, op *opening) {
	for ev, err := range upstream(ctx, d.agent, d.spec, op) {
		if err != nil {
			d.failUpstream(ctx, err)
			return
		}
		if !d.deliver(ev) {
			return
		}
	}
}

// failUpstream ends the run with its upstream's error: before the agent
// answered, a still-waiting StartRun answers with an HTTP error instead of
// a stream (reject); else the stream ends (end).
func (d *driver) failUpstream(ctx context.Context, err error) {
	if !d.reached && ctx.Err() == nil && d.reject(err) {
		return
	}
	d.end(ctx, err)
}

// resumeAuth answers an AUTH_REQUIRED interrupt. The task may have gone
// on by itself meanwhile (the credential arrived out of band): what the
// follower collected is shown first, and if the task is done the answer is
// not sent. If it still waits, the user's answer is forwarded; an agent
// that cannot take a message now (its execution is still open) is followed
// until the task moves on.
func (d *driver) resumeAuth(ctx context.Context, cancel context.CancelCauseFunc) {
	id := d.plan.resume.taskID
	// Waiting for a sign-in is not a stalled agent: only the run timeout
	// bounds it.
	if d.idle != nil {
		d.idle.Stop()
	}
	if f := d.svc.takeFollower(d.thread.Key, id); f != nil {
		backlog, live := f.handoff()
		defer f.release()
		for _, ev := range backlog {
			if !d.deliver(ev) {
				return
			}
		}
		if live != nil {
			if d.forward(ctx) {
				return
			}
			for ev := range live {
				if !d.deliver(ev) {
					return
				}
			}
		}
		d.follow(ctx)
		return
	}
	// No live stream (a restart, or an agent without streaming): ask the
	// agent where the task is.
	task, err := callAgent(ctx, d.spec.RequestTimeout, func(c context.Context) (*a2a.Task, error) { return d.agent.GetTask(c, id) })
	if err != nil {
		d.failUpstream(ctx, err)
		return
	}
	if !d.deliver(task) {
		return
	}
	if task.Status.State == a2a.TaskStateAuthRequired && d.forward(ctx) {
		return
	}
	d.follow(ctx)
}

// forward sends the resume's answer to the task and follows the reply; it
// reports false, having delivered nothing, when the agent refuses it.
func (d *driver) forward(ctx context.Context) bool {
	msg := a2a.NewUserMessage(d.plan.resume.contextID, d.plan.resume.taskID, d.plan.parts...)
	msg.Metadata = d.plan.resume.metadata
	d.addA2UICapabilities(msg)
	accepted := false
	for ev, err := range upstream(ctx, d.agent, d.spec, &opening{msg: msg}) {
		if err != nil {
			if !accepted {
				d.log.Info("the agent did not take the answer to its auth request; following the task", "err", err)
				return false
			}
			d.end(ctx, err)
			return true
		}
		accepted = true
		d.sentInput = true
		if !d.deliver(ev) {
			break
		}
	}
	return true
}

// cancelInterrupted answers a resume that cancels every interrupt: the
// A2A task is cancelled and the run ends cancelled.
func (d *driver) cancelInterrupted(ctx context.Context) {
	d.converse(ctx, &opening{cancel: d.plan.resume.taskID})
}

// deliver translates one upstream event; it reports whether to go on.
func (d *driver) deliver(ev a2a.Event) bool {
	if !d.reached {
		d.reached = true
		d.sentInput = d.sentInput || d.sendsInput
		if o := d.spec.Observer; o != nil {
			o.FirstEvent(time.Since(d.started))
		}
		d.accept()
	}
	size := eventSize(ev)
	d.budget.receive(size)
	code, msg := eventTooLarge(d.spec.Name, d.spec.MaxEventBytes, size)
	if code == "" {
		code, msg = d.budget.spent(d.spec.Name)
	}
	if code != "" {
		d.refuseEvent(code, msg)
		return false
	}
	out := d.tr.Translate(ev)
	if code, msg := stateTooLarge(d.spec.Name, d.spec.MaxStateBytes, out, d.tr.State); code != "" {
		// Everything but the state goes out; the thread keeps the state
		// it had.
		d.stateRejected = true
		d.emit(slices.DeleteFunc(out, isStateEvent))
		d.refuseEvent(code, msg)
		return false
	}
	if len(out) > 0 && d.idle != nil {
		d.idle.Reset(d.spec.IdleTimeout)
	}
	if id := d.tr.TaskID(); id != "" && !d.taskNoted && d.thread.Active.TaskID == "" {
		d.taskNoted = true
		// Before the goroutine below, which logs, starts.
		d.nameTask(id, d.tr.ContextID())
		d.bg.Add(1)
		go func() {
			defer d.bg.Done()
			// After the run's first events are stored: on a durable store
			// this record costs a commit, which the client's first event
			// should not queue behind.
			select {
			case <-d.live.published():
			case <-d.finishing:
			}
			d.noteTask(id)
		}()
	}
	d.emit(out)
	if code, msg := d.budget.spent(d.spec.Name); code != "" && !d.tr.Done() {
		d.refuseEvent(code, msg)
		return false
	}
	return !d.tr.Done()
}

// noteTask records the task the agent just named as the thread's active
// task, so a cancel request can reach it; if a cancel was requested before
// the task was known, the run sends it now. Of the cancel request and this
// record, the one written second sees the other and sends CancelTask, so
// it goes out exactly once.
func (d *driver) noteTask(id a2a.TaskID) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(d.svc.ctx), 10*time.Second)
	defer cancel()
	ours := false
	cur, _, err := d.svc.updateThread(ctx, d.thread.Key, nil, func(cur *Thread) bool {
		ours = cur.Running(d.in.RunID)
		if !ours || cur.Active.TaskID != "" {
			return false
		}
		cur.Active.TaskID = string(id)
		return true
	})
	if err != nil {
		d.log.Warn("record the run's task", "err", err)
		return
	}
	if ours && cur.Active.CancelRequested {
		d.sendCancel(id)
	}
}

// sendCancel asks the agent to cancel the run's task (a cancel requested
// before the agent named it).
func (d *driver) sendCancel(id a2a.TaskID) {
	ctx, cancel := context.WithTimeout(d.detached(), d.spec.RequestTimeout)
	defer cancel()
	task, err := d.agent.CancelTask(ctx, id)
	if err != nil {
		d.log.Warn("cancel requested before the task was known; the agent did not cancel it", "err", err)
		return
	}
	d.log.Info("cancelled the task as requested")
	d.cancelAccepted(task)
}

// armStop hands the driver the cancel function of the run's context.
func (d *driver) armStop(stop context.CancelCauseFunc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stop = stop
	d.armGrace()
}

func (d *driver) disarm() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.grace != nil {
		d.grace.Stop()
	}
	d.stop = nil
}

// cancelAccepted takes the agent's answer to CancelTask. Once the agent
// says the task is cancelled, its stream has the grace period to report
// that itself (with whatever else it sends last); after it, the run ends
// cancelled on the strength of the answer, so a stream that keeps going or
// stays silent cannot keep the run open.
func (d *driver) cancelAccepted(task *a2a.Task) {
	if task == nil || task.Status.State != a2a.TaskStateCanceled {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cancelled != nil {
		return
	}
	d.cancelled = task
	d.armGrace()
}

// armGrace starts the grace period once both the answer and the run's
// context exist; d.mu is held.
func (d *driver) armGrace() {
	if d.cancelled == nil || d.stop == nil || d.grace != nil {
		return
	}
	stop := d.stop
	d.grace = time.AfterFunc(d.svc.cancelGrace, func() { stop(errCancelGrace) })
}

func (d *driver) cancelledTask() *a2a.Task {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cancelled
}

// follow polls the task until it ends, the run times out, or the agent
// keeps failing.
func (d *driver) follow(ctx context.Context) {
	id := d.tr.TaskID()
	if id == "" {
		d.end(ctx, errNoTask)
		return
	}
	d.converse(ctx, &opening{poll: id})
}

// end finishes a run that did not reach a terminal state: timeouts cancel
// the A2A task; a bridge shutdown leaves it running for the next run.
func (d *driver) end(ctx context.Context, err error) {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, errCancelGrace):
		d.deliver(d.cancelledTask())
	case errors.Is(cause, errShutdown):
		d.suspend()
	case errors.Is(cause, errLeaseLost):
		d.leave()
	default:
		code, message, timedOut := upstreamFailure(d.spec.Name, cause, err)
		if timedOut {
			d.cancelTask()
		}
		d.emit(d.tr.Fail(code, message))
	}
}

func (d *driver) cancelTask() {
	if id := d.tr.TaskID(); id != "" {
		cancelAbandoned(d.detached(), d.agent, d.spec.RequestTimeout, id, d.log)
	}
}

// emit checks events against the client's verifier, numbers them and
// queues them for the journal, which shows them to the readers in this
// process once stored. An event the verifier would reject is a bridge bug:
// the run ends with RUN_ERROR instead of sending the client something it
// cannot read.
//
// The terminal event is journaled in the same store write that releases
// the thread, after everything before it: a client that starts its next
// run the moment it reads RUN_FINISHED is not refused as busy, and a crash
// cannot leave a released thread without its run's end or an ended run
// holding its thread.
func (d *driver) emit(events []agui.Event) {
	if len(events) == 0 {
		return
	}
	entries := make([]Entry, 0, len(events))
	for _, e := range events {
		if d.guard.Terminated() {
			break
		}
		if err := d.guard.Check(e); err != nil {
			d.log.Error("translator produced an invalid event", "type", e.Type(), "err", err)
			e = &agui.RunError{Message: "the bridge produced an invalid event sequence", Code: agui.CodeInternal}
			if d.guard.Check(e) != nil {
				break
			}
		}
		b, err := agui.Marshal(e)
		if err != nil {
			d.log.Error("encode event", "type", e.Type(), "err", err)
			continue
		}
		t := e.Type()
		if o := d.spec.Observer; o != nil {
			o.Event(t)
		}
		if t == agui.EventRunFinished || t == agui.EventRunError {
			d.outcome, d.code = outcomeOf(e)
		}
		d.seq++
		d.journaled += int64(len(b))
		d.budget.journal(t, len(b))
		entries = append(entries, Entry{Seq: d.seq, RunID: d.in.RunID, Event: b,
			Terminal: t == agui.EventRunFinished || t == agui.EventRunError})
	}
	n := len(entries)
	if n == 0 {
		return
	}
	if entries[n-1].Terminal {
		d.journal.add(entries[:n-1])
		if err := d.journal.flush(); err != nil {
			// The journal lost events: say so rather than end as if the
			// run were whole. The end keeps its number, after the events
			// given up: a write whose answer was lost may have landed, and
			// the end must not collide with it (the journal then has a gap,
			// or events no client was shown, before the end).
			f := storeFailure()
			if b, merr := agui.Marshal(f); merr == nil {
				entries[n-1].Event = b
				d.outcome, d.code = OutcomeError, f.Code
			}
		}
		d.finalize(d.journal.renumbered(entries[n-1]))
		return
	}
	d.journal.add(entries)
	d.keepUp()
}

// keepUp holds the run back while more than maxPending of its events wait
// for the store, and fails the run once the journal lost a batch.
func (d *driver) keepUp() {
	pending, err := d.journal.progress()
	if err == nil && pending > maxPending {
		err = d.journal.flush()
	}
	if err != nil && !d.storeFailed && !d.out.Done() {
		d.storeFailed = true
		f := storeFailure()
		d.emit(d.out.Fail(f.Code, f.Message))
	}
}

// storeFailure ends a run whose journal lost events.
func storeFailure() *agui.RunError {
	return &agui.RunError{Code: agui.CodeStoreUnavailable, Message: "the bridge's store was unavailable for too long to record this run's events, so the run stopped; the agent's task may go on",
		Base: agui.Base{Timestamp: time.Now().UnixMilli()}}
}

// suspend leaves the run to the next bridge process: what it produced is
// journaled, the thread keeps it as active (with its task), and readers in
// this process get the shutdown notice instead of a terminal event.
func (d *driver) suspend() {
	d.suspendWith("the bridge is shutting down; the agent's task goes on and this run continues after the restart: read it at /agents/{name}/threads/{threadId}/events after the last id you saw")
	if d.svc.lease > 0 {
		d.handOver()
		d.log.Info("run suspended by the shutdown; its lease ends now, for another instance to adopt it")
		return
	}
	d.log.Info("run suspended by the shutdown; the next start takes it over")
}

// leave stops a run another instance adopted (this one's lease lapsed):
// like a shutdown, the thread is left as it is, to the adopter, and readers
// in this process are told to follow the run's journal.
func (d *driver) leave() {
	d.suspendWith("this bridge instance lost the run to another instance, which continues it: read it at /agents/{name}/threads/{threadId}/events after the last id you saw")
	d.log.Warn("run left to the instance that adopted it")
}

func (d *driver) suspendWith(message string) {
	d.journal.flush()
	var tail []agui.Envelope
	for _, e := range d.body.cut(CodeServerShutdown, message) {
		if d.guard.Check(e) != nil {
			continue
		}
		if b, err := agui.Marshal(e); err == nil {
			tail = append(tail, agui.Envelope{ThreadID: d.in.ThreadID, RunID: d.in.RunID, Event: b})
		}
	}
	d.mu.Lock()
	d.to(phaseSuspended)
	d.shutdownTail = tail
	d.mu.Unlock()
}

// finish makes sure the run ended and the thread was released.
func (d *driver) finish() {
	if p := d.phaseNow(); p == phaseRejected || p == phaseSuspended {
		return // released when the failure went back to StartRun, or left to the next process
	}
	if !d.out.Done() {
		d.emit(d.out.Fail(agui.CodeInternal, "the run ended unexpectedly"))
	}
	d.finalize()
}

// finalize records what the run learned and frees the thread, once,
// journaling the run's terminal event in the same write.
func (d *driver) finalize(terminal ...Entry) {
	if !d.moveTo(phaseReleased) {
		return
	}
	d.releaseRun()
	d.stopFinishing()
	d.leasing.Wait() // no renewal races the release
	d.bg.Wait()
	interrupts := d.out.Interrupts()
	for _, p := range interrupts {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(d.svc.ctx), 10*time.Second)
		if err := d.svc.store.IndexInterrupt(ctx, p.Interrupt.ID, d.thread.Key); err != nil {
			d.log.Error("index interrupt", "interrupt_id", p.Interrupt.ID, "err", err)
		}
		cancel()
	}
	var journalBytes int64
	update := func(th *Thread) {
		d.body.record(th, interrupts)
		th.JournalBytes += d.journaled
		journalBytes = th.JournalBytes
	}
	released, storeErr := d.svc.releaseErr(d.thread, update, terminal...)
	// Reported before readers get the terminal event: a client that scrapes
	// /metrics once its stream ended sees the run.
	d.observeEnd("", "")
	switch {
	case released:
		d.live.publish(terminal)
		if limit := d.spec.MaxThreadJournalBytes; limit > 0 && journalBytes > limit {
			d.svc.compactJournal(d.thread.Key, limit)
		}
	case len(terminal) > 0:
		// The store refused the release: readers still need the run's end,
		// from the journal if it takes it, else from here.
		d.journal.add(terminal)
		journaled := d.journal.flush() == nil
		if !journaled {
			d.live.publish(terminal)
		}
		if storeErr != nil {
			if journaled {
				terminal = nil
			}
			d.releaseLater(update, terminal)
		}
	case storeErr != nil:
		d.releaseLater(update, nil)
	}
}

// releaseLater retries the release of a run the store refused to release
// (it is out), until the store takes it, another instance adopted the
// run, or the bridge stops. Meanwhile the thread stays busy, as it is in
// the store; once the store is back the run's end — terminal, if the
// journal did not take it: the RUN_ERROR readers were shown from memory —
// is journaled with the release in one write, so the journal ends as the
// readers' streams did, nothing is half-written, and the thread takes
// its next run without a restart.
//
// It retries every releaseRetryMax at most, a fraction of lapseGrace, so
// after an outage that outlasted the lease this instance releases the run
// before another could adopt it (see takeOver) and continue a run whose
// clients were told it ended.
func (d *driver) releaseLater(update func(*Thread), terminal []Entry) {
	for wait := appendRetryFirst; ; wait = min(2*wait, d.svc.releaseRetryMax()) {
		select {
		case <-d.svc.stopScan:
			// Shutting down: the thread stays active for the next
			// process (exclusive store) or an adopter (shared).
			d.log.Warn("the store never took the end of this run before the shutdown; the thread stays busy until it is taken over")
			return
		case <-time.After(wait):
		}
		released, err := d.svc.releaseErr(d.thread, update, terminal...)
		if released || err == nil {
			d.log.Info("the store is back: the run's end is stored and its thread released", "released", released)
			return
		}
	}
}

// record writes what the run learned into the thread's record: the task,
// and, when the agent took part in the run, the conversation, state and
// interrupts it ended with.
func (s soloRun) record(th *Thread, interrupts []mapping.PendingInterrupt) {
	d := s.d
	learnTask(d.tr, &th.ContextID, &th.TaskID, &th.TaskState, &th.TaskArtifacts)
	if !d.reached {
		return
	}
	// The agent took part in this run: answered interrupts are gone,
	// the ones this run ended with are pending.
	th.Interrupts = interrupts
	if d.plan.resume != nil {
		th.Resolved = appendResolved(th.Resolved, d.plan.resume.resolved)
	}
	th.Messages = recentMessages(d.tr.Conversation(), d.spec.MaxRunBytes)
	if !d.stateRejected {
		th.State = d.tr.State()
		th.StateVersion = d.tr.StateVersion()
	}
	th.FrontendCalls = d.tr.FrontendCalls()
	mergeToolCalls(th, d.tr.ToolCalls())
	if d.sentInput {
		th.SeenMessageIDs = appendSeen(th.SeenMessageIDs, d.plan.newIDs)
	}
}

// learnTask records what tr learned of its agent's task in a thread's (or
// a team member's) record: the context, the task and its state, and the
// task's artifacts shown so far (forgotten when the task changed).
func learnTask(tr *mapping.Translator, contextID, taskID, taskState *string, artifacts *[]string) {
	if c := tr.ContextID(); c != "" {
		*contextID = c
	}
	if id := tr.TaskID(); id != "" {
		if string(id) != *taskID {
			*artifacts = nil
		}
		*taskID = string(id)
		for _, a := range tr.ShownArtifacts() {
			if !slices.Contains(*artifacts, string(a)) {
				*artifacts = append(*artifacts, string(a))
			}
		}
	}
	if st := tr.TaskState(); st != "" {
		*taskState = string(st)
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
