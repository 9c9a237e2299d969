package agui

import "github.com/a2a-agui-bridge/bridge/errcode"

// The bridge's public error codes: the "code" of the JSON error body
// ({"error": {"code", "message"}}) answered before a run's stream starts,
// and of RUN_ERROR after. Clients and external tests depend on them. They
// and their HTTP statuses are package errcode's one table, which failed
// A2A calls' codes (a2a.Classify) share; these are the names the AG-UI
// side uses.
const (
	// Refused requests.
	CodeInvalidInput         = errcode.InvalidInput
	CodeUnsupportedMediaType = errcode.UnsupportedMediaType
	CodeBodyTooLarge         = errcode.BodyTooLarge
	CodePartTooLarge         = errcode.PartTooLarge
	CodeTooManyMessages      = errcode.TooManyMessages
	CodeStateTooLarge        = errcode.StateTooLarge
	CodeNotFound             = errcode.NotFound
	CodeUnknownAgent         = errcode.UnknownAgent
	CodeUnknownThread        = errcode.UnknownThread
	CodeThreadLimit          = errcode.ThreadLimit
	CodeThreadDeleted        = errcode.ThreadDeleted
	CodeThreadBusy           = errcode.ThreadBusy
	CodeUnauthenticated      = errcode.Unauthenticated
	CodeForbidden            = errcode.Forbidden
	CodeOriginNotAllowed     = errcode.OriginNotAllowed
	CodeBadUpgrade           = errcode.BadUpgrade
	CodeRateLimited          = errcode.RateLimited
	CodeTooManyRuns          = errcode.TooManyRuns
	CodeOverloaded           = errcode.Overloaded
	CodeShuttingDown         = errcode.ShuttingDown
	CodeStoreUnavailable     = errcode.StoreUnavailable
	CodeNotReady             = errcode.NotReady
	CodeJournalCompacted     = errcode.JournalCompacted
	CodeInternal             = errcode.Internal
	CodeA2UIActionInvalid    = errcode.A2UIActionInvalid
	CodeA2UIActionTooLarge   = errcode.A2UIActionTooLarge
	CodeA2UINotActive        = errcode.A2UINotActive
	CodeMessageConflict      = errcode.MessageConflict

	// Ends of a stream (RUN_ERROR, SUBAGENT_ERROR) only.
	CodeServerShutdown           = errcode.ServerShutdown
	CodeEventTooLarge            = errcode.EventTooLarge
	CodeRunTooLarge              = errcode.RunTooLarge
	CodeInterruptPending         = errcode.InterruptPending
	CodeInterruptNotResumed      = errcode.InterruptNotResumed
	CodeResumeUnknownInterrupt   = errcode.ResumeUnknownInterrupt
	CodeResumeWrongThread        = errcode.ResumeWrongThread
	CodeResumeDuplicate          = errcode.ResumeDuplicate
	CodeInterruptExpired         = errcode.InterruptExpired
	CodeResumePayloadMissing     = errcode.ResumePayloadMissing
	CodeResumePayloadInvalid     = errcode.ResumePayloadInvalid
	CodeInterruptAlreadyResolved = errcode.InterruptAlreadyResolved
	CodeToolResultNotAllowed     = errcode.ToolResultNotAllowed
	CodeAgentFailed              = errcode.AgentFailed
	CodeAgentRejected            = errcode.AgentRejected
	CodeCancelled                = errcode.Cancelled
	CodeTeamFailed               = errcode.TeamFailed
	CodeTooManyStreams           = errcode.TooManyStreams
	CodeAgentTimeout             = errcode.A2ATimeout
	CodeTaskMismatch             = errcode.A2ATaskMismatch
)

// HTTPStatus is the status a refusal with code is answered with before a
// stream starts; 0 for a code that only ends streams, or is not the
// bridge's own.
func HTTPStatus(code string) int { return errcode.HTTPStatus(code) }
