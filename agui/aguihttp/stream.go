package aguihttp

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// Stream is what a client reads: journaled AG-UI events as envelopes (a
// run from RUN_STARTED to its terminal event, or a thread followed from a
// point of its journal).
type Stream interface {
	Events(ctx context.Context) iter.Seq2[agui.Envelope, error]
}

// batchStream is a Stream that can also yield its envelopes a batch at a
// time, as they queued (tasks.RunReader): a writer sends each batch in one write.
type batchStream interface {
	Batches(ctx context.Context) iter.Seq2[[]agui.Envelope, error]
}

// batches reads s a batch at a time: its own batches, or batches of one.
func batches(ctx context.Context, s Stream) iter.Seq2[[]agui.Envelope, error] {
	if b, ok := s.(batchStream); ok {
		return b.Batches(ctx)
	}
	return func(yield func([]agui.Envelope, error) bool) {
		for env, err := range s.Events(ctx) {
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield([]agui.Envelope{env}, nil) {
				return
			}
		}
	}
}

// errSlowClient ends a connection whose client does not read fast enough:
// its queue stayed full for the slow-client timeout. The run is not
// affected (its events are journaled); the client can reconnect and resume
// after the last sequence number it saw.
var errSlowClient = errors.New("the client does not keep up; reconnect and resume after the last event id you saw")

// framer writes envelopes on one connection: SSE frames or WebSocket
// messages. Writes may be buffered until flush.
type framer interface {
	write(env agui.Envelope) error
	flush() error
	// keepAlive tells an idle connection apart from a dead one (an SSE
	// comment, a WebSocket ping).
	keepAlive() error
}

// outbox is the bounded queue of one client connection. Feeders (one per
// stream the connection carries) put batches of envelopes in, as their
// streams yield them (Batches, as the SSE writer reads them); the
// connection's single writer (drain) takes them out. At most size
// envelopes wait at once: a feeder takes a slot per envelope, the writer
// gives them back as it takes a batch. A feeder that finds no room for
// longer than the slow-client timeout drops the connection instead of
// waiting on: a slow client can neither stall a run nor grow memory.
type outbox struct {
	queue chan []agui.Envelope
	// slots holds a token per envelope queued; turn lets one feeder at a
	// time take slots, so two feeders each holding part of what they need
	// cannot wait on each other.
	slots   chan struct{}
	turn    chan struct{}
	size    int
	slow    time.Duration
	dropped context.CancelCauseFunc // drops the connection
}

func newOutbox(size int, slow time.Duration, drop context.CancelCauseFunc) *outbox {
	return &outbox{queue: make(chan []agui.Envelope, size), slots: make(chan struct{}, size), turn: make(chan struct{}, 1),
		size: size, slow: slow, dropped: drop}
}

// put queues envs (in pieces of at most the queue's size); it reports
// false when the connection is gone or was dropped for being slow.
func (o *outbox) put(ctx context.Context, envs ...agui.Envelope) bool {
	var timer *time.Timer // started the first time put has to wait
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	wait := func(ch chan struct{}) bool {
		select {
		case ch <- struct{}{}:
			return true
		case <-ctx.Done():
			return false
		default:
		}
		if timer == nil {
			timer = time.NewTimer(o.slow)
		}
		select {
		case ch <- struct{}{}:
			return true
		case <-ctx.Done():
			return false
		case <-timer.C:
			o.dropped(errSlowClient)
			return false
		}
	}
	for len(envs) > 0 {
		piece := envs[:min(len(envs), o.size)]
		envs = envs[len(piece):]
		if !wait(o.turn) {
			return false
		}
		for range piece {
			if !wait(o.slots) {
				<-o.turn
				return false
			}
		}
		o.queue <- piece // room: each queued batch holds at least one slot
		<-o.turn
	}
	return true
}

// take gives back the slots of a batch the writer took.
func (o *outbox) take(batch []agui.Envelope) []agui.Envelope {
	for range batch {
		<-o.slots
	}
	return batch
}

// feed copies a stream's envelopes into the outbox, a batch at a time,
// until the end of the stream or ctx. It reports whether a run is left
// open, as sseWriter.copy does, and the stream's error, if it failed.
func (o *outbox) feed(ctx context.Context, s Stream, open bool) (bool, error) {
	for batch, err := range batches(ctx, s) {
		if err != nil {
			return open, err
		}
		if !o.put(ctx, batch...) {
			return open, ctx.Err()
		}
		open = !agui.IsTerminalEvent(batch[len(batch)-1].Event)
	}
	return open, nil
}

// drain is a connection's only writer: it writes what the outbox holds,
// flushing once per burst, and keeps an idle connection alive. It returns
// when ctx ends, a write fails, or done is closed and the queue is empty.
func drain(ctx context.Context, o *outbox, f framer, keepAlive time.Duration, done <-chan struct{}) error {
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case batch := <-o.queue:
			if err := o.writeBurst(f, batch); err != nil {
				return err
			}
			tick.Reset(keepAlive)
		case <-tick.C:
			if err := f.keepAlive(); err != nil {
				return err
			}
		case <-done:
			select {
			case batch := <-o.queue: // feeders are done: write the rest
				return o.writeBurst(f, batch)
			default:
				return nil
			}
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// writeBurst writes batch and whatever else is queued behind it, then
// flushes once: one write for a burst of chunks instead of one per chunk.
// It is drain's one write site.
func (o *outbox) writeBurst(f framer, batch []agui.Envelope) error {
	for batch != nil {
		for _, env := range o.take(batch) {
			if err := f.write(env); err != nil {
				return err
			}
		}
		select {
		case batch = <-o.queue:
		default:
			batch = nil
		}
	}
	return f.flush()
}
