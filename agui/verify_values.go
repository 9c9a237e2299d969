package agui

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER; 1.0 rejects a
// timestamp outside ±(2^53−1) (§1).
const maxSafeInteger = 1<<53 - 1

// textRoles are the roles TEXT_MESSAGE_START accepts on ≥ 0.0.37. "tool"
// is listed by the docs but fatal on every client (§2.2, matrix row 33).
var textRoles = map[string]bool{RoleDeveloper: true, RoleSystem: true, RoleAssistant: true, RoleUser: true}

// knownTo0036 reports whether ≤ 0.0.36 knows the event type; its zod parse
// rejects any other type (§2.0, §6.6).
func knownTo0036(t EventType) bool {
	switch t {
	case EventActivitySnapshot, EventActivityDelta,
		EventReasoningStart, EventReasoningMessageStart, EventReasoningMessageContent,
		EventReasoningMessageEnd, EventReasoningMessageChunk, EventReasoningEnd, EventReasoningEncryptedValue,
		EventSubagentStarted, EventSubagentFinished, EventSubagentError:
		return false
	}
	return true
}

// checkValues is the schema stage: what the generation's zod parse (0.0.x)
// or enforce stage (1.0) rejects in the event's values, independent of
// order (§6.3). Where the two differ only in warnings (unknown members
// stripped, unknown patch ops removed) the event passes: only what makes
// runAgent() throw fails.
//
// A required string that is empty is treated as missing. zod would accept
// "", but Go cannot tell absent from empty, and an empty id or name is a
// producer bug on every generation, so the bridge must not write one.
func (v *Verifier) checkValues(e Event) error {
	t := e.Type()
	if v.gen == Gen0_0_36 && !knownTo0036(t) {
		return v.fail(t, RuleUnknownType, "unknown event type for clients ≤ 0.0.36")
	}
	b := BaseOf(e)
	if v.gen == Gen1_0 && (b.Timestamp > maxSafeInteger || b.Timestamp < -maxSafeInteger) {
		return v.fail(t, RuleTimestamp, "timestamp %d is outside ±(2^53−1)", b.Timestamp)
	}
	required := func(name, value string) error {
		if value == "" {
			return v.fail(t, RuleRequired, "%s is required", name)
		}
		return nil
	}
	switch ev := e.(type) {
	case *RunStarted:
		return firstErr(required("threadId", ev.ThreadID), required("runId", ev.RunID))
	case *RunFinished:
		if err := firstErr(required("threadId", ev.ThreadID), required("runId", ev.RunID)); err != nil {
			return err
		}
		// ≤ 0.0.36 does not know outcome and strips it (matrix rows 13–16).
		if ev.Outcome != nil && v.gen != Gen0_0_36 {
			return v.checkOutcome(t, ev.Outcome)
		}
	case *StepStarted:
		return required("stepName", ev.StepName)
	case *StepFinished:
		return required("stepName", ev.StepName)
	case *TextMessageStart:
		if err := required("messageId", ev.MessageID); err != nil {
			return err
		}
		return v.checkTextRole(t, ev.Role, true)
	case *TextMessageContent:
		if err := required("messageId", ev.MessageID); err != nil {
			return err
		}
		if v.gen == Gen0_0_36 && ev.Delta == "" {
			return v.fail(t, RuleEmptyDelta, "delta must not be empty")
		}
	case *TextMessageEnd:
		return required("messageId", ev.MessageID)
	case *TextMessageChunk:
		return v.checkTextRole(t, ev.Role, false)
	case *ToolCallStart:
		return firstErr(required("toolCallId", ev.ToolCallID), required("toolCallName", ev.ToolCallName))
	case *ToolCallArgs:
		return required("toolCallId", ev.ToolCallID)
	case *ToolCallEnd:
		return required("toolCallId", ev.ToolCallID)
	case *ToolCallResult:
		if err := firstErr(required("messageId", ev.MessageID), required("toolCallId", ev.ToolCallID)); err != nil {
			return err
		}
		if ev.Role != "" && ev.Role != RoleTool {
			return v.fail(t, RuleRole, "role must be %q, not %q", RoleTool, ev.Role)
		}
	case *StateDelta:
		return v.checkPatch(t, "delta", ev.Delta)
	case *MessagesSnapshot:
		for i, m := range ev.Messages {
			if err := v.checkSnapshotMessage(t, fmt.Sprintf("messages[%d]", i), m); err != nil {
				return err
			}
		}
	case *ActivitySnapshot:
		if err := firstErr(required("messageId", ev.MessageID), required("activityType", ev.ActivityType)); err != nil {
			return err
		}
		if ev.Content == nil {
			return v.fail(t, RuleActivityContent, "content must be a JSON object, not null")
		}
	case *ActivityDelta:
		if err := firstErr(required("messageId", ev.MessageID), required("activityType", ev.ActivityType)); err != nil {
			return err
		}
		return v.checkPatch(t, "patch", ev.Patch)
	case *Custom:
		return required("name", ev.Name)
	case *ReasoningStart:
		return required("messageId", ev.MessageID)
	case *ReasoningMessageStart:
		if err := required("messageId", ev.MessageID); err != nil {
			return err
		}
		if ev.Role != RoleReasoning {
			return v.fail(t, RuleRole, "role must be %q, not %q", RoleReasoning, ev.Role)
		}
	case *ReasoningMessageContent:
		return required("messageId", ev.MessageID)
	case *ReasoningMessageEnd:
		return required("messageId", ev.MessageID)
	case *ReasoningEnd:
		return required("messageId", ev.MessageID)
	case *ReasoningEncryptedValue:
		if ev.Subtype != "message" && ev.Subtype != "tool-call" {
			return v.fail(t, RuleValue, `subtype must be "message" or "tool-call", not %q`, ev.Subtype)
		}
		return required("entityId", ev.EntityID)
	case *SubagentStarted:
		return firstErr(required("subagentRunId", ev.SubagentRunID), required("name", ev.Name))
	case *SubagentFinished:
		if err := required("subagentRunId", ev.SubagentRunID); err != nil {
			return err
		}
		if o := ev.Outcome; o != nil && o.Type != "success" && o.Type != "suspended" {
			return v.fail(t, RuleOutcome, `outcome type must be "success" or "suspended", not %q`, o.Type)
		}
	case *SubagentError:
		return required("subagentRunId", ev.SubagentRunID)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkTextRole: ≤ 0.0.36 requires the literal "assistant" on
// TEXT_MESSAGE_START (matrix row 47); later clients default an absent role
// to assistant; "tool" is fatal everywhere (row 33).
func (v *Verifier) checkTextRole(t EventType, role string, start bool) error {
	switch {
	case role == "" && start && v.gen == Gen0_0_36:
		return v.fail(t, RuleRole, `role is required (and must be "assistant") for clients ≤ 0.0.36`)
	case role == "":
		return nil
	case v.gen == Gen0_0_36 && role != RoleAssistant:
		return v.fail(t, RuleRole, `role must be "assistant" for clients ≤ 0.0.36, not %q`, role)
	case !textRoles[role]:
		return v.fail(t, RuleRole, "role %q is not one of developer, system, assistant, user", role)
	}
	return nil
}

// checkOutcome validates RUN_FINISHED.outcome on 0.0.59 and 1.0 (§2.1).
// 0.0.59's variants are .strict() and know only success and interrupt.
func (v *Verifier) checkOutcome(t EventType, o *Outcome) error {
	switch o.Type {
	case OutcomeSuccess:
	case OutcomeInterrupt:
		if len(o.Interrupts) == 0 {
			return v.fail(t, RuleOutcome, "an interrupt outcome needs at least one interrupt")
		}
		for i, in := range o.Interrupts {
			if in.ID == "" || in.Reason == "" {
				return v.fail(t, RuleOutcome, "interrupts[%d] needs an id and a reason", i)
			}
		}
	case OutcomeCancelled:
		if v.gen != Gen1_0 {
			return v.fail(t, RuleOutcome, "the cancelled outcome exists only for 1.0 clients")
		}
	default:
		return v.fail(t, RuleOutcome, "unknown outcome type %q", o.Type)
	}
	if v.gen == Gen0_0_59 {
		if len(o.PendingToolCallIDs) > 0 {
			return v.fail(t, RuleOutcome, "pendingToolCallIds exists only for 1.0 clients")
		}
		if o.Type == OutcomeSuccess && len(o.Interrupts) > 0 {
			return v.fail(t, RuleOutcome, "a success outcome cannot carry interrupts")
		}
	}
	return nil
}

// checkPatch validates RFC 6902 operations the way 1.0 does (§2.4): a
// malformed JSON pointer is fatal, an unknown op is only removed with a
// warning, add/replace/test need a value. 0.0.x takes any array items.
//
// From is optional in Go, so a move or copy from the document root ("")
// cannot be written; it is reported as missing.
func (v *Verifier) checkPatch(t EventType, member string, ops []PatchOp) error {
	if v.gen != Gen1_0 {
		return nil
	}
	for i, op := range ops {
		switch op.Op {
		case "add", "replace", "test":
			if len(op.Value) == 0 {
				return v.fail(t, RulePatch, "%s[%d]: %q needs a value", member, i, op.Op)
			}
		case "move", "copy":
			if !isJSONPointer(op.From) || op.From == "" {
				return v.fail(t, RulePatch, "%s[%d]: from %q is not a JSON pointer", member, i, op.From)
			}
		case "remove":
		default:
			continue // dropped by the client with a warning
		}
		if !isJSONPointer(op.Path) {
			return v.fail(t, RulePatch, "%s[%d]: path %q is not a JSON pointer (RFC 6901)", member, i, op.Path)
		}
	}
	return nil
}

// isJSONPointer reports whether p is an RFC 6901 pointer: "" or "/"-led
// tokens where "~" is only ever followed by 0 or 1.
func isJSONPointer(p string) bool {
	if p == "" {
		return true
	}
	if p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return false
		}
	}
	return true
}

