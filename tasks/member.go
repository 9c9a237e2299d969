package tasks

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// memberRun is one member's part of a run: one agent, its task and its
// translator.
type memberRun struct {
	name  string
	spec  *AgentSpec
	tr    *mapping.Member
	agent Agent // set by converse, before the first report
	// plan is what to send: parts to the plan's task (a new task in the
	// member's context when it has none), or its cancel, sign-in answer
	// or subscription.
	plan  *resumePlan
	parts []*a2a.Part
	// contextID is the member's A2A context on the thread.
	contextID string
	// sendsInput: the message carries the user's new input; sentInput is
	// set (by the driver, from memberMsg.took) once the agent took it.
	sendsInput, sentInput bool

	ctx  context.Context
	stop context.CancelCauseFunc
	// endTimer ends the member's run timeout once its part is over; idle
	// stops the member when its agent makes no progress (what it sends
	// shows nothing new) for its IdleTimeout.
	idle      *time.Timer
	endTimer  context.CancelFunc
	taskNoted bool
	// parallel: the member talks to its agent on its own goroutine.
	parallel bool

	buffer []agui.Event // events waiting for the lane (older clients)
	// answer is the text of the member's artifacts, a pipeline's input for
	// the next member.
	answer  strings.Builder
	reached bool
}

// memberMsg is what a parallel member's goroutine reports.
type memberMsg struct {
	m   *memberRun
	ev  a2a.Event
	err error // the member's upstream failed
	end bool  // the upstream ended
	// took: ev answers the member's message, so its agent took the input.
	// It travels with the event because a parallel member's goroutine may
	// see events the driver never reads.
	took bool
}

// join adds a member to the run: parts go to it with plan's answers (nil:
// a new turn in the member's context).
func (c *crew) join(ctx context.Context, name string, plan *resumePlan, parts []*a2a.Part, sendsInput bool) {
	d := c.d
	spec := c.specs[name]
	rec := d.thread.Members[name]
	m := &memberRun{name: name, spec: spec, plan: plan, parts: parts, sendsInput: sendsInput,
		parallel: c.spec.Strategy == StrategyParallel && len(c.spec.Members) > 1}
	if rec != nil {
		m.contextID = rec.ContextID
	}
	var resumed a2a.TaskID
	if plan != nil && !plan.subscribe {
		resumed = plan.taskID
	}
	if plan == nil {
		plan = &resumePlan{taskID: d.plan.continueTask}
		m.plan = plan
	}
	opt := mapping.Options{
		Agent:          name,
		StatusText:     spec.StatusText,
		InterruptTTL:   spec.InterruptTTL,
		KnownToolCalls: d.thread.ToolCalls,
		StateKey:       c.spec.StateKey,
		MaxInlineBytes: spec.MaxInlineBytes,
		RedactKeys:     spec.RedactKeys,
		MaxStateBytes:  d.spec.MaxStateBytes,
		A2UIActivities: a2uiActivities(d.in),
		ResumedTask:    resumed,
		ClientResults:  d.clientResults(),
	}
	if !plan.cancel {
		opt.SentResults = plan.results
	}
	if plan.contextID != "" {
		m.contextID = plan.contextID
	}
	if rec != nil && plan.taskID != "" && rec.TaskID == string(plan.taskID) {
		for _, id := range rec.TaskArtifacts {
			opt.EarlierArtifacts = append(opt.EarlierArtifacts, a2a.ArtifactID(id))
		}
	}
	m.tr = c.out.member(name, c.description(ctx, name), opt)
	m.ctx, m.stop = context.WithCancelCause(ctx)
	if spec.RunTimeout > 0 {
		m.ctx, m.endTimer = context.WithTimeoutCause(m.ctx, spec.RunTimeout, errRunTimeout)
	}
	if spec.IdleTimeout > 0 && !plan.auth {
		// Waiting for a sign-in is not a stalled agent: only the run
		// timeout bounds it.
		m.idle = time.AfterFunc(spec.IdleTimeout, func() { m.stop(errIdleTimeout) })
	}
	c.members = append(c.members, m)
	if plan.taskID != "" {
		d.follow(m, plan.taskID)
	}
	c.deliver(m, m.tr.Start())
	if m.parallel {
		c.running++
		go c.converse(m, func(msg memberMsg) bool {
			if msg.ev == nil {
				c.msgs <- msg // an end or a failure always reaches the run
				return false
			}
			select {
			case c.msgs <- msg:
				return true
			case <-m.ctx.Done():
				return false
			}
		})
		return
	}
	c.queue = append(c.queue, m)
}

// halt ends the member's upstream work and its timers.
func (m *memberRun) halt() {
	m.stop(nil)
	if m.endTimer != nil {
		m.endTimer()
	}
	if m.idle != nil {
		m.idle.Stop()
	}
}

