package tasks

import (
	"context"
	"errors"
)

// maxUpdateAttempts bounds how often a change of a thread record is tried
// again after losing a race with another write.
const maxUpdateAttempts = 10

// retryThread is every optimistic write of a thread record: it calls
// attempt with the record — last, as the caller last read it, or (nil)
// read now — and, while attempt reports ErrConflict (another write came
// first), reads the record again and calls attempt on that, up to
// maxUpdateAttempts times. It returns attempt's last error, or the read's.
func (s *Service) retryThread(ctx context.Context, key ThreadKey, last *Thread, attempt func(cur *Thread) error) error {
	cur := last
	for n := 1; ; n++ {
		var err error
		if cur == nil {
			if cur, err = s.store.GetThread(ctx, key); err != nil {
				return err
			}
		} else {
			cur = cur.Clone()
		}
		err = attempt(cur)
		if !errors.Is(err, ErrConflict) || n == maxUpdateAttempts {
			return err
		}
		cur = nil
	}
}

// updateThread applies change to the thread's record (last, or read now;
// see retryThread) and stores it. change reports false to leave the record
// as it is. updateThread returns the record as it stands (with its new
// version when written) and whether it wrote it; a store error as is, and
// ErrConflict when every attempt lost.
func (s *Service) updateThread(ctx context.Context, key ThreadKey, last *Thread, change func(cur *Thread) bool) (*Thread, bool, error) {
	var out *Thread
	written := false
	err := s.retryThread(ctx, key, last, func(cur *Thread) error {
		out = cur
		if !change(cur) {
			return nil
		}
		v, err := s.store.PutThread(ctx, cur)
		if err != nil {
			return err
		}
		cur.Version, written = v, true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, written, nil
}

// markCancel records a cancel request on th's running run. It returns the
// record as it stands; asked says this request recorded it (false: an
// earlier one had, or the run ended meanwhile).
func (s *Service) markCancel(ctx context.Context, th *Thread) (*Thread, bool, error) {
	return s.updateThread(ctx, th.Key, th, func(cur *Thread) bool {
		if !s.running(cur) || cur.Active.CancelRequested {
			return false
		}
		cur.Active.CancelRequested = true
		return true
	})
}
