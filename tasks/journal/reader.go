package journal

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// ErrRunLost means a run ended without its terminal event reaching the
// journal (the store kept failing); readers get it instead of waiting.
var ErrRunLost = errors.New("the run ended but its last events could not be stored")

// ErrThreadDeleted ends a reader whose thread was deleted while it read (on
// any instance): its client is told so with the public code
// thread_deleted, rather than shown a stream that stops.
var ErrThreadDeleted error = threadDeleted{}

type threadDeleted struct{}

func (threadDeleted) Error() string         { return "the thread was deleted" }
func (threadDeleted) PublicMessage() string { return "the thread was deleted" }
func (threadDeleted) ErrorCode() string     { return agui.CodeThreadDeleted }
func (threadDeleted) HTTPStatus() int       { return agui.HTTPStatus(agui.CodeThreadDeleted) }

// Reader is what a client reads: journaled events of a thread as
// envelopes, each with its sequence number. It reads either one run, from
// RUN_STARTED to its terminal event (StartRun), or a thread followed from a
// point of its journal: everything after it, then the run in progress live
// until it ends (Follow). It drives nothing: the run's driver does.
type Reader struct {
	Key   store.ThreadKey
	RunID string
	// Store is the thread's store; After the last sequence number the
	// reader has (it reads what comes after).
	Store store.Store
	After int64
	// Fixed holds the whole stream of a run answered without the agent or
	// the journal (a refused resume).
	Fixed []agui.Envelope
	// Live is the run's live log in this process (nil when the run is
	// driven elsewhere or is already over), and Driving finds the live log
	// of the thread's run runID if this process drives it (a followed
	// thread's next run).
	Live    *Live
	Driving func(runID string) *Live
	// Thread: follow the thread (every run) rather than RunID alone.
	Thread bool
}

// ReadBatch is how many journal entries a reader takes per store read.
const ReadBatch = 256

