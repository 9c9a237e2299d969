package a2a

import (
	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
)

// Type aliases let the rest of the bridge use A2A types through this package
// only; aliases cost nothing and keep the SDK's client packages out of every
// other import list (STYLE.md convention 2).
type (
	Task           = a2asdk.Task
	Message        = a2asdk.Message
	Event          = a2asdk.Event
	Part           = a2asdk.Part
	StatusUpdate   = a2asdk.TaskStatusUpdateEvent
	ArtifactUpdate = a2asdk.TaskArtifactUpdateEvent
	Artifact       = a2asdk.Artifact
	ArtifactID     = a2asdk.ArtifactID
	TaskState      = a2asdk.TaskState
	TaskStatus     = a2asdk.TaskStatus
	TaskID         = a2asdk.TaskID
	TaskInfo       = a2asdk.TaskInfo
	Role           = a2asdk.MessageRole
	AgentCard      = a2asdk.AgentCard
	AgentInterface = a2asdk.AgentInterface
	AgentSkill     = a2asdk.AgentSkill
	TextPart       = a2asdk.Text
	DataPart       = a2asdk.Data
	RawPart        = a2asdk.Raw
	URLPart        = a2asdk.URL
)

// Task states. v1.0 has no "unknown" state; the SDK's v0.3 compat layer maps a
// v0.3 "unknown" to TaskStateUnspecified.
const (
	TaskStateUnspecified   = a2asdk.TaskStateUnspecified
	TaskStateSubmitted     = a2asdk.TaskStateSubmitted
	TaskStateWorking       = a2asdk.TaskStateWorking
	TaskStateInputRequired = a2asdk.TaskStateInputRequired
	TaskStateAuthRequired  = a2asdk.TaskStateAuthRequired
	TaskStateCompleted     = a2asdk.TaskStateCompleted
	TaskStateFailed        = a2asdk.TaskStateFailed
	TaskStateCanceled      = a2asdk.TaskStateCanceled
	TaskStateRejected      = a2asdk.TaskStateRejected
)

// Message roles.
const (
	RoleUser  = a2asdk.MessageRoleUser
	RoleAgent = a2asdk.MessageRoleAgent
)

// Transport bindings as they are spelled in agent cards and in Options.Transports.
const (
	TransportJSONRPC  = string(a2asdk.TransportProtocolJSONRPC)
	TransportHTTPJSON = string(a2asdk.TransportProtocolHTTPJSON)
	TransportGRPC     = string(a2asdk.TransportProtocolGRPC)
)

// IsTerminal reports whether s is a final state (completed, failed, canceled,
// rejected). A terminal task is immutable: a follow-up must start a new task in
// the same contextId.
func IsTerminal(s TaskState) bool { return s.Terminal() }

// IsInterrupted reports whether s pauses the task for the client
// (input-required or auth-required). The SDK has no such helper. Note that an
// auth-required stream may continue by itself once a credential arrives out of
// band (A2A-PROTOCOL.md §9 fact 5), so it does not necessarily end a stream.
func IsInterrupted(s TaskState) bool {
	return s == TaskStateInputRequired || s == TaskStateAuthRequired
}

// NewUserMessage builds a user message with a fresh UUID messageId. contextID
// and taskID are set only when non-empty: the server generates contextIds and
// taskIds, and the spec asks clients not to invent them (§1 "contextId").
func NewUserMessage(contextID string, taskID TaskID, parts ...*Part) *Message {
	return &Message{
		ID:        uuid.NewString(),
		Role:      RoleUser,
		ContextID: contextID,
		TaskID:    taskID,
		Parts:     parts,
	}
}

// NewTextPart returns a text part.
func NewTextPart(s string) *Part { return a2asdk.NewTextPart(s) }

// NewDataPart returns a data part; v may be any JSON value.
func NewDataPart(v any) *Part { return a2asdk.NewDataPart(v) }

// NewURLPart returns a file part that points at url. mediaType and filename
// are optional.
func NewURLPart(url, mediaType, filename string) *Part {
	return &Part{Content: URLPart(url), MediaType: mediaType, Filename: filename}
}

// NewRawPart returns a file part carrying b inline (base64 on the wire).
// mediaType and filename are optional.
func NewRawPart(b []byte, mediaType, filename string) *Part {
	return &Part{Content: RawPart(b), MediaType: mediaType, Filename: filename}
}
