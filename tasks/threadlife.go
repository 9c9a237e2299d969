package tasks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/auth"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// ThreadSummaryView is one thread of a list (GET /agents/{name}/threads,
// GET /threads).
type ThreadSummaryView struct {
	Agent          string    `json:"agent"`
	ThreadID       string    `json:"threadId"`
	CreatedAt      time.Time `json:"createdAt"`
	LastActivityAt time.Time `json:"lastActivityAt"`
	// Status is "running", "interrupted" (pending interrupts) or "idle".
	Status       string `json:"status"`
	Title        string `json:"title"`
	MessageCount int    `json:"messageCount"`
}

// ThreadList is a page of the caller's threads, newest activity first;
// NextCursor continues it (absent at the end).
type ThreadList struct {
	Threads    []ThreadSummaryView `json:"threads"`
	NextCursor string              `json:"nextCursor,omitempty"`
}

// Thread list page sizes: the default and the most a page may ask.
const (
	DefaultThreadListLimit = 50
	MaxThreadListLimit     = 200
)

// ListThreads lists the caller's threads on agent (an agent or a team), or
// on every configured agent and team when agent is "". Nothing of another
// principal is ever listed. limit 0 is DefaultThreadListLimit; above
// MaxThreadListLimit, below 0 or a cursor no list returned is invalid_input.
func (s *Service) ListThreads(ctx context.Context, agent, cursor string, limit int) (*ThreadList, error) {
	if limit == 0 {
		limit = DefaultThreadListLimit
	}
	if limit < 0 || limit > MaxThreadListLimit {
		return nil, &Error{Code: agui.CodeInvalidInput, Message: fmt.Sprintf("limit must be between 1 and %d", MaxThreadListLimit)}
	}
	q := store.ListQuery{Principal: auth.PrincipalFrom(ctx), Cursor: cursor, Limit: limit}
	if agent != "" {
		if !s.HasAgent(agent) {
			return nil, unknownAgent(agent)
		}
		q.Agents = []string{agent}
	} else {
		c := s.catalog.Load()
		for name := range c.agents {
			q.Agents = append(q.Agents, name)
		}
		for name := range c.teams {
			q.Agents = append(q.Agents, name)
		}
		slices.Sort(q.Agents)
	}
	page, err := s.store.ListThreads(ctx, q)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, &Error{Code: agui.CodeInvalidInput, Message: "cursor is not one a thread list returned", Err: err}
	}
	if err != nil {
		return nil, storeError(err)
	}
	out := &ThreadList{Threads: make([]ThreadSummaryView, 0, len(page.Threads)), NextCursor: page.Next}
	for _, t := range page.Threads {
		v := ThreadSummaryView{Agent: t.Agent, ThreadID: t.ThreadID, CreatedAt: t.CreatedAt, LastActivityAt: t.LastActivityAt,
			Status: "idle", Title: t.Title, MessageCount: t.MessageCount}
		if v.CreatedAt.IsZero() {
			v.CreatedAt = v.LastActivityAt // a record older than creation times
		}
		switch {
		case t.Active:
			v.Status = "running"
		case t.Interrupts > 0:
			v.Status = "interrupted"
		}
		out.Threads = append(out.Threads, v)
	}
	return out, nil
}

// deleteWait bounds how long DeleteThread waits for a cancelled run to end.
const deleteWait = 15 * time.Second

// DeleteThread deletes the caller's thread: a run in progress (or a task
// waiting on interrupts) is cancelled first (A2A CancelTask, as Cancel
// does), the run ends as the agent reports it, and then the thread's
// record, journal, interrupt index entries and lease go. A thread that
// does not exist, or is another principal's, is deleted already: nil,
// exactly as for the owner's second delete. A run that does not end
// within deleteWait leaves the thread as it is (thread_busy).
func (s *Service) DeleteThread(ctx context.Context, agent, threadID string) error {
	th, err := s.loadThread(ctx, agent, threadID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if s.running(th) || len(th.Interrupts) > 0 {
		if _, err := s.Cancel(ctx, agent, threadID); err != nil && !errors.Is(err, ErrNotFound) {
			// The agent may never hear of it; the thread goes all the same.
			s.log.Warn("delete thread: cancel", "agent", agent, "thread_id", threadID, "err", err)
		}
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
			return storeError(err)
		}
		if !s.running(th) {
			err = s.store.PurgeThread(wait, th.Key, th.Version)
			if err == nil || errors.Is(err, ErrNotFound) {
				s.log.Info("thread deleted", "agent", agent, "thread_id", threadID)
				return nil
			}
			if !errors.Is(err, ErrConflict) {
				return storeError(err)
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
		return storeError(err)
	}
	if int64(n) >= limit {
		return &Error{Code: agui.CodeThreadLimit, Message: fmt.Sprintf(
			"this caller has %d threads, the most allowed (limits.perPrincipal.maxThreads): delete one to start another", n)}
	}
	return nil
}

// SweepBatch bounds how many threads one SweepIdle deletes.
const SweepBatch = 100

// SweepIdle deletes up to SweepBatch threads without a run whose last
// activity is older than ttl at now, and reports how many it deleted. Each
// goes only at the version it was listed with: a thread touched since, by
// this instance or another on a shared store, stays.
func (s *Service) SweepIdle(ctx context.Context, now time.Time, ttl time.Duration) (int, error) {
	idle, err := s.store.IdleThreads(ctx, now.Add(-ttl), SweepBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range idle {
		switch err := s.store.PurgeThread(ctx, t.Key, t.Version); {
		case err == nil:
			n++
		case errors.Is(err, ErrConflict), errors.Is(err, ErrNotFound):
		default:
			return n, err
		}
	}
	return n, nil
}
