package agents

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
)

// jsonOf renders v the way describeParts renders data.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestApproverTwoTurns(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	edited := BookingArgs()
	edited["passengers"] = 3
	tests := []struct {
		name     string
		response map[string]any // what the user decided; "args" is filled in from the proposal when absent
		used     map[string]any // the args the booking must use; nil for a denial
		want     string
	}{
		{name: "approve", response: map[string]any{"approved": true}, used: BookingArgs(),
			want: "Booked LH123 to Lisbon for 2 passengers. Confirmation ABC123."},
		{name: "deny", response: map[string]any{"approved": false}, want: ApproverDenied},
		{name: "edit", response: map[string]any{"approved": true, "args": edited}, used: edited,
			want: "Booked LH123 to Lisbon for 3 passengers. Confirmation ABC123."},
	}
	for _, agent := range []string{"approver", "quiet-approver"} {
		for _, tt := range tests {
			for _, tr := range transports {
				t.Run(agent+"/"+tt.name+"/"+tr.name, func(t *testing.T) {
					t.Parallel()
					ctx := t.Context()
					client := newClient(t, srv, agent, tr)
					first, task := collect(t, client.SendStreamingMessage(ctx, userMessage(a2a.NewTextPart("Book me a flight to Lisbon"))))
					callID := ApproverCallPrefix + string(task.TaskID)
					call := fmt.Sprintf(`data[] %s meta{"adk_is_long_running":true,"adk_type":"function_call"}`,
						jsonOf(t, map[string]any{"id": callID, "name": "book_flight", "args": BookingArgs()}))
					want := []string{
						"task SUBMITTED artifacts=0",
						"status WORKING",
						fmt.Sprintf("status INPUT_REQUIRED ROLE_AGENT: %q + %s", ApproverQuestion, call),
					}
					if diff := cmp.Diff(want, first); diff != "" {
						t.Fatalf("first turn (-want +got):\n%s", diff)
					}

					// What the bridge sends back: the decision with the args to use.
					response := map[string]any{"approved": tt.response["approved"], "args": BookingArgs()}
					if args, ok := tt.response["args"]; ok {
						response["args"] = args
					}
					decision := a2a.NewMessageForTask(a2a.MessageRoleUser, task, FunctionResponsePart(callID, ApproverTool, response))
					decision.Metadata = map[string]any{"ag-ui": map[string]any{"interruptId": "i-1", "status": "resolved"}}
					second, info := collect(t, client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: decision}))
					want = []string{"status WORKING"}
					if tt.used != nil && agent == "approver" { // quiet-approver never echoes
						result := jsonOf(t, map[string]any{"id": callID, "name": "book_flight", "response": BookingResult(tt.used)})
						want = append(want, fmt.Sprintf(`status WORKING ROLE_AGENT: data[] %s meta{"adk_type":"function_response"}`, result))
					}
					want = append(want, fmt.Sprintf("artifact booking append=false last=true: %q", tt.want), "status COMPLETED")
					if diff := cmp.Diff(want, second); diff != "" {
						t.Errorf("second turn (-want +got):\n%s", diff)
					}
					if info != task {
						t.Errorf("second turn ran on %+v, want %+v", info, task)
					}
					if tt.used != nil && BookedAnswer(tt.used) != tt.want {
						t.Errorf("BookedAnswer(%v) = %q, want %q", tt.used, BookedAnswer(tt.used), tt.want)
					}
				})
			}
		}
	}
}

// A follow-up that is not a decision on the proposed call (plain text, another
// call's id, another tool, no boolean) gets the question again; the task
// still waits and a proper decision afterwards books.
func TestApproverAsksAgain(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			client := newClient(t, srv, "approver", tr)
			_, task := collect(t, client.SendStreamingMessage(ctx, userMessage(a2a.NewTextPart("Book it"))))
			callID := ApproverCallPrefix + string(task.TaskID)
			notDecisions := []*a2a.Part{
				a2a.NewTextPart("yes please"),
				FunctionResponsePart("call-other", ApproverTool, map[string]any{"approved": true}),
				FunctionResponsePart(callID, "cancel_flight", map[string]any{"approved": true}),
				FunctionResponsePart(callID, ApproverTool, map[string]any{"approved": "yes"}),
				a2a.NewDataPart(map[string]any{"id": callID, "name": ApproverTool, "response": map[string]any{"approved": true}}),
			}
			for i, part := range notDecisions {
				got, _ := collect(t, client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{
					Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, part),
				}))
				if len(got) != 2 || got[0] != "status WORKING" || got[1][:len("status INPUT_REQUIRED")] != "status INPUT_REQUIRED" {
					t.Errorf("follow-up %d (%s): got %q, want WORKING then the question again", i, describeParts(a2a.ContentParts{part}), got)
				}
			}
			got, _ := collect(t, client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{
				Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task,
					FunctionResponsePart(callID, ApproverTool, map[string]any{"approved": true})),
			}))
			if want := fmt.Sprintf("artifact booking append=false last=true: %q", BookedAnswer(BookingArgs())); len(got) != 4 || got[2] != want {
				t.Errorf("decision after re-asking: got %q, want the booking %q", got, want)
			}
		})
	}
}
