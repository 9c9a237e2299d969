package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// ThreadView is what GET /agents/{name}/threads/{threadId} shows: the
// conversation, the shared state, pending interrupts and the current task.
type ThreadView struct {
	Agent             string            `json:"agent"`
	ThreadID          string            `json:"threadId"`
	ContextID         string            `json:"contextId,omitempty"`
	Task              *TaskView         `json:"task,omitempty"`
	Messages          []agui.Message    `json:"messages"`
	State             json.RawMessage   `json:"state"`
	PendingInterrupts []InterruptView   `json:"pendingInterrupts"`
	ActiveRunID       string            `json:"activeRunId,omitempty"`
	Version           int64             `json:"version"`
	UpdatedAt         time.Time         `json:"updatedAt"`
	Cancel            *CancelResultView `json:"cancel,omitempty"`
}

// TaskView is the thread's current A2A task.
type TaskView struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

// InterruptView is a pending interrupt with its expiry spelled out (the
// interrupt itself carries expiresAt only for 1.0 clients).
type InterruptView struct {
	agui.Interrupt
	ExpiresAt string `json:"expiresAt,omitempty"`
}

// CancelResultView says what a cancel request did.
type CancelResultView struct {
	// Requested is true when the bridge asked the agent to cancel; false
	// when there was nothing left to cancel (idempotent repeat).
	Requested bool   `json:"requested"`
	TaskState string `json:"taskState,omitempty"`
}

func threadNotFound(key ThreadKey) error {
	return &Error{Status: http.StatusNotFound, Code: "unknown_thread",
		Message: fmt.Sprintf("agent %q has no thread %q", key.Agent, key.ThreadID), Err: ErrNotFound}
}

func (s *Service) loadThread(ctx context.Context, agent, threadID string) (*Thread, error) {
	if s.agents[agent] == nil {
		return nil, unknownAgent(agent)
	}
	key := ThreadKey{Agent: agent, ThreadID: threadID}
	th, err := s.store.GetThread(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return nil, threadNotFound(key)
	}
	if err != nil {
		return nil, storeError(err)
	}
	return th, nil
}

// Thread returns the thread's snapshot.
func (s *Service) Thread(ctx context.Context, agent, threadID string) (*ThreadView, error) {
	th, err := s.loadThread(ctx, agent, threadID)
	if err != nil {
		return nil, err
	}
	return viewOf(th), nil
}

func viewOf(th *Thread) *ThreadView {
	v := &ThreadView{Agent: th.Key.Agent, ThreadID: th.Key.ThreadID, ContextID: th.ContextID,
		Messages: th.Messages, State: th.State, PendingInterrupts: []InterruptView{},
		ActiveRunID: th.ActiveRunID, Version: th.Version, UpdatedAt: th.UpdatedAt}
	if v.Messages == nil {
		v.Messages = []agui.Message{}
	}
	if len(v.State) == 0 {
		v.State = json.RawMessage(`{}`)
	}
	if th.TaskID != "" {
		v.Task = &TaskView{ID: th.TaskID, State: th.TaskState}
	}
	for _, p := range th.Interrupts {
		iv := InterruptView{Interrupt: p.Interrupt}
		iv.Interrupt.ExpiresAt = ""
		if !p.ExpiresAt.IsZero() {
			iv.ExpiresAt = p.ExpiresAt.Format(time.RFC3339Nano)
		}
		v.PendingInterrupts = append(v.PendingInterrupts, iv)
	}
	return v
}

// Cancel asks the agent to cancel the thread's current task (A2A
// CancelTask) and clears its pending interrupts. It is idempotent: a thread
// whose task already ended is returned as it is. A run in progress sees the
// cancellation arrive from the agent and ends cancelled itself.
func (s *Service) Cancel(ctx context.Context, agent, threadID string) (*ThreadView, error) {
	th, err := s.loadThread(ctx, agent, threadID)
	if err != nil {
		return nil, err
	}
	res := &CancelResultView{TaskState: th.TaskState}
	if th.TaskID == "" || a2a.IsTerminal(a2a.TaskState(th.TaskState)) {
		v := viewOf(th)
		v.Cancel = res
		return v, nil
	}
	if f := s.takeFollower(th.Key, a2a.TaskID(th.TaskID)); f != nil {
		f.release() // nobody will resume it now
	}
	conn, err := s.agents[agent].Connect(ctx)
	if err != nil {
		return nil, agentError(agent, err)
	}
	spec := s.agents[agent]
	cctx, cancel := context.WithTimeout(ctx, spec.RequestTimeout)
	defer cancel()
	task, err := conn.CancelTask(cctx, a2a.TaskID(th.TaskID))
	if err != nil {
		// Not cancelable usually means it ended meanwhile: report that.
		task, err = conn.GetTask(cctx, a2a.TaskID(th.TaskID))
		if err != nil {
			return nil, agentError(agent, err)
		}
	} else {
		res.Requested = true
	}
	state := string(task.Status.State)
	if state == "" || (!a2a.IsTerminal(task.Status.State) && res.Requested) {
		state = string(a2a.TaskStateCanceled)
	}
	res.TaskState = state
	if th.ActiveRunID == "" {
		for attempt := 0; attempt < 5; attempt++ {
			cur, err := s.store.GetThread(ctx, th.Key)
			if err != nil {
				return nil, storeError(err)
			}
			if cur.ActiveRunID != "" || cur.TaskID != th.TaskID {
				th = cur
				break
			}
			cur.TaskState = state
			cur.Interrupts = nil
			v, err := s.store.PutThread(ctx, cur)
			if errors.Is(err, ErrConflict) {
				continue
			}
			if err != nil {
				return nil, storeError(err)
			}
			cur.Version = v
			th = cur
			break
		}
	}
	v := viewOf(th)
	v.Cancel = res
	return v, nil
}
