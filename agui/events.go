package agui

import "encoding/json"

// EventType is the AG-UI event discriminator (the "type" member).
type EventType string

// The AG-UI 1.0 event types. THINKING_* and the draft META event are
// deliberately absent: the bridge never emits them (AGUI-PROTOCOL.md §2.0).
const (
	EventRunStarted              EventType = "RUN_STARTED"
	EventRunFinished             EventType = "RUN_FINISHED"
	EventRunError                EventType = "RUN_ERROR"
	EventStepStarted             EventType = "STEP_STARTED"
	EventStepFinished            EventType = "STEP_FINISHED"
	EventTextMessageStart        EventType = "TEXT_MESSAGE_START"
	EventTextMessageContent      EventType = "TEXT_MESSAGE_CONTENT"
	EventTextMessageEnd          EventType = "TEXT_MESSAGE_END"
	EventTextMessageChunk        EventType = "TEXT_MESSAGE_CHUNK"
	EventToolCallStart           EventType = "TOOL_CALL_START"
	EventToolCallArgs            EventType = "TOOL_CALL_ARGS"
	EventToolCallEnd             EventType = "TOOL_CALL_END"
	EventToolCallChunk           EventType = "TOOL_CALL_CHUNK"
	EventToolCallResult          EventType = "TOOL_CALL_RESULT"
	EventStateSnapshot           EventType = "STATE_SNAPSHOT"
	EventStateDelta              EventType = "STATE_DELTA"
	EventMessagesSnapshot        EventType = "MESSAGES_SNAPSHOT"
	EventActivitySnapshot        EventType = "ACTIVITY_SNAPSHOT"
	EventActivityDelta           EventType = "ACTIVITY_DELTA"
	EventRaw                     EventType = "RAW"
	EventCustom                  EventType = "CUSTOM"
	EventReasoningStart          EventType = "REASONING_START"
	EventReasoningMessageStart   EventType = "REASONING_MESSAGE_START"
	EventReasoningMessageContent EventType = "REASONING_MESSAGE_CONTENT"
	EventReasoningMessageEnd     EventType = "REASONING_MESSAGE_END"
	EventReasoningMessageChunk   EventType = "REASONING_MESSAGE_CHUNK"
	EventReasoningEnd            EventType = "REASONING_END"
	EventReasoningEncryptedValue EventType = "REASONING_ENCRYPTED_VALUE"
	EventSubagentStarted         EventType = "SUBAGENT_STARTED"
	EventSubagentFinished        EventType = "SUBAGENT_FINISHED"
	EventSubagentError           EventType = "SUBAGENT_ERROR"
)

// Event is one AG-UI event. The set is closed: only the types in this
// package implement it, so a type switch over events is exhaustive.
type Event interface {
	Type() EventType
	base() *Base
}

// Base holds the members every event may carry. Every field is optional and
// omitted when unset: real clients reject null for any of them
// (AGUI-PROTOCOL.md §1).
type Base struct {
	// Timestamp is Unix milliseconds; 1.0 clients reject non-integers.
	Timestamp int64 `json:"timestamp,omitempty"`
	// Metadata is folded by the client into the thing the event builds.
	Metadata map[string]any `json:"metadata,omitempty"`
	// SubagentRunID attributes the event to a sub-agent invocation. It is
	// never set on RUN_* or MESSAGES_SNAPSHOT.
	SubagentRunID string `json:"subagentRunId,omitempty"`
}

func (b *Base) base() *Base { return b }

// RunStarted opens a run.
type RunStarted struct {
	Base
	ThreadID    string `json:"threadId"`
	RunID       string `json:"runId"`
	ParentRunID string `json:"parentRunId,omitempty"`
	// ProtocolVersion is the producer's version; only sent to 1.0 clients.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
}

// RunFinished closes a run that did not fail.
type RunFinished struct {
	Base
	ThreadID string          `json:"threadId"`
	RunID    string          `json:"runId"`
	Result   json.RawMessage `json:"result,omitempty"`
	// Outcome is absent for success.
	Outcome *Outcome `json:"outcome,omitempty"`
}

// Outcome types of RUN_FINISHED.
const (
	OutcomeSuccess   = "success"
	OutcomeInterrupt = "interrupt"
	// OutcomeCancelled exists only for 1.0 clients; 0.0.59 rejects it.
	OutcomeCancelled = "cancelled"
)

// Outcome says how a finished run ended.
type Outcome struct {
	Type       string      `json:"type"`
	Interrupts []Interrupt `json:"interrupts,omitempty"`
	// PendingToolCallIDs is 1.0 only (fatal on 0.0.59).
	PendingToolCallIDs []string `json:"pendingToolCallIds,omitempty"`
}

