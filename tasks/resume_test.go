package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

func status(state a2a.TaskState, parts ...*a2a.Part) *a2a.StatusUpdate {
	u := &a2a.StatusUpdate{TaskID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: state}}
	if len(parts) > 0 {
		u.Status.Message = &a2a.Message{ID: "m", Role: a2a.RoleAgent, Parts: parts}
	}
	return u
}

func schemaPart() *a2a.Part {
	p := a2a.NewDataPart(map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
		"required": []any{"city"}})
	p.MediaType = mapping.SchemaMediaType
	return p
}

func callPart(id string) *a2a.Part {
	p := a2a.NewDataPart(map[string]any{"id": id, "name": "book_flight", "args": map[string]any{"flight": "LH123", "passengers": 2}})
	p.Metadata = map[string]any{"adk_type": "function_call", "adk_is_long_running": true}
	return p
}

// askTurns: turn 1 asks for a city; turn 2 answers.
func askTurns() [][]scripted {
	return [][]scripted{
		{{ev: task(a2a.TaskStateSubmitted, "")}, {ev: status(a2a.TaskStateInputRequired, a2a.NewTextPart("Which city?"), schemaPart())}},
		{{ev: status(a2a.TaskStateWorking)}, {ev: chunk("Sunny.", false)}, {ev: status(a2a.TaskStateCompleted)}},
	}
}

func resumeInput(thread, run string, entries ...agui.ResumeEntry) *agui.RunAgentInput {
	in := input(thread, run)
	in.ProtocolVersion = "1.0"
	in.Resume = entries
	return in
}

func resolved(id, payload string) agui.ResumeEntry {
	return agui.ResumeEntry{InterruptID: id, Status: agui.ResumeResolved, Payload: json.RawMessage(payload)}
}

// interruptRun runs turn 1 and returns the interrupt the run ended with.
func interruptRun(t *testing.T, svc *Service, thread string) (agui.Interrupt, []agui.Event) {
	t.Helper()
	in := input(thread, "r1")
	in.ProtocolVersion = "1.0"
	run, err := svc.StartRun(t.Context(), "a", in)
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, run)
	fin, ok := events[len(events)-1].(*agui.RunFinished)
	if !ok || fin.Outcome == nil || fin.Outcome.Type != agui.OutcomeInterrupt {
		t.Fatalf("want an interrupt outcome, got %#v", events[len(events)-1])
	}
	return fin.Outcome.Interrupts[0], events
}

func wantCode(t *testing.T, svc *Service, in *agui.RunAgentInput, code string) {
	t.Helper()
	run, err := svc.StartRun(t.Context(), "a", in)
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, run)
	if len(events) != 2 || events[0].Type() != agui.EventRunStarted {
		t.Fatalf("want RUN_STARTED + RUN_ERROR, got %d events", len(events))
	}
	if e := lastError(t, events); e.Code != code || e.Message == "" {
		t.Fatalf("code %q (%s), want %q", e.Code, e.Message, code)
	}
}

func TestInterruptSnapshotsBeforeFinishing(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, turns: askTurns()}
	svc, store := newTestService(t, agent, nil)
	in, events := interruptRun(t, svc, "th")
	n := len(events)
	snap, ok1 := events[n-3].(*agui.StateSnapshot)
	msgs, ok2 := events[n-2].(*agui.MessagesSnapshot)
	if !ok1 || !ok2 {
		t.Fatalf("want STATE_SNAPSHOT, MESSAGES_SNAPSHOT before RUN_FINISHED; got %s, %s", events[n-3].Type(), events[n-2].Type())
	}
	if !bytes.Contains(snap.Snapshot, []byte(`"task-1"`)) {
		t.Errorf("state snapshot %s lacks the task", snap.Snapshot)
	}
	if len(msgs.Messages) != 2 || msgs.Messages[0].ID != "u1" || msgs.Messages[1].Role != agui.RoleAssistant {
		t.Errorf("messages snapshot must hold the whole conversation with the client's ids: %+v", msgs.Messages)
	}
	if in.Reason != mapping.ReasonInputRequired || in.ResponseSchema == nil || in.Message != "Which city?" {
		t.Errorf("interrupt %+v", in)
	}
	th, err := store.GetThread(t.Context(), ThreadKey{Agent: "a", ThreadID: "th"})
	if err != nil || len(th.Interrupts) != 1 || th.Interrupts[0].Interrupt.ID != in.ID {
		t.Fatalf("interrupt not persisted: %+v %v", th, err)
	}
}

