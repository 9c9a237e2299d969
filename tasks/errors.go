package tasks

import (
	"errors"
	"fmt"
	"net/http"
)

// CodeServerShutdown is the RUN_ERROR code of a stream the bridge ends
// because it is shutting down; the run itself goes on after the restart.
const CodeServerShutdown = "server_shutdown"

// Sentinels for the failures a caller may want to tell apart with errors.Is.
var (
	ErrUnknownAgent = errors.New("unknown agent")
	ErrThreadBusy   = errors.New("thread has an active run")
	ErrAgentDown    = errors.New("agent unavailable")
	ErrShuttingDown = errors.New("bridge is shutting down")
)

// Error is a failure found before a run's stream starts. It carries the
// HTTP status and the stable code the HTTP layer answers with; after the
// stream starts the same code travels in RUN_ERROR instead.
type Error struct {
	Status  int
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Message, e.Err)
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// HTTPStatus is the status to answer with.
func (e *Error) HTTPStatus() int { return e.Status }

// ErrorCode is the stable error code.
func (e *Error) ErrorCode() string { return e.Code }

// PublicMessage is the message for the client: it never includes the
// underlying error, which may name internal addresses.
func (e *Error) PublicMessage() string { return e.Message }

func unknownAgent(name string) error {
	return &Error{Status: http.StatusNotFound, Code: "unknown_agent",
		Message: fmt.Sprintf("no agent named %q", name), Err: ErrUnknownAgent}
}

func threadBusy(key ThreadKey, runID string) error {
	return &Error{Status: http.StatusConflict, Code: "thread_busy",
		Message: fmt.Sprintf("thread %q already has an active run (%s); wait for it to finish", key.ThreadID, runID),
		Err:     ErrThreadBusy}
}
