package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/auth"
	"github.com/a2a-agui-bridge/bridge/mapping"
	"go.opentelemetry.io/otel/trace"
)

// StartRun validates the request against the thread, claims the thread,
// sends the user's new messages to the agent and returns once the agent has
// answered (or FirstEventWait passed). Errors before that point are *Error
// values with an HTTP status, and leave the thread as it was.
func (s *Service) StartRun(ctx context.Context, agentName string, in *agui.RunAgentInput) (*Run, error) {
	c := s.catalog.Load()
	spec := c.agents[agentName]
	team := c.teams[agentName]
	if team != nil {
		spec = c.teamAgentSpec(team)
	}
	if spec == nil {
		return nil, unknownAgent(agentName)
	}
	s.mu.Lock()
	closing := s.closing
	if !closing {
		s.wg.Add(1) // released by the run's goroutine, or below on failure
	}
	s.mu.Unlock()
	if closing {
		return nil, &Error{Code: agui.CodeShuttingDown,
			Message: "the bridge is shutting down", Err: ErrShuttingDown}
	}
	started := false
	defer func() {
		if !started {
			s.wg.Done()
		}
	}()

	// Threads are keyed by principal: another principal's thread of the
	// same id is another key, so this run starts (or continues) the
	// caller's own thread, exactly as for an id nobody used.
	key := callerKey(ctx, agentName, in.ThreadID)
	current, err := s.store.GetThread(ctx, key)
	switch {
	case errors.Is(err, ErrNotFound):
		current = &Thread{Key: key, Principal: key.Principal}
	case err != nil:
		return nil, storeError(err)
	case !ownedBy(ctx, current):
		// A record under the caller's key made by someone else (never
		// written so): refused as for a thread that does not exist.
		return nil, threadNotFound(key)
	}
	parts, newIDs, err := mapping.UserInput(in.Messages, current.SeenMessageIDs, spec.MaxInlineBytes)
	if errors.Is(err, mapping.ErrPartTooLarge) {
		return nil, &Error{Code: agui.CodePartTooLarge, Message: err.Error()}
	}
	if err != nil {
		return nil, &Error{Code: agui.CodeInvalidInput, Message: err.Error()}
	}
	if s.running(current) {
		if s.leaseLapsed(current) {
			// The run's instance died: adopt the run now rather than at
			// the next scan. The thread stays busy until it ends.
			s.adoptSoon(key)
		}
		// An identical replay of the resume being run is answered by
		// tailing that run rather than refused.
		if rp := activeReplay(current, in); rp != nil {
			return &Run{Key: key, RunID: rp.runID, svc: s, after: rp.after, driver: s.driving(key, rp.runID)}, nil
		}
		return nil, threadBusy(key, current.Active.RunID)
	}
	action, err := s.planA2UIAction(ctx, spec, team, current, in)
	if err != nil {
		return nil, err
	}
	resume, rp, rej := s.planRun(ctx, current, in)
	switch {
	case rej != nil:
		return rejectedRun(key, in, rej), nil
	case rp != nil:
		return &Run{Key: key, RunID: rp.runID, svc: s, after: rp.after}, nil
	}
	parts = action.useA2UIAnswer(resume, parts)
	plan := planMessage(current, in, resume, parts, newIDs, team != nil)
	plan.caller = a2a.CallerAuthorization(ctx)

	// Only the thread's active run appends to its journal, so the last
	// sequence number read before claiming is where this run starts.
	after, err := s.store.LastSeq(ctx, key)
	if err != nil {
		return nil, storeError(err)
	}
	claim := claimed{runID: in.RunID, after: after, task: plan.continueTask}
	if resume != nil {
		for i := range resume.resolved {
			resume.resolved[i].RunID, resume.resolved[i].AfterSeq = in.RunID, after
		}
		claim.answering, claim.task, claim.results = resume.resolved, resume.taskID, resume.results
	}
	if claim.input, err = json.Marshal(in); err != nil {
		return nil, &Error{Code: agui.CodeInvalidInput, Message: "the request cannot be recorded", Err: err}
	}
	release := func() {}
	if s.admission != nil {
		if release, err = s.admission.AcquireRun(current.Principal); err != nil {
			return nil, err
		}
	}
	defer func() {
		if !started {
			release()
		}
	}()
	th, err := s.claim(ctx, current, claim)
	if err != nil {
		return nil, err
	}
	d := newDriver(s, spec, th, in, after, plan)
	d.releaseSlot = release
	d.begin(ctx, trace.SpanKindServer)
	run := &Run{Key: key, RunID: in.RunID, svc: s, after: after, driver: d}

	if len(plan.parts) == 0 && (resume == nil || !resume.cancel) {
		// Nothing new to say to the agent (a client re-running a thread
		// without a new user message): finish at once without calling it.
		started = true
		s.register(d)
		go d.lifecycle(d.nothingToDo)
		return run, nil
	}
	if team != nil {
		// Each member connects on its own: one that is down does not
		// stop the others.
		d.runTeam(newTeamRun(d, team, c))
	} else {
		agent, err := spec.Connect(ctx)
		if err != nil {
			s.release(th, nil)
			d.observeEnd(OutcomeError, a2a.Classify(err).Code)
			return nil, agentError(agentName, err)
		}
		d.agent = agent
	}
	started = true
	s.register(d)
	go d.lifecycle(d.drive)

	timer := time.NewTimer(s.wait)
	defer timer.Stop()
	select {
	case err := <-d.accepted:
		if err != nil {
			return nil, agentError(agentName, err)
		}
	case <-timer.C:
		if _, err := d.stopWaiting(); err != nil {
			return nil, agentError(agentName, err)
		}
	case <-ctx.Done():
		if _, err := d.stopWaiting(); err != nil {
			return nil, agentError(agentName, err)
		}
	}
	return run, nil
}

