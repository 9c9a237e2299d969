package agui

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Generation is a generation of the TypeScript @ag-ui/client whose
// verifier a stream must satisfy (AGUI-PROTOCOL.md §0, §6.6).
type Generation int

const (
	// Gen1_0 is @ag-ui/client 1.0.0 (npm latest): schema enforcement,
	// reasoning open/close checks, subagents and ownership.
	Gen1_0 Generation = iota
	// Gen0_0_59 stands for 0.0.37 … 0.0.59: interleaving and several runs
	// per stream allowed, unknown event types fatal, subagents and
	// ownership (0.0.59), strict RUN_FINISHED outcomes.
	Gen0_0_59
	// Gen0_0_36 stands for ≤ 0.0.36: one text message or tool call open at
	// a time, one run per stream, no activity/reasoning/subagent events.
	Gen0_0_36
)

func (g Generation) String() string {
	switch g {
	case Gen1_0:
		return "1.0.0"
	case Gen0_0_59:
		return "0.0.59"
	case Gen0_0_36:
		return "0.0.36"
	}
	return fmt.Sprintf("Generation(%d)", int(g))
}

// Rules a VerifyError can name. They are stable identifiers for tests and
// metrics; the Message says the details.
const (
	// Lifecycle (§6.5 rules 1–6, §6.6).
	RuleFirstEvent       = "first-event"         // the first event is not RUN_STARTED or RUN_ERROR
	RuleAfterRunError    = "after-run-error"     // anything after RUN_ERROR (except a new RUN_STARTED on ≥ 0.0.37)
	RuleAfterRunFinished = "after-run-finished"  // anything after RUN_FINISHED but RUN_STARTED/RUN_ERROR
	RuleRunActive        = "run-already-active"  // RUN_STARTED while a run is active
	RuleOneRunPerStream  = "one-run-per-stream"  // a second RUN_STARTED on ≤ 0.0.36
	RuleFinishWhileOpen  = "finish-while-open"   // RUN_FINISHED with a step/message/call/subagent open
	RuleInsideText       = "inside-text-message" // ≤ 0.0.36: only CONTENT/END/RAW inside an open text message
	RuleInsideToolCall   = "inside-tool-call"    // ≤ 0.0.36: only ARGS/END/RAW inside an open tool call
	RuleTextOpen         = "text-already-open"   // TEXT_MESSAGE_START for an open id
	RuleTextNotOpen      = "text-not-open"       // CONTENT/END for an id that is not open
	RuleToolCallOpen     = "tool-call-already-open"
	RuleToolCallNotOpen  = "tool-call-not-open"
	RuleStepOpen         = "step-already-open"
	RuleStepNotOpen      = "step-not-open"
	RuleReasoningOpen    = "reasoning-already-open" // 1.0
	RuleReasoningNotOpen = "reasoning-not-open"     // 1.0
	RuleSubagent         = "subagent-lifecycle"     // §6.5 rule 17
	RuleOwnership        = "ownership"              // §6.5 rule 18
	RuleChunk            = "chunk"                  // §6.4 expansion errors

	// Values (the schema stage: zod parse on 0.0.x, enforce on 1.0; §6.3).
	RuleUnknownType     = "unknown-event-type" // fatal on 0.0.x
	RuleRequired        = "required-member"
	RuleRole            = "role"
	RuleEmptyDelta      = "empty-delta" // ≤ 0.0.36
	RuleOutcome         = "outcome"
	RuleTimestamp       = "timestamp"
	RulePatch           = "patch"
	RuleActivityContent = "activity-content"
	RuleMessage         = "snapshot-message"
	RuleValue           = "value" // any other value outside its enum
)

// VerifyError says that a client generation would fail the run on an event.
type VerifyError struct {
	Generation Generation
	Event      EventType
	Rule       string
	Message    string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("agui: @ag-ui/client %s rejects %s: %s [%s]", e.Generation, e.Event, e.Message, e.Rule)
}