// description is the member's card description, for SUBAGENT_STARTED.
func (c *crew) description(ctx context.Context, name string) string {
	if _, alone := c.out.(*aloneOutput); alone {
		return "" // an agent's own run shows no SUBAGENT_STARTED
	}
	if ag, err := c.specs[name].Connect(ctx); err == nil {
		if cd, ok := ag.(interface{ Card() *a2a.AgentCard }); ok && cd.Card() != nil {
			return cd.Card().Description
		}
	}
	return ""
}

// handle takes one report of a member's upstream work.
func (c *crew) handle(ctx context.Context, msg memberMsg) {
	m := msg.m
	switch {
	case msg.end:
		if m.parallel {
			c.running--
		}
		if !m.tr.Done() {
			m.halt()
			c.fail(m, errors.New("the agent's stream ended before the task did"))
		}
	case msg.err != nil:
		c.fail(m, msg.err)
	default:
		m.sentInput = m.sentInput || msg.took
		c.receive(m, msg.ev)
	}
	if m.tr.Done() {
		if m.idle != nil {
			m.idle.Stop()
		}
		if m.parallel {
			// Its goroutine stops. A member running alone ends its
			// conversation itself, or keeps reading for a sign-in.
			m.halt()
		}
		c.memberDone(ctx, m)
		if c.over() {
			c.settle(ctx)
		}
	}
}

// receive takes one event of a member's agent through the run's limits
// and the member's translator.
func (c *crew) receive(m *memberRun, ev a2a.Event) {
	d := c.d
	if !m.reached {
		m.reached = true
		if d.answered() {
			c.flushHeld()
		}
	}
	c.noteArtifacts(m, ev)
	// The budget is the run's: once it is spent, every member that sends
	// more ends its part with run_too_large.
	out, code, message := d.take(m.name, m.spec.MaxEventBytes, ev, m.tr.Translate, c.out.StateSize)
	if len(out) > 0 && m.idle != nil {
		m.idle.Reset(m.spec.IdleTimeout)
	}
	c.deliver(m, out)
	if code == "" {
		c.noteTask(m)
		if code, message = d.budget.Spent(d.spec.Name); m.tr.Done() {
			return
		}
	}
	if code != "" {
		// The member's part ends with the limit's code (after what may
		// still be shown): nobody will see the rest of its task.
		d.log.Warn("agent broke a run limit", "member", m.name, "code", code, "detail", message)
		m.halt()
		c.cancelTask(m)
		c.deliver(m, m.tr.Fail(code, message))
	}
}

// fail ends a member's part with its upstream's error (a timeout cancels
// its task). A member failing before any member's agent answered is held:
// if none answers, the run is an HTTP error instead of a stream.
func (c *crew) fail(m *memberRun, err error) {
	if m.tr.Done() {
		return
	}
	cause := context.Cause(m.ctx)
	switch {
	case errors.Is(cause, errShutdown), errors.Is(cause, errLeaseLost):
		return // the run is suspended or left; members stay as they are
	case errors.Is(cause, errCancelGrace):
		c.receive(m, c.d.cancelledTask(m.plan.taskID, m.tr.TaskID()))
		return
	}
	code, message, timedOut := upstreamFailure(m.name, cause, err)
	if timedOut {
		c.cancelTask(m)
	} else if c.firstErr == nil {
		c.firstErr = err
	}
	c.deliver(m, m.tr.Fail(code, message))
}

// cancelTask asks a member's agent to cancel its task (a timeout, a broken
// limit): nobody will see the rest of it.
func (c *crew) cancelTask(m *memberRun) {
	if id := m.tr.TaskID(); id != "" && m.agent != nil {
		cancelAbandoned(c.d.detached(), m.agent, m.spec.RequestTimeout, id, c.d.log.With("member", m.name, "task_id", string(id)))
	}
}

// noteTask records the task a member's agent just named on the thread's
// active run, so a cancel request can reach it; if a cancel was requested
// before the task was known, the run sends it now. Of the cancel request
// and this record, the one written second sees the other and sends
// CancelTask, so it goes out exactly once.
func (c *crew) noteTask(m *memberRun) {
	d := c.d
	id := m.tr.TaskID()
	if id == "" || m.taskNoted {
		return
	}
	m.taskNoted = true
	d.nameTask(id, m.tr.ContextID()) // before the goroutine below, which logs
	d.follow(m, id)
	if d.thread.Active.Tasks[m.name] == string(id) {
		return // the run continues it: recorded when the run started
	}
	agent := m.agent
	d.bg.Add(1)
	go func() {
		defer d.bg.Done()
		// After the run's first events are stored: on a durable store
		// this record costs a commit, which the client's first event
		// should not queue behind.
		select {
		case <-d.live.Published():
		case <-d.finishing:
		}
		d.noteTask(m.name, m.spec, agent, id)
	}()
}

