package tasks

import (
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// Run outcomes, as RunObserver.RunEnded reports them.
const (
	// OutcomeFinished: RUN_FINISHED, the task completed.
	OutcomeFinished = "finished"
	// OutcomeInterrupted: RUN_FINISHED with an interrupt outcome; the
	// thread holds pending interrupts.
	OutcomeInterrupted = "interrupted"
	// OutcomeCancelled: the task was cancelled (a cancelled outcome for
	// 1.0 clients, RUN_ERROR{code:"cancelled"} for older ones).
	OutcomeCancelled = "cancelled"
	// OutcomeError: RUN_ERROR (its code goes with it), or the run was
	// refused with an HTTP error after it claimed its thread (the agent
	// could not be reached).
	OutcomeError = "error"
	// OutcomeSuspended: the bridge shut down under the run, which the next
	// process takes over and ends.
	OutcomeSuspended = "suspended"
)

// RunObserver is told what one agent's runs do, for metrics
// (AgentSpec.Observer; nil observes nothing). Its methods are called from
// run goroutines, concurrently, and Event once per AG-UI event: it must be
// cheap and must not allocate.
type RunObserver interface {
	// RunStarted: a run claimed its thread (or was taken over after a
	// restart).
	RunStarted()
	// FirstEvent: the agent answered the run's first call after wait.
	FirstEvent(wait time.Duration)
	// Event: the run produced an AG-UI event of type t.
	Event(t agui.EventType)
	// RunEnded: once per started run. code is the RUN_ERROR code when
	// outcome is OutcomeError, else "".
	RunEnded(outcome, code string, elapsed time.Duration)
}

// noTracer is the tracer of a Service without one: its spans record
// nothing and cost next to nothing.
var noTracer trace.Tracer = noop.NewTracerProvider().Tracer("")

// outcomeOf says how a run that emitted the terminal event e ended.
func outcomeOf(e agui.Event) (outcome, code string) {
	switch e := e.(type) {
	case *agui.RunFinished:
		if e.Outcome != nil {
			switch e.Outcome.Type {
			case agui.OutcomeInterrupt:
				return OutcomeInterrupted, ""
			case agui.OutcomeCancelled:
				return OutcomeCancelled, ""
			}
		}
		return OutcomeFinished, ""
	case *agui.RunError:
		if e.Code == mapping.CodeCancelled {
			return OutcomeCancelled, ""
		}
		return OutcomeError, e.Code
	}
	return "", ""
}
