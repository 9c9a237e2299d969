package tasks

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// TestFrontendToolRoundTrip: an agent asks the client to run one of its
// tools; the run ends with the call pending, and the next run's tool
// message goes back to the same A2A task as a function_response.
func TestFrontendToolRoundTrip(t *testing.T) {
	t.Parallel()
	call := a2a.NewDataPart(map[string]any{"id": "call-bg", "name": "change_background", "args": map[string]any{"color": "blue"}})
	call.Metadata = map[string]any{"adk_type": "function_call"}
	agent := &scriptedAgent{streaming: true, extension: true, turns: [][]scripted{
		{{ev: task(a2a.TaskStateSubmitted, "")}, {ev: status(a2a.TaskStateInputRequired, call)}},
		{{ev: status(a2a.TaskStateWorking)}, {ev: chunk("Background changed.", false)}, {ev: status(a2a.TaskStateCompleted)}},
	}}
	svc, store := newTestService(t, agent, nil)
	tools := []agui.Tool{{Name: "change_background", Description: "Changes the background",
		Parameters: json.RawMessage(`{"type":"object"}`)}}
	in := input("th", "r1")
	in.ProtocolVersion = "1.0"
	in.Tools = tools
	in.State = json.RawMessage(`{"userName":"Ada","a2a":{"old":1}}`)
	in.Context = []agui.ContextItem{{Description: "page", Value: "settings"}}
	events := collect(t, must(svc.StartRun(t.Context(), "a", in)))
	fin := events[len(events)-1].(*agui.RunFinished)
	if fin.Outcome == nil || fin.Outcome.Type != agui.OutcomeSuccess || len(fin.Outcome.PendingToolCallIDs) != 1 {
		t.Fatalf("want success with a pending tool call, got %+v", fin.Outcome)
	}
	callID := fin.Outcome.PendingToolCallIDs[0]

	// The extension carried the client's state (minus the bridge's key),
	// context and tools to the agent.
	ext, _ := agent.sent[0].Metadata[mapping.ExtensionURI].(map[string]any)
	state, _ := ext["state"].(map[string]any)
	if state["userName"] != "Ada" || state["a2a"] != nil || len(ext["tools"].([]any)) != 1 || len(ext["context"].([]any)) != 1 {
		t.Fatalf("extension metadata %#v", ext)
	}

	th, _ := store.GetThread(t.Context(), ThreadKey{Agent: "a", ThreadID: "th"})
	if len(th.FrontendCalls) != 1 || len(th.Interrupts) != 0 {
		t.Fatalf("thread %+v", th)
	}
	in2 := input("th", "r2")
	in2.ProtocolVersion = "1.0"
	in2.Tools = tools
	in2.Messages = append(in2.Messages,
		agui.Message{ID: "a1", Role: agui.RoleAssistant, ToolCalls: []agui.ToolCall{{ID: callID, Type: "function",
			Function: agui.FunctionCall{Name: "change_background", Arguments: `{"color":"blue"}`}}}},
		agui.Message{ID: "t1", Role: agui.RoleTool, ToolCallID: callID, Content: agui.TextContent(`{"ok":true}`)})
	if got := text(collect(t, must(svc.StartRun(t.Context(), "a", in2)))); got != "Background changed." {
		t.Fatalf("text %q", got)
	}
	sent := agent.sent[1]
	if sent.TaskID != "task-1" || len(sent.Parts) != 1 || sent.Parts[0].Metadata["adk_type"] != "function_response" {
		t.Fatalf("sent %#v", sent)
	}
	resp := sent.Parts[0].Data().(map[string]any)
	if resp["id"] != "call-bg" || resp["response"].(map[string]any)["ok"] != true {
		t.Fatalf("function_response %#v", resp)
	}
	th, _ = store.GetThread(t.Context(), ThreadKey{Agent: "a", ThreadID: "th"})
	if len(th.FrontendCalls) != 0 || !slices.Contains(th.SeenMessageIDs, "t1") {
		t.Fatalf("thread after the round trip %+v", th)
	}
}

// TestStateSurvivesRuns: the bridge's part of the state carries over to
// the next run's opening snapshot, with the version counting on.
func TestStateSurvivesRuns(t *testing.T) {
	t.Parallel()
	data := a2a.NewDataPart(map[string]any{"step": 1})
	agent := &scriptedAgent{streaming: true, stream: []scripted{
		{ev: task(a2a.TaskStateWorking, "")},
		{ev: &a2a.ArtifactUpdate{TaskID: "task-1", Artifact: &a2a.Artifact{ID: "progress", Parts: []*a2a.Part{data}}}},
		{ev: status(a2a.TaskStateInputRequired, a2a.NewTextPart("More?"))},
	}}
	svc, _ := newTestService(t, agent, nil)
	events := collect(t, must(svc.StartRun(t.Context(), "a", input("th", "r1"))))
	_ = events
	in := resumeInput("th", "r2", agui.ResumeEntry{InterruptID: lastInterrupt(t, events), Status: agui.ResumeCancelled})
	in.State = json.RawMessage(`{"mine":1}`)
	events = collect(t, must(svc.StartRun(t.Context(), "a", in)))
	snap := events[1].(*agui.StateSnapshot)
	var state map[string]any
	if err := json.Unmarshal(snap.Snapshot, &state); err != nil {
		t.Fatal(err)
	}
	view := state["a2a"].(map[string]any)
	if state["mine"] == nil || view["artifacts"].(map[string]any)["progress"] == nil {
		t.Fatalf("opening snapshot %s", snap.Snapshot)
	}
	if v := snap.Metadata[mapping.MetadataKey].(map[string]any)["stateVersion"]; v == float64(0) || v == nil {
		t.Fatalf("state version %v", v)
	}
}

func lastInterrupt(t *testing.T, events []agui.Event) string {
	t.Helper()
	fin := events[len(events)-1].(*agui.RunFinished)
	return fin.Outcome.Interrupts[0].ID
}

func TestInlinePartTooLarge(t *testing.T) {
	t.Parallel()
	svc, store := newTestService(t, &scriptedAgent{streaming: true}, func(s *AgentSpec) { s.MaxInlineBytes = 8 })
	in := input("th", "r1")
	in.Messages = []agui.Message{{ID: "u1", Role: agui.RoleUser, Content: &agui.Content{Kind: agui.ContentParts,
		Parts: []agui.ContentPart{{Type: "image", Source: &agui.Source{Type: "data", Value: "aGVsbG8gd29ybGQgaGVsbG8=", MimeType: "image/png"}}}}}}
	_, err := svc.StartRun(t.Context(), "a", in)
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus() != http.StatusRequestEntityTooLarge {
		t.Fatalf("err %v", err)
	}
	if _, err := store.GetThread(t.Context(), ThreadKey{Agent: "a", ThreadID: "th"}); !errors.Is(err, ErrNotFound) {
		t.Fatal("a refused request wrote the thread")
	}
}
