package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

// envelope is a server → client WebSocket message.
type envelope struct {
	ThreadID string          `json:"threadId"`
	RunID    string          `json:"runId"`
	Seq      int64           `json:"seq"`
	Event    json.RawMessage `json:"event"`
}

// wsClient is one WebSocket connection to the bridge; its envelopes are
// read in the background.
type wsClient struct {
	conn      *websocket.Conn
	envelopes chan envelope
	closed    chan error // the read error that ended the connection
	writeMu   sync.Mutex
}

func (b *testBridge) dialWS(t *testing.T, agent string, header http.Header) (*wsClient, *http.Response, error) {
	t.Helper()
	url := "ws" + strings.TrimPrefix(b.url, "http") + "/agents/" + agent + "/ws"
	conn, resp, err := websocket.DefaultDialer.DialContext(t.Context(), url, header)
	if err != nil {
		return nil, resp, err
	}
	c := &wsClient{conn: conn, envelopes: make(chan envelope, 1<<14), closed: make(chan error, 1)}
	t.Cleanup(func() { conn.Close() })
	go func() {
		defer close(c.envelopes)
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				c.closed <- err
				return
			}
			var env envelope
			if err := json.Unmarshal(data, &env); err != nil {
				c.closed <- fmt.Errorf("not an envelope: %s", data)
				return
			}
			c.envelopes <- env
		}
	}()
	return c, resp, nil
}

func (b *testBridge) mustDialWS(t *testing.T, agent string) *wsClient {
	t.Helper()
	c, resp, err := b.dialWS(t, agent, nil)
	if err != nil {
		t.Fatalf("dial: %v (%+v)", err, resp)
	}
	return c
}

func (c *wsClient) send(t *testing.T, frame any) {
	t.Helper()
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.conn.WriteJSON(frame); err != nil {
		t.Fatal(err)
	}
}

func (c *wsClient) run(t *testing.T, body []byte) {
	t.Helper()
	c.send(t, map[string]any{"type": "run", "input": json.RawMessage(body)})
}

// next returns the next envelope.
func (c *wsClient) next(t *testing.T) envelope {
	t.Helper()
	select {
	case env, ok := <-c.envelopes:
		if !ok {
			t.Fatalf("the connection ended: %v", <-c.closed)
		}
		return env
	case <-time.After(20 * time.Second):
		t.Fatal("no envelope came")
		return envelope{}
	}
}

// runEvents reads envelopes until the terminal event of thread's run and
// returns that run's, checking they belong to it and their seqs grow.
func (c *wsClient) untilTerminal(t *testing.T) []envelope {
	t.Helper()
	var out []envelope
	for {
		env := c.next(t)
		out = append(out, env)
		if agui.IsTerminalEvent(env.Event) {
			return out
		}
	}
}

func wsEvents(t *testing.T, envs []envelope) []agui.Event {
	t.Helper()
	var out []agui.Event
	for _, e := range envs {
		ev, err := agui.Decode(e.Event)
		if err != nil {
			t.Fatalf("%s: %v", e.Event, err)
		}
		out = append(out, ev)
	}
	return out
}

