package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// sseEvents decodes the data lines of an SSE body.
func sseEvents(t *testing.T, body []byte) []agui.Event {
	t.Helper()
	var out []agui.Event
	for line := range strings.Lines(string(body)) {
		data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: ")
		if !ok {
			continue
		}
		ev, err := agui.Decode([]byte(data))
		if err != nil {
			t.Fatalf("frame %q: %v", data, err)
		}
		out = append(out, ev)
	}
	return out
}

// outcome is what a run answered, without what differs between any two
// runs (timestamps, ids): its status, the types of its events, and the
// code and message of its RUN_ERROR.
type outcome struct {
	status        int
	types         []agui.EventType
	code, message string
}

func outcomeOf(t *testing.T, r reply) outcome {
	t.Helper()
	o := outcome{status: r.status}
	if r.status != http.StatusOK {
		o.code, o.message = errorCode(t, r.body), string(r.body)
		return o
	}
	for _, ev := range sseEvents(t, r.body) {
		o.types = append(o.types, ev.Type())
		if e, ok := ev.(*agui.RunError); ok {
			o.code, o.message = e.Code, e.Message
		}
	}
	return o
}

// pollRuns returns the run ids of the events a long poll of the caller's
// thread returns.
func pollRuns(t *testing.T, b *testBridge, key, path string) []string {
	t.Helper()
	r := b.do(t, http.MethodGet, path+"/events", key, nil, "Accept", "application/json")
	if r.status != http.StatusOK {
		t.Fatalf("long poll %s: %d %s", path, r.status, r.body)
	}
	var p struct {
		Events []envelope `json:"events"`
	}
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatal(err)
	}
	var runs []string
	for _, e := range p.Events {
		runs = append(runs, e.RunID)
	}
	return runs
}

