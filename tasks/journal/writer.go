package journal

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/internal/retry"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// Writer appends one run's events to the thread's journal, from a
// goroutine of its own when the store is slow (see appendInlineBelow),
// coalescing whatever accumulated while the previous append was in flight
// into one call, and hands each stored batch on (to the run's live log):
// a client sees an event only once it is stored, so a crash cannot take
// back what a client was shown. A durable store pays a
// sync per commit (about a millisecond, much more under load), so a
// token-by-token stream would otherwise be bounded by the disk; batching
// here and group commit in the store keep the agent's pace.
type Writer struct {
	store store.Store
	key   store.ThreadKey
	log   *slog.Logger
	ctx   context.Context // lifetime of the bridge, not of the request
	// stored is given every batch once the store took it, in order.
	stored func(batch []store.Entry)

	mu      sync.Mutex
	cond    *sync.Cond // signalled when the writer goes idle
	pending []store.Entry
	// merged counts the events merged into the one queued before them
	// (see add), and lastIn is the driver's number of the last event
	// numbered: an event's number in the journal is the driver's less
	// merged, so the journal stays numbered without gaps.
	merged int64
	lastIn int64
	// running says an append is in flight, on the caller's goroutine or
	// on one of the writer's own (which runs only while there is something
	// to append: an open stream to a slow agent costs none).
	running bool
	// err is the failure that lost a batch, after which the journal has a
	// hole and takes nothing more.
	err error
	// outage is how long a batch is retried against a failing store
	// before it is given up (see append).
	outage time.Duration
	// inline says the last append took less than inlineBelow, so the next
	// one is done by the caller rather than handed to a goroutine.
	inline      bool
	inlineBelow time.Duration
	// slow says the last append took mergeAbove or more (or failed): only
	// then are queued deltas merged (see add). A store that answers faster
	// — the memory store — never has them merged, nor has any store
	// before its first append was timed.
	slow       bool
	mergeAbove time.Duration
	// open is the last pending event while deltas are merged into it,
	// kept decoded (its text in openText) so that each delta joining it is
	// decoded alone: re-encoding a growing event for every delta would be
	// quadratic. seal encodes it into pending before pending is taken.
	open     agui.Event
	openText strings.Builder

	// attempt is the context of appends to a healthy store, ending at
	// attemptEnds (see attemptContext); used only by the append in flight.
	attempt       context.Context
	attemptCancel context.CancelFunc
	attemptEnds   time.Time
}

// appendInlineBelow is what an append may cost for the caller to make it
// itself. Handing a batch to a goroutine costs a wake-up on another
// thread, several microseconds of scheduler and futex time; an append to
// the memory store costs less than that, and on paced traffic (every chunk
// alone) the hand-off came with every chunk. An append that must sync a
// disk or cross a network costs far more than the hand-off, and the
// caller's time is better spent reading and translating what comes next
// meanwhile: that is what lets batches form.
const appendInlineBelow = 20 * time.Microsecond

// appendMergeAbove is what an append must cost for the deltas queued
// behind the next one to be merged: a synced commit (0.2 ms and up) or a
// network round trip, not the memory store's few microseconds, which the
// race detector or a loaded machine can take past appendInlineBelow.
const appendMergeAbove = 100 * time.Microsecond

