package errcode

import "net/http"

// The bridge's own codes.
const (
	// Refused requests.
	InvalidInput         = "invalid_input"
	UnsupportedMediaType = "unsupported_media_type"
	BodyTooLarge         = "body_too_large"
	PartTooLarge         = "part_too_large"
	TooManyMessages      = "too_many_messages"
	StateTooLarge        = "state_too_large" // also a run whose agent grew the state past its limit
	NotFound             = "not_found"
	UnknownAgent         = "unknown_agent"
	UnknownThread        = "unknown_thread"
	ThreadBusy           = "thread_busy"
	Unauthenticated      = "unauthenticated"
	Forbidden            = "forbidden"
	OriginNotAllowed     = "origin_not_allowed"
	BadUpgrade           = "bad_upgrade"
	RateLimited          = "rate_limited"
	TooManyRuns          = "too_many_runs"
	Overloaded           = "bridge_overloaded" // also a2a.Classify's when the bridge is out of file descriptors
	ShuttingDown         = "shutting_down"
	StoreUnavailable     = "store_unavailable" // also a run whose events could not be stored
	NotReady             = "not_ready"
	JournalCompacted     = "journal_compacted" // a replay from before what a thread's journal keeps
	Internal             = "internal"          // also a run the bridge failed
	A2UIActionInvalid    = "a2ui_action_invalid"
	A2UIActionTooLarge   = "a2ui_action_too_large"
	A2UINotActive        = "a2ui_not_active"  // an A2UI action for an agent whose run has no A2UI
	MessageConflict      = "message_conflict" // a known message id with other content
	ThreadLimit          = "thread_limit"     // a run that would create one thread more than limits.perPrincipal.maxThreads
	ThreadDeleted        = "thread_deleted"   // the thread was deleted (DELETE or retention); also ends its streams

	// Ends of a stream (RUN_ERROR, SUBAGENT_ERROR) only.
	ServerShutdown           = "server_shutdown"
	EventTooLarge            = "event_too_large"
	RunTooLarge              = "run_too_large"              // a run past limits.maxRunBytes
	InterruptPending         = "interrupt_pending"          // pending interrupts and no resume (AGUI-PROTOCOL §4.2 rule 4)
	InterruptNotResumed      = "interrupt_not_resumed"      // a resume that leaves a pending interrupt unanswered (rule 3)
	ResumeUnknownInterrupt   = "resume_unknown_interrupt"   // an interruptId the bridge never raised (rule 2)
	ResumeWrongThread        = "resume_wrong_thread"        // another thread's interrupt (rule 1)
	ResumeDuplicate          = "resume_duplicate"           // one interruptId twice in a resume
	InterruptExpired         = "interrupt_expired"          // resolved past its expiry (rule 7; cancelling is allowed)
	ResumePayloadMissing     = "resume_payload_missing"     // "resolved" without a payload (rule 8)
	ResumePayloadInvalid     = "resume_payload_invalid"     // a payload that fails the responseSchema (rule 6)
	InterruptAlreadyResolved = "interrupt_already_resolved" // answered differently before (rule 5)
	ToolResultNotAllowed     = "tool_result_not_allowed"    // a result for a tool call the remote agent executes
	AgentFailed              = "a2a_failed"
	AgentRejected            = "a2a_rejected"
	Cancelled                = "cancelled"
	TeamFailed               = "team_failed"
	TooManyStreams           = "too_many_streams"  // a WebSocket run or subscription over its caps
	A2ATaskMismatch          = "a2a_task_mismatch" // the agent named another task or context than the run's
)

// The codes of failed A2A calls (a2a.Classify), answered before a stream
// with their status, and ending it after.
const (
	A2ACanceled                  = "a2a_canceled"
	A2ATimeout                   = "a2a_timeout" // also a run past its run or idle timeout
	A2AInvalidOptions            = "a2a_invalid_options"
	A2ACardUntrusted             = "a2a_card_untrusted"
	A2ACardUnavailable           = "a2a_card_unavailable"
	A2ANoTransport               = "a2a_no_transport"
	A2ATaskNotFound              = "a2a_task_not_found"
	A2ATaskNotCancelable         = "a2a_task_not_cancelable"
	A2AUnsupportedOperation      = "a2a_unsupported_operation"
	A2APushNotSupported          = "a2a_push_not_supported"
	A2AExtendedCardNotConfigured = "a2a_extended_card_not_configured"
	A2AContentTypeNotSupported   = "a2a_content_type_not_supported"
	A2AInvalidParams             = "a2a_invalid_params"
	A2AUnauthenticated           = "a2a_unauthenticated"
	A2AUnauthorized              = "a2a_unauthorized"
	A2AVersionNotSupported       = "a2a_version_not_supported"
	A2AExtensionRequired         = "a2a_extension_required"
	A2AProtocolError             = "a2a_protocol_error"
	A2AInvalidAgentResponse      = "a2a_invalid_agent_response"
	A2AInternal                  = "a2a_internal"
	A2AUnavailable               = "a2a_unavailable"
	A2AError                     = "a2a_error" // a failed call Classify has no row for
)