// checkSnapshotMessage validates one MESSAGES_SNAPSHOT message against the
// generation's message union (§3.2): 1.0 validates these strictly, and
// 0.0.x's zod union rejects unknown roles and missing content.
func (v *Verifier) checkSnapshotMessage(t EventType, path string, m Message) error {
	bad := func(format string, args ...any) error {
		return v.fail(t, RuleMessage, "%s: %s", path, fmt.Sprintf(format, args...))
	}
	if m.ID == "" {
		return bad("id is required")
	}
	if !knownRoles[m.Role] || (v.gen == Gen0_0_36 && (m.Role == RoleActivity || m.Role == RoleReasoning)) {
		return bad("unknown role %q", m.Role)
	}
	c := m.Content
	switch m.Role {
	case RoleAssistant:
		if c != nil && c.Kind != ContentText {
			return bad("assistant content must be a string")
		}
	case RoleDeveloper, RoleSystem, RoleReasoning:
		if c == nil || c.Kind != ContentText {
			return bad("%s content must be a string", m.Role)
		}
	case RoleUser, RoleTool:
		if m.Role == RoleTool && m.ToolCallID == "" {
			return bad("toolCallId is required on tool messages")
		}
		if c == nil || c.Kind == ContentObject {
			return bad("%s content must be a string or content parts", m.Role)
		}
		if c.Kind == ContentParts {
			if m.Role == RoleTool && v.gen != Gen1_0 {
				return bad("content parts on tool messages exist only for 1.0 clients")
			}
			for i, p := range c.Parts {
				if err := validatePart(p, fmt.Sprintf("%s.content[%d]", path, i), v.gen == Gen1_0); err != nil {
					return v.fail(t, RuleMessage, "%s: %s", err.Field, err.Message)
				}
			}
		}
	case RoleActivity:
		if m.ActivityType == "" {
			return bad("activityType is required on activity messages")
		}
		if c == nil || c.Kind != ContentObject || (len(c.Object) > 0 && !strings.HasPrefix(string(c.Object), "{")) {
			return bad("activity content must be a JSON object")
		}
	}
	for i, call := range m.ToolCalls {
		if call.ID == "" || call.Type != "function" || call.Function.Name == "" {
			return bad(`toolCalls[%d] needs an id, type "function" and a function name`, i)
		}
	}
	return nil
}

