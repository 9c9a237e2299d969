package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/go-cmp/cmp"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	sdk := func(sentinel error, msg string) error { return a2asdk.NewError(sentinel, msg) }
	wrapped := func(kind, err error) error { return &Error{Agent: "x", Op: "GetTask", Kind: kind, Err: err} }
	tests := []struct {
		name   string
		err    error
		code   string
		status int
	}{
		{"nil", nil, "", 0},
		{"task not found", wrapped(nil, sdk(a2asdk.ErrTaskNotFound, "no such task")), "a2a_task_not_found", 404},
		{"bare sentinel", a2asdk.ErrTaskNotFound, "a2a_task_not_found", 404},
		{"not cancelable", wrapped(nil, sdk(a2asdk.ErrTaskNotCancelable, "")), "a2a_task_not_cancelable", 409},
		{"unsupported op", wrapped(nil, sdk(a2asdk.ErrUnsupportedOperation, "")), "a2a_unsupported_operation", 501},
		{"content type", wrapped(nil, sdk(a2asdk.ErrUnsupportedContentType, "")), "a2a_content_type_not_supported", 415},
		{"invalid params", wrapped(nil, sdk(a2asdk.ErrInvalidParams, "")), "a2a_invalid_params", 400},
		{"unauthenticated", wrapped(nil, sdk(a2asdk.ErrUnauthenticated, "")), "a2a_unauthenticated", 401},
		{"unauthorized", wrapped(nil, sdk(a2asdk.ErrUnauthorized, "")), "a2a_unauthorized", 403},
		{"version", wrapped(nil, sdk(a2asdk.ErrVersionNotSupported, "")), "a2a_version_not_supported", 502},
		{"extension", wrapped(nil, sdk(a2asdk.ErrExtensionSupportRequired, "")), "a2a_extension_required", 502},
		{"invalid agent response", wrapped(nil, sdk(a2asdk.ErrInvalidAgentResponse, "")), "a2a_invalid_agent_response", 502},
		{"internal", wrapped(nil, sdk(a2asdk.ErrInternalError, "boom")), "a2a_internal", 502},
		{"server error", wrapped(nil, a2asdk.ErrServerError), "a2a_internal", 502},
		{"method not found", wrapped(nil, sdk(a2asdk.ErrMethodNotFound, "")), "a2a_protocol_error", 502},
		{"push", wrapped(nil, sdk(a2asdk.ErrPushNotificationNotSupported, "")), "a2a_push_not_supported", 501},
		{"deadline", wrapped(context.DeadlineExceeded, errors.New("SSE stream error")), "a2a_timeout", 504},
		{"deadline from gRPC", wrapped(nil, &a2asdk.Error{Err: context.DeadlineExceeded}), "a2a_timeout", 504},
		{"canceled", wrapped(context.Canceled, errors.New("x")), "a2a_canceled", 499},
		{"unavailable", wrapped(ErrUnavailable, &url.Error{Op: "Post", URL: "http://x", Err: syscall.ECONNREFUSED}), "a2a_unavailable", 502},
		{"http 503", wrapped(nil, &url.Error{Op: "Post", URL: "http://x", Err: &HTTPStatusError{StatusCode: 503, Status: "503 Service Unavailable"}}), "a2a_unavailable", 503},
		{"http 429", wrapped(nil, &HTTPStatusError{StatusCode: 429, Status: "429 Too Many Requests"}), "a2a_unavailable", 503},
		{"http 404", wrapped(nil, &HTTPStatusError{StatusCode: 404, Status: "404 Not Found"}), "a2a_unavailable", 502},
		{"http 401", wrapped(nil, &HTTPStatusError{StatusCode: 401, Status: "401 Unauthorized"}), "a2a_unauthenticated", 401},
		{"http 403", wrapped(nil, &HTTPStatusError{StatusCode: 403, Status: "403 Forbidden"}), "a2a_unauthorized", 403},
		{"grpc unavailable", wrapped(nil, &grpcUnavailableError{msg: "connection refused"}), "a2a_unavailable", 502},
		{"card", &Error{Op: "card", Kind: ErrCardUnavailable, Err: fmt.Errorf("%w: %w", ErrUnavailable, syscall.ECONNREFUSED)}, "a2a_card_unavailable", 502},
		{"card 401", &Error{Op: "card", Kind: ErrCardUnavailable, Err: &HTTPStatusError{StatusCode: 401}}, "a2a_card_unavailable", 502},
		{"no transport", &Error{Op: "dial", Kind: ErrNoTransport}, "a2a_no_transport", 502},
		{"options", &Error{Op: "dial", Kind: ErrInvalidOptions}, "a2a_invalid_options", 500},
		{"other", errors.New("something"), "a2a_error", 502},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Classify(tc.err)
			if got.Code != tc.code || got.HTTPStatus != tc.status {
				t.Errorf("Classify(%v) = %s/%d, want %s/%d", tc.err, got.Code, got.HTTPStatus, tc.code, tc.status)
			}
			if tc.err != nil && got.Message == "" {
				t.Error("empty Message")
			}
		})
	}
}