// entity is a text message, tool call or reasoning span/message: whether it
// is open and who opened it first. The record outlives the close, because
// a re-open must agree with the original owner (§6.5 rule 18).
type entity struct {
	open bool
	// owner is the opener's subagentRunId; "" is the parent agent.
	owner string
}

type stepKey struct{ owner, name string }

type runPhase uint8

const (
	phaseNone runPhase = iota
	phaseActive
	phaseFinished
	phaseErrored
)

type chunkKind uint8

const (
	chunkText chunkKind = iota + 1
	chunkToolCall
	chunkReasoning
)

// chunkStream is the open stream of a chunk lane (§6.4): the START the
// client synthesized and what later chunks must agree with.
type chunkStream struct {
	kind            chunkKind
	id              string
	role, name      string // text
	toolCallName    string // tool call
	parentMessageID string // tool call
	tag             string // subagentRunId of the chunk that opened it
}

// Verifier is a Go port of the @ag-ui/client event verifier of one client
// generation (AGUI-PROTOCOL.md §6.5–§6.7), including the value checks of
// its schema stage and its chunk expansion (§6.4), so that "Check returns
// nil" means "that client's runAgent() would not throw on this event".
//
// A Verifier follows one stream. Check never changes it when it returns an
// error, so a caller that drops the rejected event can go on checking.
// It is not safe for concurrent use.
type Verifier struct {
	gen      Generation
	sawFirst bool
	phase    runPhase

	text          map[string]entity
	openText      int
	toolCalls     map[string]entity
	openToolCalls int
	steps         map[stepKey]struct{}
	spans         map[string]entity
	openSpans     int
	reasoning     map[string]entity
	openReasoning int
	// activities maps an activity message id to the owner recorded by its
	// last replacing snapshot.
	activities map[string]string
	// subagents maps a subagentRunId started in this run to whether it is
	// still active.
	subagents       map[string]bool
	activeSubagents int
	// lanes holds the open chunk stream per producer (1.0) or the single
	// lane "" (0.0.x).
	lanes map[string]chunkStream
}

// NewVerifier returns a verifier for one stream read by generation g.
func NewVerifier(g Generation) *Verifier {
	return &Verifier{
		gen:        g,
		text:       map[string]entity{},
		toolCalls:  map[string]entity{},
		steps:      map[stepKey]struct{}{},
		spans:      map[string]entity{},
		reasoning:  map[string]entity{},
		activities: map[string]string{},
		subagents:  map[string]bool{},
		lanes:      map[string]chunkStream{},
	}
}

// Generation returns the client generation v stands for.
func (v *Verifier) Generation() Generation { return v.gen }

// Check reports whether the client would accept e as the next event of the
// stream: nil, or a *VerifyError naming the rule it breaks. On success the
// event is applied to v; on error v is unchanged.
func (v *Verifier) Check(e Event) error {
	next, err := v.prepare(e)
	if err != nil {
		return err
	}
	v.commit(e, next)
	return nil
}

// prepare checks e without changing v. Most events are checked in place
// and applied by commit; an event that involves chunk expansion (a chunk,
// or anything while a chunk stream is open) may become several events, so
// it is run on a copy that commit swaps in. Splitting the two lets the
// Guard check one event against several generations atomically.
func (v *Verifier) prepare(e Event) (*Verifier, error) {
	if isNilEvent(e) {
		return nil, &VerifyError{Generation: v.gen, Rule: RuleRequired, Message: "nil event"}
	}
	if err := v.checkValues(e); err != nil {
		return nil, err
	}
	if len(v.lanes) == 0 && !isChunk(e.Type()) {
		return nil, v.verify(e)
	}
	next := v.clone()
	if err := next.expand(e); err != nil {
		if ve, ok := err.(*VerifyError); ok && ve.Event != e.Type() {
			ve.Message = fmt.Sprintf("the %s it expands to: %s", ve.Event, ve.Message)
			ve.Event = e.Type()
		}
		return nil, err
	}
	return next, nil
}

