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
// time, as they queued (tasks.Run): a writer sends each batch in one write.
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
// stream the connection carries) put envelopes in; the connection's single
// writer (drain) takes them out. A feeder that finds the queue full for
// longer than the slow-client timeout drops the connection instead of
// waiting on: a slow client can neither stall a run nor grow memory.
type outbox struct {
	queue   chan agui.Envelope
	slow    time.Duration
	dropped context.CancelCauseFunc // drops the connection
}

func newOutbox(size int, slow time.Duration, drop context.CancelCauseFunc) *outbox {
	return &outbox{queue: make(chan agui.Envelope, size), slow: slow, dropped: drop}
}

// put queues env; it reports false when the connection is gone or was
// dropped for being slow.
func (o *outbox) put(ctx context.Context, env agui.Envelope) bool {
	select {
	case o.queue <- env:
		return true
	case <-ctx.Done():
		return false
	default:
	}
	t := time.NewTimer(o.slow)
	defer t.Stop()
	select {
	case o.queue <- env:
		return true
	case <-ctx.Done():
		return false
	case <-t.C:
		o.dropped(errSlowClient)
		return false
	}
}

// feed copies a stream's envelopes into the outbox until its terminal
// event, the end of the stream, or ctx. It reports whether a terminal event
// went out and the stream's error, if it failed.
func (o *outbox) feed(ctx context.Context, s Stream) (terminated bool, err error) {
	for env, err := range s.Events(ctx) {
		if err != nil {
			return terminated, err
		}
		if !o.put(ctx, env) {
			return terminated, ctx.Err()
		}
		terminated = terminated || agui.IsTerminalEvent(env.Event)
	}
	return terminated, nil
}

// drain is a connection's only writer: it writes what the outbox holds,
// flushing once per burst, and keeps an idle connection alive. It returns
// when ctx ends, a write fails, or done is closed and the queue is empty.
func drain(ctx context.Context, o *outbox, f framer, keepAlive time.Duration, done <-chan struct{}) error {
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case env := <-o.queue:
			if err := f.write(env); err != nil {
				return err
			}
			// Take what else is queued before flushing: one write for a
			// burst of chunks instead of one per chunk.
			for more := true; more; {
				select {
				case env := <-o.queue:
					if err := f.write(env); err != nil {
						return err
					}
				default:
					more = false
				}
			}
			if err := f.flush(); err != nil {
				return err
			}
			tick.Reset(keepAlive)
		case <-tick.C:
			if err := f.keepAlive(); err != nil {
				return err
			}
		case <-done:
			select {
			case env := <-o.queue: // feeders are done: write the rest
				if err := f.write(env); err != nil {
					return err
				}
				for {
					select {
					case env := <-o.queue:
						if err := f.write(env); err != nil {
							return err
						}
						continue
					default:
					}
					return f.flush()
				}
			default:
				return nil
			}
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}
