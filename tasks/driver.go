package tasks

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/limits"
	"github.com/a2a-agui-bridge/bridge/tasks/journal"
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
	budget limits.RunBudget
	// journaled is the bytes of every event the run journaled, added to
	// its thread's JournalBytes at the end (compact.go).
	journaled int64

	svc    *Service
	spec   *AgentSpec
	thread *Thread
	in     *agui.RunAgentInput
	plan   runPlan
	log    *slog.Logger

	crew    *crew
	guard   *agui.Guard
	journal *journal.Writer

	// accepted hands StartRun the outcome of the first upstream call: nil
	// once the agent answered, or the error that stopped it. Once StartRun
	// stops waiting, failures go into the stream instead.
	mu       sync.Mutex
	phase    phase // d.mu; see phase.go
	accepted chan error
	done     chan struct{} // closed when the driver goroutine ends
	reached  bool          // some member's agent answered

	// following are the run's members by the task each follows (d.mu);
	// cancelled are the agents' answers to CancelTask that say a task is
	// cancelled, and graces the timers that end a member's part with
	// them (cancelAccepted).
	following map[a2a.TaskID]*memberRun
	cancelled map[a2a.TaskID]*a2a.Task
	graces    []*time.Timer
	// bg runs the records of the tasks members name (noteTask) and the
	// cancels they may send, and is waited for before the thread is
	// released.
	bg sync.WaitGroup
	// finishing is closed when the run releases its thread.
	finishing chan struct{}
	// leasing is the goroutine renewing the run's lease (shared stores),
	// which ends once finishing is closed; leaseLost is set when another
	// instance adopted the run.
	leasing   sync.WaitGroup
	leaseLost bool
	// stopRun ends the run's context (d.mu; nil until it runs): a delete
	// stops it with errThreadDeleted (threadlife.go).
	stopRun context.CancelCauseFunc

	// shutdownTail is what in-process readers get instead of a journaled
	// terminal event once the run is suspended (phaseSuspended): the thread
	// keeps it as active, for the next process to take over.
	shutdownTail []agui.Envelope

	// live is what readers in this process follow; seq is the number of
	// the run's last event. storeFailed: the journal lost a batch and the
	// run is being failed.
	live        *journal.Live
	seq         int64
	storeFailed bool

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
	return &driver{svc: s, spec: spec, thread: th, in: in, plan: plan, accepted: make(chan error, 1), done: make(chan struct{}),
		live: journal.NewLive(in.ThreadID, after), seq: after, finishing: make(chan struct{}),
		following: map[a2a.TaskID]*memberRun{}, cancelled: map[a2a.TaskID]*a2a.Task{}}
}

// begin starts the run's span, a child of ctx's (the request's trace, when
// it carried a traceparent), and counts the run as started.
func (d *driver) begin(ctx context.Context, kind trace.SpanKind) {
	d.started = time.Now()
	d.budget.Limit = d.spec.MaxRunBytes // a team's spec is known only now
	_, d.span = d.svc.opt.Tracer.Start(ctx, "bridge.run", trace.WithSpanKind(kind), trace.WithAttributes(
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
	d.journal.Close()
	d.live.End(d.shutdownTail)
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

// awaitAnswer is StartRun waiting for the run's first answer, which the
// run hands over once (accepted): nil once the agent answered, or the
// failure StartRun answers with as an HTTP error. Past wait, or when the
// client leaves, StartRun stops waiting — unless the run decided
// meanwhile — and failures go into the stream instead.
func (d *driver) awaitAnswer(ctx context.Context, wait time.Duration) error {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-d.accepted:
		return err
	case <-timer.C:
	case <-ctx.Done():
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.to(phaseRunning) {
		return nil
	}
	select {
	case err := <-d.accepted:
		return err
	default:
		return nil
	}
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
	d.journal = journal.NewWriter(d.svc.ctx, d.svc.store, d.thread.Key, d.svc.opt.StoreOutage, d.log, d.live.Publish)
}

// lifecycle is the run's goroutine: it sets the run up, runs body, and
// whatever way body ends, closes the journal and the live log, reports the
// run's end, drops it from the registry, frees its admission slot and
// tells Service.Close it is done — in that order, the reverse of setup.
func (d *driver) lifecycle() {
	defer d.svc.wg.Done()
	defer d.releaseRun()
	defer close(d.done)
	defer d.unregister()
	defer d.observeEnd("", "")
	d.setup()
	defer d.close()
	d.drive()
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
	d.mu.Lock()
	d.stopRun = cancel
	d.mu.Unlock()
	defer d.disarm()
	if d.svc.opt.Lease > 0 {
		d.leasing.Add(1)
		go d.keepLease(cancel)
	}
	if d.spec.RunTimeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, d.spec.RunTimeout, errRunTimeout)
		defer stop()
	}
	defer func() {
		if p := recover(); p != nil {
			d.log.Error("run panicked", "panic", p, "stack", string(debug.Stack()))
			d.emit(d.crew.cut(agui.CodeInternal, "the bridge failed while running this request"))
		}
		d.finish()
	}()

	d.crew.run(ctx)
}