func TestResumeContinuesTheSameTask(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, turns: askTurns()}
	svc, store := newTestService(t, agent, nil)
	in, _ := interruptRun(t, svc, "th")
	run, err := svc.StartRun(t.Context(), "a", resumeInput("th", "r2", resolved(in.ID, `{"city":"Paris"}`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := text(collect(t, run)); got != "Sunny." {
		t.Fatalf("text %q", got)
	}
	sent := agent.sent[1]
	if sent.TaskID != "task-1" || sent.ContextID != "ctx-1" {
		t.Fatalf("resume sent to task %q context %q", sent.TaskID, sent.ContextID)
	}
	data, _ := sent.Parts[0].Data().(map[string]any)
	if data["city"] != "Paris" {
		t.Fatalf("payload part %#v", sent.Parts)
	}
	meta, _ := sent.Metadata["ag-ui"].(map[string]any)
	if meta["interruptId"] != in.ID || meta["status"] != agui.ResumeResolved {
		t.Fatalf("metadata %#v", sent.Metadata)
	}
	th, _ := store.GetThread(t.Context(), ThreadKey{Agent: "a", ThreadID: "th"})
	if len(th.Interrupts) != 0 || len(th.Resolved) != 1 {
		t.Fatalf("thread after resume: %+v", th)
	}
}

func TestStringPayloadAlsoTravelsAsText(t *testing.T) {
	t.Parallel()
	turns := askTurns()
	turns[0][1] = scripted{ev: status(a2a.TaskStateInputRequired, a2a.NewTextPart("Which city?"))}
	agent := &scriptedAgent{streaming: true, turns: turns}
	svc, _ := newTestService(t, agent, nil)
	in, _ := interruptRun(t, svc, "th")
	collect(t, must(svc.StartRun(t.Context(), "a", resumeInput("th", "r2", resolved(in.ID, `"Paris"`)))))
	if p := agent.sent[1].Parts; len(p) != 2 || p[0].Text() != "Paris" || p[1].Data() != "Paris" {
		t.Fatalf("parts %#v", p)
	}
}

func must(r *RunReader, err error) *RunReader {
	if err != nil {
		panic(err)
	}
	return r
}

// TestResumeContractRules: one case per rule of the AG-UI interrupt
// contract, each with its own code; none reaches the agent or changes the
// thread.
func TestResumeContractRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		input func(in agui.Interrupt) *agui.RunAgentInput
		code  string
		ttl   time.Duration
	}{
		{"pending interrupts block input without resume",
			func(agui.Interrupt) *agui.RunAgentInput { return input("th", "r2") }, agui.CodeInterruptPending, 0},
		{"every id correlates",
			func(agui.Interrupt) *agui.RunAgentInput {
				return resumeInput("th", "r2", resolved("not-an-interrupt", `{"city":"Paris"}`))
			}, agui.CodeResumeUnknownInterrupt, 0},
		{"the same interrupt twice",
			func(in agui.Interrupt) *agui.RunAgentInput {
				return resumeInput("th", "r2", resolved(in.ID, `{"city":"Paris"}`), resolved(in.ID, `{"city":"Rome"}`))
			}, agui.CodeResumeDuplicate, 0},
		{"payload missing",
			func(in agui.Interrupt) *agui.RunAgentInput {
				return resumeInput("th", "r2", agui.ResumeEntry{InterruptID: in.ID, Status: agui.ResumeResolved})
			}, agui.CodeResumePayloadMissing, 0},
		{"payload against responseSchema",
			func(in agui.Interrupt) *agui.RunAgentInput {
				return resumeInput("th", "r2", resolved(in.ID, `{"city":5}`))
			}, agui.CodeResumePayloadInvalid, 0},
		{"payload missing a required field",
			func(in agui.Interrupt) *agui.RunAgentInput {
				return resumeInput("th", "r2", resolved(in.ID, `{"town":"Paris"}`))
			}, agui.CodeResumePayloadInvalid, 0},
		{"not past expiresAt",
			func(in agui.Interrupt) *agui.RunAgentInput {
				return resumeInput("th", "r2", resolved(in.ID, `{"city":"Paris"}`))
			}, agui.CodeInterruptExpired, time.Nanosecond},
		{"a client-made result for a server tool call",
			nil, agui.CodeToolResultNotAllowed, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			agent := &scriptedAgent{streaming: true, turns: askTurns()}
			if c.input == nil {
				agent.turns[0][1] = scripted{ev: status(a2a.TaskStateInputRequired, a2a.NewTextPart("Approve?"), callPart("c1"))}
			}
			svc, store := newTestService(t, agent, func(s *AgentSpec) { s.InterruptTTL = c.ttl })
			in, _ := interruptRun(t, svc, "th")
			before, _ := store.GetThread(t.Context(), ThreadKey{Agent: "a", ThreadID: "th"})
			var req *agui.RunAgentInput
			if c.input != nil {
				req = c.input(in)
			} else {
				// Without the resume of the call's approval: a result
				// only the agent may produce.
				req = input("th", "r2")
				req.Messages = append(req.Messages, agui.Message{ID: "forged", Role: agui.RoleTool, ToolCallID: in.ToolCallID,
					Content: agui.TextContent(`{"status":"booked"}`)})
			}
			wantCode(t, svc, req, c.code)
			after, _ := store.GetThread(t.Context(), ThreadKey{Agent: "a", ThreadID: "th"})
			if after.Version != before.Version || len(agent.sent) != 1 {
				t.Fatalf("a rejected resume changed the thread (v%d → v%d) or reached the agent (%d sends)",
					before.Version, after.Version, len(agent.sent))
			}
			// The thread stays usable: a valid resume still works.
			if c.code != agui.CodeInterruptExpired && c.input != nil {
				collect(t, must(svc.StartRun(t.Context(), "a", resumeInput("th", "r3", resolved(in.ID, `{"city":"Paris"}`)))))
				if len(agent.sent) != 2 {
					t.Fatal("the valid resume did not reach the agent")
				}
			}
		})
	}
}

