package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/journal"
)

// A long-lived thread's journal is bounded (AgentSpec.MaxThreadJournalBytes):
// when a run ends with the thread's journal above the cap, the oldest
// finished runs' events go, whole runs at a time, and never the latest
// finished run or anything after it (journal.PlanCompaction). What a thread's record holds (its
// conversation, state, interrupts) is not in the journal and stays; only
// the replay of old runs' events is lost, and a reader asking for it is
// told so (replayFrom) rather than shown a gap.

// replayFrom checks a replay of th's journal after the sequence number
// after against its compaction: 0 (the whole journal) starts at what is
// kept; a point inside what was dropped is an *Error journal_compacted
// (410), since the reader would miss events it was never shown.
func replayFrom(th *Thread, after int64) (int64, error) {
	after = max(after, 0)
	switch {
	case after >= th.JournalFrom:
		return after, nil
	case after == 0:
		return th.JournalFrom, nil
	}
	return 0, &Error{Code: agui.CodeJournalCompacted, Message: fmt.Sprintf(
		"the events of thread %q up to %d were compacted (limits.maxThreadJournalBytes); read the thread, then its events after %d",
		th.Key.ThreadID, th.JournalFrom, th.JournalFrom)}
}

// compactJournal compacts key's journal to half of limit
// (journal.Compact). It runs after a run's release, off its readers' path.
func (s *Service) compactJournal(key ThreadKey, limit int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 30*time.Second)
	defer cancel()
	cut, err := journal.Compact(ctx, s.store, key, limit)
	if err != nil {
		s.log.Warn("compact journal", "thread_id", key.ThreadID, "err", err)
	} else if cut.Seq > 0 {
		s.log.Info("journal compacted", "thread_id", key.ThreadID, "up_to", cut.Seq, "dropped_bytes", cut.Dropped, "kept_bytes", cut.Kept)
	}
}
