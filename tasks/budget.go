package tasks

import (
	"fmt"
	"slices"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// RUN_ERROR codes of the per-run limits (AgentSpec.MaxEventBytes,
// AgentSpec.MaxStateBytes, AgentSpec.MaxRunBytes).
const (
	CodeEventTooLarge = agui.CodeEventTooLarge
	CodeStateTooLarge = agui.CodeStateTooLarge
	CodeRunTooLarge   = agui.CodeRunTooLarge
)

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

func isStateEvent(e agui.Event) bool {
	t := e.Type()
	return t == agui.EventStateSnapshot || t == agui.EventStateDelta
}

// take is one agent event through the run's limits and a translator — a
// single agent's, or a team member's: the event's size against the
// agent's bound (maxEventBytes) and the run's budget, the translation, and
// the shared state it builds (stateSize) against the run's bound. When a
// limit broke it returns the limit's code and message, with what may still
// be shown: nothing when the event itself was too large, the events but
// the state when the state was (the thread then keeps the state it had).
func (d *driver) take(name string, maxEventBytes int, ev a2a.Event, translate func(a2a.Event) []agui.Event, stateSize func() int) (out []agui.Event, code, message string) {
	size := mapping.EventSize(ev)
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
