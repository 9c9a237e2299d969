package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2a-agui-bridge/bridge/tasks"
)

// journalOf is what the thread's journal holds for a run: its events'
// bytes, in order, with their sequence numbers.
func journalOf(t *testing.T, b *testBridge, agent, thread, runID string) []sseFrame {
	t.Helper()
	entries, err := b.store.Read(t.Context(), tasks.ThreadKey{Agent: agent, ThreadID: thread}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []sseFrame
	for _, e := range entries {
		if e.RunID == runID {
			out = append(out, sseFrame{seq: e.Seq, data: string(e.Event)})
		}
	}
	return out
}

// collectFrames reads a live stream's frames to its end.
func collectFrames(t *testing.T, lr *liveRun) []sseFrame {
	t.Helper()
	var out []sseFrame
	timeout := time.After(20 * time.Second)
	for {
		select {
		case f, ok := <-lr.frames:
			if !ok {
				return out
			}
			out = append(out, f)
		case <-timeout:
			t.Fatal("the stream did not end")
		}
	}
}

func decodeFrames(t *testing.T, frames []sseFrame) []agui.Event {
	t.Helper()
	var out []agui.Event
	for _, f := range frames {
		ev, err := agui.Decode([]byte(f.data))
		if err != nil {
			t.Fatalf("frame %q: %v", f.data, err)
		}
		out = append(out, ev)
	}
	return out
}

// TestReconnectLosesNothing: a client whose stream drops at any point and
// reconnects with Last-Event-ID reads the rest of the run: what it read
// before the drop followed by the replay is byte for byte the run's
// journal, and one valid run.
func TestReconnectLosesNothing(t *testing.T) {
	t.Parallel()
	b := startBridgeWith(t, agents.Options{Delay: 5 * time.Millisecond}, nil)
	for cut := 1; cut <= 12; cut++ {
		for _, v1 := range []bool{true, false} {
			t.Run(fmt.Sprintf("cut=%d/v1=%v", cut, v1), func(t *testing.T) {
				t.Parallel()
				thread := fmt.Sprintf("th-cut-%d-%v", cut, v1)
				lr := b.open(t, "narrator", runBody(thread, "run-1", v1, userMsg("u1", "Tell me")))
				var seen []sseFrame
				for f := range lr.frames {
					seen = append(seen, f)
					if len(seen) == cut {
						break
					}
				}
				lr.cancel() // the connection drops
				last := seen[len(seen)-1].seq
				for _, f := range seen {
					if f.seq <= 0 {
						t.Fatalf("frame without an id: %+v", f)
					}
				}
				h := http.Header{"Last-Event-ID": {strconv.FormatInt(last, 10)}, "Accept": {"text/event-stream"}}
				rest := collectFrames(t, b.stream(t, http.MethodGet, "/agents/narrator/threads/"+thread+"/events", nil, h))
				got := append(seen, rest...)
				want := journalOf(t, b, "narrator", thread, "run-1")
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("stream before the drop + replay differs from the journal:\n%v\n---\n%v", got, want)
				}
				if err := agui.CheckStream(v1, decodeFrames(t, got)); err != nil {
					t.Fatalf("not one valid run: %v", err)
				}
				if !agui.IsTerminalEvent([]byte(got[len(got)-1].data)) {
					t.Fatal("the replay does not end with the run's terminal event")
				}
			})
		}
	}
}

