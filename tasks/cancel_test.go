package tasks

import (
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// TestCancelRunningRun: a cancel request reaches the running run's task
// once; an agent that answers CancelTask with a cancelled task but whose
// stream never says so still ends the run cancelled after the grace period;
// the thread is then free and records the task's final state.
func TestCancelRunningRun(t *testing.T) {
	t.Parallel()
	for _, v1 := range []bool{true, false} {
		agent := &scriptedAgent{streaming: true, hold: true, stream: []scripted{
			{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("Counting: 1", false)},
		}}
		svc, store := newTestService(t, agent, nil)
		in := input("th", "r1")
		if v1 {
			in.ProtocolVersion = "1.0"
		}
		run := must(svc.StartRun(t.Context(), "a", in))
		waitFor(t, func() bool {
			th, err := store.GetThread(t.Context(), run.Key)
			return err == nil && th.Active != nil && th.Active.Tasks[th.Key.Agent] == "task-1"
		})
		v, err := svc.Cancel(t.Context(), "a", "th")
		if err != nil {
			t.Fatal(err)
		}
		if c := v.Cancel; !c.Requested || c.Repeated || c.WaitingForTask || c.TaskState != string(a2a.TaskStateCanceled) {
			t.Fatalf("first cancel: %+v", c)
		}
		again, err := svc.Cancel(t.Context(), "a", "th")
		if err != nil {
			t.Fatal(err)
		}
		if !again.Cancel.Requested || !again.Cancel.Repeated {
			t.Fatalf("second cancel: %+v", again.Cancel)
		}
		events := collect(t, run)
		wantCancelled(t, v1, events)
		if len(agent.canceled) != 1 {
			t.Fatalf("CancelTask sent %d times, want once", len(agent.canceled))
		}
		th, err := store.GetThread(t.Context(), run.Key)
		if err != nil {
			t.Fatal(err)
		}
		if th.Active != nil || th.Own().TaskState != string(a2a.TaskStateCanceled) {
			t.Fatalf("thread after the run: %+v", th)
		}
	}
}

// TestCancelBeforeTheTaskIsKnown: a cancel that arrives before the agent's
// first event is sent by the run as soon as the agent names the task.
func TestCancelBeforeTheTaskIsKnown(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, hold: true, release: make(chan struct{}),
		stream: []scripted{{ev: task(a2a.TaskStateWorking, "")}}}
	// The agent says nothing until the cancel request is in.
	agent.stream = nil
	agent.after = []scripted{{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("late", false)}}
	svc, store := newTestService(t, agent, nil)
	key := ThreadKey{Agent: "a", ThreadID: "th"}
	started := make(chan *RunReader, 1)
	go func() {
		run, err := svc.StartRun(t.Context(), "a", input("th", "r1"))
		if err != nil {
			t.Error(err)
		}
		started <- run
	}()
	waitFor(t, func() bool {
		th, err := store.GetThread(t.Context(), key)
		return err == nil && th.Running("r1")
	})
	v, err := svc.Cancel(t.Context(), "a", "th")
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Cancel; !c.Requested || !c.WaitingForTask {
		t.Fatalf("cancel before the task: %+v", c)
	}
	close(agent.release)
	run := <-started
	if run == nil {
		t.FailNow()
	}
	wantCancelled(t, false, collect(t, run))
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if len(agent.canceled) != 1 || agent.canceled[0] != "task-1" {
		t.Fatalf("CancelTask calls %v, want one for task-1", agent.canceled)
	}
}

// TestCancelRefused: an agent that refuses CancelTask is reported in the
// answer, and the run ends as the agent reports it.
func TestCancelRefused(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, hold: true, release: make(chan struct{}),
		cancelErr: a2a.ErrTaskNotCancelable,
		stream:    []scripted{{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("Almost ", false)}},
		after:     []scripted{{ev: chunk("done.", true)}, {ev: status(a2a.TaskStateCompleted)}}}
	svc, store := newTestService(t, agent, nil)
	run := must(svc.StartRun(t.Context(), "a", input("th", "r1")))
	waitFor(t, func() bool {
		th, err := store.GetThread(t.Context(), run.Key)
		return err == nil && th.Active != nil && th.Active.Tasks[th.Key.Agent] == "task-1"
	})
	v, err := svc.Cancel(t.Context(), "a", "th")
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Cancel; !c.Requested || c.Refused == nil || c.Refused.Code != "a2a_task_not_cancelable" {
		t.Fatalf("refused cancel: %+v", c)
	}
	close(agent.release)
	events := collect(t, run)
	if _, ok := events[len(events)-1].(*agui.RunFinished); !ok {
		t.Fatalf("the run must end as the agent reports it (completed), got %s", events[len(events)-1].Type())
	}
}

func wantCancelled(t *testing.T, v1 bool, events []agui.Event) {
	t.Helper()
	switch e := events[len(events)-1].(type) {
	case *agui.RunFinished:
		if !v1 || e.Outcome == nil || e.Outcome.Type != agui.OutcomeCancelled {
			t.Fatalf("v1=%v: %+v", v1, e)
		}
	case *agui.RunError:
		if v1 || e.Code != mapping.CodeCancelled {
			t.Fatalf("v1=%v: %+v", v1, e)
		}
	default:
		t.Fatalf("last event %s", e.Type())
	}
}

// waitFor polls cond until it holds or the test's time runs out.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
