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
//
// It goes in named steps, each taking what the one before learned (start):
// admit (the agent or team, a bridge not shutting down), load (the
// caller's thread and the new input), plan (what the run is to do, or an
// answer without a run), claim (an admission slot and the thread) and
// spawn (the run's goroutine, and the wait for the agent's first answer).
func (s *Service) StartRun(ctx context.Context, agentName string, in *agui.RunAgentInput) (*RunReader, error) {
	st, err := s.admit(agentName, in)
	if err != nil {
		return nil, err
	}
	defer st.undo()
	if err := st.load(ctx); err != nil {
		return nil, err
	}
	if run, err := st.planned(ctx); run != nil || err != nil {
		return run, err
	}
	th, err := st.claim(ctx)
	if err != nil {
		return nil, err
	}
	return st.spawn(ctx, th)
}

// start is one StartRun on its way: what each step learned, for the next.
type start struct {
	s    *Service
	name string
	in   *agui.RunAgentInput
	cat  *agentCatalog
	spec *AgentSpec
	// crew is the run's members: the agent alone (soloTeam), or a team's.
	crew  *TeamSpec
	alone bool

	key     ThreadKey
	current *Thread
	parts   []*a2a.Part // the user's new input, and its message ids
	newIDs  []string
	plan    runPlan
	after   int64 // the journal's last seq before the claim

	// release frees the admission slot claim took; spawned says the run's
	// goroutine owns it, and the Service's wait group, from now on.
	release func()
	spawned bool
}

// admit finds the agent or team and counts the run in the Service's wait
// group, unless the bridge is shutting down.
func (s *Service) admit(name string, in *agui.RunAgentInput) (*start, error) {
	c := s.catalog.Load()
	st := &start{s: s, name: name, in: in, cat: c, release: func() {}}
	if !st.cast() {
		return nil, unknownAgent(name)
	}
	if !s.enter() {
		return nil, &Error{Code: agui.CodeShuttingDown,
			Message: "the bridge is shutting down", Err: ErrShuttingDown}
	}
	return st, nil
}

// cast finds the run's members: the agent alone, or a team's.
func (st *start) cast() bool {
	if spec, ok := st.cat.agents[st.name]; ok {
		st.spec, st.crew, st.alone = spec, soloTeam(spec), true
		return true
	}
	if team, ok := st.cat.teams[st.name]; ok {
		st.spec, st.crew = st.cat.teamAgentSpec(team), team
		return true
	}
	return false
}

// enter counts a run about to start in the Service's wait group (its
// goroutine, or its starter on failure, calls wg.Done), unless the bridge
// is shutting down.
func (s *Service) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.wg.Add(1)
	return true
}

// undo gives back what admit and claim took when no run was spawned.
func (st *start) undo() {
	if !st.spawned {
		st.release()
		st.s.wg.Done()
	}
}

// load reads the caller's thread and the request's new user input.
func (st *start) load(ctx context.Context) error {
	// Threads are keyed by principal: another principal's thread of the
	// same id is another key, so this run starts (or continues) the
	// caller's own thread, exactly as for an id nobody used.
	st.key = callerKey(ctx, st.name, st.in.ThreadID)
	current, err := st.s.getThread(ctx, st.key)
	switch {
	case errors.Is(err, ErrNotFound):
		if err := st.s.checkThreadCap(ctx, st.key.Principal); err != nil {
			return err
		}
		current = &Thread{Key: st.key, Principal: st.key.Principal}
	case err != nil:
		return StoreError(err)
	case !ownedBy(ctx, current):
		// A record under the caller's key made by someone else (never
		// written so): refused as for a thread that does not exist.
		return threadNotFound(st.key)
	}
	if msg := mapping.ChangedMessage(st.in.Messages, current.Messages); msg != "" {
		return &Error{Code: agui.CodeMessageConflict, Message: msg}
	}
	st.current = current
	st.parts, st.newIDs, err = mapping.UserInput(st.in.Messages, current.SeenMessageIDs, st.spec.MaxInlineBytes)
	if errors.Is(err, mapping.ErrPartTooLarge) {
		return &Error{Code: agui.CodePartTooLarge, Message: err.Error()}
	}
	if err != nil {
		return &Error{Code: agui.CodeInvalidInput, Message: err.Error()}
	}
	return nil
}

// planned decides what the run is to do (st.plan). Some requests are
// answered without a run of their own: a replay of a resume (the run that
// answers it, tailed) or a resume that breaks the interrupt contract.
func (st *start) planned(ctx context.Context) (*RunReader, error) {
	s, key, current, in := st.s, st.key, st.current, st.in
	if s.running(current) {
		if s.leaseLapsed(current) {
			// The run's instance died: adopt the run now rather than at
			// the next scan. The thread stays busy until it ends.
			s.adoptSoon(key)
		}
		// An identical replay of the resume being run is answered by
		// tailing that run rather than refused.
		if rp := activeReplay(current, in); rp != nil {
			return s.reader(key, rp.runID, rp.after), nil
		}
		return nil, threadBusy(key, current.Active.RunID)
	}
	action, err := s.planA2UIAction(ctx, st, current, in)
	if err != nil {
		return nil, err
	}
	resume, rp, rej := s.planRun(ctx, current, in)
	switch {
	case rej != nil:
		return rejectedRun(key, in, rej), nil
	case rp != nil:
		return s.reader(key, rp.runID, rp.after), nil
	}
	st.plan = planMessage(current, in, resume, action.useA2UIAnswer(resume, st.parts), st.newIDs)
	st.plan.caller = a2a.CallerAuthorization(ctx)
	return nil, nil
}

