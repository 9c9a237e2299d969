package a2a

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// newHTTPTransport is the RoundTripper behind our default client. It has
// dial, TLS-handshake and idle timeouts but no overall http.Client.Timeout:
// that timeout also covers reading the body, so the SDK's default
// (3 minutes) cuts every long SSE stream (pitfall P2). It has no
// ResponseHeaderTimeout either: a blocking SendMessage legitimately holds the
// response headers until the task is terminal or interrupted (§2). Deadlines
// come from the caller's context.
func newHTTPTransport() *http.Transport {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:             http.ProxyFromEnvironment,
		DialContext:       dialer.DialContext,
		ForceAttemptHTTP2: true,
		MaxIdleConns:      512,
		// One agent is one host, and every run holds a connection to it:
		// keep enough idle ones that bursts of runs do not dial anew.
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		// Requests are small and every open run holds a connection: a
		// 1 KiB write buffer instead of 4 KiB, per connection.
		WriteBufferSize: 1 << 10,
	}
}

// bindingMode selects how fixupTransport treats error responses.
type bindingMode int

const (
	modeJSONRPC bindingMode = iota // A2A errors travel in HTTP 200 bodies
	modeREST                       // A2A errors travel as non-2xx JSON bodies
)

// fixupTransport repairs responses before the SDK's HTTP transports see them.
//
//   - Content-Type application/a2a+json (what the spec recommends and the JS
//     SDK sends) and application/problem+json (a2a-go's own v0.3 HTTP+JSON
//     server's errors) become application/json: the REST clients, v1.0 and
//     v0.3, decode error bodies only for application/json and otherwise
//     return a bare ErrServerError (pitfall P4, still so in v2.4.0).
//   - REST 201/204 become 200: the REST client treats every non-200 as an
//     error, but JS answers 201 on create and 204 on delete (P4).
//   - A non-2xx response that cannot carry an A2A error (any JSON-RPC
//     non-2xx; a REST non-2xx without a JSON body) becomes *HTTPStatusError,
//     so a 401 from an auth gateway is typed instead of the SDK's
//     "unexpected HTTP status" string (§2 "Not every error is typed").
type fixupTransport struct {
	base http.RoundTripper
	mode bindingMode
}

func (t *fixupTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	mediaType, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mediaType == "application/a2a+json" || mediaType == "application/problem+json" {
		resp.Header.Set("Content-Type", mime.FormatMediaType("application/json", params))
		mediaType = "application/json"
	}
	switch {
	case resp.StatusCode < 300:
		if t.mode == modeREST && (resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusNoContent) {
			resp.StatusCode, resp.Status = http.StatusOK, "200 OK"
		}
		return resp, nil
	case resp.StatusCode < 400:
		return resp, nil // redirects are followed by http.Client
	case t.mode == modeREST && (mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")):
		return resp, nil // google.rpc.Status body: the SDK decodes it into a typed error
	}
	// Drain a little so the connection can be reused, then report the status.
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	_ = resp.Body.Close()
	return nil, &HTTPStatusError{StatusCode: resp.StatusCode, Status: resp.Status}
}

// withFixup returns a client sharing hc's settings whose transport is wrapped
// by fixupTransport in the given mode.
func withFixup(hc *http.Client, mode bindingMode) *http.Client {
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c := *hc
	c.Transport = &fixupTransport{base: base, mode: mode}
	return &c
}

// grpcTarget turns a card URL for a GRPC interface into a grpc-go target and
// decides on transport security. The spec says the URL is host:port but
// cards in the wild also carry schemes, so:
//
//   - https:// or grpcs://, or a bare host:port with port 443 → TLS with the
//     system roots;
//   - http:// or grpc://, or any other bare host:port → plaintext (local and
//     in-cluster agents, the common case for a bridge);
//   - any other target with a scheme grpc-go resolves (dns:///, unix:,
//     passthrough:///) → passed through unchanged, plaintext.
//
// TLS is used only when the URL says so; we never guess TLS for other ports.
func grpcTarget(raw string) (target string, useTLS bool) {
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		switch strings.ToLower(scheme) {
		case "https", "grpcs":
			return hostPort(rest, "443"), true
		case "http", "grpc":
			return hostPort(rest, "80"), false
		}
		return raw, false
	}
	if strings.HasPrefix(raw, "unix:") || strings.HasPrefix(raw, "dns:") {
		return raw, false
	}
	_, port, err := net.SplitHostPort(raw)
	return raw, err == nil && port == "443"
}

// hostPort strips any path from rest and adds the default port when missing.
func hostPort(rest, defPort string) string {
	if u, err := url.Parse("//" + rest); err == nil && u.Host != "" {
		rest = u.Host
	}
	if _, _, err := net.SplitHostPort(rest); err != nil {
		return net.JoinHostPort(strings.Trim(rest, "[]"), defPort)
	}
	return rest
}

// grpcDialOptions builds the dial options for one gRPC interface.
func grpcDialOptions(useTLS bool) []grpc.DialOption {
	creds := insecure.NewCredentials()
	if useTLS {
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	}
	return []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithChainUnaryInterceptor(unaryUnavailable),
		grpc.WithChainStreamInterceptor(streamUnavailable),
	}
}

// grpcUnavailableError carries a gRPC UNAVAILABLE status past the SDK. The
// SDK's gRPC error decoding has no mapping for UNAVAILABLE and turns a refused
// connection into ErrInternalError, losing the status code. This type does not
// implement GRPCStatus(), so the SDK passes it through unchanged.
type grpcUnavailableError struct{ msg string }

func (e *grpcUnavailableError) Error() string { return "grpc unavailable: " + e.msg }
func (e *grpcUnavailableError) Unwrap() error { return ErrUnavailable }

func markUnavailable(err error) error {
	if err == nil {
		return nil
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.Unavailable {
		return &grpcUnavailableError{msg: s.Message()}
	}
	return err
}

func unaryUnavailable(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return markUnavailable(invoker(ctx, method, req, reply, cc, opts...))
}

func streamUnavailable(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, markUnavailable(err)
	}
	return &unavailableStream{ClientStream: s}, nil
}

type unavailableStream struct{ grpc.ClientStream }

func (s *unavailableStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if errors.Is(err, io.EOF) {
		return err // normal end of stream; must stay io.EOF
	}
	return markUnavailable(err)
}

func (s *unavailableStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if errors.Is(err, io.EOF) {
		return err // the real status comes from RecvMsg
	}
	return markUnavailable(err)
}