func isChunk(t EventType) bool {
	return t == EventTextMessageChunk || t == EventToolCallChunk || t == EventReasoningMessageChunk
}

// closesAllLanes and closesOwnLane list what auto-closes an open chunk
// stream (§6.4). RAW, ACTIVITY_*, REASONING_ENCRYPTED_VALUE and
// SUBAGENT_STARTED leave it open.
func closesAllLanes(t EventType) bool {
	switch t {
	case EventRunStarted, EventRunFinished, EventRunError, EventMessagesSnapshot:
		return true
	}
	return false
}

func closesOwnLane(t EventType) bool {
	switch t {
	case EventTextMessageStart, EventTextMessageContent, EventTextMessageEnd,
		EventToolCallStart, EventToolCallArgs, EventToolCallEnd, EventToolCallResult,
		EventStateSnapshot, EventStateDelta, EventCustom, EventStepStarted, EventStepFinished,
		EventReasoningStart, EventReasoningMessageStart, EventReasoningMessageContent,
		EventReasoningMessageEnd, EventReasoningEnd:
		return true
	}
	return false
}

// step verifies and applies one (expanded) event.
func (v *Verifier) step(e Event) error {
	if err := v.verify(e); err != nil {
		return err
	}
	v.apply(e)
	return nil
}

