package server

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2a-agui-bridge/bridge/mapping"
	"github.com/a2a-agui-bridge/bridge/tasks"
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

// Issue 33 item 9: a JWT's subject and an API key's principal shared one
// namespace, so a valid JWT with sub "bob" read API key bob's threads and
// passed allow: [bob]. A JWT principal is now <issuer>#<sub>; threads a
// JWT caller made before (under the bare sub) move to it on first use,
// unless the sub is also a key's principal.
func TestJWTSubjectsAreNotAPIKeyPrincipals(t *testing.T) {
	t.Parallel()
	iss := newJWTIssuer(t)
	b := startBridge(t, withAuth(iss))
	token := func(sub string) string {
		return iss.token(t, jwt.Claims{Subject: sub, Issuer: "https://idp.test", Audience: jwt.Audience{"bridge"},
			Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))})
	}
	if r := b.do(t, http.MethodPost, "/agents/streamer", bobKey, runBody("th-ns", "r1", false, userMsg("u1", "hello"))); r.status != 200 {
		t.Fatalf("bob's run: %d %s", r.status, r.body)
	}
	if r := b.do(t, http.MethodGet, "/agents/streamer/threads/th-ns", token("bob"), nil); r.status != http.StatusNotFound {
		t.Errorf("a JWT with sub bob on API key bob's thread: %d; want 404", r.status)
	}
	if r := b.do(t, http.MethodGet, "/agents/failer", token("bob"), nil); r.status != http.StatusForbidden {
		t.Errorf("a JWT with sub bob on an agent that allows API key bob: %d; want 403", r.status)
	}

	// Threads filed under a bare subject, as before the namespaces.
	ctx := t.Context()
	bobs := tasks.ThreadKey{Agent: "streamer", Principal: "bob", ThreadID: "th-ns"}
	th, err := b.store.GetThread(ctx, bobs)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := b.store.Read(ctx, bobs, 0, 1000)
	if err != nil || len(entries) == 0 {
		t.Fatalf("bob's journal: %v %d", err, len(entries))
	}
	legacy := func(principal string) tasks.ThreadKey {
		key := tasks.ThreadKey{Agent: "streamer", Principal: principal, ThreadID: "th-legacy"}
		old := *th
		old.Key, old.Principal, old.Version = key, principal, 0
		if _, err := b.store.PutThreadAndAppend(ctx, &old, entries...); err != nil {
			t.Fatal(err)
		}
		return key
	}
	carols := legacy("carol")
	if r := b.do(t, http.MethodGet, "/agents/streamer/threads/th-legacy", token("carol"), nil); r.status != 200 {
		t.Fatalf("carol's thread from before the namespaces: %d %s; want it moved to her", r.status, r.body)
	}
	if _, err := b.store.GetThread(ctx, carols); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("the legacy record stays: %v", err)
	}
	if r := b.do(t, http.MethodGet, "/agents/streamer/threads/th-legacy/events?after=0", token("carol"), nil, "Accept", "application/json"); r.status != 200 || !bytes.Contains(r.body, []byte("RUN_FINISHED")) {
		t.Errorf("carol's moved journal: %d %s", r.status, r.body)
	}
	legacy("alice") // alice is an API key's principal: her threads stay hers
	if r := b.do(t, http.MethodGet, "/agents/streamer/threads/th-legacy", token("alice"), nil); r.status != http.StatusNotFound {
		t.Errorf("a JWT with sub alice took API key alice's thread: %d", r.status)
	}
	if r := b.do(t, http.MethodGet, "/agents/streamer/threads/th-legacy", aliceKey, nil); r.status != 200 {
		t.Errorf("alice's own thread: %d", r.status)
	}
}