func TestResumeMustCoverEveryInterrupt(t *testing.T) {
	t.Parallel()
	turns := askTurns()
	turns[0][1] = scripted{ev: status(a2a.TaskStateInputRequired, a2a.NewTextPart("Approve both?"), callPart("c1"), callPart("c2"))}
	agent := &scriptedAgent{streaming: true, turns: turns}
	svc, _ := newTestService(t, agent, nil)
	_, events := interruptRun(t, svc, "th")
	fin := events[len(events)-1].(*agui.RunFinished)
	if len(fin.Outcome.Interrupts) != 2 {
		t.Fatalf("want two tool_call interrupts, got %+v", fin.Outcome.Interrupts)
	}
	wantCode(t, svc, resumeInput("th", "r2", resolved(fin.Outcome.Interrupts[0].ID, `{"approved":true}`)), agui.CodeInterruptNotResumed)
}

func TestResumeOnTheWrongThread(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, turns: askTurns()}
	svc, _ := newTestService(t, agent, nil)
	in, _ := interruptRun(t, svc, "th-a")
	wantCode(t, svc, resumeInput("th-b", "r2", resolved(in.ID, `{"city":"Paris"}`)), agui.CodeResumeWrongThread)
}

// TestIdempotentReplay: the same resume again is answered from the journal
// with the same events, and the agent gets no second message.
func TestIdempotentReplay(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, turns: askTurns()}
	svc, _ := newTestService(t, agent, nil)
	in, _ := interruptRun(t, svc, "th")
	first := rawEvents(t, must(svc.StartRun(t.Context(), "a", resumeInput("th", "r2", resolved(in.ID, `{"city":"Paris"}`)))))
	// The same answer with its keys reordered in a new run is the same resume.
	again := rawEvents(t, must(svc.StartRun(t.Context(), "a", resumeInput("th", "r3", resolved(in.ID, ` { "city" : "Paris" } `)))))
	if !slices.EqualFunc(first, again, bytes.Equal) {
		t.Fatalf("replay differs:\n%s\n---\n%s", bytes.Join(first, []byte("\n")), bytes.Join(again, []byte("\n")))
	}
	if len(agent.sent) != 2 {
		t.Fatalf("the agent got %d messages, want 2 (ask, one answer)", len(agent.sent))
	}
	// A different answer to the resolved interrupt is refused.
	wantCode(t, svc, resumeInput("th", "r4", resolved(in.ID, `{"city":"Rome"}`)), agui.CodeInterruptAlreadyResolved)
}

