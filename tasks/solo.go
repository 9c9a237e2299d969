package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// soloRun is the body of a single agent's run: the driver's own upstream
// path (upstream.go) and translator.
type soloRun struct{ d *driver }

func (s soloRun) cut(code, message string) []agui.Event { return s.d.tr.Fail(code, message) }

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
		MaxStateBytes:    d.spec.MaxStateBytes,
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
	var f *signInWatch
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
			f = d.svc.watchSignIn(d.thread.Key, d.tr.TaskID(), func() { cancel(errFollowStopped) })
		}
	}
	if f != nil {
		d.svc.endSignInWatch(d.thread.Key, f)
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
// signInWatch collected is shown first, and if the task is done the answer is
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
	if f := d.svc.takeSignInWatch(d.thread.Key, id); f != nil {
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
		d.pollToEnd(ctx)
		return
	}
	// No live stream (a restart, or an agent without streaming): ask the
	// agent where the task is.
	task, err := getTask(ctx, d.agent, d.spec.RequestTimeout, id)
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
	d.pollToEnd(ctx)
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
	if d.answered() {
		d.sentInput = d.sentInput || d.sendsInput
	}
	out, code, msg := d.take(d.spec.Name, d.spec.MaxEventBytes, ev, d.tr.Translate, d.tr.StateSize)
	if code != "" {
		d.emit(out)
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
	task, err := cancelTask(d.detached(), d.agent, d.spec.RequestTimeout, id)
	if err != nil {
		d.log.Warn("cancel requested before the task was known; the agent did not cancel it", "err", err)
		return
	}
	d.log.Info("cancelled the task as requested")
	d.cancelAccepted(task)
}

// follow polls the task until it ends, the run times out, or the agent
// keeps failing.
func (d *driver) pollToEnd(ctx context.Context) {
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
