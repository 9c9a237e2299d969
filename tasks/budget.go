package tasks

import (
	"slices"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/limits"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

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
	d.budget.Receive(size)
	code, message = limits.EventTooLarge(name, maxEventBytes, size)
	if code == "" {
		code, message = d.budget.Spent(d.spec.Name)
	}
	if code != "" {
		return nil, code, message
	}
	out = translate(ev)
	if code, message := limits.StateTooLarge(name, d.spec.MaxStateBytes, stateSize); code != "" {
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
