package tasks

import (
	"context"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
)

// storedTaskReporter is an Agent whose streams leave out what its run did
// — Mastra reports a task's tool calls and their results only in the
// stored task's metadata.execution (a2a.Agent.ReportsInStoredTask).
type storedTaskReporter interface {
	ReportsInStoredTask() bool
}

// completedTask puts, for such an agent, the stored task in place of the
// status update that completes it, so that the translator sees everything
// the run did before the run ends: one GetTask per completed task. For any
// other event or agent, or when the task cannot be read as completed, it
// returns ev.
func completedTask(ctx context.Context, agent Agent, timeout time.Duration, ev a2a.Event) a2a.Event {
	st, ok := ev.(*a2a.StatusUpdate)
	if !ok || st.Status.State != a2a.TaskStateCompleted || st.TaskID == "" {
		return ev
	}
	if r, ok := agent.(storedTaskReporter); !ok || !r.ReportsInStoredTask() {
		return ev
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	task, err := agent.GetTask(ctx, st.TaskID)
	if err != nil || task == nil || task.Status.State != a2a.TaskStateCompleted {
		return ev
	}
	if task.Status.Message == nil {
		task.Status.Message = st.Status.Message
	}
	return task
}
