package tasks

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// journalWriter appends one run's events to the thread's journal from its
// own goroutine, coalescing whatever accumulated while the previous append
// was in flight into one call. A durable store pays a sync per append
// (about a millisecond, much more under load), so a token-by-token stream
// would otherwise be bounded by the disk; batching keeps the agent's pace.
type journalWriter struct {
	store Store
	key   ThreadKey
	log   *slog.Logger
	ctx   context.Context // lifetime of the bridge, not of the request

	mu       sync.Mutex
	cond     *sync.Cond
	pending  []Entry
	inflight bool
	closed   bool
	kick     chan struct{}
	done     chan struct{}
}

func newJournalWriter(ctx context.Context, store Store, key ThreadKey, log *slog.Logger) *journalWriter {
	w := &journalWriter{store: store, key: key, log: log, ctx: ctx,
		kick: make(chan struct{}, 1), done: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	go w.loop()
	return w
}

// add queues entries; they are appended in order.
func (w *journalWriter) add(entries []Entry) {
	if len(entries) == 0 {
		return
	}
	w.mu.Lock()
	w.pending = append(w.pending, entries...)
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// flush waits until everything queued so far is in the journal.
func (w *journalWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.pending) > 0 || w.inflight {
		select {
		case w.kick <- struct{}{}:
		default:
		}
		w.cond.Wait()
	}
}

// close flushes and stops the writer.
func (w *journalWriter) close() {
	w.flush()
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
	<-w.done
}

func (w *journalWriter) loop() {
	defer close(w.done)
	for range w.kick {
		w.mu.Lock()
		batch := w.pending
		w.pending = nil
		closed := w.closed
		w.inflight = len(batch) > 0
		w.mu.Unlock()
		if len(batch) > 0 {
			w.append(batch)
		}
		w.mu.Lock()
		w.inflight = false
		w.cond.Broadcast()
		w.mu.Unlock()
		if closed {
			return
		}
	}
}

func (w *journalWriter) append(batch []Entry) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), 10*time.Second)
	defer cancel()
	if _, err := w.store.Append(ctx, w.key, batch...); err != nil {
		w.log.Error("journal append", "entries", len(batch), "err", err)
	}
}
