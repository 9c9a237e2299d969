package agents

import (
	"context"
	"iter"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// run carries what one Execute call needs to emit events; it lives only for
// the duration of that call.
type run struct {
	ctx   context.Context
	ec    *a2asrv.ExecutorContext
	yield func(a2a.Event, error) bool
	delay time.Duration
}

// execute adapts a script to the iterator a2asrv expects. The script returns
// when an emit or pause fails, which happens once the client (or a cancel)
// is gone.
func execute(ctx context.Context, ec *a2asrv.ExecutorContext, delay time.Duration, script func(r *run)) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		script(&run{ctx: ctx, ec: ec, yield: yield, delay: delay})
	}
}

// start publishes the task when this execution creates it. a2asrv requires a
// Task (or a single Message) as the first event of a new execution; on a
// follow-up turn the task already exists and must not be sent again.
func (r *run) start() bool {
	if r.ec.StoredTask != nil {
		return true
	}
	return r.emit(a2a.NewSubmittedTask(r.ec, r.ec.Message))
}

func (r *run) emit(ev a2a.Event) bool {
	if r.ctx.Err() != nil {
		return false
	}
	return r.yield(ev, nil)
}

// status emits a status update; text, when not empty, becomes an agent message.
func (r *run) status(state a2a.TaskState, text string) bool {
	var msg *a2a.Message
	if text != "" {
		msg = r.agentMessage(a2a.NewTextPart(text))
	}
	return r.emit(a2a.NewStatusUpdateEvent(r.ec, state, msg))
}

func (r *run) agentMessage(parts ...*a2a.Part) *a2a.Message {
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, r.ec, parts...)
}

// artifact emits a complete artifact in one event (append=false, lastChunk=true).
func (r *run) artifact(name string, parts ...*a2a.Part) bool {
	ev := a2a.NewArtifactEvent(r.ec, parts...)
	ev.Artifact.Name = name
	ev.LastChunk = true
	return r.emit(ev)
}

// namedPart is one whole artifact: its name and its only part.
type namedPart struct {
	name string
	part *a2a.Part
}

// artifactsThenComplete sends each artifact whole, pausing before each, then
// completes the task.
func (r *run) artifactsThenComplete(arts ...namedPart) {
	for _, a := range arts {
		if !r.pause() || !r.artifact(a.name, a.part) {
			return
		}
	}
	r.status(a2a.TaskStateCompleted, "")
}

// pause waits for the configured delay, so that a streaming client sees
// events arrive one by one. It reports false when the execution is canceled.
func (r *run) pause() bool {
	return sleep(r.ctx, r.delay)
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// cancelOnly implements AgentExecutor.Cancel for every demo agent. a2asrv
// writes these events into the running execution's pipe and cancels the
// execution's context, so the CANCELED update becomes the last event.
type cancelOnly struct{}

// Cancel implements [a2asrv.AgentExecutor].
func (cancelOnly) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// userText joins the text parts of the user's message.
func userText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		if t, ok := p.Content.(a2a.Text); ok {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(string(t))
		}
	}
	return strings.TrimSpace(b.String())
}

// splitWords cuts s into at most n pieces at word boundaries; joining the
// pieces gives s back.
func splitWords(s string, n int) []string {
	words := strings.SplitAfter(s, " ")
	if n > len(words) {
		n = len(words)
	}
	pieces := make([]string, 0, n)
	for i := range n {
		lo, hi := i*len(words)/n, (i+1)*len(words)/n
		pieces = append(pieces, strings.Join(words[lo:hi], ""))
	}
	return pieces
}
