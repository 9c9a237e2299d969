package tasks

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// RUN_ERROR codes of the per-run limits (AgentSpec.MaxEventBytes,
// AgentSpec.MaxStateBytes).
const (
	CodeEventTooLarge = agui.CodeEventTooLarge
	CodeStateTooLarge = agui.CodeStateTooLarge
)

// eventSize is what an A2A event carries for the client: the text, data
// and file bytes of its parts (a task's history is not counted: it
// repeats what earlier events carried, and is not forwarded).
func eventSize(ev a2a.Event) int {
	n := 0
	add := func(parts []*a2a.Part) {
		for _, p := range parts {
			if p == nil {
				continue
			}
			switch p.Content.(type) {
			case a2a.TextPart:
				n += len(p.Text())
			case a2a.RawPart:
				n += len(p.Raw())
			case a2a.URLPart:
				n += len(p.URL())
			case a2a.DataPart:
				b, _ := json.Marshal(p.Data())
				n += len(b)
			}
		}
	}
	msg := func(m *a2a.Message) {
		if m != nil {
			add(m.Parts)
		}
	}
	switch e := ev.(type) {
	case *a2a.Message:
		msg(e)
	case *a2a.Task:
		msg(e.Status.Message)
		for _, a := range e.Artifacts {
			if a != nil {
				add(a.Parts)
			}
		}
	case *a2a.StatusUpdate:
		msg(e.Status.Message)
	case *a2a.ArtifactUpdate:
		if e.Artifact != nil {
			add(e.Artifact.Parts)
		}
	}
	return n
}

// eventTooLarge checks an upstream event of agent name against its
// MaxEventBytes (limit; zero: none) before it is translated.
func eventTooLarge(name string, limit int, ev a2a.Event) (code, message string) {
	if limit > 0 {
		if n := eventSize(ev); n > limit {
			return CodeEventTooLarge, fmt.Sprintf("agent %q sent an event of %d bytes; the limit is %d", name, n, limit)
		}
	}
	return "", ""
}

// stateTooLarge checks the shared state a translation (out) of agent
// name's event changed against MaxStateBytes (limit; zero: none).
func stateTooLarge(name string, limit int, out []agui.Event, state func() json.RawMessage) (code, message string) {
	if limit <= 0 || !slices.ContainsFunc(out, isStateEvent) {
		return "", ""
	}
	if n := len(state()); n > limit {
		return CodeStateTooLarge, fmt.Sprintf("agent %q grew the shared state to %d bytes; the limit is %d", name, n, limit)
	}
	return "", ""
}

func isStateEvent(e agui.Event) bool {
	t := e.Type()
	return t == agui.EventStateSnapshot || t == agui.EventStateDelta
}

// refuseEvent ends the run with RUN_ERROR code: the agent broke a limit.
// The A2A task is cancelled (when known), since nobody will see the rest
// of it; the thread stays usable for the next run.
func (d *driver) refuseEvent(code, message string) {
	d.log.Warn("agent broke a run limit", "code", code, "detail", message)
	if d.agent != nil { // a team's members cancel their own (team.go)
		d.cancelTask()
	}
	d.emit(d.tr.Fail(code, message))
}