// Events yields the envelopes, waiting for new ones as they come. A run
// this process drives is read from its live log, anything
// older and runs driven elsewhere from the store. A run's stream ends after
// its terminal event. When the run's driver in this process stopped
// without one — the bridge shutting down — it ends with the closing events
// of the shutdown notice (Seq 0, not journaled: the run goes on after a
// restart, and a client resumes after the last Seq it saw). It ends early
// with ctx's error when ctx ends.
func (r *Reader) Events(ctx context.Context) iter.Seq2[agui.Envelope, error] {
	return func(yield func(agui.Envelope, error) bool) {
		for batch, err := range r.Batches(ctx) {
			if err != nil {
				yield(agui.Envelope{}, err)
				return
			}
			for _, e := range batch {
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}

// Batches yields what Events does, a batch at a time: whatever the live
// log or one store read held when the reader woke. A writer that sends a
// batch in one write pays one wake-up and one syscall for all the events
// that queued while it was busy, instead of one each (issue 19). A batch
// is never empty; its slice is the reader's to keep but not to modify.
func (r *Reader) Batches(ctx context.Context) iter.Seq2[[]agui.Envelope, error] {
	return func(yield func([]agui.Envelope, error) bool) {
		if r.Fixed != nil {
			yield(r.Fixed, nil)
			return
		}
		after := r.After
		d := r.Live
		// released: the thread was seen without an active run, after a
		// read that found nothing new.
		released := false
		for {
			if d != nil {
				ended, stop := r.fromLive(ctx, d, &after, yield)
				if stop {
					return
				}
				if ended {
					d = nil // the thread goes on: look for its next run
				}
				// Behind the live log, or a followed run that ended: the store.
			}
			read, stop := r.fromStore(ctx, &after, yield)
			if stop {
				return
			}
			if read {
				continue
			}
			if d != nil {
				// Read up to the live log's start. A run taken over after
				// a crash starts past a gap in the numbers; but if the log
				// dropped events the store does not have, they are lost.
				start, dropped := d.Start()
				if dropped {
					yield(nil, ErrRunLost)
					return
				}
				after = max(after, start-1)
				continue
			}
			// Caught up with the store.
			if !r.Thread {
				// A run driven elsewhere ends with an append, or its thread
				// is deleted, which only a look at the record tells.
				woken, err := r.waitElsewhere(ctx, after)
				if err == nil && !woken {
					_, err = r.Store.GetThread(ctx, r.Key)
				}
				if err != nil {
					yield(nil, deletedIfGone(err))
					return
				}
				continue
			}
			th, err := r.Store.GetThread(ctx, r.Key)
			if err != nil {
				yield(nil, deletedIfGone(err))
				return
			}
			if th.Active == nil {
				// A run ends with its release, written with its terminal
				// event, maybe just after the read above: read once more.
				if !released {
					released = true
					continue
				}
				return
			}
			released = false
			if d = r.live(th.Active.RunID); d != nil {
				continue
			}
			if _, err := r.waitElsewhere(ctx, after); err != nil {
				yield(nil, err)
				return
			}
		}
	}
}

// fromLive yields what d's live log holds after *after, as it comes. It
// returns when the reader is done (stop), or when the store is to be read:
// the reader fell behind the log, or d's run ended and the thread it
// follows goes on (ended).
func (r *Reader) fromLive(ctx context.Context, d *Live, after *int64, yield func([]agui.Envelope, error) bool) (ended, stop bool) {
	for {
		envs, pos, changed := d.Since(*after)
		switch pos {
		case More:
			batch, end := r.cut(envs)
			*after = batch[len(batch)-1].Seq
			if !yield(batch, nil) || end {
				return false, true
			}
		case Wait:
			select {
			case <-changed:
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return false, true
			}
		case Ended:
			if tail := d.ShortTail(); len(tail) > 0 {
				yield(tail, nil)
				return false, true
			}
			if !r.Thread {
				// Ended with neither a terminal event nor a notice.
				yield(nil, ErrRunLost)
				return false, true
			}
			return true, false
		default:
			return false, false
		}
	}
}

// fromStore yields the next stored entries after *after that the reader
// wants (the run's, or the whole thread's). read says entries were found;
// stop that the reader is done, or failed.
func (r *Reader) fromStore(ctx context.Context, after *int64, yield func([]agui.Envelope, error) bool) (read, stop bool) {
	entries, err := r.Store.Read(ctx, r.Key, *after, ReadBatch)
	if err != nil {
		yield(nil, err)
		return false, true
	}
	batch, end := make([]agui.Envelope, 0, len(entries)), false
	for _, e := range entries {
		*after = e.Seq
		if !r.Thread && e.RunID != r.RunID {
			continue
		}
		batch = append(batch, agui.Envelope{ThreadID: r.Key.ThreadID, RunID: e.RunID, Seq: e.Seq, Event: e.Event})
		if end = !r.Thread && e.Terminal; end {
			break
		}
	}
	if len(batch) > 0 && !yield(batch, nil) || end {
		return true, true
	}
	return len(entries) > 0, false
}

// cut ends a run's batch at the run's terminal event (a followed thread's
// batches are whole), and says whether it did.
func (r *Reader) cut(envs []agui.Envelope) ([]agui.Envelope, bool) {
	if !r.Thread {
		for i, e := range envs {
			if agui.IsTerminalEvent(e.Event) {
				return envs[:i+1], true
			}
		}
	}
	return envs, false
}

// waitElsewhere waits for a run driven by another process to journal
// more. The wait is bounded, so a thread released without an append (a
// driver that gave up) or deleted is noticed too; woken says the store
// reported an append rather than the bound running out.
func (r *Reader) waitElsewhere(ctx context.Context, after int64) (woken bool, err error) {
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	err = r.Store.Wait(wctx, r.Key, after)
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return false, nil
	}
	return err == nil, err
}

// deletedIfGone is err, or ErrThreadDeleted when it says the thread that
// was being read is no longer there.
func deletedIfGone(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return ErrThreadDeleted
	}
	return err
}

// live is the live log of the thread's run runID in this process, or nil.
func (r *Reader) live(runID string) *Live {
	if r.Driving == nil {
		return nil
	}
	return r.Driving(runID)
}

// PollResult is one long-poll answer: the envelopes after the asked
// sequence number, the number to ask after next, and whether the thread is
// at rest (no run in progress, nothing more journaled).
type PollResult struct {
	Events []agui.Envelope
	Next   int64
	Done   bool
}

// Poll returns th's journaled events after the sequence number after (at
// most limit), waiting up to wait for the first one while a run is in
// progress: the long-poll fallback for networks that block streaming. An
// error is the store's, or ctx's when it ended during the wait.
func Poll(ctx context.Context, st store.Store, th *store.Thread, after int64, wait time.Duration, limit int) (*PollResult, error) {
	if limit <= 0 || limit > ReadBatch {
		limit = ReadBatch
	}
	entries, err := st.Read(ctx, th.Key, after, limit)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 && th.Active != nil && wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		err := st.Wait(wctx, th.Key, after)
		cancel()
		if err == nil {
			if entries, err = st.Read(ctx, th.Key, after, limit); err != nil {
				return nil, err
			}
		} else if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	res := &PollResult{Events: make([]agui.Envelope, 0, len(entries)), Next: after}
	for _, e := range entries {
		res.Events = append(res.Events, agui.Envelope{ThreadID: th.Key.ThreadID, RunID: e.RunID, Seq: e.Seq, Event: e.Event})
		res.Next = e.Seq
	}
	// At rest: no run in progress and the answer reaches the journal's end.
	if th, err = st.GetThread(ctx, th.Key); err != nil {
		return nil, err
	}
	last, err := st.LastSeq(ctx, th.Key)
	if err != nil {
		return nil, err
	}
	res.Done = th.Active == nil && res.Next >= last
	return res, nil
}
