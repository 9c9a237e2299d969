package a2a

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2a-agui-bridge/bridge/errcode"
)

// Bridge-level sentinels. Every error returned by this package is an *Error
// whose chain contains at most one of these, plus the underlying cause.
var (
	// ErrCardUnavailable: the agent card could not be fetched or parsed.
	ErrCardUnavailable = errors.New("a2a: agent card unavailable")
	// ErrNoTransport: the card lists no interface this client can speak
	// (binding/protocolVersion pairs we register; see P11).
	ErrNoTransport = errors.New("a2a: no compatible transport")
	// ErrUnavailable: the agent could not be reached or the connection broke
	// (dial, DNS, TLS, reset, HTTP 5xx/429 without an A2A error body, gRPC
	// UNAVAILABLE).
	ErrUnavailable = errors.New("a2a: agent unavailable")
	// ErrOutOfDescriptors: the bridge could not open a connection to the
	// agent because the process is out of file descriptors (EMFILE,
	// ENFILE): the bridge is overloaded, the agent may be fine.
	ErrOutOfDescriptors = errors.New("a2a: the bridge is out of file descriptors")
	// ErrInvalidOptions: Options passed to Dial are unusable.
	ErrInvalidOptions = errors.New("a2a: invalid options")
)

// A2A protocol errors, re-exported from the SDK so callers can use errors.Is
// without importing it. They are the SDK's own values: every binding
// (JSON-RPC, HTTP+JSON, gRPC, v0.3 JSON-RPC) decodes wire errors into an
// error wrapping one of them.
var (
	ErrTaskNotFound                 = a2asdk.ErrTaskNotFound
	ErrTaskNotCancelable            = a2asdk.ErrTaskNotCancelable
	ErrPushNotificationNotSupported = a2asdk.ErrPushNotificationNotSupported
	ErrUnsupportedOperation         = a2asdk.ErrUnsupportedOperation
	ErrContentTypeNotSupported      = a2asdk.ErrUnsupportedContentType
	ErrInvalidAgentResponse         = a2asdk.ErrInvalidAgentResponse
	ErrExtendedCardNotConfigured    = a2asdk.ErrExtendedCardNotConfigured
	ErrExtensionSupportRequired     = a2asdk.ErrExtensionSupportRequired
	ErrVersionNotSupported          = a2asdk.ErrVersionNotSupported
	ErrUnauthenticated              = a2asdk.ErrUnauthenticated
	ErrUnauthorized                 = a2asdk.ErrUnauthorized
	ErrParseError                   = a2asdk.ErrParseError
	ErrInvalidRequest               = a2asdk.ErrInvalidRequest
	ErrMethodNotFound               = a2asdk.ErrMethodNotFound
	ErrInvalidParams                = a2asdk.ErrInvalidParams
	ErrInternalError                = a2asdk.ErrInternalError
	ErrServerError                  = a2asdk.ErrServerError
)

// Error is the one error type returned by Agent and Dial. It records which
// agent and operation failed; errors.Is sees both Kind and Err.
type Error struct {
	Agent string // Options.Name
	Op    string // "dial", "card", or the A2A method ("SendStreamingMessage", "GetTask", ...)
	// Kind is a sentinel this package added (ErrCardUnavailable, ErrUnavailable,
	// ErrNoTransport, ErrInvalidOptions, ErrInvalidAgentResponse or a context
	// error); nil when Err already says everything (a typed A2A error).
	Kind error
	Err  error
	// URL is where the failed call went, when that is one URL (the card
	// fetch). Explain shows it to operators; Classify never does, since
	// clients should not learn the bridge's internal hosts.
	URL string
}

func (e *Error) Error() string {
	msg := e.Op
	if e.Agent != "" {
		msg = fmt.Sprintf("agent %q: %s", e.Agent, e.Op)
	}
	switch {
	case e.Kind != nil && e.Err != nil:
		return fmt.Sprintf("a2a: %s: %v: %v", msg, e.Kind, e.Err)
	case e.Err != nil:
		return fmt.Sprintf("a2a: %s: %v", msg, e.Err)
	case e.Kind != nil:
		return fmt.Sprintf("a2a: %s: %v", msg, e.Kind)
	}
	return "a2a: " + msg
}

