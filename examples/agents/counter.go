package agents

import (
	"context"
	"iter"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Defaults of the [Counter].
const (
	DefaultCounterTick  = 100 * time.Millisecond
	DefaultCounterCount = 100
)

// CounterText is what a [Counter] has streamed after n chunks: "1 2 … n ".
func CounterText(n int) string {
	b := make([]byte, 0, 4*n)
	for i := 1; i <= n; i++ {
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ' ')
	}
	return string(b)
}

// Counter counts slowly, for cancel tests: one text chunk per Tick ("1 ",
// "2 ", …) in one artifact, then COMPLETED after Count chunks.
//
//	Task{SUBMITTED} → Status{WORKING} → Artifact{append=false "1 "} → Artifact{append=true "2 "} …
//	→ Artifact{append=true, lastChunk=true "<Count> "} → Status{COMPLETED}
//
// CancelTask ends it at once with Status{CANCELED}. StartDelay holds back
// even its first event, so a cancel can arrive before the agent has named
// its task. With RefuseCancel it refuses every CancelTask
// (TaskNotCancelable) and counts on to the end.
type Counter struct {
	Tick         time.Duration   // pause between chunks; 0 means DefaultCounterTick
	Count        int             // chunks before completing; 0 means DefaultCounterCount
	StartDelay   time.Duration   // pause before the first event
	RefuseCancel bool            // refuse CancelTask
	Quit         <-chan struct{} // closing it ends running executions with FAILED
}

// Execute implements [a2asrv.AgentExecutor].
func (a Counter) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	tick, count := a.Tick, a.Count
	if tick <= 0 {
		tick = DefaultCounterTick
	}
	if count <= 0 {
		count = DefaultCounterCount
	}
	return execute(ctx, ec, tick, func(r *run) {
		if !a.wait(ctx, a.StartDelay) || !r.start() || !r.status(a2a.TaskStateWorking, "") {
			return
		}
		id := a2a.NewArtifactID()
		for i := 1; i <= count; i++ {
			if !a.wait(ctx, tick) {
				if a.quitting() {
					r.status(a2a.TaskStateFailed, "agent is shutting down")
				}
				return
			}
			ev := a2a.NewArtifactUpdateEvent(ec, id, a2a.NewTextPart(strconv.Itoa(i)+" "))
			ev.Append = i > 1
			ev.LastChunk = i == count
			if !r.emit(ev) {
				return
			}
		}
		r.status(a2a.TaskStateCompleted, "")
	})
}

// wait pauses for d; it reports false once ctx ends or Quit is closed.
func (a Counter) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil && !a.quitting()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-a.Quit:
		return false
	case <-t.C:
		return true
	}
}

func (a Counter) quitting() bool {
	select {
	case <-a.Quit:
		return true
	default:
		return false
	}
}

// Cancel implements [a2asrv.AgentExecutor]: a CANCELED update, or the
// refusal.
func (a Counter) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	if a.RefuseCancel {
		return func(yield func(a2a.Event, error) bool) {
			yield(nil, a2a.ErrTaskNotCancelable)
		}
	}
	return cancelOnly{}.Cancel(ctx, ec)
}

var _ a2asrv.AgentExecutor = Counter{}
