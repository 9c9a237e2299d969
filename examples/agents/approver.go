package agents

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// The ADK function-call convention the [Approver] follows: a data part holding
// {"id", "name", "args"} (a proposed call) or {"id", "name", "response"} (its
// result, or the user's decision on it), marked by part metadata.
const (
	ADKTypeKey          = "adk_type"            // part metadata key naming the part's kind
	ADKLongRunningKey   = "adk_is_long_running" // part metadata key: true on a call awaiting approval
	ADKFunctionCall     = "function_call"       // ADKTypeKey value of a proposed call
	ADKFunctionResponse = "function_response"   // ADKTypeKey value of a call's result or decision
)

// Texts and values of the [Approver].
const (
	ApproverTool         = "book_flight"
	ApproverQuestion     = "I'd like to book flight LH123 to Lisbon on 2026-12-24 for 2 passengers. Approve?"
	ApproverDenied       = "OK, I did not book anything."
	ApproverConfirmation = "ABC123"
	ApproverCallPrefix   = "call-book-" // the call id is this prefix followed by the task ID
)

// BookingArgs returns the arguments of the call the [Approver] proposes; its
// question describes exactly these.
func BookingArgs() map[string]any {
	return map[string]any{"flight": "LH123", "to": "Lisbon", "date": "2026-12-24", "passengers": 2}
}

// BookedAnswer is the [Approver]'s answer after booking with args (the
// proposed ones or the user's edit): "Booked LH123 to Lisbon for 2
// passengers. Confirmation ABC123."
func BookedAnswer(args map[string]any) string {
	return fmt.Sprintf("Booked %v to %v for %v passengers. Confirmation %s.",
		args["flight"], args["to"], args["passengers"], ApproverConfirmation)
}

// BookingResult is the response of the booking call the [Approver] reports
// after booking with args.
func BookingResult(args map[string]any) map[string]any {
	return map[string]any{"status": "booked", "confirmation": ApproverConfirmation, "args": args}
}

// FunctionCallPart is a long-running ADK function call awaiting approval:
// data {"id", "name", "args"} with metadata {"adk_type": "function_call",
// "adk_is_long_running": true}.
func FunctionCallPart(id, name string, args map[string]any) *a2a.Part {
	return &a2a.Part{
		Content:  a2a.Data{Value: map[string]any{"id": id, "name": name, "args": args}},
		Metadata: map[string]any{ADKTypeKey: ADKFunctionCall, ADKLongRunningKey: true},
	}
}

// FunctionResponsePart is an ADK function response: data {"id", "name",
// "response"} with metadata {"adk_type": "function_response"}. The approval
// the bridge forwards and the result the [Approver] reports both take this form.
func FunctionResponsePart(id, name string, response map[string]any) *a2a.Part {
	return &a2a.Part{
		Content:  a2a.Data{Value: map[string]any{"id": id, "name": name, "response": response}},
		Metadata: map[string]any{ADKTypeKey: ADKFunctionResponse},
	}
}

// Approver books a flight, but only once the user approves the call (ADK's
// long-running function-call convention). The call id is
// [ApproverCallPrefix] followed by the task ID.
//
// First turn (the execution ends at INPUT_REQUIRED, so does the stream):
//
//	Task{SUBMITTED} → Status{WORKING} → Status{INPUT_REQUIRED, message parts:
//	  text [ApproverQuestion],
//	  data {"id": <call id>, "name": "book_flight", "args": [BookingArgs]}
//	    with metadata {"adk_type": "function_call", "adk_is_long_running": true}}
//
// Next turn on the same task, with a data part {"id": <call id>, "name":
// "book_flight", "response": {"approved": bool, "args": {…}}} and metadata
// {"adk_type": "function_response"}. Approved, it books with response.args
// (the proposed args when absent):
//
//	Status{WORKING} → Status{WORKING, message part: data {"id": <call id>, "name": "book_flight",
//	  "response": [BookingResult](args)} with metadata {"adk_type": "function_response"}}
//	→ Artifact{"booking", append=false, lastChunk=true, [BookedAnswer](args)} → Status{COMPLETED}
//
// Denied, it books nothing and reports no function response:
//
//	Status{WORKING} → Artifact{"booking", append=false, lastChunk=true, "OK, I did not book anything."}
//	→ Status{COMPLETED}
//
// A follow-up without a decision on this call asks again (Status{WORKING} →
// Status{INPUT_REQUIRED …} as above).
//
// Quiet, it never reports the call's result itself — it books and answers,
// as most agents (ADK's among them) do after reading the function_response.
type Approver struct {
	cancelOnly
	Delay time.Duration // pause before the question, the booking and the answer; 0 means none
	Quiet bool          // do not echo a function_response
}

// Execute implements [a2asrv.AgentExecutor].
func (a Approver) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Delay, func(r *run) {
		if !r.start() || !r.status(a2a.TaskStateWorking, "") || !r.pause() {
			return
		}
		callID := ApproverCallPrefix + string(ec.TaskID)
		proposed := BookingArgs()
		resuming := ec.StoredTask != nil && ec.StoredTask.Status.State == a2a.TaskStateInputRequired
		decision, ok := approvalFrom(ec.Message, callID)
		if !resuming || !ok {
			question := r.agentMessage(a2a.NewTextPart(ApproverQuestion), FunctionCallPart(callID, ApproverTool, proposed))
			r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, question))
			return
		}
		if !decision.approved {
			if r.artifact("booking", a2a.NewTextPart(ApproverDenied)) {
				r.status(a2a.TaskStateCompleted, "")
			}
			return
		}
		args := proposed
		if decision.args != nil {
			args = decision.args
		}
		if !a.Quiet {
			result := r.agentMessage(FunctionResponsePart(callID, ApproverTool, BookingResult(args)))
			if !r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, result)) || !r.pause() {
				return
			}
		}
		if !r.artifact("booking", a2a.NewTextPart(BookedAnswer(args))) {
			return
		}
		r.status(a2a.TaskStateCompleted, "")
	})
}

type approval struct {
	approved bool
	args     map[string]any // nil: keep the proposed args
}

// approvalFrom finds the user's decision on call callID: a function_response
// data part naming the call and the tool, whose response holds a boolean
// "approved" and optionally the args to use.
func approvalFrom(m *a2a.Message, callID string) (approval, bool) {
	if m == nil {
		return approval{}, false
	}
	for _, p := range m.Parts {
		if p == nil || p.Metadata[ADKTypeKey] != ADKFunctionResponse {
			continue
		}
		obj, ok := p.Data().(map[string]any)
		if !ok || obj["name"] != ApproverTool {
			continue
		}
		if id, ok := obj["id"].(string); !ok || id != callID {
			continue
		}
		resp, ok := obj["response"].(map[string]any)
		if !ok {
			continue
		}
		approved, ok := resp["approved"].(bool)
		if !ok {
			continue
		}
		d := approval{approved: approved}
		if args, ok := resp["args"].(map[string]any); ok && len(args) > 0 {
			d.args = maps.Clone(args)
		}
		return d, true
	}
	return approval{}, false
}

var _ a2asrv.AgentExecutor = Approver{}
