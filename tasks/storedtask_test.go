package tasks

import (
	"testing"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// storedTaskAgent is a scripted agent whose card says it reports tool
// calls only in the stored task (a2a.Agent.ReportsInStoredTask: Mastra).
type storedTaskAgent struct{ *scriptedAgent }

func (storedTaskAgent) ReportsInStoredTask() bool { return true }

// TestToolCallsFromTheStoredTask: when such an agent's stream completes the
// task, the run reads the stored task and shows the tool calls and results
// of its metadata.execution before it ends; the answer stays shown once.
// For other agents the stream's own completion ends the run, unread.
func TestToolCallsFromTheStoredTask(t *testing.T) {
	t.Parallel()
	stored := &a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
		Artifacts: []*a2a.Artifact{{ID: "art-1", Parts: []*a2a.Part{a2a.NewTextPart("It is snowy.")}}},
		Metadata: map[string]any{"execution": map[string]any{
			"toolCalls": []any{map[string]any{"type": "tool-call", "payload": map[string]any{
				"toolCallId": "call-w1", "toolName": "get_weather", "args": map[string]any{"city": "Oslo"}}}},
			"toolResults": []any{map[string]any{"type": "tool-result", "payload": map[string]any{
				"toolCallId": "call-w1", "toolName": "get_weather", "result": map[string]any{"forecast": "snowy"}}}},
		}}}
	for _, reports := range []bool{true, false} {
		scripted := &scriptedAgent{streaming: true, tasks: []*a2a.Task{stored}, stream: []scripted{
			{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("It is snowy.", false)}, {ev: status(a2a.TaskStateCompleted)}}}
		var agent Agent = scripted
		if reports {
			agent = storedTaskAgent{scripted}
		}
		svc, _ := newTestService(t, agent, nil)
		events := collect(t, must(svc.StartRun(t.Context(), "a", input("th", "r1"))))
		var starts, results int
		for _, e := range events {
			switch e := e.(type) {
			case *agui.ToolCallStart:
				starts++
				if e.ToolCallName != "get_weather" || e.Metadata["ag-ui:tool-execution"] != "server" {
					t.Fatalf("tool call %+v", e)
				}
			case *agui.ToolCallResult:
				results++
				if e.Content != `{"forecast":"snowy"}` {
					t.Fatalf("result %s", e.Content)
				}
			}
		}
		want := 0
		if reports {
			want = 1
		}
		if starts != want || results != want || scripted.gets != want {
			t.Fatalf("reports=%v: %d calls, %d results, %d GetTask; want %d each", reports, starts, results, scripted.gets, want)
		}
		if _, ok := events[len(events)-1].(*agui.RunFinished); !ok {
			t.Fatalf("reports=%v: ends with %s", reports, events[len(events)-1].Type())
		}
	}
}
