package tasks

import (
	"encoding/json"
	"strconv"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// output is how a run's members show in its stream: an agent's own run is
// that agent's translation (aloneOutput); a team's nests each member's in
// the team's run (teamOutput, mapping.Team). The engine is the same for
// both; only the shape of what clients read differs.
type output interface {
	// member returns the translator of a member joining the run.
	member(name, description string, opt mapping.Options) *mapping.Member
	// start opens the run (idempotent); pass hands on a member's events
	// as the run's; route shows a router's choice.
	start() []agui.Event
	pass(events []agui.Event) []agui.Event
	route(member string, score float64, reason string) []agui.Event
	// finish ends the run once every member's part is over; Fail ends it
	// with an error once its members' parts were ended.
	finish() []agui.Event
	Fail(code, message string) []agui.Event
	Done() bool
	Interrupts() []mapping.PendingInterrupt
	Conversation() []agui.Message
	State() json.RawMessage
	StateVersion() int64
	StateSize() int
	// FrontendCalls are the calls to the client's own tools the run left
	// pending, which the next run's tool messages answer.
	FrontendCalls() []mapping.ToolCallRef
	// resumable: a run taken over after a restart can continue from its
	// journal.
	resumable() bool
}

// teamOutput is a team's run.
type teamOutput struct{ *mapping.Team }

func (o teamOutput) member(name, description string, opt mapping.Options) *mapping.Member {
	return o.Member(name, description, opt)
}
func (o teamOutput) start() []agui.Event                   { return o.Start() }
func (o teamOutput) pass(events []agui.Event) []agui.Event { return o.Pass(events) }
func (o teamOutput) route(member string, score float64, reason string) []agui.Event {
	return o.Route(member, score, reason)
}
func (o teamOutput) finish() []agui.Event { return o.Finish() }

// FrontendCalls: a team's members' are not recorded, so a team run
// forwards no tool results.
func (o teamOutput) FrontendCalls() []mapping.ToolCallRef { return nil }

func (o teamOutput) resumable() bool { return o.Resumable() }

// aloneOutput is an agent's own run: its one member's translation, with
// the run-wide options (base), is the run.
type aloneOutput struct {
	base mapping.Options
	m    *mapping.Member
}

func (o *aloneOutput) member(_, _ string, opt mapping.Options) *mapping.Member {
	if o.m == nil {
		b := o.base
		opt.ThreadID, opt.RunID, opt.Turn, opt.V1, opt.Now, opt.Input = b.ThreadID, b.RunID, b.Turn, b.V1, b.Now, b.Input
		opt.Prior, opt.Reconcile, opt.PreviousView, opt.StateVersion = b.Prior, b.Reconcile, b.PreviousView, b.StateVersion
		o.m = mapping.Alone(opt)
	}
	return o.m
}

// run is the run's translator, made with the run-wide options alone when
// no member joined (a run with nothing to tell the agent, or one that
// failed before it reached it).
func (o *aloneOutput) run() *mapping.Member {
	if o.m == nil {
		o.member("", "", mapping.Options{Agent: o.base.Agent, StateKey: o.base.StateKey})
	}
	return o.m
}

func (o *aloneOutput) start() []agui.Event                        { return nil }
func (o *aloneOutput) pass(events []agui.Event) []agui.Event      { return events }
func (o *aloneOutput) route(string, float64, string) []agui.Event { return nil }
func (o *aloneOutput) finish() []agui.Event                       { return o.run().Complete() }
func (o *aloneOutput) Fail(code, message string) []agui.Event     { return o.run().Fail(code, message) }
func (o *aloneOutput) Done() bool                                 { return o.run().Done() }
func (o *aloneOutput) Interrupts() []mapping.PendingInterrupt     { return o.run().Interrupts() }
func (o *aloneOutput) Conversation() []agui.Message               { return o.run().Conversation() }
func (o *aloneOutput) State() json.RawMessage                     { return o.run().State() }
func (o *aloneOutput) StateVersion() int64                        { return o.run().StateVersion() }
func (o *aloneOutput) StateSize() int                             { return o.run().StateSize() }
func (o *aloneOutput) FrontendCalls() []mapping.ToolCallRef       { return o.run().FrontendCalls() }
func (o *aloneOutput) resumable() bool                            { return true }

// viewIn extracts the bridge's key from a stored shared state.
func viewIn(state json.RawMessage, key string) json.RawMessage {
	if key == "" {
		key = mapping.StateKey
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(state, &m) != nil {
		return nil
	}
	return m[key]
}

// turn tells the run's ids from those of the thread's previous run when
// the client reused its runId (CopilotKit resumes with the interrupted
// run's): where the run's journal starts, which a takeover knows too.
func (d *driver) turn() string {
	if d.thread.LastRunID == "" || d.thread.LastRunID != d.in.RunID {
		return ""
	}
	return strconv.FormatInt(d.thread.Active.After, 10)
}

// clientResults are the tool messages the client sent for the calls this
// run's resume approves (see resumePlan.echoed).
func (d *driver) clientResults() map[string]string {
	if d.plan.takeover {
		// The request holds them: a tool message for a call the run
		// answers got past checkToolResults only as such an echo.
		calls := map[string]bool{}
		for _, r := range d.thread.Active.Results {
			calls[r.Call.ToolCallID] = true
		}
		var echoed map[string]string
		for _, m := range d.in.Messages {
			if m.Role == agui.RoleTool && calls[m.ToolCallID] {
				if echoed == nil {
					echoed = map[string]string{}
				}
				if _, dup := echoed[m.ToolCallID]; !dup {
					echoed[m.ToolCallID] = m.ID
				}
			}
		}
		return echoed
	}
	if d.plan.resume == nil {
		return nil
	}
	return d.plan.resume.echoed
}
