package tasks

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// journalWriter appends one run's events to the thread's journal from its
// own goroutine, coalescing whatever accumulated while the previous append
// was in flight into one call, and hands each stored batch on (to the
// run's live log): a client sees an event only once it is stored, so a
// crash cannot take back what a client was shown. A durable store pays a
// sync per commit (about a millisecond, much more under load), so a
// token-by-token stream would otherwise be bounded by the disk; batching
// here and group commit in the store keep the agent's pace.
type journalWriter struct {
	store Store
	key   ThreadKey
	log   *slog.Logger
	ctx   context.Context // lifetime of the bridge, not of the request
	// stored is given every batch once the store took it, in order.
	stored func(batch []Entry)

	mu      sync.Mutex
	cond    *sync.Cond // signalled when the writer goes idle
	pending []Entry
	// running says a goroutine is appending (it runs only while there is
	// something to append: an open stream to a slow agent costs none).
	running bool
	// err is the failure that lost a batch, after which the journal has a
	// hole and takes nothing more.
	err error
}

func newJournalWriter(ctx context.Context, store Store, key ThreadKey, log *slog.Logger, stored func([]Entry)) *journalWriter {
	w := &journalWriter{store: store, key: key, log: log, ctx: ctx, stored: stored}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// add queues entries; they are appended in order.
func (w *journalWriter) add(entries []Entry) {
	if len(entries) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, entries...)
	if !w.running {
		w.running = true
		go w.run()
	}
}

// flush waits until everything queued so far is in the journal; it
// returns the failure that lost a batch, if one did.
func (w *journalWriter) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.running {
		w.cond.Wait()
	}
	return w.err
}

// progress reports how many entries wait for the store and whether a
// batch was lost.
func (w *journalWriter) progress() (pending int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending), w.err
}

// close waits for the last appends.
func (w *journalWriter) close() { w.flush() }

// run appends batches until none is pending.
func (w *journalWriter) run() {
	for {
		w.mu.Lock()
		batch := w.pending
		w.pending = nil
		if len(batch) == 0 {
			w.running = false
			w.cond.Broadcast()
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		w.append(batch)
	}
}

// append writes a batch, retrying a failing store a few times: a lost
// batch may hold events readers were shown. After that the run fails
// (the driver checks progress) rather than go on with a hole in its
// journal.
func (w *journalWriter) append(batch []Entry) {
	w.mu.Lock()
	lost := w.err != nil
	w.mu.Unlock()
	if lost {
		return // the journal already has a hole; the run is failing
	}
	var err error
	for attempt, wait := 0, 50*time.Millisecond; attempt < 3; attempt, wait = attempt+1, wait*4 {
		if attempt > 0 {
			time.Sleep(wait)
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), 10*time.Second)
		err = w.store.Append(ctx, w.key, batch...)
		if errors.Is(err, ErrConflict) && attempt > 0 {
			// An attempt that timed out may have been written after all:
			// the batch is in if the journal reaches its last number.
			if last, lerr := w.store.LastSeq(ctx, w.key); lerr == nil && last >= batch[len(batch)-1].Seq {
				err = nil
			}
		}
		cancel()
		if err == nil || errors.Is(err, ErrConflict) {
			break
		}
	}
	w.mu.Lock()
	if err != nil && w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
	if err != nil {
		w.log.Error("journal append failed; the run stops", "entries", len(batch), "err", err)
		return
	}
	if w.stored != nil {
		w.stored(batch)
	}
}