// planMessage decides what a run tells its agent: a resume's answers
// first, or the results of the client's own tools (which go back to the
// task that asked for them; teams do not forward them), then the user's
// new input (parts, with their message ids newIDs). It reconciles
// in.Messages with the conversation the thread holds.
func planMessage(th *Thread, in *agui.RunAgentInput, resume *resumePlan, parts []*a2a.Part, newIDs []string, team bool) runPlan {
	plan := runPlan{resume: resume}
	// A client that missed what happened on the thread since it last read
	// (its stream dropped while the run went on) gets the conversation the
	// bridge holds, reconciled with what it sends now.
	in.Messages, plan.reconcile = reconciled(th.Messages, in.Messages)
	switch {
	case resume != nil:
		parts = append(resume.parts, parts...)
	case len(th.FrontendCalls) > 0 && !team:
		var results []*a2a.Part
		results, newIDs = mapping.ToolResults(in.Messages, th.FrontendCalls, th.SeenMessageIDs, newIDs)
		parts = append(results, parts...)
		plan.continueTask = a2a.TaskID(th.TaskID)
	}
	plan.parts, plan.newIDs = parts, newIDs
	return plan
}

// claimed is what a run records on its thread when it starts.
type claimed struct {
	runID     string
	after     int64 // the journal's last seq: the run's events follow it
	input     json.RawMessage
	answering []ResolvedInterrupt
	results   []mapping.SentToolResult
	task      a2a.TaskID // the task the run continues, when it continues one
}

// claim marks th (as read) as running c.runID, or fails with thread_busy
// when another request claimed it since.
func (s *Service) claim(ctx context.Context, th *Thread, c claimed) (*Thread, error) {
	th = th.Clone()
	clearActive(th)
	th.Active = &ActiveRun{
		RunID:    c.runID,
		Since:    time.Now(),
		Owner:    s.instance,
		After:    c.after,
		Input:    c.input,
		Results:  c.results,
		Resolved: c.answering,
		TaskID:   string(c.task),
	}
	if s.lease > 0 {
		th.Active.LeaseExpires = time.Now().Add(s.lease)
	}
	v, err := s.store.PutThread(ctx, th)
	if errors.Is(err, ErrConflict) {
		return nil, threadBusy(th.Key, "another run")
	}
	if err != nil {
		return nil, storeError(err)
	}
	th.Version = v
	return th, nil
}

// callerKey is the key of the caller's thread threadID of agent: the
// principal ctx carries ("" without auth) is part of it.
func callerKey(ctx context.Context, agent, threadID string) ThreadKey {
	return ThreadKey{Agent: agent, Principal: auth.PrincipalFrom(ctx), ThreadID: threadID}
}

// ownedBy reports whether th belongs to the principal ctx carries. Its key
// says so already; the record's own copy must agree.
func ownedBy(ctx context.Context, th *Thread) bool {
	return th.Principal == auth.PrincipalFrom(ctx) && th.Key.Principal == th.Principal
}

// activeReplay matches a resume identical to the one the active run is
// answering.
func activeReplay(th *Thread, in *agui.RunAgentInput) *replay {
	if len(in.Resume) == 0 || len(th.Active.Resolved) == 0 {
		return nil
	}
	for _, r := range in.Resume {
		ok := false
		for _, a := range th.Active.Resolved {
			if a.ID == r.InterruptID && a.Status == r.Status && a.PayloadHash == payloadHash(r.Payload) {
				ok = true
			}
		}
		if !ok {
			return nil
		}
	}
	first := th.Active.Resolved[0]
	return &replay{runID: first.RunID, after: first.AfterSeq}
}

// rejectedRun answers a resume that breaks the interrupt contract with
// RUN_STARTED and RUN_ERROR{code}, without touching the thread.
func rejectedRun(key ThreadKey, in *agui.RunAgentInput, rej *rejection) *Run {
	started := &agui.RunStarted{ThreadID: in.ThreadID, RunID: in.RunID}
	if in.IsV1() {
		started.ProtocolVersion = "1.0"
	}
	var fixed []agui.Envelope
	for _, e := range []agui.Event{started, &agui.RunError{Message: rej.message, Code: rej.code}} {
		agui.BaseOf(e).Timestamp = time.Now().UnixMilli()
		b, _ := agui.Marshal(e)
		fixed = append(fixed, agui.Envelope{ThreadID: key.ThreadID, RunID: in.RunID, Event: b})
	}
	return &Run{Key: key, RunID: in.RunID, fixed: fixed}
}

// reconciled merges the conversation the bridge holds for a thread with the
// messages a run request carries. When the request lacks messages the
// thread has (a client whose stream dropped while its run went on), the
// result is the thread's conversation followed by what is new in the
// request, and reconcile is true: the run starts with a MESSAGES_SNAPSHOT
// of it.
func reconciled(thread, request []agui.Message) ([]agui.Message, bool) {
	have := make(map[string]bool, len(request))
	for _, m := range request {
		have[m.ID] = true
	}
	missing := false
	inThread := make(map[string]bool, len(thread))
	for _, m := range thread {
		inThread[m.ID] = true
		if !have[m.ID] {
			missing = true
		}
	}
	if !missing {
		return request, false
	}
	out := append([]agui.Message(nil), thread...)
	for _, m := range request {
		if !inThread[m.ID] {
			out = append(out, m)
		}
	}
	return out, true
}