func TestClassifyMessageCarriesAgentText(t *testing.T) {
	t.Parallel()
	got := Classify(&Error{Err: a2asdk.NewError(a2asdk.ErrInvalidParams, "contextId does not match")})
	if want := "the agent rejected the request parameters: contextId does not match"; got.Message != want {
		t.Errorf("Message = %q, want %q", got.Message, want)
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	refused := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name   string
		ctxErr error
		err    error
		want   error
	}{
		{"refused", nil, refused, ErrUnavailable},
		{"out of descriptors", nil, &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", syscall.EMFILE)}}, ErrOutOfDescriptors},
		{"typed a2a", nil, a2asdk.NewError(a2asdk.ErrTaskNotFound, ""), nil},
		{"http status wrapped by url.Error is not transport", nil, &url.Error{Err: &HTTPStatusError{StatusCode: 401}}, nil},
		{"ctx canceled hides read error", context.Canceled, fmt.Errorf("SSE stream error: %w", net.ErrClosed), context.Canceled},
		{"ctx error already in chain", context.DeadlineExceeded, &url.Error{Err: context.DeadlineExceeded}, nil},
		{"bad json", nil, fmt.Errorf("failed to decode: %w", &jsonSyntaxErr), ErrInvalidAgentResponse},
		{"unknown", nil, errors.New("x"), nil},
	}
	for _, tc := range tests {
		if got := kindOf(tc.ctxErr, tc.err); got != tc.want {
			t.Errorf("%s: kindOf = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestUnreachable covers the failures the bridge sees when an agent is down
// or misbehaves at the HTTP level, on each binding.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	dead := deadAddr(t)
	status := func(code int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, http.StatusText(code), code)
		})
	}
	s.mux.Handle("/status401", status(http.StatusUnauthorized))
	s.mux.Handle("/status503/", status(http.StatusServiceUnavailable))
	s.mux.Handle("/status403/", status(http.StatusForbidden))
	card := func(name string, ifaces ...*a2asdk.AgentInterface) string {
		return s.serveCard(name, a2asrv.NewStaticAgentCardHandler(testCard(ifaces...)))
	}

	t.Run("card server down", func(t *testing.T) {
		t.Parallel()
		_, err := Dial(t.Context(), Options{Name: "down", URL: "http://" + dead})
		if !errors.Is(err, ErrCardUnavailable) || !errors.Is(err, ErrUnavailable) {
			t.Errorf("err = %v, want ErrCardUnavailable and ErrUnavailable", err)
		}
		if got := Classify(err); got.Code != "a2a_card_unavailable" || got.HTTPStatus != 502 {
			t.Errorf("Classify = %+v", got)
		}
	})
	t.Run("card 404", func(t *testing.T) {
		t.Parallel()
		_, err := Dial(t.Context(), Options{URL: s.URL + "/nothing-here"})
		var hs *HTTPStatusError
		if !errors.Is(err, ErrCardUnavailable) || !errors.As(err, &hs) || hs.StatusCode != 404 {
			t.Errorf("err = %v, want ErrCardUnavailable with HTTP 404", err)
		}
	})
	t.Run("card not json", func(t *testing.T) {
		t.Parallel()
		_, err := Dial(t.Context(), Options{URL: s.serveCard("garbage", rawCard("<html>"))})
		if got := Classify(err); got.Code != "a2a_card_unavailable" {
			t.Errorf("Classify(%v) = %+v", err, got)
		}
	})
	t.Run("no compatible transport", func(t *testing.T) {
		t.Parallel()
		_, err := Dial(t.Context(), Options{URL: card("custom", &a2asdk.AgentInterface{URL: "x", ProtocolBinding: "urn:custom", ProtocolVersion: "1.0"})})
		if !errors.Is(err, ErrNoTransport) || Classify(err).Code != "a2a_no_transport" {
			t.Errorf("err = %v, want ErrNoTransport", err)
		}
	})
	t.Run("no interfaces", func(t *testing.T) {
		t.Parallel()
		_, err := Dial(t.Context(), Options{URL: card("empty")})
		if !errors.Is(err, ErrNoTransport) {
			t.Errorf("err = %v, want ErrNoTransport", err)
		}
	})
	t.Run("bad options", func(t *testing.T) {
		t.Parallel()
		for _, o := range []Options{{}, {URL: "http://x", Transports: []string{"SOAP"}}} {
			if _, err := Dial(t.Context(), o); !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("Dial(%+v) = %v, want ErrInvalidOptions", o, err)
			}
		}
	})

	tests := []struct {
		name   string
		iface  *a2asdk.AgentInterface
		code   string
		status int
	}{
		{"jsonrpc endpoint down", a2asdk.NewAgentInterface("http://"+dead+"/jsonrpc", a2asdk.TransportProtocolJSONRPC), "a2a_unavailable", 502},
		{"rest endpoint down", a2asdk.NewAgentInterface("http://"+dead+"/rest", a2asdk.TransportProtocolHTTPJSON), "a2a_unavailable", 502},
		{"grpc endpoint down", a2asdk.NewAgentInterface(dead, a2asdk.TransportProtocolGRPC), "a2a_unavailable", 502},
		{"v0.3 endpoint down", &a2asdk.AgentInterface{URL: "http://" + dead, ProtocolBinding: a2asdk.TransportProtocolJSONRPC, ProtocolVersion: "0.3"}, "a2a_unavailable", 502},
		{"jsonrpc 401", a2asdk.NewAgentInterface(s.URL+"/status401", a2asdk.TransportProtocolJSONRPC), "a2a_unauthenticated", 401},
		{"v0.3 401", &a2asdk.AgentInterface{URL: s.URL + "/status401", ProtocolBinding: a2asdk.TransportProtocolJSONRPC, ProtocolVersion: "0.3"}, "a2a_unauthenticated", 401},
		{"rest 403 text/plain", a2asdk.NewAgentInterface(s.URL+"/status403", a2asdk.TransportProtocolHTTPJSON), "a2a_unauthorized", 403},
		{"rest 503 text/plain", a2asdk.NewAgentInterface(s.URL+"/status503", a2asdk.TransportProtocolHTTPJSON), "a2a_unavailable", 503},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			agent, err := Dial(t.Context(), Options{Name: "bad", URL: card(tc.name, tc.iface), AllowHosts: []string{dead}})
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer agent.Close()
			_, err = agent.GetTask(t.Context(), "x")
			if got := Classify(err); got.Code != tc.code || got.HTTPStatus != tc.status {
				t.Errorf("GetTask: Classify(%v) = %+v, want %s/%d", err, got, tc.code, tc.status)
			}
			_, _, err = collect(t, agent.SendStreaming(t.Context(), NewUserMessage("", "", NewTextPart("x"))))
			if got := Classify(err); got.Code != tc.code {
				t.Errorf("SendStreaming: Classify(%v) = %+v, want %s", err, got, tc.code)
			}
		})
	}
}