func (v *Verifier) commit(e Event, next *Verifier) {
	if next != nil {
		*v = *next
		return
	}
	v.apply(e)
}

func (v *Verifier) clone() *Verifier {
	c := *v
	c.text = maps.Clone(v.text)
	c.toolCalls = maps.Clone(v.toolCalls)
	c.steps = maps.Clone(v.steps)
	c.spans = maps.Clone(v.spans)
	c.reasoning = maps.Clone(v.reasoning)
	c.activities = maps.Clone(v.activities)
	c.subagents = maps.Clone(v.subagents)
	c.lanes = maps.Clone(v.lanes)
	return &c
}

func (v *Verifier) fail(t EventType, rule, format string, args ...any) error {
	return &VerifyError{Generation: v.gen, Event: t, Rule: rule, Message: fmt.Sprintf(format, args...)}
}

// tracksOwners reports whether the generation checks subagent attribution
// (0.0.59 and 1.0, §6.6). ≤ 0.0.36 strips subagentRunId.
func (v *Verifier) tracksOwners() bool { return v.gen != Gen0_0_36 }

// ownerOf is the key an event's producer is known by: its subagentRunId on
// generations that track owners, else "" (steps keyed by name only).
func (v *Verifier) ownerOf(e Event) string {
	if !v.tracksOwners() {
		return ""
	}
	return BaseOf(e).SubagentRunID
}

// disagrees reports whether an event tagged tag contradicts the recorded
// owner of a known entity. An absent tag never disagrees (§6.5 rule 18).
func (v *Verifier) disagrees(tag string, known bool, owner string) bool {
	return v.tracksOwners() && known && tag != "" && tag != owner
}

func ownerName(owner string) string {
	if owner == "" {
		return "the parent agent"
	}
	return fmt.Sprintf("subagent %q", owner)
}

