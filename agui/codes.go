package agui

import "net/http"

// The bridge's public error codes: the "code" of the JSON error body
// ({"error": {"code", "message"}}) answered before a run's stream starts,
// and of RUN_ERROR after. Clients and external tests depend on them. Each
// code answered before a stream has its HTTP status in codeStatus, the one
// table; codes that only ever end a stream have none. Failed A2A calls
// have codes of their own, from a2a.Classify's table.
const (
	// Refused requests.
	CodeInvalidInput         = "invalid_input"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeBodyTooLarge         = "body_too_large"
	CodePartTooLarge         = "part_too_large"
	CodeTooManyMessages      = "too_many_messages"
	CodeStateTooLarge        = "state_too_large" // also a run whose agent grew the state past its limit
	CodeNotFound             = "not_found"
	CodeUnknownAgent         = "unknown_agent"
	CodeUnknownThread        = "unknown_thread"
	CodeThreadBusy           = "thread_busy"
	CodeUnauthenticated      = "unauthenticated"
	CodeForbidden            = "forbidden"
	CodeOriginNotAllowed     = "origin_not_allowed"
	CodeBadUpgrade           = "bad_upgrade"
	CodeRateLimited          = "rate_limited"
	CodeTooManyRuns          = "too_many_runs"
	CodeOverloaded           = "bridge_overloaded"
	CodeShuttingDown         = "shutting_down"
	CodeStoreUnavailable     = "store_unavailable" // also a run whose events could not be stored
	CodeNotReady             = "not_ready"
	CodeJournalCompacted     = "journal_compacted" // a replay from before what a thread's journal keeps
	CodeInternal             = "internal"          // also a run the bridge failed
	CodeA2UIActionInvalid    = "a2ui_action_invalid"
	CodeA2UIActionTooLarge   = "a2ui_action_too_large"
	CodeA2UINotActive        = "a2ui_not_active"  // an A2UI action for an agent whose run has no A2UI
	CodeMessageConflict      = "message_conflict" // a known message id with other content

	// Ends of a stream (RUN_ERROR, SUBAGENT_ERROR) only.
	CodeServerShutdown           = "server_shutdown"
	CodeEventTooLarge            = "event_too_large"
	CodeRunTooLarge              = "run_too_large" // a run past limits.maxRunBytes
	CodeInterruptPending         = "interrupt_pending"
	CodeInterruptNotResumed      = "interrupt_not_resumed"
	CodeResumeUnknownInterrupt   = "resume_unknown_interrupt"
	CodeResumeWrongThread        = "resume_wrong_thread"
	CodeResumeDuplicate          = "resume_duplicate"
	CodeInterruptExpired         = "interrupt_expired"
	CodeResumePayloadMissing     = "resume_payload_missing"
	CodeResumePayloadInvalid     = "resume_payload_invalid"
	CodeInterruptAlreadyResolved = "interrupt_already_resolved"
	CodeToolResultNotAllowed     = "tool_result_not_allowed"
	CodeAgentFailed              = "a2a_failed"
	CodeAgentRejected            = "a2a_rejected"
	CodeCancelled                = "cancelled"
	CodeTeamFailed               = "team_failed"
	CodeTooManyStreams           = "too_many_streams"  // a WebSocket run or subscription over its caps
	CodeAgentTimeout             = "a2a_timeout"       // a run past its run or idle timeout; a2a.Classify's for a call's deadline
	CodeTaskMismatch             = "a2a_task_mismatch" // the agent named another task or context than the run's
)

// codeStatus is the HTTP status of each code answered before a stream.
var codeStatus = map[string]int{
	CodeInvalidInput:         http.StatusBadRequest,
	CodeBadUpgrade:           http.StatusBadRequest,
	CodeUnauthenticated:      http.StatusUnauthorized,
	CodeForbidden:            http.StatusForbidden,
	CodeOriginNotAllowed:     http.StatusForbidden,
	CodeNotFound:             http.StatusNotFound,
	CodeUnknownAgent:         http.StatusNotFound,
	CodeUnknownThread:        http.StatusNotFound,
	CodeThreadBusy:           http.StatusConflict,
	CodeBodyTooLarge:         http.StatusRequestEntityTooLarge,
	CodePartTooLarge:         http.StatusRequestEntityTooLarge,
	CodeTooManyMessages:      http.StatusRequestEntityTooLarge,
	CodeStateTooLarge:        http.StatusRequestEntityTooLarge,
	CodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	CodeRateLimited:          http.StatusTooManyRequests,
	CodeTooManyRuns:          http.StatusTooManyRequests,
	CodeInternal:             http.StatusInternalServerError,
	CodeOverloaded:           http.StatusServiceUnavailable,
	CodeShuttingDown:         http.StatusServiceUnavailable,
	CodeStoreUnavailable:     http.StatusServiceUnavailable,
	CodeNotReady:             http.StatusServiceUnavailable,
	CodeJournalCompacted:     http.StatusGone,
	CodeA2UIActionInvalid:    http.StatusBadRequest,
	CodeA2UIActionTooLarge:   http.StatusRequestEntityTooLarge,
	CodeA2UINotActive:        http.StatusBadRequest,
	CodeMessageConflict:      http.StatusConflict,
}

// HTTPStatus is the status a refusal with code is answered with before a
// stream starts; 0 for a code that only ends streams, or is not the
// bridge's own.
func HTTPStatus(code string) int { return codeStatus[code] }