// Interrupt asks the frontend for input before the run can continue.
type Interrupt struct {
	ID             string         `json:"id"`
	Reason         string         `json:"reason"`
	Message        string         `json:"message,omitempty"`
	ToolCallID     string         `json:"toolCallId,omitempty"`
	ResponseSchema map[string]any `json:"responseSchema,omitempty"`
	ExpiresAt      string         `json:"expiresAt,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
	SubagentRunID  string         `json:"subagentRunId,omitempty"`
}

// RunError ends a run that failed.
type RunError struct {
	Base
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}

// StepStarted opens a named step.
type StepStarted struct {
	Base
	StepName string `json:"stepName"`
}

// StepFinished closes a named step.
type StepFinished struct {
	Base
	StepName string `json:"stepName"`
}

// Message roles.
const (
	RoleAssistant = "assistant"
	RoleUser      = "user"
	RoleSystem    = "system"
	RoleDeveloper = "developer"
	RoleTool      = "tool"
	RoleActivity  = "activity"
	RoleReasoning = "reasoning"
)

// TextMessageStart opens a text message. Role must be set: 0.0.36 requires it.
type TextMessageStart struct {
	Base
	MessageID string `json:"messageId"`
	Role      string `json:"role"`
	Name      string `json:"name,omitempty"`
}

// TextMessageContent appends a non-empty delta to an open text message.
type TextMessageContent struct {
	Base
	MessageID string `json:"messageId"`
	Delta     string `json:"delta"`
}

// TextMessageEnd closes a text message.
type TextMessageEnd struct {
	Base
	MessageID string `json:"messageId"`
}

// TextMessageChunk is the convenience form; the bridge decodes it but never
// emits it (it cannot be mixed with explicit START events, §6.4).
type TextMessageChunk struct {
	Base
	MessageID string `json:"messageId,omitempty"`
	Role      string `json:"role,omitempty"`
	Delta     string `json:"delta,omitempty"`
	Name      string `json:"name,omitempty"`
}

// ToolCallStart opens a tool call.
type ToolCallStart struct {
	Base
	ToolCallID      string `json:"toolCallId"`
	ToolCallName    string `json:"toolCallName"`
	ParentMessageID string `json:"parentMessageId,omitempty"`
}

// ToolCallArgs appends a fragment of the JSON argument text.
type ToolCallArgs struct {
	Base
	ToolCallID string `json:"toolCallId"`
	Delta      string `json:"delta"`
}

// ToolCallEnd closes a tool call.
type ToolCallEnd struct {
	Base
	ToolCallID string `json:"toolCallId"`
}

// ToolCallChunk is the convenience form of tool call events (decoded only).
type ToolCallChunk struct {
	Base
	ToolCallID      string `json:"toolCallId,omitempty"`
	ToolCallName    string `json:"toolCallName,omitempty"`
	ParentMessageID string `json:"parentMessageId,omitempty"`
	Delta           string `json:"delta,omitempty"`
}

// ToolCallResult creates a tool message holding a call's result. Content is
// always a string: content parts are fatal on 0.0.x clients.
type ToolCallResult struct {
	Base
	MessageID  string `json:"messageId"`
	ToolCallID string `json:"toolCallId"`
	Content    string `json:"content"`
	Role       string `json:"role,omitempty"`
}

// StateSnapshot replaces the client's shared state. Snapshot is always
// written, even when null (1.0 requires the key).
type StateSnapshot struct {
	Base
	Snapshot json.RawMessage `json:"snapshot"`
}

// PatchOp is one RFC 6902 operation.
type PatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// StateDelta applies an RFC 6902 patch to the client's shared state.
type StateDelta struct {
	Base
	Delta []PatchOp `json:"delta"`
}

// MessagesSnapshot reconciles the client's message list (§5.2: messages
// missing from it are deleted client-side).
type MessagesSnapshot struct {
	Base
	Messages []Message `json:"messages"`
}

// ActivitySnapshot creates or replaces an activity message. Content must be
// a JSON object.
type ActivitySnapshot struct {
	Base
	MessageID    string         `json:"messageId"`
	ActivityType string         `json:"activityType"`
	Content      map[string]any `json:"content"`
	Replace      *bool          `json:"replace,omitempty"`
}

// ActivityDelta patches an activity message's content.
type ActivityDelta struct {
	Base
	MessageID    string    `json:"messageId"`
	ActivityType string    `json:"activityType"`
	Patch        []PatchOp `json:"patch"`
}

// Raw carries a provider-native event. Event is always written.
type Raw struct {
	Base
	Event  json.RawMessage `json:"event"`
	Source string          `json:"source,omitempty"`
}

// Custom is an application-defined event. Value is always written, even when
// null: 1.0 clients reject a CUSTOM without it.
type Custom struct {
	Base
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// ReasoningStart opens a reasoning span.
type ReasoningStart struct {
	Base
	MessageID string `json:"messageId"`
}

// ReasoningMessageStart opens a reasoning message; Role is always "reasoning".
type ReasoningMessageStart struct {
	Base
	MessageID string `json:"messageId"`
	Role      string `json:"role"`
}

// ReasoningMessageContent appends to an open reasoning message.
type ReasoningMessageContent struct {
	Base
	MessageID string `json:"messageId"`
	Delta     string `json:"delta"`
}

// ReasoningMessageEnd closes a reasoning message.
type ReasoningMessageEnd struct {
	Base
	MessageID string `json:"messageId"`
}

// ReasoningMessageChunk is the convenience form (decoded only).
type ReasoningMessageChunk struct {
	Base
	MessageID string `json:"messageId,omitempty"`
	Delta     string `json:"delta,omitempty"`
}

// ReasoningEnd closes a reasoning span.
type ReasoningEnd struct {
	Base
	MessageID string `json:"messageId"`
}

// ReasoningEncryptedValue attaches an opaque provider value to a message or
// tool call.
type ReasoningEncryptedValue struct {
	Base
	Subtype        string `json:"subtype"`
	EntityID       string `json:"entityId"`
	EncryptedValue string `json:"encryptedValue"`
}

// SubagentStarted opens a sub-agent invocation (1.0 clients only). Its
// SubagentRunID (in Base) is required and is the invocation's identity.
type SubagentStarted struct {
	Base
	Name                string `json:"name"`
	Description         string `json:"description,omitempty"`
	ParentSubagentRunID string `json:"parentSubagentRunId,omitempty"`
	ParentToolCallID    string `json:"parentToolCallId,omitempty"`
	ParentMessageID     string `json:"parentMessageId,omitempty"`
}

// Outcome types of SUBAGENT_FINISHED.
const (
	SubagentOutcomeSuccess   = "success"
	SubagentOutcomeSuspended = "suspended"
)

// SubagentOutcome says how a sub-agent invocation ended.
type SubagentOutcome struct {
	Type         string   `json:"type"`
	InterruptIDs []string `json:"interruptIds,omitempty"`
}

// SubagentFinished closes a sub-agent invocation.
type SubagentFinished struct {
	Base
	Result  json.RawMessage  `json:"result,omitempty"`
	Outcome *SubagentOutcome `json:"outcome,omitempty"`
}

// SubagentError reports a failed sub-agent invocation; the run may go on.
type SubagentError struct {
	Base
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}

func (*RunStarted) Type() EventType              { return EventRunStarted }
func (*RunFinished) Type() EventType             { return EventRunFinished }
func (*RunError) Type() EventType                { return EventRunError }
func (*StepStarted) Type() EventType             { return EventStepStarted }
func (*StepFinished) Type() EventType            { return EventStepFinished }
func (*TextMessageStart) Type() EventType        { return EventTextMessageStart }
func (*TextMessageContent) Type() EventType      { return EventTextMessageContent }
func (*TextMessageEnd) Type() EventType          { return EventTextMessageEnd }
func (*TextMessageChunk) Type() EventType        { return EventTextMessageChunk }
func (*ToolCallStart) Type() EventType           { return EventToolCallStart }
func (*ToolCallArgs) Type() EventType            { return EventToolCallArgs }
func (*ToolCallEnd) Type() EventType             { return EventToolCallEnd }
func (*ToolCallChunk) Type() EventType           { return EventToolCallChunk }
func (*ToolCallResult) Type() EventType          { return EventToolCallResult }
func (*StateSnapshot) Type() EventType           { return EventStateSnapshot }
func (*StateDelta) Type() EventType              { return EventStateDelta }
func (*MessagesSnapshot) Type() EventType        { return EventMessagesSnapshot }
func (*ActivitySnapshot) Type() EventType        { return EventActivitySnapshot }
func (*ActivityDelta) Type() EventType           { return EventActivityDelta }
func (*Raw) Type() EventType                     { return EventRaw }
func (*Custom) Type() EventType                  { return EventCustom }
func (*ReasoningStart) Type() EventType          { return EventReasoningStart }
func (*ReasoningMessageStart) Type() EventType   { return EventReasoningMessageStart }
func (*ReasoningMessageContent) Type() EventType { return EventReasoningMessageContent }
func (*ReasoningMessageEnd) Type() EventType     { return EventReasoningMessageEnd }
func (*ReasoningMessageChunk) Type() EventType   { return EventReasoningMessageChunk }
func (*ReasoningEnd) Type() EventType            { return EventReasoningEnd }
func (*ReasoningEncryptedValue) Type() EventType { return EventReasoningEncryptedValue }
func (*SubagentStarted) Type() EventType         { return EventSubagentStarted }
func (*SubagentFinished) Type() EventType        { return EventSubagentFinished }
func (*SubagentError) Type() EventType           { return EventSubagentError }

// BaseOf returns the shared members of e, so producers can stamp a timestamp
// or attribution on any event.
func BaseOf(e Event) *Base { return e.base() }
