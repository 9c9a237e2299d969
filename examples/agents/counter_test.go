package agents

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestCounterCounts streams Count chunks into one artifact, then completes.
func TestCounterCounts(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	client := newClient(t, srv, "stubborn", transports[0])
	got, _ := collect(t, client.SendStreamingMessage(t.Context(), userMessage(a2a.NewTextPart("count"))))
	var text strings.Builder
	chunks := 0
	for _, ev := range got {
		if strings.HasPrefix(ev, "artifact ") {
			chunks++
			_, quoted, _ := strings.Cut(ev, ": ")
			text.WriteString(strings.Trim(quoted, `"`))
		}
	}
	if chunks != 15 || text.String() != CounterText(15) || got[len(got)-1] != "status COMPLETED" {
		t.Fatalf("events %q", got)
	}
}

// TestCounterCancel: CancelTask ends a counter CANCELED and is logged; the
// stubborn one refuses it with TaskNotCancelable and counts on.
func TestCounterCancel(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	for _, tc := range []struct {
		agent  string
		refuse bool
	}{{"counter", false}, {"stubborn", true}} {
		for _, tr := range transports {
			t.Run(tc.agent+"/"+tr.name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				client := newClient(t, srv, tc.agent, tr)
				var taskID a2a.TaskID
				var last a2a.Event
				cancelled := make(chan error, 1)
				for ev, err := range client.SendStreamingMessage(ctx, userMessage(a2a.NewTextPart("count"))) {
					if err != nil {
						t.Fatal(err)
					}
					last = ev
					if task, ok := ev.(*a2a.Task); ok {
						taskID = task.ID
					}
					if _, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && taskID != "" {
						id := taskID
						taskID = ""
						go func() {
							_, err := client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id})
							cancelled <- err
						}()
					}
				}
				err := <-cancelled
				st, _ := last.(*a2a.TaskStatusUpdateEvent)
				switch {
				case tc.refuse && (!errors.Is(err, a2a.ErrTaskNotCancelable) || st == nil || st.Status.State != a2a.TaskStateCompleted):
					t.Fatalf("stubborn: cancel error %v, last event %s", err, describe(last))
				case !tc.refuse && (err != nil || st == nil || st.Status.State != a2a.TaskStateCanceled):
					t.Fatalf("counter: cancel error %v, last event %s", err, describe(last))
				}
				if n := len(srv.Cancels(tc.agent)); n == 0 {
					t.Fatal("the CancelTask was not logged")
				}
			})
		}
	}
}

// TestLatecomerSaysNothingAtFirst: its first event, the task, comes after
// StartDelay (a lower bound: a slow machine only makes it later).
func TestLatecomerSaysNothingAtFirst(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	client := newClient(t, srv, "latecomer", transports[0])
	start := time.Now()
	for ev, err := range client.SendStreamingMessage(t.Context(), userMessage(a2a.NewTextPart("count"))) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.(*a2a.Task); !ok {
			t.Fatalf("first event %s", describe(ev))
		}
		if waited := time.Since(start); waited < time.Second {
			t.Fatalf("first event after %s, want at least 1s", waited)
		}
		if _, err := client.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: ev.(*a2a.Task).ID}); err != nil {
			t.Fatal(err)
		}
		break
	}
}