// verify applies the ordering rules of §6.5/§6.6 to one event (already
// expanded) without changing v.
func (v *Verifier) verify(e Event) error {
	t := e.Type()
	switch {
	case v.phase == phaseErrored && (t != EventRunStarted || v.gen == Gen0_0_36):
		return v.fail(t, RuleAfterRunError, "the run has already errored with RUN_ERROR")
	case v.phase == phaseFinished && t != EventRunError && (t != EventRunStarted || v.gen == Gen0_0_36):
		return v.fail(t, RuleAfterRunFinished, "the run has already finished with RUN_FINISHED")
	case !v.sawFirst && t != EventRunStarted && t != EventRunError:
		return v.fail(t, RuleFirstEvent, "the first event must be RUN_STARTED")
	case v.sawFirst && t == EventRunStarted && v.gen == Gen0_0_36:
		return v.fail(t, RuleOneRunPerStream, "only one RUN_STARTED per stream")
	case t == EventRunStarted && v.phase == phaseActive:
		return v.fail(t, RuleRunActive, "a run is still active; finish it with RUN_FINISHED first")
	}
	if v.gen == Gen0_0_36 {
		if v.openText > 0 && t != EventTextMessageContent && t != EventTextMessageEnd && t != EventRaw {
			return v.fail(t, RuleInsideText, "text message %s is open; send TEXT_MESSAGE_END first", openIDs(v.text))
		}
		if v.openToolCalls > 0 && t != EventToolCallArgs && t != EventToolCallEnd && t != EventRaw {
			return v.fail(t, RuleInsideToolCall, "tool call %s is open; send TOOL_CALL_END first", openIDs(v.toolCalls))
		}
	}
	tag := BaseOf(e).SubagentRunID
	switch ev := e.(type) {
	case *RunFinished:
		return v.checkNothingOpen(t)

	case *TextMessageStart:
		ent, known := v.text[ev.MessageID]
		if ent.open {
			return v.fail(t, RuleTextOpen, "text message %q is already in progress", ev.MessageID)
		}
		if v.disagrees(tag, known, ent.owner) {
			return v.fail(t, RuleOwnership, "text message %q belongs to %s", ev.MessageID, ownerName(ent.owner))
		}
	case *TextMessageContent:
		return v.checkOpenText(t, ev.MessageID, tag)
	case *TextMessageEnd:
		return v.checkOpenText(t, ev.MessageID, tag)

	case *ToolCallStart:
		ent, known := v.toolCalls[ev.ToolCallID]
		if ent.open {
			return v.fail(t, RuleToolCallOpen, "tool call %q is already in progress", ev.ToolCallID)
		}
		if v.disagrees(tag, known, ent.owner) {
			return v.fail(t, RuleOwnership, "tool call %q belongs to %s", ev.ToolCallID, ownerName(ent.owner))
		}
		if v.tracksOwners() && ev.ParentMessageID != "" {
			if parent, ok := v.text[ev.ParentMessageID]; ok {
				if tag != "" && parent.owner != tag {
					return v.fail(t, RuleOwnership, "parent message %q belongs to %s", ev.ParentMessageID, ownerName(parent.owner))
				}
				if tag == "" && known && parent.owner != ent.owner {
					return v.fail(t, RuleOwnership, "re-opened tool call %q of %s under message %q of %s", ev.ToolCallID, ownerName(ent.owner), ev.ParentMessageID, ownerName(parent.owner))
				}
			}
		}
	case *ToolCallArgs:
		return v.checkOpenToolCall(t, ev.ToolCallID, tag)
	case *ToolCallEnd:
		return v.checkOpenToolCall(t, ev.ToolCallID, tag)

	case *StepStarted:
		if _, open := v.steps[stepKey{v.ownerOf(e), ev.StepName}]; open {
			return v.fail(t, RuleStepOpen, "step %q is already active", ev.StepName)
		}
	case *StepFinished:
		if _, open := v.steps[stepKey{v.ownerOf(e), ev.StepName}]; !open {
			for k := range v.steps {
				if k.name == ev.StepName {
					return v.fail(t, RuleStepNotOpen, "step %q is active for %s, not for %s", ev.StepName, ownerName(k.owner), ownerName(v.ownerOf(e)))
				}
			}
			return v.fail(t, RuleStepNotOpen, "step %q was not started", ev.StepName)
		}

	case *ReasoningStart:
		return v.checkReasoningStart(t, v.spans, "reasoning span", ev.MessageID, tag)
	case *ReasoningEnd:
		return v.checkReasoningOpen(t, v.spans, "reasoning span", ev.MessageID, tag)
	case *ReasoningMessageStart:
		return v.checkReasoningStart(t, v.reasoning, "reasoning message", ev.MessageID, tag)
	case *ReasoningMessageContent:
		return v.checkReasoningOpen(t, v.reasoning, "reasoning message", ev.MessageID, tag)
	case *ReasoningMessageEnd:
		return v.checkReasoningOpen(t, v.reasoning, "reasoning message", ev.MessageID, tag)
	case *ReasoningEncryptedValue:
		var ent entity
		var known bool
		if ev.Subtype == "tool-call" {
			ent, known = v.toolCalls[ev.EntityID]
		} else if ent, known = v.text[ev.EntityID]; !known {
			ent, known = v.reasoning[ev.EntityID]
		}
		if v.disagrees(tag, known, ent.owner) {
			return v.fail(t, RuleOwnership, "%q belongs to %s", ev.EntityID, ownerName(ent.owner))
		}

	case *ActivityDelta:
		owner, known := v.activities[ev.MessageID]
		if v.disagrees(tag, known, owner) {
			return v.fail(t, RuleOwnership, "activity %q belongs to %s", ev.MessageID, ownerName(owner))
		}

	case *SubagentStarted:
		if active, seen := v.subagents[tag]; seen {
			if active {
				return v.fail(t, RuleSubagent, "subagent %q is already active", tag)
			}
			return v.fail(t, RuleSubagent, "subagent %q already ran in this run", tag)
		}
		if p := ev.ParentSubagentRunID; p != "" {
			if _, seen := v.subagents[p]; !seen {
				return v.fail(t, RuleSubagent, "parent subagent %q was never started in this run", p)
			}
		}
	case *SubagentFinished, *SubagentError:
		if !v.subagents[tag] {
			return v.fail(t, RuleSubagent, "subagent %q is not active", tag)
		}
	}
	return nil
}