// TestThreadsPerPrincipal: two principals using the same threadId get two
// threads. Every route naming a thread answers Bob on Alice's thread id
// exactly as on an id nobody used — the snapshot, cancel, the journal as
// SSE and as a long poll, WebSocket subscribe and cancel frames — and a
// resume by Bob naming Alice's interrupt is answered as one naming a
// made-up id. Bob's run on that id is a thread of his own (both runs 200),
// and each sees only its own messages and journal.
func TestThreadsPerPrincipal(t *testing.T) {
	t.Parallel()
	b := startBridge(t, withAuth(nil))
	const shared, unused = "th-shared", "th-unused"
	path := func(thread string) string { return "/agents/asker/threads/" + thread }

	// What Bob gets for each route on an id nobody used, before Alice
	// uses th-shared; the same requests on th-shared must answer alike.
	type route struct {
		name, method, suffix string
		header               []string
	}
	routes := []route{
		{"snapshot", http.MethodGet, "", nil},
		{"cancel", http.MethodPost, "/cancel", nil},
		{"events (long poll)", http.MethodGet, "/events", []string{"Accept", "application/json"}},
		{"events (SSE)", http.MethodGet, "/events", nil},
	}
	asUnused := map[string]reply{}
	for _, rt := range routes {
		r := b.do(t, rt.method, path(unused)+rt.suffix, bobKey, nil, rt.header...)
		if r.status != http.StatusNotFound {
			t.Fatalf("%s of an unused id: %d %s", rt.name, r.status, r.body)
		}
		asUnused[rt.name] = r
	}
	wsRefusal := func(frame map[string]any) (string, agui.RunError) {
		t.Helper()
		c, _, err := b.dialWS(t, "asker", http.Header{"Authorization": {"Bearer " + bobKey}})
		if err != nil {
			t.Fatal(err)
		}
		c.send(t, frame)
		env := c.next(t)
		var e agui.RunError
		if err := json.Unmarshal(env.Event, &e); err != nil || e.Type() != agui.EventRunError {
			t.Fatalf("WS %v: %s, want a RUN_ERROR", frame, env.Event)
		}
		return env.ThreadID, e
	}
	wsFrames := func(thread string) []map[string]any {
		return []map[string]any{{"type": "subscribe", "threadId": thread, "after": 0}, {"type": "cancel", "threadId": thread}}
	}
	var wsUnused []agui.RunError
	for _, f := range wsFrames(unused) {
		_, e := wsRefusal(f)
		wsUnused = append(wsUnused, e)
	}

	// Alice's thread: asker asks which city, leaving an interrupt.
	first := b.do(t, http.MethodPost, "/agents/asker", aliceKey, runBody(shared, "run-alice", true, userMsg("u1", "weather for alice?")))
	if first.status != http.StatusOK {
		t.Fatalf("alice's run: %d %s", first.status, first.body)
	}
	aliceSnap := b.do(t, http.MethodGet, path(shared), aliceKey, nil)
	var snap struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		PendingInterrupts []struct{ ID string } `json:"pendingInterrupts"`
	}
	if err := json.Unmarshal(aliceSnap.body, &snap); err != nil || len(snap.PendingInterrupts) != 1 {
		t.Fatalf("alice's snapshot %d %s: want one pending interrupt", aliceSnap.status, aliceSnap.body)
	}
	aliceInterrupt := snap.PendingInterrupts[0].ID

	for _, rt := range routes {
		r := b.do(t, rt.method, path(shared)+rt.suffix, bobKey, nil, rt.header...)
		want := asUnused[rt.name]
		if r.status != want.status || !bytes.Equal(r.body, bytes.ReplaceAll(want.body, []byte(unused), []byte(shared))) {
			t.Errorf("%s as bob on alice's thread id: %d %s; want as for an unused id: %d %s", rt.name, r.status, r.body, want.status, want.body)
		}
	}
	for i, f := range wsFrames(shared) {
		thread, e := wsRefusal(f)
		want := wsUnused[i]
		if thread != shared || e.Code != want.Code || e.Message != strings.ReplaceAll(want.Message, unused, shared) {
			t.Errorf("WS %s as bob on alice's thread id: %s %q; want as for an unused id: %s %q", f["type"], e.Code, e.Message, want.Code, want.Message)
		}
	}

	// Bob resuming Alice's interrupt is answered as a made-up id is, on
	// her thread id and on one nobody used, and starts nothing.
	const madeUp = "int-made-up"
	for _, thread := range []string{shared, "th-other"} {
		got := outcomeOf(t, b.do(t, http.MethodPost, "/agents/asker", bobKey,
			resumeBody(thread, "run-bob-resume", aliceInterrupt, `{"city":"Paris"}`, userMsg("u1", "weather?"))))
		want := outcomeOf(t, b.do(t, http.MethodPost, "/agents/asker", bobKey,
			resumeBody(thread, "run-bob-resume", madeUp, `{"city":"Paris"}`, userMsg("u1", "weather?"))))
		want.message = strings.ReplaceAll(want.message, madeUp, aliceInterrupt)
		if got.status != want.status || got.code != want.code || got.message != want.message || len(got.types) != len(want.types) {
			t.Errorf("bob resuming alice's interrupt on %s: %+v; want as for a made-up id: %+v", thread, got, want)
		}
		if got.code != "resume_unknown_interrupt" {
			t.Errorf("bob resuming alice's interrupt on %s: code %q, want resume_unknown_interrupt", thread, got.code)
		}
	}
	if r := b.do(t, http.MethodGet, path(shared), bobKey, nil); r.status != http.StatusNotFound {
		t.Errorf("a refused resume left bob a thread: %d %s", r.status, r.body)
	}

	// Bob's own run on the same id: a thread of his, over SSE and then
	// over WebSocket.
	bobRun := b.do(t, http.MethodPost, "/agents/asker", bobKey, runBody(shared, "run-bob", true, userMsg("b1", "weather for bob?")))
	if o := outcomeOf(t, bobRun); o.status != http.StatusOK || o.code != "" || o.types[len(o.types)-1] != agui.EventRunFinished {
		t.Fatalf("bob's run on alice's thread id: %+v %s", o, bobRun.body)
	}
	if r := b.do(t, http.MethodPost, "/agents/asker", aliceKey, runBody("th-ws", "run-alice-ws", true, userMsg("u1", "alice first"))); r.status != http.StatusOK {
		t.Fatalf("alice's run on th-ws: %d %s", r.status, r.body)
	}
	c, _, err := b.dialWS(t, "asker", http.Header{"Authorization": {"Bearer " + bobKey}})
	if err != nil {
		t.Fatal(err)
	}
	c.run(t, runBody("th-ws", "run-bob-ws", true, userMsg("b1", "bob over WebSocket")))
	if envs := c.untilTerminal(t); envs[len(envs)-1].ThreadID != "th-ws" || agui.IsTerminalEvent(envs[0].Event) {
		t.Errorf("bob's WS run: %d envelopes, last %s", len(envs), envs[len(envs)-1].Event)
	} else if e, err := agui.Decode(envs[len(envs)-1].Event); err != nil || e.Type() != agui.EventRunFinished {
		t.Errorf("bob's WS run ended with %s", envs[len(envs)-1].Event)
	}

	// Each sees only their own thread: messages, interrupt, journal.
	if again := b.do(t, http.MethodGet, path(shared), aliceKey, nil); !bytes.Equal(again.body, aliceSnap.body) {
		t.Errorf("bob's runs changed alice's thread:\n%s\n%s", aliceSnap.body, again.body)
	}
	bobSnap := b.do(t, http.MethodGet, path(shared), bobKey, nil)
	var bob struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
		PendingInterrupts []struct{ ID string } `json:"pendingInterrupts"`
	}
	if err := json.Unmarshal(bobSnap.body, &bob); err != nil || bobSnap.status != http.StatusOK {
		t.Fatalf("bob's snapshot: %d %s", bobSnap.status, bobSnap.body)
	}
	if len(bob.Messages) == 0 || bob.Messages[0].Content != "weather for bob?" || bytes.Contains(bobSnap.body, []byte("alice")) {
		t.Errorf("bob's snapshot holds more than his conversation: %s", bobSnap.body)
	}
	if len(bob.PendingInterrupts) != 1 || bob.PendingInterrupts[0].ID == aliceInterrupt {
		t.Errorf("bob's pending interrupts %+v; want one of his own (alice's is %s)", bob.PendingInterrupts, aliceInterrupt)
	}
	for _, tc := range []struct{ key, run string }{{aliceKey, "run-alice"}, {bobKey, "run-bob"}} {
		runs := pollRuns(t, b, tc.key, path(shared))
		if len(runs) == 0 {
			t.Errorf("%s's journal is empty", tc.run)
		}
		for _, r := range runs {
			if r != tc.run {
				t.Errorf("the journal of %s's thread holds run %s", tc.run, r)
			}
		}
	}

	// Alice's thread still works: her resume reaches the agent.
	res := b.do(t, http.MethodPost, "/agents/asker", aliceKey,
		resumeBody(shared, "run-alice-2", aliceInterrupt, `{"city":"Paris"}`, userMsg("u1", "weather for alice?")))
	if res.status != http.StatusOK || !bytes.Contains(res.body, []byte("Paris")) {
		t.Errorf("alice's resume: %d %s", res.status, res.body)
	}
}