func rawEvents(t *testing.T, run *RunReader) [][]byte {
	t.Helper()
	var out [][]byte
	for b, err := range run.Events(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, append([]byte(nil), b.Event...))
	}
	return out
}

func TestCancelledResumeCancelsTheTask(t *testing.T) {
	t.Parallel()
	for _, v1 := range []bool{true, false} {
		agent := &scriptedAgent{streaming: true, turns: askTurns()}
		svc, _ := newTestService(t, agent, nil)
		in, _ := interruptRun(t, svc, "th")
		req := resumeInput("th", "r2", agui.ResumeEntry{InterruptID: in.ID, Status: agui.ResumeCancelled})
		if !v1 {
			req.ProtocolVersion = ""
		}
		events := collect(t, must(svc.StartRun(t.Context(), "a", req)))
		last := events[len(events)-1]
		switch e := last.(type) {
		case *agui.RunFinished:
			if !v1 || e.Outcome == nil || e.Outcome.Type != agui.OutcomeCancelled {
				t.Fatalf("v1=%v: %+v", v1, e)
			}
		case *agui.RunError:
			if v1 || e.Code != mapping.CodeCancelled {
				t.Fatalf("v1=%v: %+v", v1, e)
			}
		}
		if len(agent.canceled) != 1 || len(agent.sent) != 1 {
			t.Fatalf("cancel calls %v, sends %d", agent.canceled, len(agent.sent))
		}
	}
}

func TestExpiresAtOnlyForV1Clients(t *testing.T) {
	t.Parallel()
	for _, v1 := range []bool{true, false} {
		agent := &scriptedAgent{streaming: true, turns: askTurns()}
		svc, store := newTestService(t, agent, func(s *AgentSpec) { s.InterruptTTL = time.Hour })
		in := input("th", "r1")
		if v1 {
			in.ProtocolVersion = "1.0"
		}
		events := collect(t, must(svc.StartRun(t.Context(), "a", in)))
		got := events[len(events)-1].(*agui.RunFinished).Outcome.Interrupts[0].ExpiresAt
		if (got != "") != v1 {
			t.Fatalf("v1=%v: expiresAt %q", v1, got)
		}
		th, _ := store.GetThread(t.Context(), ThreadKey{Agent: "a", ThreadID: "th"})
		if th.Interrupts[0].ExpiresAt.IsZero() {
			t.Fatal("expiry must be enforced even when not sent")
		}
	}
}

