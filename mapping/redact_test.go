package mapping

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	in := map[string]any{
		"user":     "ada",
		"Password": "hunter2",
		"nested":   map[string]any{"API_KEY": "k", "list": []any{map[string]any{"token": "t", "ok": 1}}},
	}
	got := Redact(in, []string{"password", "api_key", "token"})
	want := map[string]any{
		"user":     "ada",
		"Password": Redacted,
		"nested":   map[string]any{"API_KEY": Redacted, "list": []any{map[string]any{"token": Redacted, "ok": 1}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Redact (-want +got):\n%s", diff)
	}
	if in["Password"] != "hunter2" {
		t.Error("Redact modified its input")
	}
	if diff := cmp.Diff(in, Redact(in, nil)); diff != "" {
		t.Errorf("no keys changed the value:\n%s", diff)
	}
}

// TestRedactState: agent data reaches the shared state (snapshot and
// deltas) with the values of sensitive keys replaced, and the secrets
// appear in no event at all.
func TestRedactState(t *testing.T) {
	t.Parallel()
	in := &agui.RunAgentInput{ThreadID: "t", RunID: "r"}
	tr := New(Options{ThreadID: "t", RunID: "r", Input: in, RedactKeys: []string{"password", "secret"}})
	events := []a2a.Event{
		&a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
		&a2a.ArtifactUpdate{TaskID: "task-1", Artifact: &a2a.Artifact{ID: "creds", Parts: []*a2a.Part{
			a2a.NewDataPart(map[string]any{"login": "ada", "Password": "hunter2"})}}},
		&a2a.StatusUpdate{TaskID: "task-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
			Message: &a2a.Message{ID: "m", Role: a2a.RoleAgent, Parts: []*a2a.Part{
				a2a.NewDataPart(map[string]any{"deep": []any{map[string]any{"SECRET": "s3cr3t"}}})}}}},
	}
	var all []agui.Event
	for _, ev := range events {
		all = append(all, tr.Translate(ev)...)
	}
	all = append(all, tr.Complete()...)
	sawState := false
	for _, e := range all {
		b, err := agui.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "s3cr3t") {
			t.Errorf("a secret reached the client: %s", b)
		}
		if e.Type() == agui.EventStateSnapshot || e.Type() == agui.EventStateDelta {
			sawState = true
		}
	}
	if !sawState {
		t.Fatal("no state event: the test checks nothing")
	}
	var state struct {
		A2A struct {
			Artifacts  map[string]map[string]any `json:"artifacts"`
			StatusData map[string]any            `json:"statusData"`
		} `json:"a2a"`
	}
	if err := json.Unmarshal(tr.State(), &state); err != nil {
		t.Fatal(err)
	}
	if got := state.A2A.Artifacts["creds"]; got["Password"] != Redacted || got["login"] != "ada" {
		t.Errorf("artifact state %v", got)
	}
	if got, _ := json.Marshal(state.A2A.StatusData); string(got) != `{"deep":[{"SECRET":"[REDACTED]"}]}` {
		t.Errorf("status data %s", got)
	}
}
