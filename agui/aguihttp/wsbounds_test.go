package aguihttp

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// heldThreads follows every thread with a stream that holds until the
// connection ends, as a thread with a run in progress does; it counts the
// follows.
type heldThreads struct {
	noThreads
	follows atomic.Int64
}

func (h *heldThreads) Follow(context.Context, string, string, int64) (Stream, error) {
	h.follows.Add(1)
	return heldStream{}, nil
}

type heldStream struct{}

func (heldStream) Events(ctx context.Context) iter.Seq2[agui.Envelope, error] {
	return func(yield func(agui.Envelope, error) bool) {
		<-ctx.Done()
		yield(agui.Envelope{}, ctx.Err())
	}
}

// wsClient dials the handler's WebSocket route and reads its envelopes.
type wsClient struct {
	conn *websocket.Conn
	envs chan agui.Envelope
}

func dialWS(t *testing.T, srv *httptest.Server) *wsClient {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/agents/a/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &wsClient{conn: conn, envs: make(chan agui.Envelope, 1024)}
	go func() {
		defer close(c.envs)
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				return
			}
			var wire struct {
				ThreadID string          `json:"threadId"`
				RunID    string          `json:"runId"`
				Seq      int64           `json:"seq"`
				Event    json.RawMessage `json:"event"`
			}
			if json.Unmarshal(data, &wire) == nil {
				c.envs <- agui.Envelope{ThreadID: wire.ThreadID, RunID: wire.RunID, Seq: wire.Seq, Event: wire.Event}
			}
		}
	}()
	return c
}

func (c *wsClient) send(t *testing.T, frame string) {
	t.Helper()
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		t.Fatal(err)
	}
}

// refusal waits for the next RUN_ERROR envelope and returns it with its code.
func (c *wsClient) refusal(t *testing.T) (agui.Envelope, string) {
	t.Helper()
	select {
	case env, ok := <-c.envs:
		if !ok {
			t.Fatal("the connection closed")
		}
		var e struct{ Type, Code string }
		_ = json.Unmarshal(env.Event, &e)
		if e.Type != "RUN_ERROR" {
			t.Fatalf("want a RUN_ERROR envelope, got %s", env.Event)
		}
		return env, e.Code
	case <-time.After(10 * time.Second):
		t.Fatal("no refusal")
	}
	return agui.Envelope{}, ""
}

// TestWebSocketStreamsAreBounded: a connection flooding subscribe frames
// (issue 20: 50,000 of them held ~50k goroutines) gets one stream per
// thread — duplicates are merged — at most WSMaxStreams at once, and a
// principal at most MaxPrincipalStreams over its connections; every
// refusal is a RUN_ERROR too_many_streams frame and the connection stays.
func TestWebSocketStreamsAreBounded(t *testing.T) {
	t.Parallel()
	threads := &heldThreads{}
	h := New(Options{Runner: RunnerFunc(nil), Catalog: oneAgent{}, Threads: threads, WSMaxStreams: 3, MaxPrincipalStreams: 4})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	a := dialWS(t, srv)

	before := runtime.NumGoroutine()
	for range 2000 {
		a.send(t, `{"type":"subscribe","threadId":"busy","after":0}`)
	}
	// A frame after the flood is handled after it: its answer means the
	// flood was read.
	for i := range 3 {
		a.send(t, fmt.Sprintf(`{"type":"subscribe","threadId":"t%d","after":0}`, i))
	}
	env, code := a.refusal(t)
	if code != CodeTooManyStreams || env.ThreadID != "t2" {
		t.Fatalf("the fourth thread: %s on %q, want too_many_streams on t2", code, env.ThreadID)
	}
	if n := threads.follows.Load(); n != 3 {
		t.Fatalf("%d streams started, want 3 (busy once, t0, t1)", n)
	}
	if grew := runtime.NumGoroutine() - before; grew > 20 {
		t.Fatalf("the flood left %d more goroutines", grew)
	}
	// The principal's cap holds across connections.
	b := dialWS(t, srv)
	b.send(t, `{"type":"subscribe","threadId":"u1","after":0}`)
	b.send(t, `{"type":"subscribe","threadId":"u2","after":0}`)
	if env, code := b.refusal(t); code != CodeTooManyStreams || env.ThreadID != "u2" {
		t.Fatalf("the principal's fifth stream: %s on %q", code, env.ThreadID)
	}
	// A stream that ends frees its place: once a's connection is gone, a
	// new thread on b is followed instead of refused.
	a.conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		n := threads.follows.Load()
		b.send(t, fmt.Sprintf(`{"type":"subscribe","threadId":"v%d","after":0}`, i))
		answered := false
		for !answered && time.Now().Before(deadline) {
			select {
			case env := <-b.envs:
				answered = true // refused: a's streams still count
				if !strings.Contains(string(env.Event), CodeTooManyStreams) {
					t.Fatalf("unexpected envelope %s", env.Event)
				}
			case <-time.After(10 * time.Millisecond):
				if threads.follows.Load() > n {
					return
				}
			}
		}
		if !answered {
			t.Fatal("the closed connection's streams still count")
		}
	}
}

// TestWebSocketFramesCountAsRequests: every frame is admitted like an HTTP
// request; a refused one is answered with the limiter's code, and an id
// echoed in an error frame is bounded.
func TestWebSocketFramesCountAsRequests(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	admitted := 0
	admit := func(string) error {
		mu.Lock()
		defer mu.Unlock()
		admitted++
		if admitted > 2 { // the upgrade and one frame
			return rateLimited{}
		}
		return nil
	}
	h := New(Options{Runner: RunnerFunc(nil), Catalog: oneAgent{}, Threads: &heldThreads{}, Admit: admit})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := dialWS(t, srv)
	c.send(t, `{"type":"subscribe","threadId":"t1","after":0}`)
	c.send(t, `{"type":"subscribe","threadId":"t2","after":0}`)
	if env, code := c.refusal(t); code != "rate_limited" || env.ThreadID != "t2" {
		t.Fatalf("the frame over the rate: %s on %q", code, env.ThreadID)
	}
	long := strings.Repeat("x", 100_000)
	c.send(t, `{"type":"dance","threadId":"`+long+`"}`)
	if env, _ := c.refusal(t); len(env.ThreadID) > maxFrameID {
		t.Fatalf("the error frame echoes a %d-byte id", len(env.ThreadID))
	}
}

type rateLimited struct{}

func (rateLimited) Error() string         { return "rate limited" }
func (rateLimited) HTTPStatus() int       { return 429 }
func (rateLimited) ErrorCode() string     { return "rate_limited" }
func (rateLimited) PublicMessage() string { return "too many requests" }