// claim takes an admission slot and marks the thread as running the run.
func (st *start) claim(ctx context.Context) (*Thread, error) {
	s, in, resume := st.s, st.in, st.plan.resume
	// Only the thread's active run appends to its journal, so the last
	// sequence number read before claiming is where this run starts.
	after, err := s.store.LastSeq(ctx, st.key)
	if err != nil {
		return nil, StoreError(err)
	}
	st.after = after
	claim := claimed{runID: in.RunID, after: after, task: st.plan.continueTask, member: st.name}
	if resume != nil {
		for i := range resume.resolved {
			resume.resolved[i].RunID, resume.resolved[i].AfterSeq = in.RunID, after
		}
		claim.answering, claim.task, claim.results = resume.resolved, resume.taskID, resume.results
		for name, m := range resume.members {
			claim.member, claim.task = name, m.taskID // the run's task when it has one member
		}
	}
	if claim.input, err = json.Marshal(in); err != nil {
		return nil, &Error{Code: agui.CodeInvalidInput, Message: "the request cannot be recorded", Err: err}
	}
	if s.opt.Admission != nil {
		release, err := s.opt.Admission.AcquireRun(st.current.Principal)
		if err != nil {
			return nil, err
		}
		st.release = release
	}
	return s.claim(ctx, st.current, claim)
}

// spawn starts the run's goroutine on the claimed thread th and waits for
// the agent's first answer (awaitAnswer).
func (st *start) spawn(ctx context.Context, th *Thread) (*RunReader, error) {
	s, plan := st.s, st.plan
	d := newDriver(s, st.spec, th, st.in, st.after, plan)
	d.releaseSlot = st.release
	d.begin(ctx, trace.SpanKindServer)
	d.crew = newCrew(d, st.crew, st.cat, st.alone)
	st.spawned = true
	s.register(d)
	run := s.reader(st.key, st.in.RunID, st.after)
	go d.lifecycle()
	// Nothing new to say to the agent (a client re-running a thread
	// without a new user message): the run finishes at once without
	// calling it.
	if len(plan.parts) == 0 && (plan.resume == nil || !plan.resume.cancel) {
		return run, nil
	}
	if err := d.awaitAnswer(ctx, s.opt.FirstEventWait); err != nil {
		return nil, agentError(st.name, err)
	}
	return run, nil
}

// planMessage decides what a run tells its agent: a resume's answers
// first, or the results of the client's own tools (which go back to the
// task that asked for them; teams do not forward them), then the user's
// new input (parts, with their message ids newIDs). It reconciles
// in.Messages with the conversation the thread holds.
//
// Only a single agent's record holds frontend calls (a team's members'
// are not recorded), so a team run forwards no tool results.
func planMessage(th *Thread, in *agui.RunAgentInput, resume *resumePlan, parts []*a2a.Part, newIDs []string) runPlan {
	plan := runPlan{resume: resume}
	// A client that missed what happened on the thread since it last read
	// (its stream dropped while the run went on) gets the conversation the
	// bridge holds, reconciled with what it sends now.
	in.Messages, plan.reconcile = reconciled(th.Messages, in.Messages)
	switch {
	case resume != nil:
		parts = append(resume.parts, parts...)
	case len(th.FrontendCalls) > 0:
		var results []*a2a.Part
		results, newIDs = mapping.ToolResults(in.Messages, th.FrontendCalls, th.SeenMessageIDs, newIDs)
		parts = append(results, parts...)
		if rec := th.Members[th.Key.Agent]; rec != nil {
			plan.continueTask = a2a.TaskID(rec.TaskID)
		}
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
	member    string     // the member following task
}

// claim marks th (as read) as running c.runID, or fails with thread_busy
// when another request claimed it since.
func (s *Service) claim(ctx context.Context, th *Thread, c claimed) (*Thread, error) {
	th = th.Clone()
	clearActive(th)
	th.Active = &ActiveRun{
		RunID:    c.runID,
		Since:    time.Now(),
		Owner:    s.opt.Instance,
		After:    c.after,
		Input:    c.input,
		Results:  c.results,
		Resolved: c.answering,
	}
	if c.task != "" {
		th.Active.Tasks = map[string]string{c.member: string(c.task)}
	}
	if s.opt.Lease > 0 {
		th.Active.LeaseExpires = time.Now().Add(s.opt.Lease)
	}
	v, err := s.store.PutThread(ctx, th)
	if errors.Is(err, ErrConflict) {
		return nil, threadBusy(th.Key, "another run")
	}
	if err != nil {
		return nil, StoreError(err)
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
			if a.ID == r.InterruptID && a.Status == r.Status && a.PayloadHash == mapping.PayloadHash(r.Payload) {
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
func rejectedRun(key ThreadKey, in *agui.RunAgentInput, rej *rejection) *RunReader {
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
	return &RunReader{Key: key, RunID: in.RunID, Fixed: fixed}
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
