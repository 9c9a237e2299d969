package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/config"
)

// wantRefused checks a pre-stream refusal: status, the JSON error body's
// code, and (when retry) a Retry-After of whole seconds >= 1.
func wantRefused(t *testing.T, what string, r reply, status int, code string, retry bool) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: %d %s; want %d %s", what, r.status, r.body, status, code)
	}
	if got := errorCode(t, r.body); got != code {
		t.Fatalf("%s: code %q, want %q", what, got, code)
	}
	if retry {
		if n, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || n < 1 {
			t.Fatalf("%s: Retry-After %q, want whole seconds >= 1", what, r.header.Get("Retry-After"))
		}
	}
}

// runEvents decodes an SSE run response and checks it ends exactly once.
func runEvents(t *testing.T, r reply) []agui.Event {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("run: %d %s", r.status, r.body)
	}
	var out []agui.Event
	for _, frame := range strings.Split(string(r.body), "\n\n") {
		for _, line := range strings.Split(frame, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				ev, err := agui.Decode([]byte(data))
				if err != nil {
					t.Fatalf("frame %q: %v", data, err)
				}
				out = append(out, ev)
			}
		}
	}
	terminals := 0
	for _, e := range out {
		if e.Type() == agui.EventRunFinished || e.Type() == agui.EventRunError {
			terminals++
		}
	}
	if terminals != 1 || len(out) == 0 || (out[len(out)-1].Type() != agui.EventRunFinished && out[len(out)-1].Type() != agui.EventRunError) {
		t.Fatalf("the stream does not end exactly once:\n%s", r.body)
	}
	return out
}

func terminalCode(events []agui.Event) string {
	if e, ok := events[len(events)-1].(*agui.RunError); ok {
		return e.Code
	}
	return ""
}

func clientStateBody(threadID, runID string, state map[string]any, messages ...agui.Message) []byte {
	b, _ := json.Marshal(map[string]any{"threadId": threadID, "runId": runID, "messages": messages, "state": state})
	return b
}

// TestInputAndRunLimits: too many messages and a too large client state are
// refused before the stream (413); an agent event or state above its limit
// ends the run with its RUN_ERROR code, once; the thread stays usable.
func TestInputAndRunLimits(t *testing.T) {
	t.Parallel()
	b := startBridge(t, func(c *config.Config) {
		c.Limits.MaxMessages = 3
		c.Limits.MaxStateBytes = 260
		c.Limits.MaxEventBytes = 200
	})
	msgs := []agui.Message{userMsg("u1", "a"), userMsg("u2", "b"), userMsg("u3", "c"), userMsg("u4", "d")}
	wantRefused(t, "4 messages", b.do(t, http.MethodPost, "/agents/streamer", "", runBody("th-m", "r1", false, msgs...)),
		http.StatusRequestEntityTooLarge, "too_many_messages", false)
	if ev := runEvents(t, b.do(t, http.MethodPost, "/agents/streamer", "", runBody("th-m", "r1", false, msgs[:3]...))); terminalCode(ev) != "" {
		t.Fatalf("3 messages: %v", ev[len(ev)-1])
	}

	// Over WebSocket the refusal is a RUN_ERROR envelope.
	ws := b.mustDialWS(t, "streamer")
	ws.run(t, runBody("th-m", "r2", false, msgs...))
	var refused agui.RunError
	if env := ws.next(t); json.Unmarshal(env.Event, &refused) != nil || refused.Code != "too_many_messages" || env.ThreadID != "th-m" {
		t.Fatalf("WS run with 4 messages: %s", env.Event)
	}

	big := map[string]any{"notes": strings.Repeat("n", 500)}
	wantRefused(t, "client state", b.do(t, http.MethodPost, "/agents/streamer", "", clientStateBody("th-s", "r1", big, userMsg("u1", "hi"))),
		http.StatusRequestEntityTooLarge, "state_too_large", false)
	if ev := runEvents(t, b.do(t, http.MethodPost, "/agents/streamer", "", clientStateBody("th-s", "r1", map[string]any{"n": 1}, userMsg("u1", "hi")))); terminalCode(ev) != "" {
		t.Fatalf("small state: %v", ev[len(ev)-1])
	}

	// The streamer echoes the words in five chunks: 2000 characters make
	// 400-byte events.
	ev := runEvents(t, b.do(t, http.MethodPost, "/agents/streamer", "", runBody("th-e", "r1", false, userMsg("u1", strings.Repeat("word ", 400)))))
	if code := terminalCode(ev); code != "event_too_large" {
		t.Fatalf("large event: RUN_ERROR %q, want event_too_large", code)
	}
	ev = runEvents(t, b.do(t, http.MethodPost, "/agents/streamer", "", runBody("th-e", "r2", false,
		userMsg("u1", strings.Repeat("word ", 400)), userMsg("u2", "short"))))
	if code := terminalCode(ev); code != "" {
		t.Fatalf("the thread after event_too_large: RUN_ERROR %q", code)
	}

	// The dashboard grows the state past 260 bytes (to about 330); the
	// streamer's stays under it.
	ev = runEvents(t, b.do(t, http.MethodPost, "/agents/dashboard", "", runBody("th-d", "r1", false, userMsg("u1", "build"))))
	if code := terminalCode(ev); code != "state_too_large" {
		t.Fatalf("agent state: RUN_ERROR %q, want state_too_large", code)
	}
	snap := b.do(t, http.MethodGet, "/agents/dashboard/threads/th-d", "", nil)
	var view struct {
		ActiveRunID string          `json:"activeRunId"`
		State       json.RawMessage `json:"state"`
	}
	if err := json.Unmarshal(snap.body, &view); err != nil || snap.status != 200 {
		t.Fatalf("snapshot: %d %s", snap.status, snap.body)
	}
	if view.ActiveRunID != "" || len(view.State) > 260 {
		t.Fatalf("the thread kept a run or the oversized state: %s", snap.body)
	}
	// The thread takes the next run (the agent breaks the limit again).
	ev = runEvents(t, b.do(t, http.MethodPost, "/agents/dashboard", "", runBody("th-d", "r2", false, userMsg("u1", "build"), userMsg("u2", "again"))))
	if code := terminalCode(ev); code != "state_too_large" {
		t.Fatalf("second dashboard run: %q", code)
	}
}

