package aguihttp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// batchedRun is a run whose events are all stored before the client reads:
// one batch of n chunks, then the terminal event.
type batchedRun struct{ n int }

func (r batchedRun) Events(ctx context.Context) iter.Seq2[agui.Envelope, error] {
	panic("the SSE writer must read a batch stream by batches")
}

func (r batchedRun) Batches(ctx context.Context) iter.Seq2[[]agui.Envelope, error] {
	return func(yield func([]agui.Envelope, error) bool) {
		batch := make([]agui.Envelope, r.n)
		for i := range batch {
			batch[i] = agui.Envelope{Seq: int64(i + 1), Event: fmt.Appendf(nil, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"chunk %d"}`, i)}
		}
		if yield(batch, nil) {
			yield([]agui.Envelope{{Seq: int64(r.n + 1), Event: []byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)}}, nil)
		}
	}
}

// countingListener counts the write calls made on its connections.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	return countingConn{c, l.writes}, err
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestSSEWritesABatchAtOnce: events that are stored together go to the
// client together — 200 chunks in a handful of writes, not one each — and
// in order, each frame whole.
func TestSSEWritesABatchAtOnce(t *testing.T) {
	t.Parallel()
	const chunks = 200
	run := RunnerFunc(func(context.Context, string, *agui.RunAgentInput) (Stream, error) { return batchedRun{chunks}, nil })
	var writes atomic.Int64
	srv := httptest.NewUnstartedServer(New(Options{Runner: run, Catalog: oneAgent{}, Threads: noThreads{}}))
	srv.Listener = countingListener{srv.Listener, &writes}
	srv.Start()
	t.Cleanup(srv.Close)
	body := `{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"}]}`
	resp, err := http.Post(srv.URL+"/agents/a", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for i := range chunks {
		want := fmt.Sprintf("id: %d\ndata: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"chunk %d\"}\n\n", i+1, i)
		j := bytes.Index(got, []byte(want))
		if j < 0 {
			t.Fatalf("frame %d missing or torn", i+1)
		}
		got = got[j+len(want):]
	}
	if !bytes.Contains(got, []byte(`"RUN_FINISHED"`)) {
		t.Fatal("no RUN_FINISHED after the chunks")
	}
	// The headers with the first keep-alive, the batch (chunked encoding
	// through net/http's 4 KiB buffer: a few writes for ~17 KB), the
	// terminal event, the end of the chunked body.
	if n := writes.Load(); n > 10 {
		t.Errorf("%d writes for %d stored chunks; want them written together", n, chunks)
	}
}