// expand is the client's transformChunks stage (§6.4) followed by the
// verifier, for one input event: it synthesizes the START/CONTENT/END
// events a chunk stands for and the END that closes an open chunk stream.
// It runs on a copy of the verifier (see prepare).
func (v *Verifier) expand(e Event) error {
	switch ev := e.(type) {
	case *TextMessageChunk:
		return v.textChunk(ev)
	case *ToolCallChunk:
		return v.toolCallChunk(ev)
	case *ReasoningMessageChunk:
		return v.reasoningChunk(ev)
	}
	t := e.Type()
	switch {
	case closesAllLanes(t):
		// Sorted so the first error reported is deterministic.
		for _, lane := range slices.Sorted(maps.Keys(v.lanes)) {
			if err := v.closeLane(lane); err != nil {
				return err
			}
		}
	case closesOwnLane(t):
		if err := v.closeLane(v.laneOf(BaseOf(e).SubagentRunID)); err != nil {
			return err
		}
	case v.gen == Gen1_0 && (t == EventSubagentFinished || t == EventSubagentError):
		if err := v.closeLane(BaseOf(e).SubagentRunID); err != nil {
			return err
		}
	}
	return v.step(e)
}

// laneOf is the lane an event with subagentRunId tag belongs to: one lane
// per producer on 1.0, a single lane on 0.0.x.
func (v *Verifier) laneOf(tag string) string {
	if v.gen != Gen1_0 {
		return ""
	}
	return tag
}

// chunkLane finds the lane a chunk continues or opens. On 1.0 an untagged
// chunk without an id may continue the only open lane, but is ambiguous
// when several are open.
func (v *Verifier) chunkLane(t EventType, tag, id string) (string, error) {
	if v.gen != Gen1_0 || tag != "" {
		return v.laneOf(tag), nil
	}
	if id != "" {
		if s, ok := v.lanes[""]; ok && s.id == id {
			return "", nil
		}
		for _, lane := range slices.Sorted(maps.Keys(v.lanes)) {
			if v.lanes[lane].id == id {
				return lane, nil
			}
		}
		return "", nil
	}
	if _, ok := v.lanes[""]; ok || len(v.lanes) == 0 {
		return "", nil
	}
	if len(v.lanes) > 1 {
		return "", v.fail(t, RuleChunk, "ambiguous chunk: several subagent streams are open and it names neither an id nor a subagentRunId")
	}
	for lane := range v.lanes {
		return lane, nil
	}
	return "", nil
}

// closeLane synthesizes the END of the lane's open chunk stream.
func (v *Verifier) closeLane(lane string) error {
	s, ok := v.lanes[lane]
	if !ok {
		return nil
	}
	delete(v.lanes, lane)
	b := Base{SubagentRunID: s.tag}
	switch s.kind {
	case chunkText:
		return v.step(&TextMessageEnd{Base: b, MessageID: s.id})
	case chunkToolCall:
		return v.step(&ToolCallEnd{Base: b, ToolCallID: s.id})
	default:
		return v.step(&ReasoningMessageEnd{Base: b, MessageID: s.id})
	}
}

