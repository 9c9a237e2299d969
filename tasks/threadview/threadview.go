package threadview

import (
	"encoding/json"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// Thread is a thread's snapshot: the conversation, the shared state,
// pending interrupts and the current task.
type Thread struct {
	Agent             string          `json:"agent"`
	ThreadID          string          `json:"threadId"`
	ContextID         string          `json:"contextId,omitempty"`
	Task              *Task           `json:"task,omitempty"`
	Messages          []agui.Message  `json:"messages"`
	State             json.RawMessage `json:"state"`
	PendingInterrupts []Interrupt     `json:"pendingInterrupts"`
	ActiveRunID       string          `json:"activeRunId,omitempty"`
	Version           int64           `json:"version"`
	UpdatedAt         time.Time       `json:"updatedAt"`
	Cancel            *CancelResult   `json:"cancel,omitempty"`
	// Members are a team thread's members and their current tasks.
	Members map[string]*Task `json:"members,omitempty"`
}

// Task is an A2A task a thread follows.
type Task struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

// Interrupt is a pending interrupt with its expiry spelled out (the
// interrupt itself carries expiresAt only for 1.0 clients).
type Interrupt struct {
	agui.Interrupt
	ExpiresAt string `json:"expiresAt,omitempty"`
}

// CancelResult says what a cancel request did.
type CancelResult struct {
	// Requested is true when the bridge asked the agent to cancel the
	// thread's task (by this request or, for a running run, an earlier
	// one); false when there was nothing left to cancel.
	Requested bool `json:"requested"`
	// Repeated: an earlier request already asked to cancel the running
	// run; nothing more was sent.
	Repeated bool `json:"repeated,omitempty"`
	// WaitingForTask: the agent had not named the running run's task yet;
	// the run sends CancelTask the moment it does.
	WaitingForTask bool `json:"waitingForTask,omitempty"`
	// Refused is the agent's refusal (e.g. the task is not cancelable);
	// the run then ends as the agent reports it.
	Refused *CancelRefusal `json:"refused,omitempty"`
	// TaskState is the task's state as the agent reported it.
	TaskState string `json:"taskState,omitempty"`
}

// CancelRefusal is the agent's answer to a CancelTask it refused.
type CancelRefusal struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Of is the snapshot of th.
func Of(th *store.Thread) *Thread {
	v := &Thread{Agent: th.Key.Agent, ThreadID: th.Key.ThreadID,
		Messages: th.Messages, State: th.State, PendingInterrupts: []Interrupt{},
		Version: th.Version, UpdatedAt: th.UpdatedAt}
	if th.Active != nil {
		v.ActiveRunID = th.Active.RunID
	}
	if v.Messages == nil {
		v.Messages = []agui.Message{}
	}
	if len(v.State) == 0 {
		v.State = json.RawMessage(`{}`)
	}
	for name, m := range th.Members {
		if name == th.Key.Agent {
			// An agent's own thread: its one member is the agent.
			v.ContextID = m.ContextID
			if m.TaskID != "" {
				v.Task = &Task{ID: m.TaskID, State: m.TaskState}
			}
			continue
		}
		if v.Members == nil {
			v.Members = map[string]*Task{}
		}
		v.Members[name] = &Task{ID: m.TaskID, State: m.TaskState}
	}
	for _, p := range th.Interrupts {
		iv := Interrupt{Interrupt: p.Interrupt}
		iv.Interrupt.ExpiresAt = ""
		if !p.ExpiresAt.IsZero() {
			iv.ExpiresAt = p.ExpiresAt.Format(time.RFC3339Nano)
		}
		v.PendingInterrupts = append(v.PendingInterrupts, iv)
	}
	return v
}

// Summary is one thread of a list.
type Summary struct {
	Agent          string    `json:"agent"`
	ThreadID       string    `json:"threadId"`
	CreatedAt      time.Time `json:"createdAt"`
	LastActivityAt time.Time `json:"lastActivityAt"`
	// Status is "running", "interrupted" (pending interrupts) or "idle".
	Status       string `json:"status"`
	Title        string `json:"title"`
	MessageCount int    `json:"messageCount"`
}

// List is a page of a caller's threads, newest activity first; NextCursor
// continues it (absent at the end).
type List struct {
	Threads    []Summary `json:"threads"`
	NextCursor string    `json:"nextCursor,omitempty"`
}

// List page sizes: the default and the most a page may ask.
const (
	DefaultListLimit = 50
	MaxListLimit     = 200
)

// ListOf is the list of a page of the store's thread summaries.
func ListOf(page store.ThreadPage) *List {
	out := &List{Threads: make([]Summary, 0, len(page.Threads)), NextCursor: page.Next}
	for _, t := range page.Threads {
		v := Summary{Agent: t.Agent, ThreadID: t.ThreadID, CreatedAt: t.CreatedAt, LastActivityAt: t.LastActivityAt,
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
	return out
}
