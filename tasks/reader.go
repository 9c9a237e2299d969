package tasks

import (
	"context"
	"time"

	"github.com/a2a-agui-bridge/bridge/tasks/journal"
)

// RunReader is what a client reads: one run, or a thread followed from a
// point of its journal (journal.Reader).
type RunReader = journal.Reader

// reader reads key's journal after after: run runID alone, or the whole
// thread when runID is "" (then each run this process drives is read live).
func (s *Service) reader(key ThreadKey, runID string, after int64) *RunReader {
	r := &RunReader{Key: key, RunID: runID, Store: s.store, After: after, Thread: runID == ""}
	r.Driving = func(runID string) *journal.Live {
		if d := s.driving(key, runID); d != nil {
			return d.live
		}
		return nil
	}
	r.Live = r.Driving(runID)
	return r
}

// Follow streams the thread's journal after the sequence number after
// (0: from the start), then the run in progress live until it ends; when
// no run is in progress it ends once the journal is read. Unknown thread:
// an *Error with status 404.
func (s *Service) Follow(ctx context.Context, agent, threadID string, after int64) (*RunReader, error) {
	th, err := s.loadThread(ctx, agent, threadID)
	if err != nil {
		return nil, err
	}
	if after, err = replayFrom(th, after); err != nil {
		return nil, err
	}
	return s.reader(th.Key, "", after), nil
}

// PollResult is one long-poll answer (journal.PollResult).
type PollResult = journal.PollResult

// Poll returns the thread's journaled events after the sequence number
// after (at most limit), waiting up to wait for the first one while a run
// is in progress: the long-poll fallback for networks that block streaming.
func (s *Service) Poll(ctx context.Context, agent, threadID string, after int64, wait time.Duration, limit int) (*PollResult, error) {
	th, err := s.loadThread(ctx, agent, threadID)
	if err != nil {
		return nil, err
	}
	if after, err = replayFrom(th, after); err != nil {
		return nil, err
	}
	res, err := journal.Poll(ctx, s.store, th, after, wait, limit)
	if err != nil && ctx.Err() == nil {
		return nil, StoreError(err)
	}
	return res, err
}