func (v *Verifier) checkOpenText(t EventType, id, tag string) error {
	ent, known := v.text[id]
	if !ent.open {
		return v.fail(t, RuleTextNotOpen, "no active text message with id %q", id)
	}
	if v.disagrees(tag, known, ent.owner) {
		return v.fail(t, RuleOwnership, "text message %q belongs to %s", id, ownerName(ent.owner))
	}
	return nil
}

func (v *Verifier) checkOpenToolCall(t EventType, id, tag string) error {
	ent, known := v.toolCalls[id]
	if !ent.open {
		return v.fail(t, RuleToolCallNotOpen, "no active tool call with id %q", id)
	}
	if v.disagrees(tag, known, ent.owner) {
		return v.fail(t, RuleOwnership, "tool call %q belongs to %s", id, ownerName(ent.owner))
	}
	return nil
}

// Reasoning open/close is checked by 1.0 only; 0.0.59 checks ownership
// only (§6.6, matrix rows 18 and 20).
func (v *Verifier) checkReasoningStart(t EventType, set map[string]entity, what, id, tag string) error {
	ent, known := set[id]
	if v.gen == Gen1_0 && ent.open {
		return v.fail(t, RuleReasoningOpen, "%s %q is already in progress", what, id)
	}
	if v.disagrees(tag, known, ent.owner) {
		return v.fail(t, RuleOwnership, "%s %q belongs to %s", what, id, ownerName(ent.owner))
	}
	return nil
}

func (v *Verifier) checkReasoningOpen(t EventType, set map[string]entity, what, id, tag string) error {
	ent, known := set[id]
	if v.gen == Gen1_0 && !ent.open {
		return v.fail(t, RuleReasoningNotOpen, "no active %s with id %q", what, id)
	}
	if v.disagrees(tag, known, ent.owner) {
		return v.fail(t, RuleOwnership, "%s %q belongs to %s", what, id, ownerName(ent.owner))
	}
	return nil
}

