package tasks

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// rejection is a resume the bridge refuses: the run is RUN_STARTED then
// RUN_ERROR{code}, and nothing is written to the thread.
type rejection struct {
	code, message string
}

// resumePlan is a valid resume: what to send to the agent.
type resumePlan struct {
	taskID    a2a.TaskID
	contextID string
	parts     []*a2a.Part
	metadata  map[string]any
	// cancel is set when every interrupt was cancelled: the bridge
	// cancels the A2A task instead of answering it.
	cancel bool
	// auth is set when the task waits for a credential (AUTH_REQUIRED):
	// it may have gone on by itself, so what it did is shown first.
	auth bool
	// subscribe: the member reattaches to taskID (a run taken over).
	subscribe bool
	resolved  []ResolvedInterrupt
	// results are the answers to the agent's tool calls the message
	// carries: the resumed run reports them as the calls' results.
	results []mapping.SentToolResult
	// members holds the resume split by member (a single agent's run has
	// one): each member's answers go to its own task. The plan itself
	// holds them all.
	members map[string]*resumePlan
	// echoed maps the AG-UI tool calls whose result the client sent itself
	// beside the resume that approves them (CopilotKit's useInterrupt
	// does) to the id of that tool message: the call's result, when the
	// run has it, replaces that message's content rather than adding a
	// second tool message (mapping.Options.ClientResults).
	echoed map[string]string
}

// member returns the part of the plan for a team member, creating it.
func (p *resumePlan) member(name string) *resumePlan {
	if p.members == nil {
		p.members = map[string]*resumePlan{}
	}
	m := p.members[name]
	if m == nil {
		m = &resumePlan{cancel: true}
		p.members[name] = m
	}
	return m
}

// replay locates the events of an earlier resume run that an identical
// resume is answered with.
type replay struct {
	runID string
	after int64
}

// planRun decides what a run on th does with in: nothing special (nil
// results), a rejection, a replay of an earlier identical resume, or a
// resume plan.
func (s *Service) planRun(ctx context.Context, th *Thread, in *agui.RunAgentInput) (*resumePlan, *replay, *rejection) {
	echoed, rej := checkToolResults(th, in)
	if rej != nil {
		return nil, nil, rej
	}
	if len(in.Resume) == 0 {
		if len(th.Interrupts) > 0 {
			ids := make([]string, len(th.Interrupts))
			for i, p := range th.Interrupts {
				ids[i] = p.Interrupt.ID
			}
			return nil, nil, &rejection{agui.CodeInterruptPending, fmt.Sprintf(
				"the thread has %d pending interrupt(s) (%s); the next run must carry a resume addressing them",
				len(ids), strings.Join(ids, ", "))}
		}
		return nil, nil, nil
	}

	seen := map[string]bool{}
	for _, r := range in.Resume {
		if seen[r.InterruptID] {
			return nil, nil, &rejection{agui.CodeResumeDuplicate, fmt.Sprintf("interrupt %s is answered twice", r.InterruptID)}
		}
		seen[r.InterruptID] = true
	}
	if len(th.Interrupts) == 0 {
		rp, rej := s.matchReplay(ctx, th, in)
		return nil, rp, rej
	}

	pending, rej := s.addressed(ctx, th, in, seen)
	if rej != nil {
		return nil, nil, rej
	}

	plan := &resumePlan{cancel: true, echoed: echoed}
	now := time.Now()
	var acks []any
	memberAcks := map[string][]any{}
	for _, r := range in.Resume {
		p := pending[r.InterruptID]
		plan.taskID, plan.contextID = a2a.TaskID(p.TaskID), p.ContextID
		plan.auth = plan.auth || p.State == string(a2a.TaskStateAuthRequired)
		sub := plan.member(cmp.Or(p.Member, th.Key.Agent))
		sub.taskID, sub.contextID = a2a.TaskID(p.TaskID), p.ContextID
		sub.auth = sub.auth || p.State == string(a2a.TaskStateAuthRequired)
		if r.Status == agui.ResumeResolved {
			plan.cancel = false
			sub.cancel = false
			if rej := checkAnswer(p, r, now); rej != nil {
				return nil, nil, rej
			}
		}
		parts, result, err := mapping.AnswerParts(p, r)
		if err != nil {
			return nil, nil, &rejection{agui.CodeResumePayloadInvalid, fmt.Sprintf("interrupt %s: %v", p.Interrupt.ID, err)}
		}
		plan.parts = append(plan.parts, parts...)
		if result != nil {
			plan.results = append(plan.results, *result)
		}
		plan.resolved = append(plan.resolved, ResolvedInterrupt{ID: r.InterruptID, Status: r.Status,
			PayloadHash: mapping.PayloadHash(r.Payload), At: now})
		ack := map[string]any{"interruptId": r.InterruptID, "status": r.Status}
		acks = append(acks, ack)
		sub.parts = append(sub.parts, parts...)
		if result != nil {
			sub.results = append(sub.results, *result)
		}
		memberAcks[cmp.Or(p.Member, th.Key.Agent)] = append(memberAcks[cmp.Or(p.Member, th.Key.Agent)], ack)
	}
	plan.metadata = resumeMetadata(acks)
	for name, a := range memberAcks {
		plan.members[name].metadata = resumeMetadata(a)
	}
	return plan, nil, nil
}