// TestToolApproval: approve, deny and approve-with-edits of a proposed
// function call, by an agent that echoes its own function_response and by
// one that does not. Either way the resumed run holds exactly one
// TOOL_CALL_RESULT on the original call: the agent's when it sends one,
// else the answer the bridge sent (a denial included).
// approvalTurns: turn 1 proposes book_flight (call c1) for approval; turn
// 2 answers, after echoing the call's result when echo is set.
func approvalTurns(echo bool, answer string) [][]scripted {
	response := a2a.NewDataPart(map[string]any{"id": "c1", "name": "book_flight", "response": map[string]any{"status": "booked"}})
	response.Metadata = map[string]any{"adk_type": "function_response"}
	turn2 := []scripted{{ev: status(a2a.TaskStateWorking)}}
	if echo {
		turn2 = append(turn2, scripted{ev: status(a2a.TaskStateWorking, response)})
	}
	turn2 = append(turn2, scripted{ev: chunk(answer, false)}, scripted{ev: status(a2a.TaskStateCompleted)})
	return [][]scripted{
		{{ev: task(a2a.TaskStateSubmitted, "")}, {ev: status(a2a.TaskStateInputRequired, a2a.NewTextPart("Book LH123?"), callPart("c1"))}},
		turn2,
	}
}

