package limits

import (
	"fmt"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// The limits of one run, as opposed to admission across runs: an agent's
// events and the shared state it builds have a size bound each, and a run
// has an output budget. Each check answers with the RUN_ERROR code and
// message that end the run's part ("" within the limit).

// EventTooLarge checks an event of size bytes that agent name sent against
// the agent's bound (limit; zero: none), before it is translated.
func EventTooLarge(name string, limit, size int) (code, message string) {
	if limit > 0 && size > limit {
		return agui.CodeEventTooLarge, fmt.Sprintf("agent %q sent an event of %d bytes; the limit is %d", name, size, limit)
	}
	return "", ""
}

// StateTooLarge checks the shared state agent name built against its bound
// (limit; zero: none). size is the translator's running count, so the
// check costs nothing per event; it is made after every event, since a
// translator that reached the limit stops merging even where no state
// event goes out yet (a legacy client's state waits for an open message
// to close).
func StateTooLarge(name string, limit int, size func() int) (code, message string) {
	if limit <= 0 {
		return "", ""
	}
	if n := size(); n > limit {
		return agui.CodeStateTooLarge, fmt.Sprintf("agent %q grew the shared state to %d bytes; the limit is %d", name, n, limit)
	}
	return "", ""
}

// RunBudget is a run's output budget (limits.maxRunBytes). Two counts are
// held against it: the bytes its agents sent, which bound the text the
// translators keep, shown or held back; and the bytes of the events it
// journaled, which bound its share of the journal and of every reader's
// replay. Without it an agent that never stops grows the process's memory
// and the store until the run timeout.
type RunBudget struct {
	Limit     int64 // zero: none
	received  int64
	journaled int64
	// The run's opening snapshots are not its output: the first
	// STATE_SNAPSHOT and MESSAGES_SNAPSHOT repeat the thread's record (its
	// state and conversation so far).
	openedState, openedMessages bool
}

// Receive counts an agent's event of size bytes.
func (b *RunBudget) Receive(size int) { b.received += int64(size) }

// Journal counts an encoded event of type typ the run journaled.
func (b *RunBudget) Journal(typ agui.EventType, size int) {
	switch {
	case typ == agui.EventStateSnapshot && !b.openedState:
		b.openedState = true
	case typ == agui.EventMessagesSnapshot && !b.openedMessages:
		b.openedMessages = true
	default:
		b.journaled += int64(size)
	}
}

// Spent reports the budget crossed by the run of agent (or team) name.
func (b *RunBudget) Spent(name string) (code, message string) {
	if b.Limit <= 0 || max(b.received, b.journaled) <= b.Limit {
		return "", ""
	}
	return agui.CodeRunTooLarge, fmt.Sprintf("the run of %q produced more than its budget of %d bytes (limits.maxRunBytes), so it was stopped and the agent's task cancelled", name, b.Limit)
}