// Unwrap exposes both the category and the cause to errors.Is/As.
func (e *Error) Unwrap() []error {
	out := make([]error, 0, 2)
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// HTTPStatusError is an HTTP response that carried no A2A error: a JSON-RPC
// endpoint answering non-2xx (A2A errors always come as HTTP 200 there), a
// REST endpoint answering non-2xx without a JSON body, or a card fetch
// answering non-200. The SDK reports the first as an untyped string and the
// second as a bare ErrServerError (§2 "Not every error is typed"), so our
// RoundTripper turns them into this type before the SDK sees them.
type HTTPStatusError struct {
	StatusCode int
	Status     string
}

func (e *HTTPStatusError) Error() string { return "unexpected HTTP status " + e.Status }

// Unwrap maps the status to a sentinel so that an auth gateway's 401 in front
// of an agent satisfies errors.Is(err, ErrUnauthenticated).
func (e *HTTPStatusError) Unwrap() error {
	switch e.StatusCode {
	case http.StatusUnauthorized:
		return ErrUnauthenticated
	case http.StatusForbidden:
		return ErrUnauthorized
	}
	return ErrUnavailable
}

// ErrorInfo is how the rest of the bridge reports an A2A failure: Code is a
// stable string (the table in doc.go) used as RUN_ERROR.code and in HTTP error
// bodies, HTTPStatus is the status to answer with before a stream starts.
type ErrorInfo struct {
	Code       string
	HTTPStatus int
	Message    string
}

// classification is one row of the error table: the error, its code (whose
// HTTP status is errcode's table's) and what to tell the client. Order
// matters: context errors first (a deadline can surface wrapped in
// anything), then the phase (card, transport selection), then A2A protocol
// errors, then transport failures.
var classification = []struct {
	err     error
	code    string
	message string
}{
	{context.Canceled, errcode.A2ACanceled, "the request to the agent was canceled"},
	{context.DeadlineExceeded, errcode.A2ATimeout, "the agent did not answer in time"},
	{ErrInvalidOptions, errcode.A2AInvalidOptions, "the agent is misconfigured in the bridge"},
	{ErrCardUntrusted, errcode.A2ACardUntrusted, "the bridge does not trust the agent"},
	{ErrCardUnavailable, errcode.A2ACardUnavailable, "the agent card could not be fetched or parsed"},
	{ErrNoTransport, errcode.A2ANoTransport, "the agent offers no protocol binding the bridge speaks"},
	{ErrTaskNotFound, errcode.A2ATaskNotFound, "task not found"},
	{ErrTaskNotCancelable, errcode.A2ATaskNotCancelable, "the task can no longer be canceled"},
	{ErrUnsupportedOperation, errcode.A2AUnsupportedOperation, "the agent does not support this operation"},
	{ErrPushNotificationNotSupported, errcode.A2APushNotSupported, "the agent does not support push notifications"},
	{ErrExtendedCardNotConfigured, errcode.A2AExtendedCardNotConfigured, "the agent has no extended card"},
	{ErrContentTypeNotSupported, errcode.A2AContentTypeNotSupported, "the agent does not accept this content type"},
	{ErrInvalidParams, errcode.A2AInvalidParams, "the agent rejected the request parameters"},
	{ErrUnauthenticated, errcode.A2AUnauthenticated, "the agent requires authentication"},
	{ErrUnauthorized, errcode.A2AUnauthorized, "the agent denied permission"},
	{ErrVersionNotSupported, errcode.A2AVersionNotSupported, "the agent does not support this A2A protocol version"},
	{ErrExtensionSupportRequired, errcode.A2AExtensionRequired, "the agent requires an A2A extension the bridge did not request"},
	{ErrParseError, errcode.A2AProtocolError, "the agent could not parse the bridge's request"},
	{ErrInvalidRequest, errcode.A2AProtocolError, "the agent rejected the bridge's request as invalid"},
	{ErrMethodNotFound, errcode.A2AProtocolError, "the agent does not implement this method"},
	{ErrInvalidAgentResponse, errcode.A2AInvalidAgentResponse, "the agent sent an invalid response"},
	{ErrInternalError, errcode.A2AInternal, "the agent reported an internal error"},
	{ErrServerError, errcode.A2AInternal, "the agent reported a server error"},
	{ErrOutOfDescriptors, errcode.Overloaded, "the bridge cannot open another connection to the agent: it is out of file descriptors (raise its open-files limit, or add instances)"},
	{ErrUnavailable, errcode.A2AUnavailable, "the agent is unreachable"},
}

// Classify maps any error from this package (or a context error) to a stable
// code and an HTTP status. It uses errors.Is/As only, never the error text.
// A nil error gives the zero ErrorInfo.
func Classify(err error) ErrorInfo {
	if err == nil {
		return ErrorInfo{}
	}
	for _, c := range classification {
		if !errors.Is(err, c.err) {
			continue
		}
		info := ErrorInfo{Code: c.code, HTTPStatus: errcode.HTTPStatus(c.code), Message: c.message}
		if c.err == ErrUnavailable {
			// An agent that says "come back later" is a 503, not a broken gateway.
			var hs *HTTPStatusError
			if errors.As(err, &hs) && (hs.StatusCode == http.StatusServiceUnavailable || hs.StatusCode == http.StatusTooManyRequests) {
				info.HTTPStatus = http.StatusServiceUnavailable
			}
		}
		// Why a card was refused names hosts and key ids, and why options
		// are unusable names config keys and card schemes, never a secret:
		// operators need them in health and `bridge check`.
		var te *TrustError
		var e *Error
		switch {
		case errors.As(err, &te):
			info.Message = c.message + ": " + te.Reason
		case c.err == ErrInvalidOptions && errors.As(err, &e) && e.Err != nil:
			info.Message = c.message + ": " + e.Err.Error()
		}
		// The agent's own text for a typed A2A error is meant for clients.
		var ae *a2asdk.Error
		if errors.As(err, &ae) && ae.Message != "" && ae.Message != c.message {
			info.Message = c.message + ": " + ae.Message
		}
		return info
	}
	return ErrorInfo{Code: errcode.A2AError, HTTPStatus: errcode.HTTPStatus(errcode.A2AError), Message: "the call to the agent failed"}
}

// Explain says, for an operator, what failed and why, beyond Classify's
// message: the URL the call went to and the cause (the HTTP status, the
// dial or DNS error, the parse error), with a hint for the common mistakes.
// It names hosts, so it is for `bridge check` and logs, never for clients.
// "" when it has nothing to add to Classify's message.
func Explain(err error) string {
	var e *Error
	if err == nil || !errors.As(err, &e) {
		return ""
	}
	var te *TrustError
	if errors.As(err, &te) {
		return "" // Classify's message already carries the reason
	}
	cause, hint := explainCause(err)
	if cause == "" && e.Err != nil && e.Kind != nil && errors.Is(e.Kind, ErrInvalidOptions) {
		return "" // Classify's message already carries it
	}
	if cause == "" && e.Err != nil {
		cause = e.Err.Error()
	}
	var b strings.Builder
	if e.URL != "" {
		shown := e.URL
		if u, err := url.Parse(e.URL); err == nil {
			shown = u.Redacted() // a password in the configured URL stays out
		}
		b.WriteString("GET " + shown)
		if cause != "" {
			b.WriteString(": ")
		}
	}
	b.WriteString(cause)
	if hint != "" {
		b.WriteString(" (" + hint + ")")
	}
	return b.String()
}

// explainCause is the innermost cause worth showing and, for the mistakes a
// newcomer makes first, what to do about it.
func explainCause(err error) (cause, hint string) {
	var hs *HTTPStatusError
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var urlErr *url.Error
	switch {
	case errors.As(err, &hs):
		cause = "HTTP " + hs.Status
		switch hs.StatusCode {
		case http.StatusNotFound:
			hint = "no agent card at this URL: check the agent's url, or set card: to its card's URL"
		case http.StatusUnauthorized, http.StatusForbidden:
			hint = "the card needs credentials: set headers: for this agent"
		}
	case errors.Is(err, context.DeadlineExceeded):
		cause = "no answer within the request timeout (timeouts.request)"
	case errors.As(err, &dnsErr):
		cause = dnsErr.Error()
		hint = "the host name does not resolve"
	case errors.As(err, &opErr):
		cause = opErr.Error()
		if errors.Is(err, syscall.ECONNREFUSED) {
			hint = "nothing is listening there: is the agent running?"
		}
	case errors.As(err, &urlErr):
		cause = urlErr.Err.Error() // its URL is shown already
	}
	return cause, hint
}

// kindOf picks the sentinel to add to a raw SDK error so Classify and
// errors.Is can see what happened. ctxErr is the caller's ctx.Err().
func kindOf(ctxErr, err error) error {
	switch {
	case ctxErr != nil:
		// The SDK surfaces a cancelled stream as e.g. "SSE stream error:
		// context canceled" or as a read error on a closed body; trust the ctx
		// rather than the error chain (§4 "Context and timeout handling").
		if errors.Is(err, ctxErr) {
			return nil
		}
		return ctxErr
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return nil
	case errors.Is(err, ErrUnavailable):
		return nil // already marked (gRPC UNAVAILABLE, HTTP 5xx)
	}
	var hs *HTTPStatusError
	var ae *a2asdk.Error
	if errors.As(err, &hs) || errors.As(err, &ae) {
		// Already typed: an HTTP status (which http.Client wraps in a
		// *url.Error, so this must come before isTransportFailure) or an
		// A2A error from the agent.
		return nil
	}
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		return ErrOutOfDescriptors
	}
	if isTransportFailure(err) {
		return ErrUnavailable
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return ErrInvalidAgentResponse
	}
	return nil
}

// isTransportFailure reports network-level failures by type, not by text.
func isTransportFailure(err error) bool {
	var (
		opErr   *net.OpError
		dnsErr  *net.DNSError
		urlErr  *url.Error
		certErr *tls.CertificateVerificationError
		recErr  tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &opErr), errors.As(err, &dnsErr), errors.As(err, &urlErr),
		errors.As(err, &certErr), errors.As(err, &recErr):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return true
	}
	return false
}
