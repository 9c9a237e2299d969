package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// A2UI in a run (mapping/a2ui.go has the protocol): the run activates the
// version mapping.ChooseA2UI picks on every call it makes to the agent,
// every message it sends carries the renderer's capabilities (under the
// name that version reads: a2uiRendererCapabilities for v1.0), and
// a user's action on a surface (forwardedProps.a2uiAction) goes to the
// agent as an A2UI data part — the answer to the agent's pending
// INPUT_REQUIRED when it waits for one, a new turn in the thread's
// context otherwise.

// a2uiVersion is the A2UI version a run on agent activates.
func a2uiVersion(spec *AgentSpec, agent Agent, in *agui.RunAgentInput) mapping.A2UIVersion {
	if agent == nil {
		return ""
	}
	return mapping.ChooseA2UI(spec.A2UI, agent.DeclaresExtension, mapping.ClientRendersA2UI(in.IsV1(), in.ForwardedProps))
}

// a2uiActivities reports a client before 1.0 that renders A2UI surfaces
// (mapping.ClientRendersA2UI): its runs show them as activities.
func a2uiActivities(in *agui.RunAgentInput) bool {
	return !in.IsV1() && mapping.ClientRendersA2UI(false, in.ForwardedProps)
}

// newGuard is the output guard of a run: agui.NewGuard, except that a
// client before 1.0 that renders A2UI is held to 0.0.59's rules alone —
// 0.0.36 rejects the activity events it asked for.
func newGuard(in *agui.RunAgentInput) *agui.Guard {
	if a2uiActivities(in) {
		return agui.NewGuardFor(agui.Gen0_0_59)
	}
	return agui.NewGuard(in.IsV1())
}

// a2uiAction is a run's A2UI action, decoded and checked before the run
// claims its thread: the part to send, and whether it answers the
// thread's pending interrupts.
type a2uiAction struct {
	part   *a2a.Part
	resume bool
}

// planA2UIAction decodes forwardedProps.a2uiAction for a run on th. An
// action the agent cannot take (it did not activate A2UI for this run, the
// action is malformed or too large, or the run has several members, which
// do not share the surfaces) is an
// *Error before anything is sent. With pending input-required interrupts
// the action is their answer: the input gets a resume for them unless it
// carries one (whose payloads the part replaces: see useA2UIAnswer).
func (s *Service) planA2UIAction(ctx context.Context, st *start, th *Thread, in *agui.RunAgentInput) (*a2uiAction, error) {
	if !mapping.HasA2UIAction(in.ForwardedProps) {
		return nil, nil
	}
	spec, several := st.spec, len(st.crew.Members) > 1
	var version mapping.A2UIVersion
	if !several {
		member := st.cat.agents[st.crew.Members[0]]
		agent, err := member.Connect(ctx)
		if err != nil {
			return nil, agentError(member.Name, err)
		}
		version = a2uiVersion(member, agent, in)
	}
	part, err := mapping.A2UIActionPart(in.ForwardedProps, version, mapping.A2UIActionOptions{
		MaxBytes: spec.MaxA2UIActionBytes, Now: time.Now})
	switch {
	case errors.Is(err, mapping.ErrA2UINotActive) && several:
		return nil, &Error{Code: agui.CodeA2UINotActive, Err: err,
			Message: "forwardedProps.a2uiAction: a team does not route A2UI actions to its members; send the action to the member's own endpoint"}
	case errors.Is(err, mapping.ErrA2UINotActive):
		return nil, &Error{Code: agui.CodeA2UINotActive, Err: err,
			Message: "forwardedProps.a2uiAction: agent " + spec.Name + " did not activate A2UI for this run (its card lists no A2UI version the bridge knows, its a2ui switch is off, or the client is older than protocol 1.0 under a2ui: auto)"}
	case errors.Is(err, mapping.ErrA2UIActionTooLarge):
		return nil, &Error{Code: agui.CodeA2UIActionTooLarge, Message: err.Error(), Err: err}
	case err != nil:
		return nil, &Error{Code: agui.CodeA2UIActionInvalid, Message: err.Error(), Err: err}
	}
	if id := mapping.A2UIActionSurfaceID(part); !s.shownSurface(ctx, th, id) {
		return nil, &Error{Code: agui.CodeA2UIActionInvalid,
			Message: fmt.Sprintf("forwardedProps.a2uiAction: surface %q was not shown on this thread", id)}
	}
	act := &a2uiAction{part: part}
	if len(th.Interrupts) == 0 {
		return act, nil
	}
	for _, p := range th.Interrupts {
		if p.ToolCall != nil || p.State != string(a2a.TaskStateInputRequired) {
			return act, nil // not questions an action answers: the run's own resume decides
		}
	}
	// The action answers the agent's questions. A 1.0 client must address
	// pending interrupts itself (@ag-ui/client refuses a run that does not),
	// so its resume may come along; the action is the answer either way.
	act.resume = true
	for _, r := range in.Resume {
		if r.Status != agui.ResumeResolved {
			return nil, &Error{Code: agui.CodeA2UIActionInvalid,
				Message: "forwardedProps.a2uiAction answers the pending interrupts; it cannot come with a resume that cancels " + r.InterruptID}
		}
	}
	if len(in.Resume) == 0 {
		payload, _ := json.Marshal(part.Data())
		for _, p := range th.Interrupts {
			in.Resume = append(in.Resume, agui.ResumeEntry{InterruptID: p.Interrupt.ID, Status: agui.ResumeResolved, Payload: payload})
		}
	}
	return act, nil
}

// shownSurface reports whether the thread's journal shows the A2UI surface
// id: an action goes to the agent only for a surface it drew on this
// thread (issue 33 item 10). Actions are rare and the journal is bounded
// (compaction keeps a thread's recent runs), so it is read whole; a
// surface from runs compaction dropped is no longer acted on. A journal
// that cannot be read counts as not showing it.
func (s *Service) shownSurface(ctx context.Context, th *Thread, id string) bool {
	const page = 256
	for after := int64(0); ; {
		entries, err := s.store.Read(ctx, th.Key, after, page)
		if err != nil || len(entries) == 0 {
			return false
		}
		for _, e := range entries {
			if mapping.ShowsA2UISurface(e.Event, id) {
				return true
			}
			after = e.Seq
		}
		if len(entries) < page {
			return false
		}
	}
}

// useA2UIAnswer puts the action's part where the run's message needs it:
// as the answer to the interrupts it resumes (instead of the generic data
// part built from the synthesized resume payloads), else before the
// user's new text.
func (act *a2uiAction) useA2UIAnswer(plan *resumePlan, parts []*a2a.Part) []*a2a.Part {
	if act == nil {
		return parts
	}
	if act.resume && plan != nil {
		plan.parts = []*a2a.Part{act.part}
		for _, m := range plan.members {
			m.parts = plan.parts
		}
		return parts
	}
	return append([]*a2a.Part{act.part}, parts...)
}

// activateA2UI does both for any agent of a run (a team's members too):
// ctx activates the version, msg (nil: none) carries the capabilities.
func activateA2UI(ctx context.Context, spec *AgentSpec, agent Agent, in *agui.RunAgentInput, msg *a2a.Message) context.Context {
	v := a2uiVersion(spec, agent, in)
	if v == "" {
		return ctx
	}
	if msg != nil {
		msg.Metadata = mapping.WithA2UICapabilities(msg.Metadata, v,
			mapping.A2UIClientCapabilities(in.ForwardedProps, v, spec.A2UICatalogs))
	}
	return a2a.WithHeaders(ctx, map[string]string{"A2A-Extensions": v.ExtensionURI()})
}
