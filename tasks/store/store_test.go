package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// TestThreadStorageFormat: the active run's fields are stored flat beside
// the thread's, as records were written before ActiveRun existed; a record
// that kept a single agent's task at the top level (before every run was a
// run of members) reads with it moved into Members (Upgrade), and is
// written back in the new shape.
func TestThreadStorageFormat(t *testing.T) {
	t.Parallel()
	// A record as the bridge wrote it when the fields were Thread's own.
	legacy := `{"contextId":"ctx-1","activeRunId":"run-1","lastRunId":"run-0",
		"activeSince":"2026-05-01T12:30:00Z","principal":"alice","owner":"i-1",
		"leaseExpires":"2026-05-01T12:31:00Z","activeAfter":12,"activeInput":{"runId":"run-1"},
		"activeTaskId":"task-1","cancelRequested":true,"version":4}`
	var th store.Thread
	if err := json.Unmarshal([]byte(legacy), &th); err != nil {
		t.Fatal(err)
	}
	th.Key = store.ThreadKey{Agent: "a", ThreadID: "t"}
	th.Upgrade()
	want := store.Thread{Key: th.Key, LastRunID: "run-0", Principal: "alice", Version: 4,
		Members: map[string]*store.MemberRecord{"a": {ContextID: "ctx-1"}},
		Active: &store.ActiveRun{RunID: "run-1", Since: time.Date(2026, 5, 1, 12, 30, 0, 0, time.UTC), Owner: "i-1",
			LeaseExpires: time.Date(2026, 5, 1, 12, 31, 0, 0, time.UTC), After: 12,
			Input: json.RawMessage(`{"runId":"run-1"}`), Tasks: map[string]string{"a": "task-1"}, CancelRequested: true}}
	if diff := cmp.Diff(want, th); diff != "" {
		t.Fatalf("legacy record decoded (-want +got):\n%s", diff)
	}

	b, err := json.Marshal(&th)
	if err != nil {
		t.Fatal(err)
	}
	var flat map[string]json.RawMessage
	if err := json.Unmarshal(b, &flat); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"activeRunId", "owner", "leaseExpires", "activeTasks", "members", "version"} {
		if _, ok := flat[k]; !ok {
			t.Errorf("stored form has no top-level %q: %s", k, b)
		}
	}
	for _, k := range []string{"activeTaskId", "contextId", "taskId"} {
		if _, ok := flat[k]; ok {
			t.Errorf("stored form keeps the old top-level %q: %s", k, b)
		}
	}
	if _, ok := flat["Active"]; ok {
		t.Errorf("stored form nests the active run: %s", b)
	}

	// Decoding a record without an active run into a thread that had one
	// clears it: a released thread never keeps the old run's fields.
	if err := json.Unmarshal([]byte(`{"contextId":"ctx-1","version":5}`), &th); err != nil {
		t.Fatal(err)
	}
	if th.Active != nil {
		t.Errorf("Active = %+v after decoding an idle record, want nil", th.Active)
	}
}
