package tasks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/internal/retry"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// opening is how a run's conversation with its agent begins: exactly one
// of msg, subscribe, cancel or poll is set.
type opening struct {
	// msg is sent: over the agent's stream, or as a blocking send that
	// returns as soon as the task exists (agents without streaming).
	msg *a2a.Message
	// subscribe reattaches to a running task (a run taken over); where the
	// agent cannot, the task is polled instead.
	subscribe a2a.TaskID
	// cancel cancels the task (cancelOrGet) and yields it, ended.
	cancel a2a.TaskID
	// poll follows the task with GetTask from the start.
	poll a2a.TaskID

	// in and stateKey are what the bridge's A2A extension sends along with
	// msg when the agent declares it (the client's state, context, props
	// and frontend tools).
	in       *agui.RunAgentInput
	stateKey string
	// brokeOff is told when the agent's stream broke after it answered and
	// before the run had what it needed: polling takes over. Nil: nothing.
	brokeOff func(err error)
	// streamOnly, set by the consumer while it reads, stops the
	// conversation when the stream ends instead of polling on: a run that
	// ended on AUTH_REQUIRED keeps reading the stream for its signInWatch,
	// and no further.
	streamOnly bool
}

// errNoAnswer and errNoTask end an upstream that cannot be followed.
var (
	errNoAnswer = errors.New("the agent closed the stream without answering")
	errNoTask   = errors.New("the agent's stream ended before it created a task")
)

// upstream is the one conversation every kind of run has with an agent:
// a run's message (drive), the answer to a sign-in (forward), a run taken
// over (reattach), a team member's part, and a resume that cancels. It
// yields the agent's events as they come; when the opening's events end
// while the consumer still wants more, it follows the task with GetTask
// (backing off from PollInitial to PollMax, each call bounded by
// RequestTimeout) until the consumer stops. It runs on the consumer's
// goroutine and starts none of its own.
//
// It ends with one error, after which it yields nothing: the stream's or
// the send's when the agent never answered (errNoAnswer for a stream that
// closed empty), the stream's or errNoTask when no task was named to
// follow, ctx's, or that of the third GetTask in a row to fail.
func upstream(ctx context.Context, agent Agent, spec *AgentSpec, op *opening) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		id := op.poll
		switch {
		case op.cancel != "":
			task, _, err := cancelOrGet(ctx, agent, spec.RequestTimeout, op.cancel, true)
			yield(task, err)
			return
		case op.subscribe != "":
			id = op.subscribe
			if agent.Streaming() {
				for ev, err := range agent.Subscribe(ctx, id) {
					if err != nil {
						break // not attachable: poll instead
					}
					if !yield(ev, nil) {
						return
					}
				}
			}
		case op.msg != nil:
			id = op.msg.TaskID // a message to a task: that task is followed
			ctx = extend(ctx, agent, op)
			answered := false
			var broke error
			for ev, err := range send(ctx, agent, op.msg) {
				if err != nil {
					broke = err
					break
				}
				answered = true
				if tid, _, _ := progress(ev); tid != "" {
					id = tid
				}
				ev = completedTask(ctx, agent, spec.RequestTimeout, ev)
				if !yield(ev, nil) {
					return
				}
			}
			switch {
			case !answered:
				yield(nil, cmp.Or(broke, errNoAnswer))
				return
			case op.streamOnly:
				return
			case id == "":
				yield(nil, cmp.Or(broke, errNoTask))
				return
			case broke != nil && ctx.Err() == nil && op.brokeOff != nil:
				op.brokeOff(broke)
			}
		}
		if err := pollTask(ctx, spec, agent, id, func(t *a2a.Task) bool { return yield(t, nil) }); err != nil {
			yield(nil, err)
		}
	}
}

// send delivers msg over the agent's stream, or, for an agent without
// streaming, as a blocking send that returns as soon as the task exists:
// the same flow as a stream, without holding one long call.
func send(ctx context.Context, agent Agent, msg *a2a.Message) iter.Seq2[a2a.Event, error] {
	if agent.Streaming() {
		return agent.SendStreaming(ctx, msg)
	}
	return func(yield func(a2a.Event, error) bool) {
		yield(agent.Send(ctx, msg, true))
	}
}

// extend applies the bridge's A2A extension when the agent declares it:
// the request asks for it (A2A-Extensions) and the message carries the
// client's state (without the bridge's key), context, forwarded props and
// frontend tools.
func extend(ctx context.Context, agent Agent, op *opening) context.Context {
	if op.in == nil || !agent.DeclaresExtension(mapping.ExtensionURI) {
		return ctx
	}
	msg := op.msg
	if msg.Metadata == nil {
		msg.Metadata = map[string]any{}
	}
	msg.Metadata[mapping.ExtensionURI] = mapping.ExtensionMetadata(op.in, op.stateKey)
	return a2a.WithHeaders(ctx, map[string]string{"A2A-Extensions": mapping.ExtensionURI})
}