// startSlow starts a run on the slow agent (it works until cancelled) and
// returns once its stream started: the run holds its admission slot.
func startSlow(t *testing.T, b *testBridge, key, thread string) *liveRun {
	t.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	lr := b.stream(t, http.MethodPost, "/agents/slow", runBody(thread, "r-slow", false, userMsg("u1", "go")), h)
	lr.until(t, func(ev agui.Event) bool { return ev.Type() == agui.EventRunStarted })
	return lr
}

// stopSlow cancels the slow run and waits for its stream to end, which
// frees its slot.
func stopSlow(t *testing.T, b *testBridge, key, thread string, lr *liveRun) {
	t.Helper()
	if r := b.do(t, http.MethodPost, "/agents/slow/threads/"+thread+"/cancel", key, nil); r.status != 200 {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	res := lr.result(t)
	res.check(t, false)
	res.wantError(t, "cancelled")
}

// TestConcurrentRunLimits: the instance cap answers 503 bridge_overloaded,
// the per-principal cap 429 too_many_runs, both with Retry-After; other
// principals are not affected, and a run goes through as soon as the
// stream of the one holding the slot has ended.
func TestConcurrentRunLimits(t *testing.T) {
	t.Parallel()
	t.Run("instance", func(t *testing.T) {
		t.Parallel()
		b := startBridge(t, func(c *config.Config) { c.Limits.ConcurrentRuns = 1 })
		done := startSlow(t, b, "", "th-slow")
		body := runBody("th-other", "r1", false, userMsg("u1", "hi"))
		wantRefused(t, "second run", b.do(t, http.MethodPost, "/agents/streamer", "", body), http.StatusServiceUnavailable, "bridge_overloaded", true)
		stopSlow(t, b, "", "th-slow", done)
		if ev := runEvents(t, b.do(t, http.MethodPost, "/agents/streamer", "", body)); terminalCode(ev) != "" {
			t.Fatalf("after the slot freed: %v", ev[len(ev)-1])
		}
	})
	t.Run("principal", func(t *testing.T) {
		t.Parallel()
		b := startBridge(t, func(c *config.Config) {
			withAuth(nil)(c)
			c.Limits.PerPrincipal.ConcurrentRuns = 1
		})
		done := startSlow(t, b, aliceKey, "th-slow")
		body := runBody("th-a2", "r1", false, userMsg("u1", "hi"))
		wantRefused(t, "alice's second run", b.do(t, http.MethodPost, "/agents/streamer", aliceKey, body), http.StatusTooManyRequests, "too_many_runs", true)
		if ev := runEvents(t, b.do(t, http.MethodPost, "/agents/streamer", bobKey, runBody("th-b", "r1", false, userMsg("u1", "hi")))); terminalCode(ev) != "" {
			t.Fatalf("bob's run: %v", ev[len(ev)-1])
		}
		stopSlow(t, b, aliceKey, "th-slow", done)
		if ev := runEvents(t, b.do(t, http.MethodPost, "/agents/streamer", aliceKey, body)); terminalCode(ev) != "" {
			t.Fatalf("alice after her slot freed: %v", ev[len(ev)-1])
		}
	})
}

// TestRequestRateLimit: above its burst a principal gets 429 rate_limited
// with Retry-After; another principal has its own budget.
func TestRequestRateLimit(t *testing.T) {
	t.Parallel()
	b := startBridge(t, func(c *config.Config) {
		withAuth(nil)(c)
		c.Limits.PerPrincipal.RequestsPerSecond = 0.01
		c.Limits.PerPrincipal.Burst = 3
	})
	for i := range 3 {
		if r := b.do(t, http.MethodGet, "/agents", aliceKey, nil); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	wantRefused(t, "4th request", b.do(t, http.MethodGet, "/agents", aliceKey, nil), http.StatusTooManyRequests, "rate_limited", true)
	wantRefused(t, "a run", b.do(t, http.MethodPost, "/agents/streamer", aliceKey, runBody("th", "r", false, userMsg("u", "x"))),
		http.StatusTooManyRequests, "rate_limited", true)
	if r := b.do(t, http.MethodGet, "/agents", bobKey, nil); r.status != 200 {
		t.Fatalf("bob: %d", r.status)
	}
	// Probes are never limited.
	for range 5 {
		if r := b.do(t, http.MethodGet, "/healthz", "", nil); r.status != 200 {
			t.Fatalf("healthz: %d", r.status)
		}
	}
}

// TestTeamEventLimit: a team member's oversized event ends that member's
// part with event_too_large; the run itself still ends exactly once.
func TestTeamEventLimit(t *testing.T) {
	t.Parallel()
	b := startBridge(t, func(c *config.Config) {
		withTeams(c)
		c.Limits.MaxEventBytes = 200
	})
	in, _ := json.Marshal(map[string]any{"threadId": "th-team", "runId": "r1", "protocolVersion": "1.0",
		"messages":       []agui.Message{userMsg("u1", strings.Repeat("word ", 400))},
		"forwardedProps": map[string]any{"agent": "streamer"}})
	r := b.do(t, http.MethodPost, "/agents/desk", "", in)
	runEvents(t, r)
	if !bytes.Contains(r.body, []byte(`"event_too_large"`)) {
		t.Fatalf("no event_too_large in the team run:\n%s", r.body)
	}
	if bytes.Contains(r.body, []byte(strings.Repeat("word ", 40))) {
		t.Fatalf("the oversized text reached the client")
	}
}

// TestTeamStateLimit: a member that grows the team's shared state past
// maxStateBytes ends its part with state_too_large; the run ends once and
// the thread keeps its previous state.
func TestTeamStateLimit(t *testing.T) {
	t.Parallel()
	b := startBridge(t, func(c *config.Config) {
		c.Teams = append(c.Teams, config.Team{Name: "dash-team", Strategy: config.StrategyRouter, Members: []string{"dashboard", "streamer"}})
		c.Limits.MaxStateBytes = 400
	})
	in, _ := json.Marshal(map[string]any{"threadId": "th-team", "runId": "r1", "protocolVersion": "1.0",
		"messages": []agui.Message{userMsg("u1", "build")}, "forwardedProps": map[string]any{"agent": "dashboard"}})
	r := b.do(t, http.MethodPost, "/agents/dash-team", "", in)
	runEvents(t, r)
	if !bytes.Contains(r.body, []byte(`"state_too_large"`)) {
		t.Fatalf("no state_too_large in the team run:\n%s", r.body)
	}
	snap := b.do(t, http.MethodGet, "/agents/dash-team/threads/th-team", "", nil)
	var view struct {
		ActiveRunID string          `json:"activeRunId"`
		State       json.RawMessage `json:"state"`
	}
	if err := json.Unmarshal(snap.body, &view); err != nil || snap.status != 200 || view.ActiveRunID != "" || len(view.State) > 400 {
		t.Fatalf("snapshot: %d %s", snap.status, snap.body)
	}
}
