package aguihttp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// chattyRun yields 1 KiB chunks until its context ends, then a
// RUN_FINISHED it never reaches with a reader that stalls.
type chattyRun struct{}

func (chattyRun) Events(ctx context.Context) iter.Seq2[agui.Envelope, error] {
	return func(yield func(agui.Envelope, error) bool) {
		chunk := `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"` + strings.Repeat(".", 1024) + `"}`
		for i := int64(1); i <= 100_000 && ctx.Err() == nil; i++ {
			if !yield(agui.Envelope{Seq: i, Event: []byte(chunk)}, nil) {
				return
			}
		}
		yield(agui.Envelope{Seq: 100_001, Event: []byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)}, nil)
	}
}

// smallSendBuffers makes the server's sockets buffer little, so that a
// client that stops reading fills them within kilobytes.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// TestDroppedSSEClientIsCutNotFailed: an SSE client that stalls past the
// slow-client timeout, then reads on, finds its stream cut (it resumes
// from its last event id), never a RUN_ERROR saying the run was lost: the
// run goes on. Before the fix, when the dropped feeder's end won the race
// in drain against the dropped context, half the time, the handler took
// the stream for one whose run stopped short and wrote RUN_ERROR internal
// (the soak under abuse met it: the client gave up on a run still going).
//
// Not parallel with the package's other tests: its sixteen connections
// would count in the goroutines TestWebSocketStreamsAreBounded measures.
func TestDroppedSSEClientIsCutNotFailed(t *testing.T) {
	run := RunnerFunc(func(context.Context, string, *agui.RunAgentInput) (Stream, error) { return chattyRun{}, nil })
	h := New(Options{Runner: run, Catalog: oneAgent{}, Threads: noThreads{}, QueueSize: 1,
		SlowClientTimeout: 50 * time.Millisecond, WriteTimeout: 10 * time.Second})
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = smallSendBuffers{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close)
	// Each attempt meets the race once; sixteen miss it with odds 2^-16.
	for i := range 16 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
				return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
			}}
			conn, err := d.DialContext(t.Context(), "tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			body := `{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"}]}`
			fmt.Fprintf(conn, "POST /agents/a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			time.Sleep(500 * time.Millisecond) // the client stalls: ten slow-client timeouts
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			if bytes.Contains(got, []byte(`"RUN_FINISHED"`)) {
				t.Fatal("the stalled client was not dropped")
			}
			if i := bytes.Index(got, []byte(`"RUN_ERROR"`)); i >= 0 {
				t.Fatalf("the dropped client was told the run failed: %s", got[i:])
			}
		})
	}
}