// longPoll asks for the journal after after until the thread is at rest.
func longPoll(t *testing.T, b *testBridge, agent, thread string, after int64) []sseFrame {
	t.Helper()
	var out []sseFrame
	for i := 0; i < 200; i++ {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet,
			fmt.Sprintf("%s/agents/%s/threads/%s/events?after=%d&wait=2", b.url, agent, thread, after), nil)
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("long poll: %d %s", resp.StatusCode, body)
		}
		var page struct {
			Events []struct {
				ThreadID string          `json:"threadId"`
				RunID    string          `json:"runId"`
				Seq      int64           `json:"seq"`
				Event    json.RawMessage `json:"event"`
			} `json:"events"`
			Next int64 `json:"next"`
			Done bool  `json:"done"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		for _, e := range page.Events {
			if e.ThreadID != thread || e.Seq <= after {
				t.Fatalf("envelope %+v after %d", e, after)
			}
			out = append(out, sseFrame{seq: e.Seq, data: string(e.Event)})
			after = e.Seq
		}
		if page.Next != after {
			t.Fatalf("next %d, want %d", page.Next, after)
		}
		if page.Done {
			return out
		}
	}
	t.Fatal("the long poll never reached a thread at rest")
	return nil
}

// TestLongPollEqualsSSE: the same run read by long polling, started while
// it streams, is the SSE stream, ids included.
func TestLongPollEqualsSSE(t *testing.T) {
	t.Parallel()
	b := startBridgeWith(t, agents.Options{Delay: 5 * time.Millisecond}, nil)
	lr := b.open(t, "narrator", runBody("th-poll", "run-1", true, userMsg("u1", "Tell me")))
	<-lr.frames // the run exists
	polled := longPoll(t, b, "narrator", "th-poll", 0)
	streamed := collectFrames(t, lr)
	// The first frame was taken off the stream above; the journal has it.
	want := journalOf(t, b, "narrator", "th-poll", "run-1")
	if fmt.Sprint(polled) != fmt.Sprint(want) || fmt.Sprint(streamed) != fmt.Sprint(want[1:]) {
		t.Fatalf("long poll:\n%v\nSSE:\n%v\njournal:\n%v", polled, streamed, want)
	}
}

// TestSecondTabFollowsLive: a second reader of the thread (another tab, a
// reload) follows the run in progress from the start of the journal and
// ends with it.
func TestSecondTabFollowsLive(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	first := b.open(t, "counter", runBody("th-tab", "run-1", true, userMsg("u1", "count")))
	first.until(t, isContent)
	second := b.stream(t, http.MethodGet, "/agents/counter/threads/th-tab/events", nil, http.Header{"Accept": {"text/event-stream"}})
	var f sseFrame
	for f = range second.frames {
		if strings.Contains(f.data, `"TEXT_MESSAGE_CONTENT"`) {
			break
		}
	}
	b.cancelThread(t, "counter", "th-tab")
	rest := collectFrames(t, second)
	wantCancelledRun(t, first.result(t), true)
	journal := journalOf(t, b, "counter", "th-tab", "run-1")
	if got := rest[len(rest)-1]; got != journal[len(journal)-1] {
		t.Fatalf("the second tab ends with %+v, the journal with %+v", got, journal[len(journal)-1])
	}
}

// TestReconcileAfterMissedRun: a client that lost a run's events (its
// stream dropped) and sends its next run without them gets a
// MESSAGES_SNAPSHOT first, with the thread's whole conversation.
func TestReconcileAfterMissedRun(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	r1 := b.post(t, "streamer", runBody("th-rec", "run-1", true, userMsg("u1", "first")))
	r1.check(t, true)
	var answerID string
	for _, e := range r1.events {
		if s, ok := e.(*agui.TextMessageStart); ok {
			answerID = s.MessageID
		}
	}
	// The client never saw run-1's answer.
	r2 := b.post(t, "streamer", runBody("th-rec", "run-2", true, userMsg("u1", "first"), userMsg("u2", "second")))
	r2.check(t, true)
	var snap *agui.MessagesSnapshot
	for _, e := range r2.events[:4] {
		if s, ok := e.(*agui.MessagesSnapshot); ok {
			snap = s
		}
	}
	if snap == nil {
		t.Fatalf("no MESSAGES_SNAPSHOT at the start:\n%s", r2.body)
	}
	var ids []string
	for _, m := range snap.Messages {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "u1,"+answerID+",u2" {
		t.Fatalf("snapshot ids %v, want u1, %s, u2", ids, answerID)
	}
	// A client that has everything (run-2's answer included) gets no snapshot.
	history := append([]agui.Message(nil), snap.Messages...)
	for _, e := range r2.events {
		if s, ok := e.(*agui.TextMessageStart); ok {
			history = append(history, agui.Message{ID: s.MessageID, Role: agui.RoleAssistant, Content: agui.TextContent(r2.text())})
		}
	}
	r3 := b.post(t, "streamer", runBody("th-rec", "run-3", true, append(history, userMsg("u3", "third"))...))
	r3.check(t, true)
	for _, e := range r3.events {
		if e.Type() == agui.EventMessagesSnapshot {
			t.Fatalf("a snapshot for a client that is up to date:\n%s", r3.body)
		}
	}
}

// TestEventsRouteErrors: bad resume points and unknown threads.
func TestEventsRouteErrors(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	r := b.post(t, "streamer", runBody("th-ev", "run-1", true, userMsg("u1", "hi")))
	r.check(t, true)
	for _, c := range []struct {
		path, lastEventID string
		status            int
	}{
		{"/agents/streamer/threads/th-ev/events?after=x", "", 400},
		{"/agents/streamer/threads/th-ev/events?after=-1", "", 400},
		{"/agents/streamer/threads/th-ev/events", "abc", 400},
		{"/agents/streamer/threads/nope/events", "", 404},
		{"/agents/nobody/threads/th-ev/events", "", 404},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, b.url+c.path, nil)
		if c.lastEventID != "" {
			req.Header.Set("Last-Event-ID", c.lastEventID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.HasPrefix(string(body), `{"error":{"code":`) {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, body)
		}
	}
	// A thread at rest: the SSE route replays and ends; nothing after the end.
	all := collectFrames(t, b.stream(t, http.MethodGet, "/agents/streamer/threads/th-ev/events", nil, nil))
	if fmt.Sprint(all) != fmt.Sprint(journalOf(t, b, "streamer", "th-ev", "run-1")) {
		t.Fatalf("replay of a thread at rest: %v", all)
	}
	last := all[len(all)-1].seq
	if rest := collectFrames(t, b.stream(t, http.MethodGet, fmt.Sprintf("/agents/streamer/threads/th-ev/events?after=%d", last), nil, nil)); len(rest) != 0 {
		t.Fatalf("events after the end: %v", rest)
	}
}
