package tasks

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/a2a-agui-bridge/bridge/auth"
)

// TestUnownedRecordsStayReadable: a thread record written before threads
// had owners (no "principal" field) reads back with no owner, is served to
// unauthenticated callers as before, and is hidden (404) from principals.
func TestUnownedRecordsStayReadable(t *testing.T) {
	t.Parallel()
	var th Thread
	if err := json.Unmarshal([]byte(`{"contextId":"ctx-1","taskId":"task-1","taskState":"completed","version":2}`), &th); err != nil {
		t.Fatal(err)
	}
	if th.Principal != "" {
		t.Fatalf("principal %q from a record without one", th.Principal)
	}
	svc, store := newTestService(t, nil, nil)
	th.Key, th.Version = ThreadKey{Agent: "a", ThreadID: "old"}, 0
	if _, err := store.PutThread(t.Context(), &th); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Thread(t.Context(), "a", "old"); err != nil {
		t.Fatalf("anonymous read: %v", err)
	}
	_, err := svc.Thread(auth.WithPrincipal(t.Context(), "alice"), "a", "old")
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus() != http.StatusNotFound || e.Code != "unknown_thread" {
		t.Fatalf("alice's read: %v; want 404 unknown_thread", err)
	}
	// A run by alice on that id is refused the same way, before anything
	// reaches the agent (the test agent is nil).
	if _, err := svc.StartRun(auth.WithPrincipal(t.Context(), "alice"), "a", input("old", "r1")); !errors.As(err, &e) || e.HTTPStatus() != http.StatusNotFound {
		t.Fatalf("alice's run: %v; want 404", err)
	}
}
