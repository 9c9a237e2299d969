package tasks

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/threadview"
)

func threadNotFound(key ThreadKey) error {
	return &Error{Code: agui.CodeUnknownThread,
		Message: fmt.Sprintf("agent %q has no thread %q", key.Agent, key.ThreadID), Err: ErrNotFound}
}

func (s *Service) loadThread(ctx context.Context, agent, threadID string) (*Thread, error) {
	if !s.HasAgent(agent) {
		return nil, unknownAgent(agent)
	}
	// The caller's own thread: another principal's thread of the same id
	// is another key, so it is not found, exactly as an id nobody used.
	key := callerKey(ctx, agent, threadID)
	th, err := s.getThread(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return nil, threadNotFound(key)
	}
	if err != nil {
		return nil, StoreError(err)
	}
	if !ownedBy(ctx, th) {
		// A record filed under the caller's key but made by someone else
		// (never written so): the answer for a thread that does not
		// exist.
		return nil, threadNotFound(key)
	}
	return th, nil
}

// Thread returns the thread's snapshot.
func (s *Service) Thread(ctx context.Context, agent, threadID string) (*threadview.Thread, error) {
	th, err := s.loadThread(ctx, agent, threadID)
	if err != nil {
		return nil, err
	}
	return threadview.Of(th), nil
}

// Cancel asks the thread's agents to cancel their tasks (A2A CancelTask).
//
// With a run in progress it cancels the tasks its members follow: at once
// those known, the others as soon as their agents name them. The members'
// parts then end cancelled as the agents report it (the run ends with the
// cancelled outcome for 1.0 clients, RUN_ERROR "cancelled" for older
// ones), and the thread is free again. A repeated request sends nothing
// more. An agent that refuses is reported in the result; the run goes on.
//
// Without a run, it cancels every member's task still open and clears the
// thread's pending interrupts; a thread whose tasks already ended is
// returned as it is.
func (s *Service) Cancel(ctx context.Context, agent, threadID string) (*threadview.Thread, error) {
	th, err := s.loadThread(ctx, agent, threadID)
	if err != nil {
		return nil, err
	}
	if s.running(th) {
		cur, asked, err := s.markCancel(ctx, th)
		if err != nil {
			return nil, StoreError(err)
		}
		if s.running(cur) {
			return s.cancelRun(ctx, cur, asked)
		}
		th = cur // the run ended meanwhile: cancel what it left open
	}
	return s.cancelIdle(ctx, th)
}

// cancelRun cancels the tasks of th's running run (see Cancel); asked
// says this request recorded the cancel.
func (s *Service) cancelRun(ctx context.Context, th *Thread, asked bool) (*threadview.Thread, error) {
	v := threadview.Of(th)
	res := &threadview.CancelResult{Requested: true, Repeated: !asked}
	if v.Task != nil {
		res.TaskState = v.Task.State
	}
	v.Cancel = res
	if !asked {
		return v, nil
	}
	// The run records each task when its agent names it, sees this
	// request and sends CancelTask then.
	res.WaitingForTask = len(th.Active.Tasks) == 0
	for _, name := range slices.Sorted(maps.Keys(th.Active.Tasks)) {
		spec := s.agentSpec(name)
		if spec == nil {
			return nil, unknownAgent(name)
		}
		conn, err := spec.Connect(ctx)
		var task *a2a.Task
		if err == nil {
			task, err = cancelTask(ctx, conn, spec.RequestTimeout, a2a.TaskID(th.Active.Tasks[name]))
		}
		switch {
		case err == nil:
			res.TaskState = string(task.Status.State)
			if d := s.driving(th.Key, th.Active.RunID); d != nil {
				d.cancelAccepted(task)
			}
		case errors.Is(err, a2a.ErrTaskNotCancelable):
			info := a2a.Classify(err)
			res.Refused = &threadview.CancelRefusal{Code: info.Code, Message: info.Message}
		default:
			// The request did not reach the agent: forget it, so that a
			// retry sends CancelTask again.
			s.forgetCancel(th)
			return nil, agentError(name, err)
		}
	}
	return v, nil
}

// forgetCancel clears the cancel request of th's running run.
func (s *Service) forgetCancel(th *Thread) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 10*time.Second)
	defer cancel()
	_, _, _ = s.updateThread(ctx, th.Key, nil, func(cur *Thread) bool {
		if !cur.Running(th.Active.RunID) || !cur.Active.CancelRequested {
			return false
		}
		cur.Active.CancelRequested = false
		return true
	})
}

// cancelIdle cancels the open tasks of a thread without a running run.
func (s *Service) cancelIdle(ctx context.Context, th *Thread) (*threadview.Thread, error) {
	res := &threadview.CancelResult{}
	states := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(th.Members)) {
		rec := th.Members[name]
		res.TaskState = rec.TaskState
		if rec.TaskID == "" || a2a.IsTerminal(a2a.TaskState(rec.TaskState)) {
			continue
		}
		if f := s.takeSignInWatch(th.Key, a2a.TaskID(rec.TaskID)); f != nil {
			f.release() // nobody will resume it now
		}
		spec := s.agentSpec(name)
		if spec == nil {
			return nil, unknownAgent(name)
		}
		conn, err := spec.Connect(ctx)
		if err != nil {
			return nil, agentError(name, err)
		}
		task, requested, err := cancelOrGet(ctx, conn, spec.RequestTimeout, a2a.TaskID(rec.TaskID), false)
		if err != nil {
			return nil, agentError(name, err)
		}
		res.Requested = res.Requested || requested
		res.TaskState = string(task.Status.State)
		states[name] = res.TaskState
	}
	if len(states) > 0 && th.Active == nil {
		var err error
		if th, err = s.recordCancel(ctx, th, func(cur *Thread) bool {
			if cur.Active != nil {
				return false
			}
			for name, state := range states {
				c := cur.Members[name]
				if c == nil || c.TaskID != th.Members[name].TaskID {
					return false // a run started since: the record is its
				}
				c.TaskState = state
			}
			return true
		}); err != nil {
			return nil, err
		}
	}
	v := threadview.Of(th)
	v.Cancel = res
	return v, nil
}

// recordCancel writes the outcome of a cancel of an idle thread: update
// says on the current record whether the cancel still applies (no run has
// started since, the task is the same) and records the task states; the
// thread's pending interrupts go with it. A write that loses a race is
// retried on the new record, a few times. It returns the record as it
// stands, or th when every attempt lost.
func (s *Service) recordCancel(ctx context.Context, th *Thread, update func(cur *Thread) bool) (*Thread, error) {
	cur, _, err := s.updateThread(ctx, th.Key, nil, func(cur *Thread) bool {
		if !update(cur) {
			return false
		}
		cur.Interrupts = nil
		return true
	})
	switch {
	case errors.Is(err, ErrConflict):
		return th, nil
	case err != nil:
		return nil, StoreError(err)
	}
	return cur, nil
}