// pollTask follows a task with GetTask (each call bounded by the request
// timeout), backing off from PollInitial to PollMax, until next returns
// false. It returns what stopped it otherwise: ctx's end, or the error of
// the third failed call in a row.
func pollTask(ctx context.Context, spec *AgentSpec, agent Agent, id a2a.TaskID, next func(*a2a.Task) bool) error {
	retry, failures := retry.Backoff{Next: spec.PollInitial, Max: spec.PollMax}, 0
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		task, err := getTask(ctx, agent, spec.RequestTimeout, id)
		if err != nil {
			failures++
			if ctx.Err() != nil || failures >= 3 {
				return err
			}
		} else {
			failures = 0
			if !next(task) {
				return nil
			}
		}
		if !retry.Sleep(ctx.Done()) {
			return ctx.Err()
		}
	}
}

// getTask and cancelTask are the unary A2A calls, each bounded by timeout
// (none when it is not positive). Every other file reaches the agent
// through them, upstream or cancelOrGet.
func getTask(ctx context.Context, agent Agent, timeout time.Duration, id a2a.TaskID) (*a2a.Task, error) {
	ctx, cancel := bounded(ctx, timeout)
	defer cancel()
	return agent.GetTask(ctx, id)
}

func cancelTask(ctx context.Context, agent Agent, timeout time.Duration, id a2a.TaskID) (*a2a.Task, error) {
	ctx, cancel := bounded(ctx, timeout)
	defer cancel()
	return agent.CancelTask(ctx, id)
}

func bounded(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, timeout)
}

// cancelOrGet asks the agent to cancel task id; when it refuses (the task
// already ended, or cannot be cancelled) it asks where the task is
// instead. requested says the agent took the cancel. A task the agent
// took the cancel for but has not finished cancelling is reported
// cancelled; with ending, so is any task not yet terminal — the caller
// ends its run cancelled whatever the agent says.
func cancelOrGet(ctx context.Context, agent Agent, timeout time.Duration, id a2a.TaskID, ending bool) (task *a2a.Task, requested bool, err error) {
	task, err = cancelTask(ctx, agent, timeout, id)
	requested = err == nil
	if err != nil {
		task, err = getTask(ctx, agent, timeout, id)
	}
	if err != nil {
		return nil, requested, err
	}
	if st := task.Status.State; (st == "" || !a2a.IsTerminal(st)) && (requested || ending) {
		task.Status = a2a.TaskStatus{State: a2a.TaskStateCanceled}
	}
	return task, requested, nil
}

// progress reads an A2A event's task id and state, and whether the state
// ends a run's part (terminal or interrupted).
func progress(ev a2a.Event) (a2a.TaskID, a2a.TaskState, bool) {
	var id a2a.TaskID
	var st a2a.TaskState
	switch e := ev.(type) {
	case *a2a.Task:
		id, st = e.ID, e.Status.State
	case *a2a.StatusUpdate:
		id, st = e.TaskID, e.Status.State
	case *a2a.ArtifactUpdate:
		id = e.TaskID
	}
	return id, st, a2a.IsTerminal(st) || a2a.IsInterrupted(st)
}

// upstreamFailure is the RUN_ERROR (or a member's SUBAGENT_ERROR) code and
// message of agent name's upstream that stopped with err on a context that
// ended with cause. timedOut says the run or idle timeout fired: the
// caller then cancels the A2A task (cancelAbandoned), since nobody will
// see the rest of it.
func upstreamFailure(name string, cause, err error) (code, message string, timedOut bool) {
	if errors.Is(cause, errRunTimeout) || errors.Is(cause, errIdleTimeout) {
		return agui.CodeAgentTimeout, fmt.Sprintf("agent %q: %v; the A2A task was cancelled", name, cause), true
	}
	info := a2a.Classify(err)
	return info.Code, fmt.Sprintf("agent %q: %s", name, info.Message), false
}

// cancelAbandoned asks the agent to cancel a task its run gave up on (a
// timeout, a broken limit), on ctx — detached from the run's, which may
// have ended — within timeout. A refusal is only logged.
func cancelAbandoned(ctx context.Context, agent Agent, timeout time.Duration, id a2a.TaskID, log *slog.Logger) {
	if _, err := cancelTask(ctx, agent, timeout, id); err != nil {
		log.Warn("cancel the task the run gave up on", "err", err)
	}
}

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
	task, err := getTask(ctx, agent, timeout, st.TaskID)
	if err != nil || task == nil || task.Status.State != a2a.TaskStateCompleted {
		return ev
	}
	if task.Status.Message == nil {
		task.Status.Message = st.Status.Message
	}
	return task
}