func NewWriter(ctx context.Context, st store.Store, key store.ThreadKey, outage time.Duration, log *slog.Logger, stored func([]store.Entry)) *Writer {
	w := &Writer{store: st, key: key, log: log, ctx: ctx, stored: stored, outage: outage, inlineBelow: appendInlineBelow, mergeAbove: appendMergeAbove}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// Add queues entries; they are appended in order. The writer keeps
// entries (the caller makes a new slice for each call): a writer that is
// idle appends them as they are, without copying them into pending.
//
// While an append is in flight, the events that queue behind it are
// merged where that changes nothing a client builds: consecutive
// TEXT_MESSAGE_CONTENT deltas of one message become one delta, and
// consecutive STATE_DELTA patches one patch (see mergeDeltas). The store
// writes, and every reader encodes and parses, fewer events exactly when
// the store is the bottleneck; an idle writer merges nothing, so nothing
// waits for a merge; nor does a fast store (see slow) have its events
// merged. The journal holds the merged event, so a replay gives
// what was shown live. The numbers that merged events leave unused are
// taken back (renumber): the events after them move down.
func (w *Writer) Add(entries []store.Entry) {
	if len(entries) == 0 {
		return
	}
	w.mu.Lock()
	if w.running {
		for _, e := range entries {
			w.renumber(&e)
			if len(w.pending) > 0 && w.slow && w.merge(e) {
				w.merged++
				continue
			}
			w.seal()
			w.pending = append(w.pending, e)
		}
		w.mu.Unlock()
		return
	}
	for i := range entries {
		w.renumber(&entries[i])
	}
	w.running = true
	inline := w.inline
	w.mu.Unlock()
	if inline {
		w.run(entries)
		return
	}
	go w.run(entries)
}

// renumber gives e, numbered by the driver, its number in the journal
// (with w.mu held). An event already renumbered — the driver's terminal
// event, numbered by renumbered and then queued when the store refused
// the release — is left as it is.
func (w *Writer) renumber(e *store.Entry) {
	if e.Seq > w.lastIn {
		w.lastIn = e.Seq
		e.Seq -= w.merged
	}
}

// Renumbered returns e, numbered by the driver after the events given to
// add, with its number in the journal: for an event written other than
// through add (the terminal event, journaled with the thread's release).
func (w *Writer) Renumbered(e store.Entry) store.Entry {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.renumber(&e)
	return e
}

// Prefixes of the events merge merges, as agui.Marshal writes them
// (the type first): anything else is told apart without decoding.
var (
	prefixTextContent = []byte(`{"type":"TEXT_MESSAGE_CONTENT",`)
	prefixStateDelta  = []byte(`{"type":"STATE_DELTA",`)
)

// merge merges e into the last pending event when one event shows what
// both show (with w.mu held): two TEXT_MESSAGE_CONTENT events of the same
// message (the deltas joined) or two STATE_DELTA events (the patches'
// operations one after the other, which is how a client applies two
// patches), of the same run and sub-agent run, without metadata (which the
// client folds per event). The merged event keeps the first one's
// timestamp.
func (w *Writer) merge(e store.Entry) bool {
	last := &w.pending[len(w.pending)-1]
	if last.RunID != e.RunID || last.Terminal || e.Terminal {
		return false
	}
	var prefix []byte
	switch {
	case bytes.HasPrefix(e.Event, prefixTextContent):
		prefix = prefixTextContent
	case bytes.HasPrefix(e.Event, prefixStateDelta):
		prefix = prefixStateDelta
	default:
		return false
	}
	if w.open == nil {
		if !bytes.HasPrefix(last.Event, prefix) {
			return false
		}
		open, err := agui.Decode(last.Event)
		if err != nil {
			return false
		}
		w.open = open
		w.openText.Reset()
		if x, ok := open.(*agui.TextMessageContent); ok {
			w.openText.WriteString(x.Delta)
		}
	}
	next, err := agui.Decode(e.Event)
	if err != nil {
		return false
	}
	switch x := w.open.(type) {
	case *agui.TextMessageContent:
		y, ok := next.(*agui.TextMessageContent)
		if !ok || x.MessageID != y.MessageID || !mergeableBase(x.Base, y.Base) {
			return false
		}
		w.openText.WriteString(y.Delta)
	case *agui.StateDelta:
		y, ok := next.(*agui.StateDelta)
		if !ok || !mergeableBase(x.Base, y.Base) {
			return false
		}
		x.Delta = append(x.Delta, y.Delta...)
	default:
		return false
	}
	return true
}

// seal encodes the event deltas were merged into, if any, into its pending
// entry (with w.mu held). An event that cannot be encoded stays as it was
// before the merges, which are then lost; agui.Marshal fails only on
// events the bridge never makes.
func (w *Writer) seal() {
	if w.open == nil {
		return
	}
	if x, ok := w.open.(*agui.TextMessageContent); ok {
		x.Delta = w.openText.String()
	}
	if b, err := agui.Marshal(w.open); err == nil {
		w.pending[len(w.pending)-1].Event = b
	} else {
		w.log.Error("encode merged deltas", "err", err)
	}
	w.open = nil
}

func mergeableBase(a, b agui.Base) bool {
	return a.Metadata == nil && b.Metadata == nil && a.SubagentRunID == b.SubagentRunID
}

// Flush waits until everything queued so far is in the journal; it
// returns the failure that lost a batch, if one did.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waitIdle()
	return w.err
}

// waitIdle waits, with w.mu held, until no append is in flight.
func (w *Writer) waitIdle() {
	for w.running {
		w.cond.Wait()
	}
}

// Progress reports how many entries wait for the store and whether a
// batch was lost.
func (w *Writer) Progress() (pending int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending), w.err
}