// addressed checks that a resume answers exactly the thread's pending
// interrupts (seen: the ids it answers), and returns them by id.
func (s *Service) addressed(ctx context.Context, th *Thread, in *agui.RunAgentInput, seen map[string]bool) (map[string]mapping.PendingInterrupt, *rejection) {
	pending := map[string]mapping.PendingInterrupt{}
	for _, p := range th.Interrupts {
		pending[p.Interrupt.ID] = p
	}
	for _, r := range in.Resume {
		if _, ok := pending[r.InterruptID]; !ok {
			return nil, s.unknownInterrupt(ctx, th, r.InterruptID)
		}
	}
	for _, p := range th.Interrupts {
		if !seen[p.Interrupt.ID] {
			return nil, &rejection{agui.CodeInterruptNotResumed, fmt.Sprintf(
				"resume must address pending interrupt %s (partial resumes are not supported)", p.Interrupt.ID)}
		}
	}
	return pending, nil
}

// checkAnswer checks a resolved interrupt's answer r at now: not expired,
// with a payload its response schema accepts.
func checkAnswer(p mapping.PendingInterrupt, r agui.ResumeEntry, now time.Time) *rejection {
	if !p.ExpiresAt.IsZero() && now.After(p.ExpiresAt) {
		return &rejection{agui.CodeInterruptExpired, fmt.Sprintf(
			"interrupt %s expired at %s; cancel it to continue the thread", p.Interrupt.ID, p.ExpiresAt.Format(time.RFC3339))}
	}
	if mapping.PayloadAbsent(r.Payload) {
		return &rejection{agui.CodeResumePayloadMissing, fmt.Sprintf(
			"resume of interrupt %s has status resolved but no payload", p.Interrupt.ID)}
	}
	if err := mapping.ValidatePayload(p.Interrupt.ResponseSchema, r.Payload); err != nil {
		return &rejection{agui.CodeResumePayloadInvalid, fmt.Sprintf(
			"the payload for interrupt %s does not match its responseSchema: %v", p.Interrupt.ID, err)}
	}
	return nil
}

// resumeMetadata tells the agent which interrupts the message answers.
func resumeMetadata(acks []any) map[string]any {
	first := acks[0].(map[string]any)
	return map[string]any{"ag-ui": map[string]any{
		"interruptId": first["interruptId"], "status": first["status"], "resume": acks}}
}

