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
		MaxStateBytes:  d.spec.MaxStateBytes,
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
		t.noteArtifacts(m, msg.ev)
		// The budget is the run's: once it is spent, every member that
		// sends more ends its part with run_too_large.
		out, code, message := t.d.take(m.name, m.spec.MaxEventBytes, msg.ev, m.tr.Translate, t.tm.StateSize)
		if code != "" {
			// The member's part ends with the limit's code (after what
			// may still be shown); the others go on.
			t.deliver(m, out)
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
	if !t.d.reached {
		m.buffer = append(m.buffer, events...)
		t.held = append(t.held, m)
		return
	}
	t.deliver(m, events)
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
		task, err := cancelTask(detached, agent, m.spec.RequestTimeout, id)
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
