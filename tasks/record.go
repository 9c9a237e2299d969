package tasks

import (
	"context"
	"errors"
)

// maxUpdateAttempts bounds how often updateThread applies a change again
// after losing a race with another write.
const maxUpdateAttempts = 10

// updateThread is every optimistic change of a thread record: it applies
// change to th — the record as the caller last read it — and stores the
// result; when another write came first (ErrConflict) it reads the record
// again and applies change to that, up to maxUpdateAttempts times. change
// reports false to leave the record as it is. updateThread returns the
// record as it stands (with its new version when written) and whether it
// wrote it; a store error as is, and ErrConflict when every attempt lost.
func (s *Service) updateThread(ctx context.Context, th *Thread, change func(cur *Thread) bool) (*Thread, bool, error) {
	cur := th.Clone()
	for attempt := 1; ; attempt++ {
		if !change(cur) {
			return cur, false, nil
		}
		v, err := s.store.PutThread(ctx, cur)
		if err == nil {
			cur.Version = v
			return cur, true, nil
		}
		if !errors.Is(err, ErrConflict) || attempt == maxUpdateAttempts {
			return nil, false, err
		}
		if cur, err = s.store.GetThread(ctx, th.Key); err != nil {
			return nil, false, err
		}
	}
}

// markCancel records a cancel request on th's running run. It returns the
// record as it stands; asked says this request recorded it (false: an
// earlier one had, or the run ended meanwhile).
func (s *Service) markCancel(ctx context.Context, th *Thread) (*Thread, bool, error) {
	return s.updateThread(ctx, th, func(cur *Thread) bool {
		if cur.ActiveRunID == "" || s.stale(cur) || cur.CancelRequested {
			return false
		}
		cur.CancelRequested = true
		return true
	})
}