// Close waits for the last appends; nothing is added after it.
func (w *Writer) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waitIdle()
	if w.attemptCancel != nil {
		w.attemptCancel()
		w.attempt, w.attemptCancel = nil, nil
	}
}

// attemptContext is the context of an append to a store that has not
// failed: it leaves the attempt at least appendTimeout, and at most twice
// that. One context serves every append for appendTimeout, rather than a
// timer being armed and stopped for each: in a profile of bulk streams
// that was 3 % of the bridge's CPU. Only the append in flight calls it
// (w.running).
func (w *Writer) attemptContext(now time.Time) context.Context {
	if w.attempt == nil || w.attemptEnds.Sub(now) < appendTimeout {
		if w.attemptCancel != nil {
			w.attemptCancel()
		}
		w.attemptEnds = now.Add(2 * appendTimeout)
		w.attempt, w.attemptCancel = context.WithDeadline(context.WithoutCancel(w.ctx), w.attemptEnds)
	}
	return w.attempt
}

// run appends batch, then what was queued meanwhile, until none is
// pending.
func (w *Writer) run(batch []store.Entry) {
	for {
		w.append(batch)
		w.mu.Lock()
		w.seal()
		batch = w.pending
		w.pending = nil
		if len(batch) == 0 {
			w.running = false
			w.cond.Broadcast()
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
	}
}

// Retry pacing of a failing store: the first retry soon (a lost
// connection is usually redialled at once), then doubling to at most
// RetryMax, so that a store back from an outage is used within a
// second of its return. appendTimeout is the least an attempt on a store
// that has not failed is given (see attemptContext).
const (
	RetryFirst    = 50 * time.Millisecond
	RetryMax      = time.Second
	appendTimeout = 10 * time.Second
)

// append writes a batch, retrying a failing store until w.outage has
// passed since the first failure: a Redis restart or a failover takes
// seconds, and a run that waits them out loses nothing — the client is
// shown nothing meanwhile, since it is shown only what the store took, and
// the driver, held back by MaxPending, reads the agent no further ahead.
// After that the batch is given up and the run fails (the driver checks
// progress) rather than go on with a hole in its journal. w.outage is well
// inside the run's lease (Options.StoreOutage), so a run that rides an
// outage out still owns its thread when the store is back.
func (w *Writer) append(batch []store.Entry) {
	w.mu.Lock()
	lost := w.err != nil
	w.mu.Unlock()
	if lost {
		return // the journal already has a hole; the run is failing
	}
	var err error
	var giveUp time.Time
	var took time.Duration
	failed := false
	retry := retry.Backoff{Next: RetryFirst, Max: RetryMax}
	for {
		began := time.Now()
		ctx, cancel := w.attemptContext(began), func() {}
		if failed {
			// No attempt outlives the outage budget by much: a store that
			// hangs (a paused or partitioned Redis) fails the run as late
			// as one that refuses connections.
			timeout := max(min(appendTimeout, time.Until(giveUp)), 100*time.Millisecond)
			ctx, cancel = context.WithTimeout(context.WithoutCancel(w.ctx), timeout)
		}
		err = w.store.Append(ctx, w.key, batch...)
		took = time.Since(began)
		if errors.Is(err, store.ErrConflict) && failed {
			// An attempt that failed may have been written after all (a
			// timeout, a connection lost after the write): the batch is
			// in if the journal reaches its last number.
			if last, lerr := w.store.LastSeq(ctx, w.key); lerr == nil && last >= batch[len(batch)-1].Seq {
				err = nil
			}
		}
		cancel()
		if err == nil || errors.Is(err, store.ErrConflict) {
			break
		}
		if !failed {
			failed, giveUp = true, time.Now().Add(w.outage)
			w.log.Warn("journal append failed; retrying while the store is out", "entries", len(batch), "for", w.outage, "err", err)
		}
		wait := retry.Step()
		if !time.Now().Add(wait).Before(giveUp) {
			break
		}
		// Not cut short by the bridge stopping: what a reader was about
		// to be shown is worth the budget, which bounds the wait.
		time.Sleep(wait)
	}
	w.mu.Lock()
	if err != nil && w.err == nil {
		w.err = err
	}
	w.inline = err == nil && !failed && took < w.inlineBelow
	w.slow = err != nil || failed || took >= w.mergeAbove
	w.mu.Unlock()
	if err != nil {
		w.log.Error("journal append failed for the whole outage budget; the run stops", "entries", len(batch), "err", err)
		return
	}
	if failed {
		w.log.Info("the store took the journal again; the run goes on", "entries", len(batch))
	}
	if w.stored != nil {
		w.stored(batch)
	}
}
