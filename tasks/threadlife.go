package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// errThreadDeleted stops a run this process drives on a thread being
// deleted: like a run left to another instance (errLeaseLost), it ends
// without writing its end, and its readers get RUN_ERROR thread_deleted.
var errThreadDeleted = fmt.Errorf("%w: the thread was deleted", errLeaseLost)

// stopLocal stops th's run if this process drives it, and reports
// whether it did and the run's goroutine has ended.
func (s *Service) stopLocal(ctx context.Context, th *Thread) bool {
	d := s.driving(th.Key, th.Active.RunID)
	if d == nil {
		return false
	}
	d.mu.Lock()
	stop := d.stopRun
	d.leaseLost = stop != nil // unregistered when it ends: the thread is going
	d.mu.Unlock()
	if stop == nil {
		return false
	}
	stop(errThreadDeleted)
	select {
	case <-d.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// deleteWait bounds how long DeleteThread waits for a cancelled run to end.
const deleteWait = 15 * time.Second

// DeleteThread deletes the caller's thread: a run in progress (or a task
// waiting on interrupts) is cancelled first (A2A CancelTask, as Cancel
// does) — a run this process drives ends with RUN_ERROR thread_deleted,
// one driven by another instance as the agent reports the cancel — then
// its record, journal, interrupt index entries and lease go. A thread that
// does not exist, or is another principal's, is deleted already (nil), as
// for the owner's second delete. A run that does not end within
// deleteWait leaves the thread as it is (thread_busy).
func (s *Service) DeleteThread(ctx context.Context, agent, threadID string) error {
	th, err := s.loadThread(ctx, agent, threadID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	// A run this process drives is stopped first, so that it ends with
	// thread_deleted rather than as the agent reports the cancel; one
	// driven elsewhere ends cancelled, and the thread goes after.
	stopped := th.Active != nil && s.stopLocal(ctx, th)
	if s.running(th) || len(th.Interrupts) > 0 {
		if _, err := s.Cancel(ctx, agent, threadID); err != nil && !errors.Is(err, ErrNotFound) {
			// The agent may never hear of it; the thread goes all the same.
			s.log.Warn("delete thread: cancel", "agent", agent, "thread_id", threadID, "err", err)
		}
	}
	if stopped {
		if err := s.store.PurgeThread(ctx, th.Key, 0); err != nil && !errors.Is(err, ErrNotFound) {
			return StoreError(err)
		}
		return nil
	}
	wait, stop := context.WithTimeout(ctx, deleteWait)
	defer stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		th, err = s.store.GetThread(wait, th.Key)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return StoreError(err)
		}
		if !s.running(th) {
			err = s.store.PurgeThread(wait, th.Key, th.Version)
			if err == nil || errors.Is(err, ErrNotFound) {
				s.log.Info("thread deleted", "agent", agent, "thread_id", threadID)
				return nil
			}
			if !errors.Is(err, ErrConflict) {
				return StoreError(err)
			}
		}
		select {
		case <-tick.C:
		case <-wait.Done():
			return &Error{Code: agui.CodeThreadBusy, Message: "the thread's run did not end after its cancel; try again", Err: ErrThreadBusy}
		}
	}
}

// SetMaxThreads caps each principal's threads (0: no cap): a run that
// would create one more is refused with thread_limit before anything is
// written. Runs racing to create threads may each pass the check: the cap
// may be passed by as many as start at once.
func (s *Service) SetMaxThreads(n int) { s.maxThreads.Store(int64(max(n, 0))) }

// checkThreadCap refuses a new thread of principal at the cap.
func (s *Service) checkThreadCap(ctx context.Context, principal string) error {
	limit := s.maxThreads.Load()
	if limit <= 0 {
		return nil
	}
	n, err := s.store.CountThreads(ctx, principal)
	if err != nil {
		return StoreError(err)
	}
	if int64(n) >= limit {
		return &Error{Code: agui.CodeThreadLimit, Message: fmt.Sprintf(
			"this caller has %d threads and limits.perPrincipal.maxThreads allows %d: delete one to start another", n, limit)}
	}
	return nil
}