// matchReplay answers a resume on a thread with nothing pending: an exact
// replay of an earlier resume gets that run's events again; anything else
// names the rule it breaks.
func (s *Service) matchReplay(ctx context.Context, th *Thread, in *agui.RunAgentInput) (*replay, *rejection) {
	var rp *replay
	for _, r := range in.Resume {
		var match *ResolvedInterrupt
		for i := range th.Resolved {
			if th.Resolved[i].ID == r.InterruptID {
				match = &th.Resolved[i]
			}
		}
		if match == nil {
			return nil, s.unknownInterrupt(ctx, th, r.InterruptID)
		}
		if match.Status != r.Status || match.PayloadHash != mapping.PayloadHash(r.Payload) {
			return nil, &rejection{agui.CodeInterruptAlreadyResolved, fmt.Sprintf(
				"interrupt %s was already resolved with a different answer", r.InterruptID)}
		}
		if rp != nil && rp.runID != match.RunID {
			return nil, &rejection{agui.CodeInterruptAlreadyResolved, "the interrupts were resolved by different runs"}
		}
		if match.AfterSeq < th.JournalFrom {
			// An identical resume replays the run that answered it, but
			// that run's events were compacted away (compact.go).
			return nil, &rejection{agui.CodeInterruptAlreadyResolved, fmt.Sprintf(
				"interrupt %s was resolved by an earlier run, whose events this thread no longer keeps", r.InterruptID)}
		}
		rp = &replay{runID: match.RunID, after: match.AfterSeq}
	}
	return rp, nil
}

// unknownInterrupt answers a resume naming an interrupt not pending on th.
// The index is searched among th's principal's threads only: an interrupt
// of another principal's thread is answered as an id that exists nowhere,
// while one of the caller's own other threads is named as such (the
// caller may read that thread anyway, so the hint tells nothing new).
func (s *Service) unknownInterrupt(ctx context.Context, th *Thread, id string) *rejection {
	if key, err := s.store.InterruptThread(ctx, th.Key.Principal, id); err == nil && key != th.Key {
		return &rejection{agui.CodeResumeWrongThread, fmt.Sprintf(
			"interrupt %s belongs to another thread; resume it on the thread that raised it", id)}
	}
	return &rejection{agui.CodeResumeUnknownInterrupt, fmt.Sprintf("interrupt %s is not pending on this thread", id)}
}

// checkToolResults refuses a client-made tool message for a call the
// remote agent executes: only the agent produces those results. One
// exception: a tool message for a call whose approval interrupt the same
// request resumes says what the resume says (CopilotKit's useInterrupt
// appends one to every tool_call resolution, PEERS.md §13). It is accepted,
// never forwarded (the resume is the answer), and returned in echoed (tool
// call id → message id) so the run gives the call one result.
func checkToolResults(th *Thread, in *agui.RunAgentInput) (echoed map[string]string, rej *rejection) {
	if len(th.ToolCalls) == 0 {
		return nil, nil
	}
	known := map[string]bool{}
	for _, m := range th.Messages {
		known[m.ID] = true
	}
	resumed := resumedToolCalls(th, in)
	for _, m := range in.Messages {
		if m.Role != agui.RoleTool || known[m.ID] {
			continue
		}
		if resumed[m.ToolCallID] {
			if echoed == nil {
				echoed = map[string]string{}
			}
			if _, dup := echoed[m.ToolCallID]; !dup {
				echoed[m.ToolCallID] = m.ID
			}
			continue
		}
		for _, ref := range th.ToolCalls {
			if ref.ToolCallID == m.ToolCallID {
				return nil, &rejection{agui.CodeToolResultNotAllowed, fmt.Sprintf(
					"tool call %s (%s) is executed by the remote agent; answer its approval interrupt instead of sending a result",
					ref.ToolCallID, ref.Name)}
			}
		}
	}
	return echoed, nil
}

// resumedToolCalls are the AG-UI tool calls whose pending approval
// interrupt in's resume answers.
func resumedToolCalls(th *Thread, in *agui.RunAgentInput) map[string]bool {
	if len(in.Resume) == 0 {
		return nil
	}
	answered := make(map[string]bool, len(in.Resume))
	for _, r := range in.Resume {
		answered[r.InterruptID] = true
	}
	out := map[string]bool{}
	for _, p := range th.Interrupts {
		if p.ToolCall != nil && answered[p.Interrupt.ID] {
			out[p.ToolCall.ToolCallID] = true
		}
	}
	return out
}

// appendResolved adds answered interrupts to the thread's memory, keeping
// the newest maxResolved.
func appendResolved(list, add []ResolvedInterrupt) []ResolvedInterrupt {
	list = append(list, add...)
	if over := len(list) - maxResolved; over > 0 {
		list = slices.Delete(list, 0, over)
	}
	return list
}
