package tasks

import (
	"errors"
	"fmt"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// Sentinels for the failures a caller may want to tell apart with errors.Is.
var (
	ErrUnknownAgent = errors.New("unknown agent")
	ErrThreadBusy   = errors.New("thread has an active run")
	ErrAgentDown    = errors.New("agent unavailable")
	ErrShuttingDown = errors.New("bridge is shutting down")
)

// Error is a failure found before a run's stream starts. It carries the
// stable code (one of agui's, or a2a.Classify's for a failed A2A call) the
// HTTP layer answers with, and which decides the HTTP status there; after
// the stream starts the same code travels in RUN_ERROR instead.
type Error struct {
	Code    string
	Message string
	Err     error
	// status is a2a.Classify's, for a failed A2A call (agentError); the
	// bridge's own codes have theirs in agui's table.
	status int
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Message, e.Err)
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// HTTPStatus is the status to answer with.
func (e *Error) HTTPStatus() int {
	if e.status != 0 {
		return e.status
	}
	return agui.HTTPStatus(e.Code)
}

// ErrorCode is the stable error code.
func (e *Error) ErrorCode() string { return e.Code }

// PublicMessage is the message for the client: it never includes the
// underlying error, which may name internal addresses.
func (e *Error) PublicMessage() string { return e.Message }

func unknownAgent(name string) error {
	return &Error{Code: agui.CodeUnknownAgent,
		Message: fmt.Sprintf("no agent named %q", name), Err: ErrUnknownAgent}
}

func threadBusy(key ThreadKey, runID string) error {
	return &Error{Code: agui.CodeThreadBusy,
		Message: fmt.Sprintf("thread %q already has an active run (%s); wait for it to finish", key.ThreadID, runID),
		Err:     ErrThreadBusy}
}
