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

// Issue 33 item 7: redaction stopped at the shared state. Credentials in
// an AUTH_REQUIRED part, a tool call's arguments and an A2UI data model
// now reach no event, no message of the conversation and no interrupt.
func TestRedactEverywhere(t *testing.T) {
	t.Parallel()
	keys := []string{"password", "token", "secret"}
	secrets := []string{"tok-1", "cs-2", "pw-3", "pw-4", "pw-5", "pw-6"}
	for _, v1 := range []bool{false, true} {
		tr := New(Options{ThreadID: "t", RunID: "r", V1: v1, RedactKeys: keys, A2UIActivities: true,
			Input: &agui.RunAgentInput{ThreadID: "t", RunID: "r", Messages: []agui.Message{{ID: "u", Role: agui.RoleUser, Content: agui.TextContent("hi")}}}})
		call := a2a.NewDataPart(map[string]any{"id": "c1", "name": "login", "args": map[string]any{"user": "ada", "password": "pw-3"}})
		call.Metadata = map[string]any{adkTypeKey: adkFunctionCall}
		ui := a2a.NewDataPart([]any{
			map[string]any{"dataModelUpdate": map[string]any{"surfaceId": "s", "path": "/", "contents": []any{
				map[string]any{"key": "password", "valueString": "pw-4"}, map[string]any{"key": "user", "valueString": "ada"}}}},
			map[string]any{"version": "v0.9", "updateDataModel": map[string]any{"surfaceId": "s9", "path": "/form/password", "value": "pw-5"}},
			map[string]any{"version": "v0.9", "updateDataModel": map[string]any{"surfaceId": "s9", "path": "/", "value": map[string]any{"Password": "pw-6"}}},
		})
		ui.MediaType = A2UIMediaType
		events := []a2a.Event{
			&a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
			&a2a.ArtifactUpdate{TaskID: "task-1", Artifact: &a2a.Artifact{ID: "calls", Parts: []*a2a.Part{call}}},
			working(ui),
			&a2a.StatusUpdate{TaskID: "task-1", Status: a2a.TaskStatus{State: a2a.TaskStateAuthRequired,
				Message: &a2a.Message{ID: "auth", Role: a2a.RoleAgent, Parts: []*a2a.Part{
					a2a.NewTextPart("Sign in"), a2a.NewDataPart(map[string]any{"token": "tok-1", "client_secret": "cs-2", "url": "https://idp/x"})}}}},
		}
		var all []agui.Event
		for _, ev := range events {
			all = append(all, tr.Translate(ev)...)
		}
		seen := map[agui.EventType]bool{}
		check := func(what string, b []byte) {
			for _, s := range secrets {
				if strings.Contains(string(b), s) {
					t.Errorf("v1=%v: secret %s in %s: %s", v1, s, what, b)
				}
			}
		}
		for _, e := range all {
			b, err := agui.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			seen[e.Type()] = true
			check(string(e.Type()), b)
		}
		for _, want := range []agui.EventType{agui.EventToolCallArgs, agui.EventMessagesSnapshot, agui.EventRunFinished} {
			if !seen[want] {
				t.Fatalf("v1=%v: no %s: the test checks nothing", v1, want)
			}
		}
		if !seen[agui.EventActivitySnapshot] && !seen[agui.EventCustom] {
			t.Fatalf("v1=%v: no A2UI event", v1)
		}
		b, _ := json.Marshal(tr.Conversation())
		check("the conversation", b)
		if !strings.Contains(string(b), "ada") {
			t.Errorf("v1=%v: the call's other arguments are gone: %s", v1, b)
		}
		b, _ = json.Marshal(tr.Interrupts())
		check("the interrupts", b)
		if !strings.Contains(string(b), "https://idp/x") {
			t.Errorf("v1=%v: the interrupt's other details are gone: %s", v1, b)
		}
		// What goes back to the agent is as it wrote it.
		if refs := tr.ToolCalls(); len(refs) != 1 || !strings.Contains(string(refs[0].Args), "pw-3") {
			t.Errorf("v1=%v: the call's own arguments changed: %+v", v1, refs)
		}
	}
}

func TestSensitiveKeys(t *testing.T) {
	t.Parallel()
	keys := []string{"token", "secret", "api_key", "password"}
	for k, want := range map[string]bool{
		"token": true, "Token": true, "accessToken": true, "access_token": true, "client_secret": true, "clientSecret": true,
		"x-api-key": true, "apiKey": true, "API_KEY": true, "userPassword": true,
		"max_tokens": false, "tokenCount": false, "secretary": false, "keys": false, "": false, "passwordHint": false,
	} {
		if got := sensitive(k, keys); got != want {
			t.Errorf("sensitive(%q) = %v, want %v", k, got, want)
		}
	}
}

// FuzzRedactRaw: agent JSON of any shape passes the redaction pass without
// a panic, stays valid JSON, and a second pass changes nothing.
func FuzzRedactRaw(f *testing.F) {
	f.Add([]byte(`{"token":"t","client_secret":"s","a":[{"key":"password","valueString":"p"}]}`), "token")
	f.Add([]byte(`[{"path":"/form/password","value":"x"}]`), "password")
	f.Add([]byte(`"not an object"`), "secret")
	f.Fuzz(func(t *testing.T, raw []byte, key string) {
		keys := []string{key, "password"}
		out := redactRaw(raw, keys)
		if json.Valid(raw) && !json.Valid(out) {
			t.Fatalf("%s became %s", raw, out)
		}
		if again := redactRaw(out, keys); json.Valid(raw) && string(again) != string(out) {
			t.Fatalf("a second pass changed %s into %s", out, again)
		}
		_ = sensitive(key, keys)
	})
}
