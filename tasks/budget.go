package tasks

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// RUN_ERROR codes of the per-run limits (AgentSpec.MaxEventBytes,
// AgentSpec.MaxStateBytes, AgentSpec.MaxRunBytes).
const (
	CodeEventTooLarge = agui.CodeEventTooLarge
	CodeStateTooLarge = agui.CodeStateTooLarge
	CodeRunTooLarge   = agui.CodeRunTooLarge
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

// eventTooLarge checks an upstream event of agent name, of size bytes
// (eventSize), against its MaxEventBytes (limit; zero: none) before it is
// translated.
func eventTooLarge(name string, limit, size int) (code, message string) {
	if limit > 0 && size > limit {
		return CodeEventTooLarge, fmt.Sprintf("agent %q sent an event of %d bytes; the limit is %d", name, size, limit)
	}
	return "", ""
}

// runBudget is a run's output budget (AgentSpec.MaxRunBytes). Two counts
// are held against it: the bytes its agents sent (eventSize), which bound
// the text the translators keep, shown or held back; and the bytes of the
// events it journaled, which bound its share of the journal and of every
// reader's replay. Without it an agent that never stops grows the
// process's memory and the store until the run timeout.
type runBudget struct {
	limit     int64 // zero: none
	received  int64
	journaled int64
	// opened says the run's opening snapshots went by: the first
	// STATE_SNAPSHOT and MESSAGES_SNAPSHOT repeat the thread's record (its
	// state and conversation so far), which is not this run's output.
	openedState, openedMessages bool
}

// receive counts an upstream event of size bytes.
func (b *runBudget) receive(size int) { b.received += int64(size) }

// journal counts an encoded event of type typ the run journaled.
func (b *runBudget) journal(typ agui.EventType, size int) {
	switch {
	case typ == agui.EventStateSnapshot && !b.openedState:
		b.openedState = true
	case typ == agui.EventMessagesSnapshot && !b.openedMessages:
		b.openedMessages = true
	default:
		b.journaled += int64(size)
	}
}

// spent reports the budget crossed, as a RUN_ERROR code and message for
// the run of agent (or team) name; "" while within it.
func (b *runBudget) spent(name string) (code, message string) {
	if b.limit <= 0 || max(b.received, b.journaled) <= b.limit {
		return "", ""
	}
	return CodeRunTooLarge, fmt.Sprintf("the run of %q produced more than its budget of %d bytes (limits.maxRunBytes), so it was stopped and the agent's task cancelled", name, b.limit)
}

// stateTooLarge checks the shared state after a translation of agent
// name's event against MaxStateBytes (limit; zero: none). size is the
// translator's running count (StateSize), so the check costs nothing per
// event; it is made after every event, since a translator that reached the
// limit stops merging even where no state event goes out yet (a legacy
// client's state waits for an open message to close).
func stateTooLarge(name string, limit int, size func() int) (code, message string) {
	if limit <= 0 {
		return "", ""
	}
	if n := size(); n > limit {
		return CodeStateTooLarge, fmt.Sprintf("agent %q grew the shared state to %d bytes; the limit is %d", name, n, limit)
	}
	return "", ""
}

// recentMessages is the newest part of a conversation that a thread's
// record keeps: whole messages, newest first, while their JSON fits in
// limit (AgentSpec.MaxRunBytes; zero: all), at least the last one, and no
// tool result left without its call. The record is rewritten at every
// step of every run and the conversation opens each run of a client that
// sends only its new message (MESSAGES_SNAPSHOT), so a thread that kept
// every answer whole would cost each run more than the last: bounded, a
// long-lived thread costs the same at its thousandth run as at its tenth.
// A client that keeps its own history loses nothing (it is not sent a
// snapshot while it holds every message the record does).
func recentMessages(msgs []agui.Message, limit int64) []agui.Message {
	if limit <= 0 || len(msgs) < 2 || surelyFits(msgs, limit) {
		return msgs
	}
	first, size := len(msgs)-1, int64(0)
	for i := len(msgs) - 1; i >= 0; i-- {
		b, err := json.Marshal(msgs[i])
		if size += int64(len(b)); err != nil || size > limit && i < len(msgs)-1 {
			break
		}
		first = i
	}
	for first < len(msgs)-1 && msgs[first].Role == agui.RoleTool {
		first++
	}
	return msgs[first:]
}

// surelyFits says, without encoding them, that msgs' JSON takes no more
// than limit: every run's release asks, and encoding a long answer to
// learn that it fits was a few percent of the bridge's CPU on bulk
// streams. It bounds plain text messages only — a string's JSON is at most
// six bytes per byte of it (\u00XX), and keys and punctuation are within a
// fixed allowance per message and per tool call; a message with parts, an
// object or metadata is not bounded here, and the caller measures exactly.
func surelyFits(msgs []agui.Message, limit int64) bool {
	const perMessage, perCall = 256, 128
	var n int64
	for _, m := range msgs {
		if m.Metadata != nil || m.Content != nil && m.Content.Kind != agui.ContentText {
			return false
		}
		text := len(m.ID) + len(m.Role) + len(m.Name) + len(m.ToolCallID) + len(m.Error) + len(m.ActivityType) +
			len(m.EncryptedValue) + len(m.SubagentRunID)
		if m.Content != nil {
			text += len(m.Content.Text)
		}
		for _, c := range m.ToolCalls {
			if c.Metadata != nil {
				return false
			}
			text += len(c.ID) + len(c.Type) + len(c.EncryptedValue) + len(c.Function.Name) + len(c.Function.Arguments)
			n += perCall
		}
		if n += perMessage + 6*int64(text); n > limit {
			return false
		}
	}
	return true
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
	d.cancelTask()
	d.emit(d.tr.Fail(code, message))
}

// take is one agent event through the run's limits and a translator — a
// single agent's, or a team member's: the event's size against the
// agent's bound (maxEventBytes) and the run's budget, the translation, and
// the shared state it builds (stateSize) against the run's bound. When a
// limit broke it returns the limit's code and message, with what may still
// be shown: nothing when the event itself was too large, the events but
// the state when the state was (the thread then keeps the state it had).
func (d *driver) take(name string, maxEventBytes int, ev a2a.Event, translate func(a2a.Event) []agui.Event, stateSize func() int) (out []agui.Event, code, message string) {
	size := eventSize(ev)
	d.budget.receive(size)
	code, message = eventTooLarge(name, maxEventBytes, size)
	if code == "" {
		code, message = d.budget.spent(d.spec.Name)
	}
	if code != "" {
		return nil, code, message
	}
	out = translate(ev)
	if code, message := stateTooLarge(name, d.spec.MaxStateBytes, stateSize); code != "" {
		d.stateRejected = true
		return slices.DeleteFunc(out, isStateEvent), code, message
	}
	return out, "", ""
}

// answered is the first answer of any of the run's agents: the run is on,
// counted, and a waiting StartRun is told (accept). It reports whether
// this was the first.
func (d *driver) answered() bool {
	if d.reached {
		return false
	}
	d.reached = true
	if o := d.spec.Observer; o != nil {
		o.FirstEvent(time.Since(d.started))
	}
	d.accept()
	return true
}