func (v *Verifier) textChunk(c *TextMessageChunk) error {
	t := c.Type()
	lane, err := v.chunkLane(t, c.SubagentRunID, c.MessageID)
	if err != nil {
		return err
	}
	b := Base{Metadata: c.Metadata, SubagentRunID: c.SubagentRunID}
	s, open := v.lanes[lane]
	if open && s.kind == chunkText && (c.MessageID == "" || c.MessageID == s.id) {
		if c.Role != "" && c.Role != s.role {
			return v.fail(t, RuleChunk, "role %q differs from %q of the message's first chunk", c.Role, s.role)
		}
		if c.Name != "" && c.Name != s.name {
			return v.fail(t, RuleChunk, "name %q differs from %q of the message's first chunk", c.Name, s.name)
		}
	} else {
		if err := v.closeLane(lane); err != nil {
			return err
		}
		if c.MessageID == "" {
			return v.fail(t, RuleChunk, "the first TEXT_MESSAGE_CHUNK must have a messageId")
		}
		role := c.Role
		if role == "" {
			role = RoleAssistant
		}
		if err := v.step(&TextMessageStart{Base: b, MessageID: c.MessageID, Role: role, Name: c.Name}); err != nil {
			return err
		}
		s = chunkStream{kind: chunkText, id: c.MessageID, role: role, name: c.Name, tag: c.SubagentRunID}
		v.lanes[lane] = s
	}
	if c.Delta == "" {
		return nil
	}
	return v.step(&TextMessageContent{Base: b, MessageID: s.id, Delta: c.Delta})
}

func (v *Verifier) toolCallChunk(c *ToolCallChunk) error {
	t := c.Type()
	lane, err := v.chunkLane(t, c.SubagentRunID, c.ToolCallID)
	if err != nil {
		return err
	}
	b := Base{Metadata: c.Metadata, SubagentRunID: c.SubagentRunID}
	s, open := v.lanes[lane]
	if open && s.kind == chunkToolCall && (c.ToolCallID == "" || c.ToolCallID == s.id) {
		if c.ToolCallName != "" && c.ToolCallName != s.toolCallName {
			return v.fail(t, RuleChunk, "toolCallName %q differs from %q of the call's first chunk", c.ToolCallName, s.toolCallName)
		}
		if c.ParentMessageID != "" && c.ParentMessageID != s.parentMessageID {
			return v.fail(t, RuleChunk, "parentMessageId %q differs from %q of the call's first chunk", c.ParentMessageID, s.parentMessageID)
		}
	} else {
		if err := v.closeLane(lane); err != nil {
			return err
		}
		if c.ToolCallID == "" || c.ToolCallName == "" {
			return v.fail(t, RuleChunk, "the first TOOL_CALL_CHUNK must have a toolCallId and a toolCallName")
		}
		if err := v.step(&ToolCallStart{Base: b, ToolCallID: c.ToolCallID, ToolCallName: c.ToolCallName, ParentMessageID: c.ParentMessageID}); err != nil {
			return err
		}
		s = chunkStream{kind: chunkToolCall, id: c.ToolCallID, toolCallName: c.ToolCallName, parentMessageID: c.ParentMessageID, tag: c.SubagentRunID}
		v.lanes[lane] = s
	}
	if c.Delta == "" {
		return nil
	}
	return v.step(&ToolCallArgs{Base: b, ToolCallID: s.id, Delta: c.Delta})
}

func (v *Verifier) reasoningChunk(c *ReasoningMessageChunk) error {
	t := c.Type()
	lane, err := v.chunkLane(t, c.SubagentRunID, c.MessageID)
	if err != nil {
		return err
	}
	b := Base{Metadata: c.Metadata, SubagentRunID: c.SubagentRunID}
	s, open := v.lanes[lane]
	if !open || s.kind != chunkReasoning || (c.MessageID != "" && c.MessageID != s.id) {
		if err := v.closeLane(lane); err != nil {
			return err
		}
		if c.MessageID == "" {
			return v.fail(t, RuleChunk, "the first REASONING_MESSAGE_CHUNK must have a messageId")
		}
		if err := v.step(&ReasoningMessageStart{Base: b, MessageID: c.MessageID, Role: RoleReasoning}); err != nil {
			return err
		}
		s = chunkStream{kind: chunkReasoning, id: c.MessageID, tag: c.SubagentRunID}
		v.lanes[lane] = s
	}
	if c.Delta == "" {
		return nil
	}
	return v.step(&ReasoningMessageContent{Base: b, MessageID: s.id, Delta: c.Delta})
}
