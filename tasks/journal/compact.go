package journal

import (
	"context"
	"errors"

	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// Compaction is where a journal's compaction cuts: the entries up to Seq
// go (Dropped bytes of events), Kept bytes stay. Seq 0: nothing to cut.
type Compaction struct {
	Seq           int64
	Dropped, Kept int64
}

// PlanCompaction scans key's journal from the sequence number from and
// picks the cut that leaves at most half of limit: the end of a finished
// run, the oldest runs first, never the latest finished run or anything
// after it (whole runs go, so no reader is left inside one). Cutting to
// half the limit means the scan is paid once per half a limit of new
// events, not by every run that ends.
func PlanCompaction(ctx context.Context, st store.Store, key store.ThreadKey, from, limit int64) (Compaction, error) {
	var ends []Compaction // each run's end, with the bytes up to it in Dropped
	var total int64
	for after := from; ; {
		entries, err := st.Read(ctx, key, after, ReadBatch)
		if err != nil {
			return Compaction{}, err
		}
		if len(entries) == 0 {
			break
		}
		for _, e := range entries {
			total += int64(len(e.Event))
			if e.Terminal {
				ends = append(ends, Compaction{Seq: e.Seq, Dropped: total})
			}
		}
		after = entries[len(entries)-1].Seq
	}
	if len(ends) < 2 {
		return Compaction{}, nil // the latest finished run is always kept
	}
	cut := ends[len(ends)-2] // at most: everything before the latest run
	for _, e := range ends[:len(ends)-1] {
		if total-e.Dropped <= limit/2 {
			cut = e
			break
		}
	}
	cut.Kept = total - cut.Dropped
	return cut, nil
}

// Compact drops the oldest finished runs' events from key's journal until
// at most half of limit is left (PlanCompaction), and reports the cut it
// made (Seq 0: none). The thread's record is updated first (its
// JournalFrom), so a reader never starts inside the hole; a trim that
// fails leaves entries nobody is sent, which the next compaction removes.
// A record that changed meanwhile is read again, a few times.
func Compact(ctx context.Context, st store.Store, key store.ThreadKey, limit int64) (Compaction, error) {
	th, err := st.GetThread(ctx, key)
	if err != nil {
		return Compaction{}, err
	}
	scanned := th.JournalBytes
	cut, err := PlanCompaction(ctx, st, key, th.JournalFrom, limit)
	if err != nil || cut.Seq == 0 {
		return Compaction{}, err
	}
	for attempt := 0; ; attempt++ {
		if cut.Seq <= th.JournalFrom {
			return Compaction{}, nil // compacted by someone else
		}
		// Runs that ended since the scan added theirs to the estimate.
		th.JournalBytes = cut.Kept + max(th.JournalBytes-scanned, 0)
		th.JournalFrom = cut.Seq
		_, err = st.PutThread(ctx, th)
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrConflict) || attempt == 2 {
			return Compaction{}, err
		}
		if th, err = st.GetThread(ctx, key); err != nil {
			return Compaction{}, err
		}
	}
	return cut, st.TrimJournal(ctx, key, cut.Seq)
}
