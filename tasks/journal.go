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

// append writes a batch, retrying a failing store a few times: a lost
// batch may hold the run's terminal event. Readers of a run whose driver
// ended without one get an error instead of waiting forever.
func (w *journalWriter) append(batch []Entry) {
	var err error
	for attempt, wait := 0, 50*time.Millisecond; attempt < 3; attempt, wait = attempt+1, wait*4 {
		if attempt > 0 {
			time.Sleep(wait)
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), 10*time.Second)
		_, err = w.store.Append(ctx, w.key, batch...)
		cancel()
		if err == nil {
			return
		}
	}
	w.log.Error("journal append failed; the run's readers will get an error", "entries", len(batch), "err", err)
}