func TestToolApproval(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, payload string
		approved      bool
		passengers    float64
		echo          bool
		content       string // the result's content
	}{
		{"approve", `{"approved":true}`, true, 2, true, `{"status":"booked"}`},
		{"approve-no-echo", `{"approved":true}`, true, 2, false, `{"approved":true,"args":{"flight":"LH123","passengers":2}}`},
		{"deny", `{"approved":false}`, false, 2, false, `{"approved":false,"args":{"flight":"LH123","passengers":2}}`},
		{"edit", `{"approved":true,"editedArgs":{"flight":"LH123","passengers":3}}`, true, 3, true, `{"status":"booked"}`},
		{"edit-no-echo", `{"approved":true,"editedArgs":{"flight":"LH123","passengers":3}}`, true, 3, false, `{"approved":true,"args":{"flight":"LH123","passengers":3}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			agent := &scriptedAgent{streaming: true, turns: approvalTurns(c.echo, "Done.")}
			svc, store := newTestService(t, agent, nil)
			in, events := interruptRun(t, svc, "th")
			if in.Reason != mapping.ReasonToolCall || in.ToolCallID == "" {
				t.Fatalf("interrupt %+v", in)
			}
			if !slices.ContainsFunc(events, func(e agui.Event) bool {
				s, ok := e.(*agui.ToolCallStart)
				return ok && s.ToolCallID == in.ToolCallID && s.Metadata[mapping.ToolExecutionKey] == "server"
			}) {
				t.Fatal("the proposed call was not shown as a server tool call")
			}
			events = collect(t, must(svc.StartRun(t.Context(), "a", resumeInput("th", "r2", resolved(in.ID, c.payload)))))
			var results []*agui.ToolCallResult
			firstText := -1
			for i, e := range events {
				switch e := e.(type) {
				case *agui.ToolCallStart, *agui.ToolCallArgs, *agui.ToolCallEnd:
					t.Fatalf("the resumed run re-emitted %s", e.Type())
				case *agui.ToolCallResult:
					if firstText >= 0 {
						t.Fatal("the result came after the answer's text")
					}
					results = append(results, e)
				case *agui.TextMessageStart:
					if firstText < 0 {
						firstText = i
					}
				}
			}
			if len(results) != 1 || results[0].ToolCallID != in.ToolCallID || results[0].Content != c.content {
				t.Fatalf("results %+v, want one on %s with content %s", results, in.ToolCallID, c.content)
			}
			sent := agent.sent[1].Parts[0]
			data := sent.Data().(map[string]any)
			resp := data["response"].(map[string]any)
			args := resp["args"].(map[string]any)
			if sent.Metadata["adk_type"] != "function_response" || data["id"] != "c1" || resp["approved"] != c.approved ||
				args["passengers"] != c.passengers {
				t.Fatalf("function_response sent: %#v", data)
			}
			// The thread holds the tool message once, and the call as reported.
			th, err := store.GetThread(t.Context(), ThreadKey{Agent: "a", ThreadID: "th"})
			if err != nil {
				t.Fatal(err)
			}
			toolMsgs := 0
			for _, m := range th.Messages {
				if m.Role == agui.RoleTool && m.ToolCallID == in.ToolCallID {
					toolMsgs++
				}
			}
			if toolMsgs != 1 || len(th.ToolCalls) != 1 || !th.ToolCalls[0].Reported {
				t.Fatalf("thread: %d tool messages, calls %+v", toolMsgs, th.ToolCalls)
			}
			// An identical replay answers with the same bytes, from the journal.
			first := rawEvents(t, must(svc.StartRun(t.Context(), "a", resumeInput("th", "r2", resolved(in.ID, c.payload)))))
			again := rawEvents(t, must(svc.StartRun(t.Context(), "a", resumeInput("th", "r2", resolved(in.ID, c.payload)))))
			if diff := cmp.Diff(first, again); diff != "" || len(agent.sent) != 2 {
				t.Fatalf("replay differs or reached the agent (%d sends): %s", len(agent.sent), diff)
			}
		})
	}
}

// TestToolApprovalWithTheClientsToolMessage: CopilotKit's useInterrupt
// resolves a tool_call interrupt with the resume and also appends a tool
// message carrying the answer (PEERS.md §13). That message is redundant:
// the run goes through and the agent gets one function_response. The call
// keeps one result, in the client's message: its content becomes the
// call's result (the agent's own when it echoes one, else the decision
// sent), shown by a MESSAGES_SNAPSHOT that clients apply in place, never
// by a TOOL_CALL_RESULT that they would add as a second tool message.
func TestToolApprovalWithTheClientsToolMessage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		echo    bool
		content string
	}{
		{"no-echo", false, `{"approved":true,"args":{"flight":"LH123","passengers":2}}`},
		{"echo", true, `{"status":"booked"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			agent := &scriptedAgent{streaming: true, turns: approvalTurns(c.echo, "Booked.")}
			svc, store := newTestService(t, agent, nil)
			in, first := interruptRun(t, svc, "th")
			resume := func() *agui.RunAgentInput {
				req := resumeInput("th", "r1", resolved(in.ID, `{"approved":true}`)) // CopilotKit reuses the runId
				for _, e := range first {
					if snap, ok := e.(*agui.MessagesSnapshot); ok {
						req.Messages = snap.Messages
					}
				}
				req.Messages = append(req.Messages, agui.Message{ID: "ck-tool-1", Role: agui.RoleTool, ToolCallID: in.ToolCallID,
					Content: agui.TextContent(`{"approved":true}`)})
				return req
			}
			results := func(msgs []agui.Message) (ids, contents []string) {
				for _, m := range msgs {
					if m.Role == agui.RoleTool && m.ToolCallID == in.ToolCallID {
						ids = append(ids, m.ID)
						contents = append(contents, m.Content.Text)
					}
				}
				return ids, contents
			}
			events := collect(t, must(svc.StartRun(t.Context(), "a", resume())))
			var snapshot *agui.MessagesSnapshot
			for _, e := range events {
				switch e := e.(type) {
				case *agui.RunError:
					t.Fatalf("RUN_ERROR %s: %s", e.Code, e.Message)
				case *agui.ToolCallResult:
					t.Fatalf("a TOOL_CALL_RESULT beside the client's own tool message: %+v", e)
				case *agui.ToolCallStart:
					t.Fatal("the resumed run re-emitted the call")
				case *agui.MessagesSnapshot:
					snapshot = e
				}
			}
			if _, ok := events[len(events)-1].(*agui.RunFinished); !ok {
				t.Fatalf("the run ended with %s", events[len(events)-1].Type())
			}
			if snapshot == nil {
				t.Fatal("no MESSAGES_SNAPSHOT carries the call's result")
			}
			want := []string{"ck-tool-1"}
			if ids, contents := results(snapshot.Messages); !slices.Equal(ids, want) || contents[0] != c.content {
				t.Fatalf("snapshot: tool messages %v %v, want one, ck-tool-1 holding %s", ids, contents, c.content)
			}
			if len(agent.sent) != 2 || len(agent.sent[1].Parts) != 1 || agent.sent[1].Parts[0].Metadata["adk_type"] != "function_response" {
				t.Fatalf("the agent must get the approval once, as one function_response: %+v", agent.sent)
			}
			th, err := store.GetThread(t.Context(), ThreadKey{Agent: "a", ThreadID: "th"})
			if err != nil {
				t.Fatal(err)
			}
			if ids, contents := results(th.Messages); !slices.Equal(ids, want) || contents[0] != c.content ||
				len(th.ToolCalls) != 1 || !th.ToolCalls[0].Reported || len(th.Interrupts) != 0 {
				t.Fatalf("thread: tool messages %v %v, calls %+v, %d interrupts pending", ids, contents, th.ToolCalls, len(th.Interrupts))
			}
			// The same request again (a retry) is answered from the journal.
			again := collect(t, must(svc.StartRun(t.Context(), "a", resume())))
			if len(agent.sent) != 2 || len(again) != len(events) {
				t.Fatalf("the retry reached the agent (%d sends) or differs (%d events, want %d)", len(agent.sent), len(again), len(events))
			}
		})
	}
}