// shape is an event sequence without what differs between two runs of the
// same scenario (ids, timestamps, and how deltas were merged while the
// store was busy): types, text and the terminal's outcome. Consecutive
// text deltas of one message are one line with their text joined, and
// consecutive state deltas one line: the journal writer merges those that
// queue behind an append in flight, which timing decides.
func shape(events []agui.Event) string {
	var b strings.Builder
	var prev agui.Event
	for _, e := range events {
		switch e := e.(type) {
		case *agui.TextMessageContent:
			if p, ok := prev.(*agui.TextMessageContent); ok && p.MessageID == e.MessageID {
				trimmed := strings.TrimSuffix(b.String(), "\n")
				b.Reset()
				b.WriteString(trimmed + e.Delta + "\n")
				prev = e
				continue
			}
		case *agui.StateDelta:
			if _, ok := prev.(*agui.StateDelta); ok {
				prev = e
				continue
			}
		}
		prev = e
		b.WriteString(string(e.Type()))
		switch e := e.(type) {
		case *agui.TextMessageContent:
			b.WriteString(" " + e.Delta)
		case *agui.RunError:
			b.WriteString(" " + e.Code)
		case *agui.RunFinished:
			if e.Outcome != nil {
				b.WriteString(" " + e.Outcome.Type)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestWebSocketRunsLikeSSE: the same runs over a WebSocket and over SSE
// produce the same event sequences; a socket carries several threads at
// once, each thread's envelopes in journal order, the run's journal bytes.
func TestWebSocketRunsLikeSSE(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	cases := []struct{ agent, text string }{
		{"streamer", "Tell me"}, {"narrator", "Find it"}, {"chatter", "hi"}, {"failer", "go"},
		{"asker", "Weather?"}, {"approver", "Book my flight"}, {"dashboard", "Show me"}, {"thinker", "Think"},
	}
	for _, c := range cases {
		for _, v1 := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/v1=%v", c.agent, v1), func(t *testing.T) {
				t.Parallel()
				sse := b.post(t, c.agent, runBody("th-sse-"+c.agent+fmt.Sprint(v1), "run-1", v1, userMsg("u1", c.text)))
				sse.check(t, v1)
				ws := b.mustDialWS(t, c.agent)
				thread := "th-ws-" + c.agent + fmt.Sprint(v1)
				ws.run(t, runBody(thread, "run-1", v1, userMsg("u1", c.text)))
				envs := ws.untilTerminal(t)
				events := wsEvents(t, envs)
				if err := agui.CheckStream(v1, events); err != nil {
					t.Fatal(err)
				}
				if shape(events) != shape(sse.events) {
					t.Fatalf("over WebSocket:\n%s\nover SSE:\n%s", shape(events), shape(sse.events))
				}
				journal := journalOf(t, b, c.agent, thread, "run-1")
				for i, e := range envs {
					if e.ThreadID != thread || e.RunID != "run-1" || e.Seq != journal[i].seq || string(e.Event) != journal[i].data {
						t.Fatalf("envelope %d %+v, journal %+v", i, e, journal[i])
					}
				}
			})
		}
	}
}

// TestWebSocketErrors: a request that cannot start is answered with a
// RUN_ERROR envelope carrying the frame's ids; the socket stays usable.
func TestWebSocketErrors(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	ws := b.mustDialWS(t, "counter")
	wantError := func(thread, run, code string) {
		t.Helper()
		env := ws.next(t)
		var e struct {
			Type, Code string
		}
		_ = json.Unmarshal(env.Event, &e)
		if e.Type != "RUN_ERROR" || e.Code != code || env.ThreadID != thread || env.RunID != run || env.Seq != 0 {
			t.Fatalf("want RUN_ERROR %s for %q/%q, got %+v %s", code, thread, run, env, env.Event)
		}
	}
	ws.send(t, json.RawMessage(`[1,2]`))
	wantError("", "", "invalid_input")
	ws.send(t, map[string]any{"type": "dance"})
	wantError("", "", "invalid_input")
	ws.send(t, map[string]any{"type": "run", "input": map[string]any{"threadId": "th-e", "messages": []any{}}})
	wantError("th-e", "", "invalid_input")
	ws.send(t, map[string]any{"type": "subscribe", "threadId": "nope", "after": 0})
	wantError("nope", "", "unknown_thread")
	ws.send(t, map[string]any{"type": "cancel", "threadId": "nope"})
	wantError("nope", "", "unknown_thread")
	if err := ws.conn.WriteMessage(websocket.BinaryMessage, []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	wantError("", "", "invalid_input")
	// A busy thread: the second run is refused, the first goes on.
	ws.run(t, runBody("th-busy", "run-1", true, userMsg("u1", "count")))
	for env := ws.next(t); !strings.Contains(string(env.Event), "TEXT_MESSAGE_CONTENT"); env = ws.next(t) {
	}
	ws.run(t, runBody("th-busy", "run-2", true, userMsg("u1", "count")))
	var refused envelope
	for refused = ws.next(t); refused.RunID != "run-2"; refused = ws.next(t) {
	}
	if !strings.Contains(string(refused.Event), `"code":"thread_busy"`) || refused.ThreadID != "th-busy" {
		t.Fatalf("busy thread: %+v %s", refused, refused.Event)
	}
	// Cancel over the socket: the run ends cancelled on it.
	ws.send(t, map[string]any{"type": "cancel", "threadId": "th-busy"})
	for {
		env := ws.next(t)
		if agui.IsTerminalEvent(env.Event) {
			if env.RunID != "run-1" || !strings.Contains(string(env.Event), `"cancelled"`) {
				t.Fatalf("the cancelled run ends with %+v %s", env, env.Event)
			}
			break
		}
	}
}

// TestWebSocketSubscribe: subscribing after a seq replays the journal from
// there and follows the run in progress to its end.
func TestWebSocketSubscribe(t *testing.T) {
	t.Parallel()
	b := startBridgeWith(t, agents.Options{Delay: 5 * time.Millisecond}, nil)
	lr := b.open(t, "narrator", runBody("th-sub", "run-1", true, userMsg("u1", "Tell me")))
	first := <-lr.frames
	ws := b.mustDialWS(t, "narrator")
	ws.send(t, map[string]any{"type": "subscribe", "threadId": "th-sub", "after": first.seq})
	envs := ws.untilTerminal(t)
	journal := journalOf(t, b, "narrator", "th-sub", "run-1")[1:]
	if len(envs) != len(journal) {
		t.Fatalf("%d envelopes, journal after the first event has %d", len(envs), len(journal))
	}
	for i, e := range envs {
		if e.Seq != journal[i].seq || string(e.Event) != journal[i].data {
			t.Fatalf("envelope %d: %+v, journal %+v", i, e, journal[i])
		}
	}
	collectFrames(t, lr)
}

// TestWebSocketOrigin: browsers from other origins are refused (403) when
// no CORS list allows them; clients without Origin are not.
func TestWebSocketOrigin(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	host := strings.TrimPrefix(b.url, "http://")
	for _, c := range []struct {
		origin string
		ok     bool
	}{{"", true}, {"http://" + host, true}, {"https://evil.example.com", false}} {
		h := http.Header{}
		if c.origin != "" {
			h.Set("Origin", c.origin)
		}
		_, resp, err := b.dialWS(t, "streamer", h)
		if c.ok != (err == nil) {
			t.Fatalf("origin %q: %v", c.origin, err)
		}
		if !c.ok && (resp == nil || resp.StatusCode != http.StatusForbidden) {
			t.Fatalf("origin %q: %+v", c.origin, resp)
		}
	}
	listed := startBridge(t, func(c *configT) { c.Server.CORSOrigins = []string{"https://app.example.com"} })
	for _, c := range []struct {
		origin string
		ok     bool
	}{{"https://app.example.com", true}, {"http://" + strings.TrimPrefix(listed.url, "http://"), false}} {
		_, _, err := listed.dialWS(t, "streamer", http.Header{"Origin": {c.origin}})
		if c.ok != (err == nil) {
			t.Fatalf("listed, origin %q: %v", c.origin, err)
		}
	}
	if _, resp, err := b.dialWS(t, "nobody", nil); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown agent: %v %+v", err, resp)
	}
}

// TestWebSocketReadLimit: a message above the read limit closes the
// connection with 1009.
func TestWebSocketReadLimit(t *testing.T) {
	t.Parallel()
	b := startBridge(t, func(c *configT) { c.Server.WSReadLimit = 1024 })
	ws := b.mustDialWS(t, "streamer")
	ws.run(t, runBody("th-big", "run-1", true, userMsg("u1", strings.Repeat("x", 2048))))
	select {
	case <-ws.envelopes:
	case <-time.After(10 * time.Second):
	}
	err := <-ws.closed
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig {
		t.Fatalf("want close 1009, got %v", err)
	}
}

// TestThousandWebSocketRuns: 1,000 runs at once over 50 sockets; every run
// arrives whole and in order. It is a load test: `make test` runs it in its
// pass without the race detector (see raceEnabled).
func TestThousandWebSocketRuns(t *testing.T) {
	if raceEnabled {
		t.Skip("load test: make test runs it without -race (make loadtest)")
	}
	t.Parallel()
	const sockets, perSocket = 50, 20
	b := startBridge(t, nil)
	var wg sync.WaitGroup
	errs := make(chan error, sockets*perSocket)
	for s := range sockets {
		wg.Go(func() {
			ws := b.mustDialWS(t, "streamer")
			for r := range perSocket {
				ws.run(t, runBody(fmt.Sprintf("th-%d-%d", s, r), "run-1", r%2 == 0, userMsg("u1", fmt.Sprintf("n%d-%d", s, r))))
			}
			byThread := map[string][]envelope{}
			for done := 0; done < perSocket; {
				env := ws.next(t)
				byThread[env.ThreadID] = append(byThread[env.ThreadID], env)
				if agui.IsTerminalEvent(env.Event) {
					done++
				}
			}
			for r := range perSocket {
				thread := fmt.Sprintf("th-%d-%d", s, r)
				envs := byThread[thread]
				for i := 1; i < len(envs); i++ {
					if envs[i].Seq != envs[i-1].Seq+1 {
						errs <- fmt.Errorf("%s: seq %d after %d", thread, envs[i].Seq, envs[i-1].Seq)
						return
					}
				}
				events := wsEvents(t, envs)
				if err := agui.CheckStream(r%2 == 0, events); err != nil {
					errs <- fmt.Errorf("%s: %v", thread, err)
					return
				}
				res := runResult{events: events}
				if n := strings.Count(res.text(), agents.StreamerAnswer(fmt.Sprintf("n%d-%d", s, r))); n != 1 {
					errs <- fmt.Errorf("%s: answer %d times in %q", thread, n, res.text())
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// configT is the bridge's config, as startBridge's tweak takes it.
type configT = config.Config
