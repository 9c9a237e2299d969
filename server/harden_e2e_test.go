package server

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
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
