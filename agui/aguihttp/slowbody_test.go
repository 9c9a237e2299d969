package aguihttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// TestSlowBodyIsCutOff: a client that announces a body and sends it a byte
// at a time gets a 400 and a closed connection once the body deadline
// passes — on the run route, which reads its body, and on the cancel route,
// which does not (net/http drains it before answering). Before the fix the
// run route never answered: the deadline was lifted before net/http drained
// the rest of the body.
func TestSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	run := RunnerFunc(func(context.Context, string, *agui.RunAgentInput) (Stream, error) {
		t.Error("a request whose body never arrived reached the runner")
		return nil, nil
	})
	h := New(Options{Runner: run, Catalog: oneAgent{}, Threads: noThreads{}, BodyReadTimeout: 300 * time.Millisecond})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for _, path := range []string{"/agents/a", "/agents/a/threads/t1/cancel"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", path)
			answered := make(chan *http.Response, 1)
			go func() {
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err == nil {
					answered <- resp
				}
				close(answered)
			}()
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for sent := 0; ; sent++ {
				select {
				case resp, ok := <-answered:
					if !ok {
						t.Fatal("the connection closed without an answer")
					}
					if path == "/agents/a" && resp.StatusCode != http.StatusBadRequest {
						t.Fatalf("status %d, want 400", resp.StatusCode)
					}
					if !resp.Close {
						t.Fatal("the connection stays open after a body that never arrived")
					}
					return
				case <-tick.C:
					// A byte at a time, for at most a minute: far past the
					// deadline, but the test ends with the answer.
					if sent > 3000 {
						t.Fatal("no answer while the body trickles in")
					}
					if _, err := conn.Write([]byte(" ")); err != nil {
						t.Fatalf("the server closed the connection without an answer: %v", err)
					}
				}
			}
		})
	}
}

// noThreads has no threads; cancelling one is an error.
type noThreads struct{}

func (noThreads) Thread(context.Context, string, string) (any, error) { return nil, errNoThread }
func (noThreads) Cancel(context.Context, string, string) (any, error) { return nil, errNoThread }
func (noThreads) Follow(context.Context, string, string, int64) (Stream, error) {
	return nil, errNoThread
}
func (noThreads) Poll(context.Context, string, string, int64, time.Duration) (*Poll, error) {
	return nil, errNoThread
}

var errNoThread = errors.New("no such thread")