// TestStaleRunOfADeadProcess: with an exclusive store, an active run
// recorded by an earlier process does not block the thread.
func TestStaleRunOfADeadProcess(t *testing.T) {
	t.Parallel()
	store := store.NewMemoryStore()
	key := ThreadKey{Agent: "a", ThreadID: "th"}
	if _, err := store.PutThread(t.Context(), &Thread{Key: key, Active: &ActiveRun{RunID: "r0", Owner: "dead-process"}}); err != nil {
		t.Fatal(err)
	}
	agent := &scriptedAgent{streaming: true, stream: []scripted{{ev: &a2a.Message{ID: "m", Role: a2a.RoleAgent,
		Parts: []*a2a.Part{a2a.NewTextPart("ok")}}}}}
	svc := NewService(Options{Store: store, ExclusiveStore: true, Agents: []AgentSpec{{Name: "a",
		Connect: func(context.Context) (Agent, error) { return agent, nil }}}})
	defer svc.Close(t.Context())
	if got := text(collect(t, must(svc.StartRun(t.Context(), "a", input("th", "r1"))))); !strings.Contains(got, "ok") {
		t.Fatalf("text %q", got)
	}
}

// TestAuthResumeAfterTheStreamEnded: the agent finished by itself after an
// AUTH_REQUIRED interrupt; the resume run shows the backlog and sends
// nothing. Without a live signInWatch (a restart) GetTask tells the same.
func TestAuthResumeAfterTheStreamEnded(t *testing.T) {
	t.Parallel()
	for _, restart := range []bool{false, true} {
		agent := &scriptedAgent{streaming: true, turns: [][]scripted{{
			{ev: task(a2a.TaskStateSubmitted, "")},
			{ev: status(a2a.TaskStateAuthRequired, a2a.NewTextPart("Sign in first."))},
			{ev: status(a2a.TaskStateWorking)},
			{ev: chunk("Your files.", false)},
			{ev: status(a2a.TaskStateCompleted)},
		}}, tasks: []*a2a.Task{task(a2a.TaskStateCompleted, "Your files.")}}
		svc, store := newTestService(t, agent, nil)
		in, _ := interruptRun(t, svc, "th")
		if in.Reason != mapping.ReasonAuthRequired {
			t.Fatalf("interrupt %+v", in)
		}
		if restart {
			// A new process over the same store has no signInWatch.
			svc = NewService(Options{Store: store, ExclusiveStore: true, Agents: []AgentSpec{{Name: "a",
				Connect: func(context.Context) (Agent, error) { return agent, nil }}}})
			defer svc.Close(t.Context())
		} else {
			// Wait for the signInWatch to read the rest of the stream.
			deadline := time.Now().Add(5 * time.Second)
			for {
				svc.mu.Lock()
				f := svc.signIns[ThreadKey{Agent: "a", ThreadID: "th"}]
				svc.mu.Unlock()
				if f != nil {
					f.mu.Lock()
					ended := f.ended
					f.mu.Unlock()
					if ended {
						break
					}
				}
				if time.Now().After(deadline) {
					t.Fatal("the signInWatch did not read the stream")
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		events := collect(t, must(svc.StartRun(t.Context(), "a", resumeInput("th", "r2", resolved(in.ID, `{}`)))))
		if got := text(events); got != "Your files." || events[len(events)-1].Type() != agui.EventRunFinished {
			t.Fatalf("restart=%v: text %q, last %s", restart, got, events[len(events)-1].Type())
		}
		if len(agent.sent) != 1 {
			t.Fatalf("restart=%v: the agent got %d messages, want only the first", restart, len(agent.sent))
		}
	}
}

// TestSchemaLoadsNoReferences: an agent's schema cannot make the bridge read
// a file (or reach the network) through $ref.
func TestSchemaLoadsNoReferences(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := dir + "/secret.json"
	if err := os.WriteFile(secret, []byte(`{"const":"hunter2-secret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	err := mapping.ValidatePayload(map[string]any{"$ref": "file://" + secret}, json.RawMessage(`"x"`))
	if err != nil && strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("the schema read a local file: %v", err)
	}
	err = mapping.ValidatePayload(map[string]any{"type": "object", "required": []any{"city"}}, json.RawMessage(`{}`))
	if err == nil || strings.Contains(err.Error(), "urn:") || strings.Contains(err.Error(), "/") {
		t.Fatalf("validation error %v", err)
	}
}

// TestResumeReusingTheRunID: CopilotKit resumes an interrupt with the
// interrupted run's runId. A task that asks twice (a wizard) must still
// raise two interrupts with different ids, its second question must not
// append to the first one's message, and the second resume must work.
func TestResumeReusingTheRunID(t *testing.T) {
	t.Parallel()
	ask := func(q string) []scripted {
		return []scripted{{ev: status(a2a.TaskStateWorking)}, {ev: status(a2a.TaskStateInputRequired, a2a.NewTextPart(q))}}
	}
	agent := &scriptedAgent{streaming: true, turns: [][]scripted{
		append([]scripted{{ev: task(a2a.TaskStateSubmitted, "")}}, ask("Which city?")...),
		ask("Which date?"),
		{{ev: status(a2a.TaskStateWorking)}, {ev: chunk("Booked.", false)}, {ev: status(a2a.TaskStateCompleted)}},
	}}
	svc, _ := newTestService(t, agent, nil)
	first, events1 := interruptRun(t, svc, "th")
	events2 := collect(t, must(svc.StartRun(t.Context(), "a", resumeInput("th", "r1", resolved(first.ID, `"Lisbon"`)))))
	fin, ok := events2[len(events2)-1].(*agui.RunFinished)
	if !ok || fin.Outcome == nil || len(fin.Outcome.Interrupts) != 1 {
		t.Fatalf("the first resume must end with the second question, got %s", events2[len(events2)-1].Type())
	}
	second := fin.Outcome.Interrupts[0]
	if second.ID == first.ID {
		t.Fatalf("both questions raised interrupt %s", first.ID)
	}
	messages := func(events []agui.Event) map[string]bool {
		ids := map[string]bool{}
		for _, e := range events {
			if s, ok := e.(*agui.TextMessageStart); ok {
				ids[s.MessageID] = true
			}
		}
		return ids
	}
	for id := range messages(events2) {
		if messages(events1)[id] {
			t.Fatalf("the second run writes to message %s of the first", id)
		}
	}
	events3 := collect(t, must(svc.StartRun(t.Context(), "a", resumeInput("th", "r1", resolved(second.ID, `"Friday"`)))))
	if _, ok := events3[len(events3)-1].(*agui.RunFinished); !ok || len(agent.sent) != 3 {
		t.Fatalf("the second resume ends with %s after %d sends", events3[len(events3)-1].Type(), len(agent.sent))
	}
}