// TestErrorMessage keeps Error() readable: agent, op, cause.
func TestErrorMessage(t *testing.T) {
	t.Parallel()
	err := &Error{Agent: "travel", Op: "GetTask", Err: a2asdk.ErrTaskNotFound}
	if diff := cmp.Diff(`a2a: agent "travel": GetTask: task not found`, err.Error()); diff != "" {
		t.Error(diff)
	}
}

var jsonSyntaxErr = func() json.SyntaxError {
	var v any
	err := json.Unmarshal([]byte("{"), &v)
	var se *json.SyntaxError
	errors.As(err, &se)
	return *se
}()

// TestExplain: what an operator is told beyond Classify's message — the URL
// (its password redacted), the cause, a hint for the common mistakes — and
// nothing when Classify's message already says it all.
func TestExplain(t *testing.T) {
	t.Parallel()
	card := func(err error) error {
		return &Error{Agent: "travel", Op: "card", Kind: ErrCardUnavailable, URL: "http://u:secret@agent:9001/.well-known/agent-card.json", Err: err}
	}
	refused := &url.Error{Op: "Get", URL: "http://agent:9001/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"not ours", errors.New("x"), ""},
		{"404", card(fmt.Errorf("card request failed: %w", &HTTPStatusError{StatusCode: 404, Status: "404 Not Found"})),
			"GET http://u:xxxxx@agent:9001/.well-known/agent-card.json: HTTP 404 Not Found (no agent card at this URL: check the agent's url, or set card: to its card's URL)"},
		{"refused", card(fmt.Errorf("%w: %w", ErrUnavailable, refused)),
			"GET http://u:xxxxx@agent:9001/.well-known/agent-card.json: dial tcp: connect: connection refused (nothing is listening there: is the agent running?)"},
		{"dns", card(&url.Error{Op: "Get", URL: "http://nowhere/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nowhere"}}}),
			"GET http://u:xxxxx@agent:9001/.well-known/agent-card.json: lookup nowhere: no such host (the host name does not resolve)"},
		{"timeout", card(fmt.Errorf("%w: %w", context.DeadlineExceeded, errors.New("Get: context deadline exceeded"))),
			"GET http://u:xxxxx@agent:9001/.well-known/agent-card.json: no answer within the request timeout (timeouts.request)"},
		{"parse", card(errors.New("parse card: invalid character '<'")),
			"GET http://u:xxxxx@agent:9001/.well-known/agent-card.json: parse card: invalid character '<'"},
		{"untrusted", &Error{Op: "card", URL: "http://agent/", Err: &TrustError{Reason: "card is not signed"}}, ""},
		{"no transport", &Error{Op: "dial", Kind: ErrNoTransport, Err: errors.New("agent card lists no interfaces")}, "agent card lists no interfaces"},
		{"options", &Error{Op: "dial", Kind: ErrInvalidOptions, Err: errors.New("bad")}, ""},
	}
	for _, tt := range tests {
		if got := Explain(tt.err); got != tt.want {
			t.Errorf("%s: Explain = %q\n want %q", tt.name, got, tt.want)
		}
	}
}