// status is the HTTP status of each code that can be answered before a
// stream.
var status = map[string]int{
	InvalidInput:         http.StatusBadRequest,
	BadUpgrade:           http.StatusBadRequest,
	Unauthenticated:      http.StatusUnauthorized,
	Forbidden:            http.StatusForbidden,
	OriginNotAllowed:     http.StatusForbidden,
	NotFound:             http.StatusNotFound,
	UnknownAgent:         http.StatusNotFound,
	UnknownThread:        http.StatusNotFound,
	ThreadBusy:           http.StatusConflict,
	BodyTooLarge:         http.StatusRequestEntityTooLarge,
	PartTooLarge:         http.StatusRequestEntityTooLarge,
	TooManyMessages:      http.StatusRequestEntityTooLarge,
	StateTooLarge:        http.StatusRequestEntityTooLarge,
	UnsupportedMediaType: http.StatusUnsupportedMediaType,
	RateLimited:          http.StatusTooManyRequests,
	TooManyRuns:          http.StatusTooManyRequests,
	Internal:             http.StatusInternalServerError,
	Overloaded:           http.StatusServiceUnavailable,
	ShuttingDown:         http.StatusServiceUnavailable,
	StoreUnavailable:     http.StatusServiceUnavailable,
	NotReady:             http.StatusServiceUnavailable,
	JournalCompacted:     http.StatusGone,
	A2UIActionInvalid:    http.StatusBadRequest,
	A2UIActionTooLarge:   http.StatusRequestEntityTooLarge,
	A2UINotActive:        http.StatusBadRequest,
	MessageConflict:      http.StatusConflict,
	ThreadLimit:          http.StatusTooManyRequests,
	ThreadDeleted:        http.StatusGone,

	A2ACanceled:                  499, // nginx's "client closed request": our caller left
	A2ATimeout:                   http.StatusGatewayTimeout,
	A2AInvalidOptions:            http.StatusInternalServerError,
	A2ACardUntrusted:             http.StatusBadGateway,
	A2ACardUnavailable:           http.StatusBadGateway,
	A2ANoTransport:               http.StatusBadGateway,
	A2ATaskNotFound:              http.StatusNotFound,
	A2ATaskNotCancelable:         http.StatusConflict,
	A2AUnsupportedOperation:      http.StatusNotImplemented,
	A2APushNotSupported:          http.StatusNotImplemented,
	A2AExtendedCardNotConfigured: http.StatusNotImplemented,
	A2AContentTypeNotSupported:   http.StatusUnsupportedMediaType,
	A2AInvalidParams:             http.StatusBadRequest,
	A2AUnauthenticated:           http.StatusUnauthorized,
	A2AUnauthorized:              http.StatusForbidden,
	A2AVersionNotSupported:       http.StatusBadGateway,
	A2AExtensionRequired:         http.StatusBadGateway,
	A2AProtocolError:             http.StatusBadGateway,
	A2AInvalidAgentResponse:      http.StatusBadGateway,
	A2AInternal:                  http.StatusBadGateway,
	A2AUnavailable:               http.StatusBadGateway,
	A2AError:                     http.StatusBadGateway,
}

// HTTPStatus is the status a refusal with code is answered with before a
// stream starts; 0 for a code that only ends streams, or is not the
// bridge's.
func HTTPStatus(code string) int { return status[code] }

// SaysNothingOfAgent reports whether a failed call's code is about the
// bridge or its caller rather than the agent: the caller left, or the
// bridge is out of file descriptors.
func SaysNothingOfAgent(code string) bool { return code == A2ACanceled || code == Overloaded }

// Unreachable reports whether a failed call's code says the agent could
// not be reached (as opposed to an agent that answered with an error).
func Unreachable(code string) bool {
	return code == A2AUnavailable || code == A2ACardUnavailable || code == A2ATimeout
}