// checkNothingOpen is §6.5 rule 5, in the client's order.
func (v *Verifier) checkNothingOpen(t EventType) error {
	if len(v.steps) > 0 {
		names := make([]string, 0, len(v.steps))
		for k := range v.steps {
			names = append(names, k.name)
		}
		slices.Sort(names)
		return v.fail(t, RuleFinishWhileOpen, "steps are still active: %s", strings.Join(names, ", "))
	}
	if v.openText > 0 {
		return v.fail(t, RuleFinishWhileOpen, "text messages are still active: %s", openIDs(v.text))
	}
	if v.gen == Gen1_0 {
		if v.openReasoning > 0 {
			return v.fail(t, RuleFinishWhileOpen, "reasoning messages are still active: %s", openIDs(v.reasoning))
		}
		if v.openSpans > 0 {
			return v.fail(t, RuleFinishWhileOpen, "reasoning spans are still active: %s", openIDs(v.spans))
		}
	}
	if v.openToolCalls > 0 {
		return v.fail(t, RuleFinishWhileOpen, "tool calls are still active: %s", openIDs(v.toolCalls))
	}
	if v.tracksOwners() && v.activeSubagents > 0 {
		var ids []string
		for id, active := range v.subagents {
			if active {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		return v.fail(t, RuleFinishWhileOpen, "subagents are still active: %s", strings.Join(ids, ", "))
	}
	return nil
}

func openIDs(set map[string]entity) string {
	var ids []string
	for id, ent := range set {
		if ent.open {
			ids = append(ids, fmt.Sprintf("%q", id))
		}
	}
	slices.Sort(ids)
	return strings.Join(ids, ", ")
}

// apply records an event verify accepted.
func (v *Verifier) apply(e Event) {
	v.sawFirst = true
	tag := v.ownerOf(e)
	switch ev := e.(type) {
	case *RunStarted:
		v.resetRun()
		v.phase = phaseActive
	case *RunFinished:
		v.phase = phaseFinished
	case *RunError:
		v.phase = phaseErrored
	case *TextMessageStart:
		v.openText += open(v.text, ev.MessageID, tag)
	case *TextMessageEnd:
		v.openText -= closeEntity(v.text, ev.MessageID)
	case *ToolCallStart:
		v.openToolCalls += open(v.toolCalls, ev.ToolCallID, tag)
	case *ToolCallEnd:
		v.openToolCalls -= closeEntity(v.toolCalls, ev.ToolCallID)
	case *StepStarted:
		v.steps[stepKey{tag, ev.StepName}] = struct{}{}
	case *StepFinished:
		delete(v.steps, stepKey{tag, ev.StepName})
	case *ReasoningStart:
		v.openSpans += open(v.spans, ev.MessageID, tag)
	case *ReasoningEnd:
		v.openSpans -= closeEntity(v.spans, ev.MessageID)
	case *ReasoningMessageStart:
		v.openReasoning += open(v.reasoning, ev.MessageID, tag)
	case *ReasoningMessageEnd:
		v.openReasoning -= closeEntity(v.reasoning, ev.MessageID)
	case *ActivitySnapshot:
		if _, known := v.activities[ev.MessageID]; !known || ev.Replace == nil || *ev.Replace {
			v.activities[ev.MessageID] = tag
		}
	case *MessagesSnapshot:
		// The snapshot is authoritative for who owns what (§6.5 rule 18).
		for _, m := range ev.Messages {
			owner := ""
			if v.tracksOwners() {
				owner = m.SubagentRunID
			}
			switch m.Role {
			case RoleReasoning:
				setOwner(v.reasoning, m.ID, owner)
			case RoleActivity:
				v.activities[m.ID] = owner
			default:
				setOwner(v.text, m.ID, owner)
			}
			for _, c := range m.ToolCalls {
				setOwner(v.toolCalls, c.ID, owner)
			}
		}
	case *SubagentStarted:
		v.subagents[ev.SubagentRunID] = true
		v.activeSubagents++
	case *SubagentFinished:
		v.endSubagent(ev.SubagentRunID)
	case *SubagentError:
		v.endSubagent(ev.SubagentRunID)
	}
}

// open marks id open, recording owner if id is new, and returns 1 if that
// changed the number of open entities.
func open(set map[string]entity, id, owner string) int {
	ent, known := set[id]
	if ent.open {
		return 0
	}
	if !known {
		ent.owner = owner
	}
	ent.open = true
	set[id] = ent
	return 1
}

func closeEntity(set map[string]entity, id string) int {
	ent := set[id]
	if !ent.open {
		return 0
	}
	ent.open = false
	set[id] = ent
	return 1
}

func setOwner(set map[string]entity, id, owner string) {
	ent := set[id]
	ent.owner = owner
	set[id] = ent
}

func (v *Verifier) endSubagent(id string) {
	if v.subagents[id] {
		v.activeSubagents--
	}
	v.subagents[id] = false
}

// resetRun forgets everything of the previous run: the client's verifier
// state is per run (§6.5).
func (v *Verifier) resetRun() {
	clear(v.text)
	clear(v.toolCalls)
	clear(v.steps)
	clear(v.spans)
	clear(v.reasoning)
	clear(v.activities)
	clear(v.subagents)
	clear(v.lanes)
	v.openText, v.openToolCalls, v.openSpans, v.openReasoning, v.activeSubagents = 0, 0, 0, 0, 0
}
