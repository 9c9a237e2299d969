package aguihttp

import (
	"context"
	"errors"
	"iter"
	"testing"
	"testing/synctest"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// manyEvents yields n envelopes at once.
type manyEvents int

func (n manyEvents) Events(context.Context) iter.Seq2[agui.Envelope, error] {
	return func(yield func(agui.Envelope, error) bool) {
		for i := range int(n) {
			if !yield(agui.Envelope{Seq: int64(i + 1), Event: []byte(`{"type":"CUSTOM","name":"x","value":null}`)}, nil) {
				return
			}
		}
	}
}

// TestSlowClientIsDropped: a connection whose queue stays full is dropped
// (its cause says why) instead of making the feeder wait on; memory stays
// bounded by the queue.
func TestSlowClientIsDropped(t *testing.T) {
	t.Parallel()
	ctx, drop := context.WithCancelCause(t.Context())
	o := newOutbox(4, 20*time.Millisecond, drop)
	// Nobody drains: the client reads nothing.
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.feed(ctx, manyEvents(100), true)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the feeder waited on a client that does not read")
	}
	if !errors.Is(context.Cause(ctx), errSlowClient) {
		t.Fatalf("cause %v, want errSlowClient", context.Cause(ctx))
	}
	if len(o.queue) != cap(o.queue) {
		t.Fatalf("queue holds %d of %d", len(o.queue), cap(o.queue))
	}
}

// countingFramer records writes and flushes.
type countingFramer struct {
	writes, flushes, pings int
	seqs                   []int64
}

func (f *countingFramer) write(env agui.Envelope) error {
	f.writes++
	f.seqs = append(f.seqs, env.Seq)
	return nil
}
func (f *countingFramer) flush() error     { f.flushes++; return nil }
func (f *countingFramer) keepAlive() error { f.pings++; return nil }

// TestDrainWritesInOrderAndFlushesPerBurst: queued events go out in order
// with one flush for the burst; with the feeders done, drain writes the rest
// and returns.
func TestDrainWritesInOrderAndFlushesPerBurst(t *testing.T) {
	t.Parallel()
	o := newOutbox(16, time.Second, func(error) {})
	open, err := o.feed(t.Context(), manyEvents(10), false)
	if err != nil || !open {
		t.Fatalf("feed: open %v, %v; want a run left open (no terminal event)", open, err)
	}
	done := make(chan struct{})
	close(done)
	f := &countingFramer{}
	if err := drain(t.Context(), o, f, time.Hour, done); err != nil {
		t.Fatal(err)
	}
	if f.writes != 10 || f.flushes != 1 {
		t.Fatalf("%d writes, %d flushes", f.writes, f.flushes)
	}
	for i, s := range f.seqs {
		if s != int64(i+1) {
			t.Fatalf("order %v", f.seqs)
		}
	}
}

// TestDrainKeepsIdleConnectionsAlive: an idle connection gets a
// keep-alive every interval (in a bubble: time is virtual).
func TestDrainKeepsIdleConnectionsAlive(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		o := newOutbox(1, time.Second, func(error) {})
		ctx, cancel := context.WithTimeout(t.Context(), 65*time.Millisecond)
		defer cancel()
		f := &countingFramer{}
		_ = drain(ctx, o, f, 10*time.Millisecond, nil)
		if f.pings != 6 {
			t.Fatalf("%d keep-alives in 65ms at a 10ms interval, want 6", f.pings)
		}
	})
}

// batched is a Stream that yields its envelopes in the batches given, as
// tasks.RunReader does.
type batched [][]agui.Envelope

func (b batched) Events(ctx context.Context) iter.Seq2[agui.Envelope, error] {
	return func(yield func(agui.Envelope, error) bool) {
		for _, batch := range b {
			for _, env := range batch {
				if !yield(env, nil) {
					return
				}
			}
		}
	}
}

func (b batched) Batches(ctx context.Context) iter.Seq2[[]agui.Envelope, error] {
	return func(yield func([]agui.Envelope, error) bool) {
		for _, batch := range b {
			if !yield(batch, nil) {
				return
			}
		}
	}
}

func envelopes(from, n int) []agui.Envelope {
	out := make([]agui.Envelope, n)
	for i := range out {
		out[i] = agui.Envelope{Seq: int64(from + i), Event: []byte(`{"type":"CUSTOM","name":"x","value":null}`)}
	}
	return out
}

// TestOutboxTakesBatches: a WebSocket connection's queue takes a stream's
// batches whole, as the SSE writer reads them, and the writer writes them
// in order with one flush for the burst.
func TestOutboxTakesBatches(t *testing.T) {
	t.Parallel()
	o := newOutbox(16, time.Second, func(error) {})
	if _, err := o.feed(t.Context(), batched{envelopes(1, 5), envelopes(6, 3)}, false); err != nil {
		t.Fatal(err)
	}
	if len(o.queue) != 2 || len(o.slots) != 8 {
		t.Fatalf("queue holds %d batches, %d slots taken; want 2 and 8", len(o.queue), len(o.slots))
	}
	done := make(chan struct{})
	close(done)
	f := &countingFramer{}
	if err := drain(t.Context(), o, f, time.Hour, done); err != nil {
		t.Fatal(err)
	}
	if f.writes != 8 || f.flushes != 1 || len(o.slots) != 0 {
		t.Fatalf("%d writes, %d flushes, %d slots left", f.writes, f.flushes, len(o.slots))
	}
	for i, s := range f.seqs {
		if s != int64(i+1) {
			t.Fatalf("order %v", f.seqs)
		}
	}
}

// TestOutboxBoundsEnvelopes: a batch larger than the queue waits in pieces;
// no more envelopes than the queue's size ever wait, and a client that
// does not read is dropped.
func TestOutboxBoundsEnvelopes(t *testing.T) {
	t.Parallel()
	ctx, drop := context.WithCancelCause(t.Context())
	o := newOutbox(4, 20*time.Millisecond, drop)
	if o.put(ctx, envelopes(1, 10)...) {
		t.Fatal("put 10 envelopes into a queue of 4 nobody reads")
	}
	if !errors.Is(context.Cause(ctx), errSlowClient) {
		t.Fatalf("cause %v, want errSlowClient", context.Cause(ctx))
	}
	if len(o.slots) != 4 || len(o.queue) != 1 || len(<-o.queue) != 4 {
		t.Fatalf("%d envelopes wait, want 4 in one batch", len(o.slots))
	}
}
