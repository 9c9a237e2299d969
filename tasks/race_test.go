package tasks

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// lateFailure fails its stream after a delay equal to the bridge's
// first-event wait, so the failure and StartRun's timer race.
type lateFailure struct {
	scriptedAgent
	delay time.Duration
}

func (l *lateFailure) SendStreaming(context.Context, *a2a.Message) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		time.Sleep(l.delay)
		yield(nil, fmt.Errorf("%w: dial", a2a.ErrUnavailable))
	}
}

// TestFailureRacingTheFirstEventWait: whichever side wins, the request gets
// an HTTP error or a stream that ends — never a stream that waits forever.
func TestFailureRacingTheFirstEventWait(t *testing.T) {
	t.Parallel()
	const wait = 5 * time.Millisecond
	agent := &lateFailure{delay: wait}
	agent.streaming = true
	svc := NewService(Options{Store: store.NewMemoryStore(), FirstEventWait: wait, Agents: []AgentSpec{{Name: "a",
		Connect: func(context.Context) (Agent, error) { return agent, nil }, RequestTimeout: time.Second}}})
	defer svc.Close(t.Context())
	for i := range 200 {
		run, err := svc.StartRun(t.Context(), "a", input(fmt.Sprintf("t%d", i), "r"))
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		terminal := false
		for b, err := range run.Events(ctx) {
			if err != nil {
				break
			}
			e, _ := agui.Decode(b.Event)
			terminal = e != nil && (e.Type() == agui.EventRunError || e.Type() == agui.EventRunFinished)
		}
		cancel()
		if !terminal {
			t.Fatalf("run %d: a 200 stream that never ended", i)
		}
	}
}

// TestRetryRightAfterAnAgentError: the thread is free again by the time
// the HTTP error is returned.
func TestRetryRightAfterAnAgentError(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, stream: []scripted{{err: fmt.Errorf("%w: refused", a2a.ErrUnavailable)}}}
	svc, _ := newTestService(t, agent, nil)
	for i := range 100 {
		_, err := svc.StartRun(t.Context(), "a", input("th", fmt.Sprintf("r%d", i)))
		var e *Error
		if !errors.As(err, &e) || e.HTTPStatus() == http.StatusConflict {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
}
