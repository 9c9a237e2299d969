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
		o.feed(ctx, manyEvents(100))
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
	terminated, err := o.feed(t.Context(), manyEvents(10))
	if err != nil || terminated {
		t.Fatalf("feed: %v %v", terminated, err)
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