// converse does a member's A2A work, reporting every event until the
// member's part is over (report says whether to go on). It runs on the
// driver's goroutine for a member running alone, else on its own, and then
// touches nothing but m's agent and report.
func (c *crew) converse(m *memberRun, report func(memberMsg) bool) {
	defer report(memberMsg{m: m, end: true})
	ctx := m.ctx
	agent, err := m.spec.Connect(ctx)
	if err != nil {
		report(memberMsg{m: m, err: err})
		return
	}
	m.agent = agent
	took := false
	events := func(ev a2a.Event) bool { return report(memberMsg{m: m, ev: ev, took: took}) }
	ctx = activateA2UI(ctx, m.spec, agent, c.d.in, nil)
	op := m.opening(c.d)
	switch {
	case m.plan.auth:
		c.resumeAuth(ctx, m, events, report)
		return
	case op.msg != nil:
		c.addA2UICapabilities(m, op.msg)
	}
	var watch *signInWatch
	for ev, err := range upstream(ctx, agent, m.spec, op) {
		if watch != nil {
			if err != nil || !watch.push(ctx, ev) {
				break
			}
			continue
		}
		if err != nil {
			report(memberMsg{m: m, err: err})
			return
		}
		took = op.msg != nil && m.sendsInput
		if events(ev) {
			// The translator decides when the part is over (a Task
			// snapshot that repeats an answered interrupt is not the end):
			// the run stops a parallel member's conversation then.
			continue
		}
		// The member's part is over. One that ended waiting for a
		// credential may go on by itself once it arrives out of band: a
		// member running alone keeps reading the stream for the resume
		// run (bounded by the run timeout).
		if _, st, _ := progress(ev); st != a2a.TaskStateAuthRequired || m.parallel || ctx.Err() != nil {
			return
		}
		if m.idle != nil {
			m.idle.Stop()
		}
		op.streamOnly = true
		id := m.tr.TaskID()
		watch = c.d.svc.watchSignIn(c.d.thread.Key, id, func() { m.stop(errFollowStopped) })
		defer c.d.svc.endSignInWatch(c.d.thread.Key, watch)
	}
}

// opening is how a member's conversation with its agent begins.
func (m *memberRun) opening(d *driver) *opening {
	switch p := m.plan; {
	case p.subscribe:
		return &opening{subscribe: p.taskID}
	case p.cancel:
		return &opening{cancel: p.taskID}
	}
	msg := a2a.NewUserMessage(m.contextID, m.plan.taskID, append(slices.Clone(m.plan.parts), m.parts...)...)
	msg.Metadata = m.plan.metadata
	return &opening{msg: msg, in: d.in, stateKey: d.spec.StateKey, brokeOff: func(err error) {
		d.log.Warn("agent stream broke; following the task by polling", "member", m.name, "err", err)
	}}
}

// addA2UICapabilities puts the client's A2UI capabilities in the metadata
// of a message a member sends, when its run activates A2UI.
func (c *crew) addA2UICapabilities(m *memberRun, msg *a2a.Message) {
	activateA2UI(context.Background(), m.spec, m.agent, c.d.in, msg)
}

// resumeAuth answers a member's AUTH_REQUIRED interrupt. The task may have
// gone on by itself meanwhile (the credential arrived out of band): what
// the signInWatch collected is shown first, and if the task is done the
// answer is not sent. If it still waits, the user's answer is forwarded;
// an agent that cannot take a message now (its execution is still open)
// is followed until the task moves on.
func (c *crew) resumeAuth(ctx context.Context, m *memberRun, events func(a2a.Event) bool, report func(memberMsg) bool) {
	id := m.plan.taskID
	follow := func() {
		for ev, err := range upstream(ctx, m.agent, m.spec, &opening{poll: id}) {
			if err != nil {
				report(memberMsg{m: m, err: err})
				return
			}
			if !events(ev) {
				return
			}
		}
	}
	if f := c.d.svc.takeSignInWatch(c.d.thread.Key, id); f != nil {
		backlog, live := f.handoff()
		defer f.release()
		for _, ev := range backlog {
			if !events(ev) {
				return
			}
		}
		if live != nil {
			if c.forward(ctx, m, report) {
				return
			}
			for ev := range live {
				if !events(ev) {
					return
				}
			}
		}
		follow()
		return
	}
	// No live stream (a restart, or an agent without streaming): ask the
	// agent where the task is.
	task, err := getTask(ctx, m.agent, m.spec.RequestTimeout, id)
	if err != nil {
		report(memberMsg{m: m, err: err})
		return
	}
	if !events(task) {
		return
	}
	if task.Status.State == a2a.TaskStateAuthRequired && c.forward(ctx, m, report) {
		return
	}
	follow()
}

// forward sends the resume's answer to the member's task and follows the
// reply; it reports false, having delivered nothing, when the agent
// refuses it.
func (c *crew) forward(ctx context.Context, m *memberRun, report func(memberMsg) bool) bool {
	op := m.opening(c.d)
	c.addA2UICapabilities(m, op.msg)
	accepted := false
	for ev, err := range upstream(ctx, m.agent, m.spec, &opening{msg: op.msg}) {
		if err != nil {
			if !accepted {
				c.d.log.Info("the agent did not take the answer to its auth request; following the task", "err", err)
				return false
			}
			report(memberMsg{m: m, err: err})
			return true
		}
		accepted = true
		if !report(memberMsg{m: m, ev: ev, took: true}) {
			break
		}
	}
	return true
}
