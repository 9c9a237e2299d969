package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

// mirror applies the run's state events to the request's state, the way a
// client does, and returns the final document.
func (r runResult) mirror(t *testing.T, initial string) map[string]any {
	t.Helper()
	doc := []byte(initial)
	for _, e := range r.events {
		switch e := e.(type) {
		case *agui.StateSnapshot:
			doc = append([]byte(nil), e.Snapshot...)
		case *agui.StateDelta:
			raw, _ := json.Marshal(e.Delta)
			patch, err := jsonpatch.DecodePatch(raw)
			if err != nil {
				t.Fatal(err)
			}
			if doc, err = patch.Apply(doc); err != nil {
				t.Fatalf("delta %s does not apply: %v", raw, err)
			}
		}
	}
	var out map[string]any
	if err := json.Unmarshal(doc, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func stateBody(thread, run string, v1 bool, state string, tools []agui.Tool, messages ...agui.Message) []byte {
	in := map[string]any{"threadId": thread, "runId": run, "messages": messages, "state": json.RawMessage(state),
		"tools": tools, "context": []any{}, "forwardedProps": map[string]any{}}
	if tools == nil {
		in["tools"] = []any{}
	}
	if v1 {
		in["protocolVersion"] = "1.0"
	}
	b, _ := json.Marshal(in)
	return b
}

// TestSharedStateFromDataArtifacts: the dashboard's data artifacts, status
// data and UI keys reach the client's state under the bridge's key; the
// client's own keys are untouched and reached the agent (extension).
func TestSharedStateFromDataArtifacts(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	const initial = `{"userName":"Ada","theme":"light"}`
	for _, v1 := range []bool{true, false} {
		t.Run(fmt.Sprintf("v1=%v", v1), func(t *testing.T) {
			t.Parallel()
			r := b.post(t, "dashboard", stateBody(fmt.Sprintf("th-dash-%v", v1), "run-1", v1, initial, nil, userMsg("u1", "Show the dashboard")))
			r.check(t, v1)
			r.wantAnswerOnce(t, agents.DashboardAnswer("Ada"))
			state := r.mirror(t, initial)
			if state["userName"] != "Ada" || state["theme"] != "light" {
				t.Fatalf("the client's keys were touched: %v", state)
			}
			view := state["a2a"].(map[string]any)
			want := map[string]any{"artifacts": normalize(agents.DashboardArtifacts()), "statusData": normalize(agents.DashboardStatusData()),
				"ui": normalize(agents.DashboardUI())}
			got := map[string]any{"artifacts": view["artifacts"], "statusData": view["statusData"], "ui": view["ui"]}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("state (-want +got):\n%s", diff)
			}
			if task := view["task"].(map[string]any); task["state"] != "completed" || view["agent"] != "dashboard" {
				t.Fatalf("view %v", view)
			}
		})
	}
}

func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// TestReasoningAndFiles: thoughts are reasoning for 1.0 clients and stay
// out of the answer for older ones; files are activities (1.0) or CUSTOM
// events, and listed in the state.
func TestReasoningAndFiles(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	for _, v1 := range []bool{true, false} {
		t.Run(fmt.Sprintf("v1=%v", v1), func(t *testing.T) {
			t.Parallel()
			r := b.post(t, "thinker", stateBody(fmt.Sprintf("th-think-%v", v1), "run-1", v1, `{}`, nil, userMsg("u1", "Think")))
			r.check(t, v1)
			r.wantAnswerOnce(t, agents.ThinkerAnswer)
			reasoning, activities, customs := 0, 0, 0
			for _, e := range r.events {
				switch e := e.(type) {
				case *agui.ReasoningMessageContent:
					reasoning++
				case *agui.ActivitySnapshot:
					if e.ActivityType == "a2a.file" {
						activities++
					}
				case *agui.Custom:
					customs++
				}
			}
			if v1 && (reasoning == 0 || activities != 2) || !v1 && (reasoning != 0 || activities != 0 || customs < 3) {
				t.Fatalf("v1=%v: reasoning %d, file activities %d, custom %d\n%s", v1, reasoning, activities, customs, r.body)
			}
			if txt := r.text(); containsAny(txt, agents.ThinkerThought1, agents.ThinkerThought2) {
				t.Fatalf("a thought leaked into the answer: %q", txt)
			}
			files := r.mirror(t, `{}`)["a2a"].(map[string]any)["files"].([]any)
			if len(files) != 2 {
				t.Fatalf("files in state: %v", files)
			}
		})
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestFrontendToolOverTheBridge: the painter asks the frontend to run its
// change_background tool; the tool's result goes back to the same task.
func TestFrontendToolOverTheBridge(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	tools := []agui.Tool{{Name: agents.PainterTool, Description: "Changes the page background",
		Parameters: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}}}`)}}
	r := b.post(t, "painter", stateBody("th-paint", "run-1", true, `{}`, tools, userMsg("u1", "Paint it")))
	r.check(t, true)
	o := r.outcome()
	if o == nil || o.Type != agui.OutcomeSuccess || len(o.PendingToolCallIDs) != 1 {
		t.Fatalf("want the tool call pending:\n%s", r.body)
	}
	callID := o.PendingToolCallIDs[0]
	msgs := []agui.Message{userMsg("u1", "Paint it"),
		{ID: "a1", Role: agui.RoleAssistant, ToolCalls: []agui.ToolCall{{ID: callID, Type: "function",
			Function: agui.FunctionCall{Name: agents.PainterTool, Arguments: `{"color":"blue"}`}}}},
		{ID: "tool-1", Role: agui.RoleTool, ToolCallID: callID, Content: agui.TextContent("ok")}}
	r2 := b.post(t, "painter", stateBody("th-paint", "run-2", true, `{}`, tools, msgs...))
	r2.check(t, true)
	r2.wantAnswerOnce(t, agents.PainterAnswer("ok"))
}
