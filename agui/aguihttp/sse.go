package aguihttp

import (
	"context"
	"errors"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// writeSSE streams s to the client as SSE frames (each journaled event with
// its sequence number as the SSE id) until the end of the stream, the client
// leaving or falling behind, or a write failing. Leaving does not stop a
// run: its events stay in the thread's journal, and the client can come
// back with Last-Event-ID. For a run (wantTerminal), a stream that stops
// before its terminal event still ends with one: every stream ends exactly
// once.
//
// One goroutine reads and writes: the stream's events are already stored
// (the journal, or the run's live log, is the buffer), so a queue and a
// second goroutine would only add a hand-off per event. What queued while
// a write was in flight goes out in the next one, whole (Batches): one
// syscall and one wake-up per batch, not per event. A client that leaves a
// write untaken for SlowClientTimeout is dropped; it resumes from its last
// event id.
func (h *Handler) writeSSE(w http.ResponseWriter, r *http.Request, s Stream, wantTerminal bool) {
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if g := h.opt.SSEStreams; g != nil {
		g.Inc()
		defer g.Dec()
	}
	sw := &sseWriter{w: w, rc: http.NewResponseController(w), timeout: h.opt.SlowClientTimeout}
	if sw.send(keepAliveFrame) != nil {
		return
	}
	ctx, stop := context.WithCancelCause(r.Context())
	defer stop(nil)
	idle := sw.keepIdleAlive(h.opt.KeepAlive, stop)
	open, err := sw.copy(ctx, s, wantTerminal)
	idle()
	var cause error
	if err != nil {
		cause = err
	} else if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
		cause = c
	}
	switch {
	case errors.Is(cause, os.ErrDeadlineExceeded):
		h.opt.Logger.Info("dropped a slow SSE client", "path", r.URL.Path)
	case open && r.Context().Err() == nil && !sw.failed():
		// A run's events stopped before its terminal event (the store
		// failed, the thread was deleted): every stream still ends
		// exactly once.
		code, message := h.publicError(cause, "the bridge lost the end of this run")
		if b, err := agui.Marshal(&agui.RunError{Code: code, Message: message}); err == nil {
			_ = sw.send(agui.AppendSSEFrame(nil, agui.Envelope{Event: b}))
		}
	}
}

// sseWriter is one SSE response: the stream's goroutine writes batches
// and a timer writes keep-alives while it is idle; mu keeps their frames
// whole.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration // a write untaken this long: a slow client

	mu       sync.Mutex
	buf      []byte
	deadline time.Time // the connection's write deadline
	wrote    bool      // since the keep-alive timer last looked
	err      error     // the write that failed; nothing more is sent
}

// copy writes the stream's batches until its end; it reports whether a
// run is left open (open: a run's stream, until its terminal event goes
// out; a thread's, from its run's events to their end), and the error that
// stopped it (the stream's, a write's, or ctx's).
func (sw *sseWriter) copy(ctx context.Context, s Stream, open bool) (bool, error) {
	for batch, err := range batches(ctx, s) {
		if err != nil {
			return open, err
		}
		sw.mu.Lock()
		sw.buf = sw.buf[:0]
		for _, env := range batch {
			sw.buf = agui.AppendSSEFrame(sw.buf, env)
		}
		err = sw.sendLocked(sw.buf)
		sw.mu.Unlock()
		if err != nil {
			return open, err
		}
		// Only the last event of a batch tells: a run's batch ends at its
		// terminal event (journal.Reader cuts there, and a plain stream's
		// batches are of one), and a thread's events after a terminal one
		// open its next run.
		open = !agui.IsTerminalEvent(batch[len(batch)-1].Event)
	}
	return open, nil
}

// send writes frames and flushes them.
func (sw *sseWriter) send(frames []byte) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.sendLocked(frames)
}

func (sw *sseWriter) sendLocked(frames []byte) error {
	if sw.err != nil {
		return sw.err
	}
	// Moving the deadline costs a timer update: do it only once half of
	// it is used, so a write gets between timeout/2 and timeout.
	if now := time.Now(); sw.deadline.Sub(now) < sw.timeout/2 {
		sw.deadline = now.Add(sw.timeout)
		_ = sw.rc.SetWriteDeadline(sw.deadline)
	}
	_, err := sw.w.Write(frames)
	if err == nil {
		err = sw.rc.Flush()
	}
	sw.wrote = true
	sw.err = err
	return err
}

func (sw *sseWriter) failed() bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.err != nil
}

// keepIdleAlive writes a keep-alive comment every interval the stream
// wrote nothing, so proxies and clients tell an idle stream from a dead
// one; a failed write stops ctx with its error (stop). The returned func
// ends it and waits for a write in flight.
func (sw *sseWriter) keepIdleAlive(interval time.Duration, stop context.CancelCauseFunc) func() {
	var (
		mu      sync.Mutex
		stopped bool
		t       *time.Timer
	)
	mu.Lock() // t is read by the first call, which may come at once
	defer mu.Unlock()
	t = time.AfterFunc(interval, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		sw.mu.Lock()
		var err error
		if !sw.wrote {
			err = sw.sendLocked(keepAliveFrame)
		}
		sw.wrote = false
		sw.mu.Unlock()
		if err != nil {
			stop(err)
			return
		}
		t.Reset(interval)
	})
	return func() {
		t.Stop()
		mu.Lock()
		stopped = true
		mu.Unlock()
	}
}

var keepAliveFrame = []byte(agui.KeepAliveFrame)
