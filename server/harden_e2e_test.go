package server

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// Issue 33 item 12: new text under a message id the thread already holds
// was taken as seen, never reached the agent, and answered 200 with
// nothing sent. It is a conflict; the same message again is still fine.
func TestChangedMessageUnderAKnownIDConflicts(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	b.post(t, "streamer", runBody("th-conflict", "run-1", true, userMsg("u1", "first"))).check(t, true)

	r := b.post(t, "streamer", runBody("th-conflict", "run-2", true, userMsg("u1", "something else")))
	if r.status != http.StatusConflict || !bytes.Contains(r.body, []byte(`"code":"`+agui.CodeMessageConflict+`"`)) {
		t.Fatalf("new content under a known id: %d %s; want 409 %s", r.status, r.body, agui.CodeMessageConflict)
	}

	same := b.post(t, "streamer", runBody("th-conflict", "run-3", true, userMsg("u1", "first"), userMsg("u2", "second")))
	same.check(t, true)
	same.wantAnswerOnce(t, agents.StreamerAnswer("second"))
}

// Issue 33 item 10: an A2UI action reaches the agent only for a surface
// the thread has shown. The booker drew its form on one thread; an
// action naming another surface, or the form on a thread that never
// showed it, is refused.
func TestA2UIActionOnlyForShownSurfaces(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	b.post(t, "booker", a2uiBody("th-shown", "run-1", true, map[string]any{}, userMsg("u1", "A table please"))).check(t, true)
	action := func(surface string) map[string]any {
		return map[string]any{mapping.ForwardedA2UIAction: map[string]any{"userAction": map[string]any{
			"name": "book", "surfaceId": surface, "sourceComponentId": "book", "context": map[string]any{"name": "Ada"}}}}
	}
	for _, tc := range []struct{ thread, surface string }{
		{"th-shown", "never-drawn"},
		{"th-other", agents.BookerSurface},
	} {
		r := b.post(t, "booker", a2uiBody(tc.thread, "run-2", true, action(tc.surface), userMsg("u1", "A table please")))
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), tasksCode(agui.CodeA2UIActionInvalid)) {
			t.Errorf("action on %s in %s: %d %s; want 400 %s", tc.surface, tc.thread, r.status, r.body, agui.CodeA2UIActionInvalid)
		}
	}
	r := b.post(t, "booker", a2uiBody("th-shown", "run-3", true, action(agents.BookerSurface), userMsg("u1", "A table please")))
	r.check(t, true)
}
