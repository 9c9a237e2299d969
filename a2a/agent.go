package a2a

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/a2a-agui-bridge/bridge/a2a/internal/jsonrpcstream"
)

// Options say how to reach one agent.
type Options struct {
	// Name identifies the agent in errors and logs.
	Name string
	// URL is the agent's base URL; the card is read from
	// URL + "/.well-known/agent-card.json". Required unless CardURL is set.
	URL string
	// CardURL, when set, is the full card URL and overrides URL for the card.
	CardURL string
	// Headers are sent on the card fetch and on every call (e.g.
	// Authorization). Per-call headers attached with WithHeaders win over
	// these. Default: none.
	Headers map[string]string
	// Transports is an optional preference order among "JSONRPC",
	// "HTTP+JSON" and "GRPC" (as spelled in the card). It orders, it does not
	// restrict; the newest protocol version still wins first (§3). Default:
	// the card's order.
	Transports []string
	// HTTPClient is used for the card and the HTTP bindings. Its Transport is
	// wrapped to repair responses (P4). Default: a client with dial, TLS and
	// idle timeouts and no overall Timeout (P2); deadlines come from contexts.
	// A Timeout set here is kept, and will cut streams longer than it.
	HTTPClient *http.Client
	// Tracer, when set, gives every call (and the card fetch) a client
	// span, a child of the span in the call's context. Default: no spans.
	Tracer trace.Tracer
	// Propagator, when set, sends the call's trace context to the agent
	// (W3C traceparent: HTTP headers for JSON-RPC and HTTP+JSON, gRPC
	// metadata). Default: none sent.
	Propagator propagation.TextMapPropagator
	// Observer is told how every call ended. Default: nobody.
	Observer Observer

	// Credentials are presented on every call (not on the card fetch) as
	// the card's security schemes say. Default: none.
	Credentials Credentials
	// AllowHosts are hosts ("host" or "host:port") the card's interfaces
	// and OAuth2 token URL may name besides the origin of URL and CardURL.
	// Redirects follow the same rule. Default: none.
	AllowHosts []string
	// MaxCardBytes bounds the card's size. Default DefaultMaxCardBytes.
	MaxCardBytes int64
	// TrustedKeys, when set, make a card acceptable only with a signature
	// that verifies against one of them. Default nil: signatures ignored.
	TrustedKeys *KeySet
	// ActivateExtensions are A2A extension URIs activated on every call
	// (the A2A-Extensions service parameter: the X-A2A-Extensions header
	// for v0.3 HTTP bindings, A2A-Extensions for v1.0, gRPC metadata)
	// when, and only when, the agent's card declares them. Default none.
	ActivateExtensions []string
}

// ADKReliabilityExtension is ADK Python's (>= 1.27) A2A extension "for
// improved reliability" (adk-docs "A2A extension"; the URI ADK's own A2A
// integration tests put in their cards). A client activating it makes the
// ADK server use its new A2aAgentExecutor: user messages not duplicated in
// the task history, the remote agent's outputs not turned into thoughts,
// sub-agent output not lost (adk-python #7247, #6854).
const ADKReliabilityExtension = "https://a2a-adk/a2a-extension/new-integration"

// Binding is the card interface the client chose.
type Binding struct {
	Transport       string // "JSONRPC", "HTTP+JSON" or "GRPC"
	ProtocolVersion string // as in the card, e.g. "1.0" or "0.3"
	URL             string
}

// Agent is one resolved card plus one SDK client. It is safe for concurrent
// use. The card is read-only: callers must not modify what Card returns.
type Agent struct {
	name      string
	card      *AgentCard
	binding   Binding
	client    *a2aclient.Client
	transport *http.Transport // ours, closed by Close; nil when the caller gave a client
	tracer    trace.Tracer    // nil: no spans
	obs       Observer        // nil: nobody
}

// Dial fetches and parses the agent card, then builds a client on the best
// interface it offers. Only the card fetch touches the network: gRPC connects
// lazily on the first call, so an unreachable gRPC endpoint fails there.
func Dial(ctx context.Context, o Options) (*Agent, error) {
	prefs, err := parseTransports(o.Transports)
	if err != nil {
		return nil, &Error{Agent: o.Name, Op: "dial", Kind: ErrInvalidOptions, Err: err}
	}
	if o.URL == "" && o.CardURL == "" {
		return nil, &Error{Agent: o.Name, Op: "dial", Kind: ErrInvalidOptions, Err: errors.New("URL or CardURL is required")}
	}

	guard, err := newHostGuard(o)
	if err != nil {
		return nil, &Error{Agent: o.Name, Op: "dial", Kind: ErrInvalidOptions, Err: err}
	}
	a := &Agent{name: o.Name, tracer: o.Tracer, obs: o.Observer}
	hc := o.HTTPClient
	if hc == nil {
		a.transport = newHTTPTransport()
		hc = &http.Client{Transport: a.transport}
	}
	hc = guard.guardRedirects(hc)

	cardCtx, end := startCall(ctx, o.Tracer, o.Observer, o.Name, opCard, Binding{URL: cmp.Or(o.CardURL, o.URL)})
	card, err := fetchCard(cardCtx, hc, o)
	if err == nil {
		err = guard.checkCard(card)
	}
	if err != nil {
		a.closeIdle()
		e := &Error{Agent: o.Name, Op: opCard, Kind: ErrCardUnavailable, Err: err, URL: cardURL(o)}
		if errors.Is(err, ErrCardUntrusted) {
			e.Kind = nil // the TrustError is the category
		} else if k := kindOf(ctx.Err(), err); k != nil {
			e.Err = fmt.Errorf("%w: %w", k, err)
		}
		end(e)
		return nil, e
	}
	end(nil)
	if len(card.SupportedInterfaces) == 0 {
		a.closeIdle()
		return nil, &Error{Agent: o.Name, Op: "dial", Kind: ErrNoTransport, Err: errors.New("agent card lists no interfaces")}
	}
	a.card = card
	creds, err := planCredentials(o, card, guard, hc)
	if err != nil {
		a.closeIdle()
		return nil, &Error{Agent: o.Name, Op: "dial", Kind: ErrInvalidOptions, Err: err}
	}
	if creds.query != nil {
		hc = creds.query.client(hc)
	}

	// The SDK's Client does not say which interface it picked, so each
	// factory records the interface it created a transport for; the factory
	// stops at the first success, so the last one recorded is the choice.
	var chosen *a2asdk.AgentInterface
	record := func(f a2aclient.TransportFactoryFn) a2aclient.TransportFactoryFn {
		return func(ctx context.Context, card *a2asdk.AgentCard, iface *a2asdk.AgentInterface) (a2aclient.Transport, error) {
			t, err := f(ctx, card, iface)
			if err == nil {
				chosen = iface
			}
			return t, err
		}
	}
	jsonrpcClient := withFixup(hc, modeJSONRPC)
	restClient := withFixup(hc, modeREST)
	v03 := a2av0.NewJSONRPCTransportFactory(a2av0.JSONRPCTransportConfig{Client: jsonrpcClient})
	v03REST := a2av0.NewRESTTransportFactory(a2av0.RESTTransportConfig{Client: restClient})

	interceptors := []a2aclient.CallInterceptor{
		// First, so the caller's own Authorization wins over the static
		// ones, which only fill what is still absent.
		&callerInterceptor{enabled: o.Credentials.ForwardCallerToken},
		// A copy, so a caller changing its map later cannot race our calls.
		&headerInterceptor{headers: maps.Clone(o.Headers)},
		creds,
	}
	if o.Propagator != nil {
		interceptors = append(interceptors, &traceInterceptor{prop: o.Propagator})
	}
	var activate []string
	for _, uri := range o.ActivateExtensions {
		if declaresExtension(card, uri) && !slices.Contains(activate, uri) {
			activate = append(activate, uri)
		}
	}
	if len(activate) > 0 {
		interceptors = append(interceptors, &extensionInterceptor{uris: activate})
	}
	factory := a2aclient.NewFactory(
		// Defaults off: the SDK defaults would use its own HTTP client with
		// the 3-minute timeout (P2).
		a2aclient.WithDefaultsDisabled(),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: prefs}),
		a2aclient.WithTransport(a2asdk.TransportProtocolJSONRPC, record(func(_ context.Context, _ *a2asdk.AgentCard, iface *a2asdk.AgentInterface) (a2aclient.Transport, error) {
			return jsonrpcstream.New(iface.URL, jsonrpcClient), nil
		})),
		a2aclient.WithTransport(a2asdk.TransportProtocolHTTPJSON, record(func(_ context.Context, _ *a2asdk.AgentCard, iface *a2asdk.AgentInterface) (a2aclient.Transport, error) {
			u, err := url.Parse(iface.URL)
			if err != nil {
				return nil, fmt.Errorf("bad HTTP+JSON interface URL: %w", err)
			}
			return a2aclient.NewRESTTransport(u, restClient), nil
		})),
		a2aclient.WithTransport(a2asdk.TransportProtocolGRPC, record(func(_ context.Context, _ *a2asdk.AgentCard, iface *a2asdk.AgentInterface) (a2aclient.Transport, error) {
			target, useTLS := grpcTarget(iface.URL)
			conn, err := grpc.NewClient(target, grpcDialOptions(useTLS)...)
			if err != nil {
				return nil, err
			}
			return a2agrpc.NewGRPCTransport(conn), nil
		})),
		// v0.3 peers over every binding. The v0.3 HTTP+JSON client speaks
		// the v0.3 wire (/v1 paths, the google.a2a.v1 ProtoJSON) since
		// a2a-go v2.4.0 (#371); v2.3.1's spoke v1 paths (P10).
		a2aclient.WithCompatTransport(a2av0.Version, a2asdk.TransportProtocolJSONRPC, record(v03.Create)),
		a2aclient.WithCompatTransport(a2av0.Version, a2asdk.TransportProtocolHTTPJSON, record(v03REST.Create)),
		a2aclient.WithCompatTransport(a2av0.Version, a2asdk.TransportProtocolGRPC, record(func(_ context.Context, _ *a2asdk.AgentCard, iface *a2asdk.AgentInterface) (a2aclient.Transport, error) {
			target, useTLS := grpcTarget(iface.URL)
			conn, err := grpc.NewClient(target, grpcDialOptions(useTLS)...)
			if err != nil {
				return nil, err
			}
			return a2agrpcv0.NewGRPCTransport(conn), nil
		})),
		a2aclient.WithCallInterceptors(interceptors...),
	)
	client, err := factory.CreateFromCard(ctx, card)
	if err != nil {
		a.closeIdle()
		return nil, &Error{Agent: o.Name, Op: "dial", Kind: ErrNoTransport, Err: err}
	}
	a.client = client
	if chosen != nil {
		a.binding = Binding{Transport: string(chosen.ProtocolBinding), ProtocolVersion: string(chosen.ProtocolVersion), URL: chosen.URL}
	}
	return a, nil
}

func parseTransports(names []string) ([]a2asdk.TransportProtocol, error) {
	known := []a2asdk.TransportProtocol{a2asdk.TransportProtocolJSONRPC, a2asdk.TransportProtocolHTTPJSON, a2asdk.TransportProtocolGRPC}
	var out []a2asdk.TransportProtocol
	for _, n := range names {
		found := false
		for _, k := range known {
			if strings.EqualFold(n, string(k)) {
				out = append(out, k)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown transport %q (want JSONRPC, HTTP+JSON or GRPC)", n)
		}
	}
	return out, nil
}

// headerInterceptor adds the static headers to every call as service
// parameters, which each binding sends as HTTP headers or gRPC metadata.
// A value already present (per-call, via WithHeaders) is left alone.
type headerInterceptor struct {
	a2aclient.PassthroughInterceptor
	headers map[string]string
}

func (h *headerInterceptor) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	for k, v := range h.headers {
		if len(req.ServiceParams.Get(k)) == 0 {
			req.ServiceParams.Append(k, v)
		}
	}
	return ctx, nil, nil
}

// WithHeaders returns a context whose calls carry these headers in addition
// to (and taking precedence over) Options.Headers, e.g. a per-user
// Authorization forwarded by the bridge.
func WithHeaders(ctx context.Context, headers map[string]string) context.Context {
	params := make(a2aclient.ServiceParams, len(headers))
	for k, v := range headers {
		params.Append(k, v)
	}
	return a2aclient.AttachServiceParams(ctx, params)
}

// Card returns the resolved card. Do not modify it.
func (a *Agent) Card() *AgentCard { return a.card }

// Name returns Options.Name.
func (a *Agent) Name() string { return a.name }

// Binding returns the interface the client talks to.
func (a *Agent) Binding() Binding { return a.binding }

// Streaming reports the card's capabilities.streaming. When it is false,
// SendStreaming still works: the SDK sends a blocking SendMessage and yields
// its single result.
func (a *Agent) Streaming() bool { return a.card.Capabilities.Streaming }

// ReportsInStoredTask reports an agent whose streams leave out what its run
// did, which only the stored task holds: Mastra (card provider "Mastra")
// reports a task's tool calls and their results in the task's
// metadata.execution, read with GetTask, and in no stream event.
func (a *Agent) ReportsInStoredTask() bool {
	p := a.card.Provider
	return p != nil && strings.EqualFold(strings.TrimSpace(p.Org), "Mastra")
}

// DeclaresExtension reports whether the card lists the A2A extension uri
// (capabilities.extensions), so a client may activate it with the
// A2A-Extensions header.
func (a *Agent) DeclaresExtension(uri string) bool { return declaresExtension(a.card, uri) }

func declaresExtension(card *AgentCard, uri string) bool {
	for _, e := range card.Capabilities.Extensions {
		if e.URI == uri {
			return true
		}
	}
	return false
}

// extensionInterceptor activates extensions on every call, beside those a
// call activates itself (A2UI's, attached per run with WithHeaders): one
// comma-separated A2A-Extensions value, the form every server splits,
// whereas a second header line is lost on servers that read only the first.
type extensionInterceptor struct {
	a2aclient.PassthroughInterceptor
	uris []string
}

func (x *extensionInterceptor) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	var all []string
	for _, v := range req.ServiceParams.Get(extensionsParam) {
		for u := range strings.SplitSeq(v, ",") {
			if u = strings.TrimSpace(u); u != "" && !slices.Contains(all, u) {
				all = append(all, u)
			}
		}
	}
	for _, u := range x.uris {
		if !slices.Contains(all, u) {
			all = append(all, u)
		}
	}
	req.ServiceParams[extensionsParam] = []string{strings.Join(all, ", ")}
	return ctx, nil, nil
}

// extensionsParam is the service parameter's key as ServiceParams keeps
// it (lower case); the v0.3 transports send it as X-A2A-Extensions.
const extensionsParam = "a2a-extensions"

// SendStreaming sends msg with SendStreamingMessage. The request starts when
// iteration starts; breaking out of the loop closes the stream but does not
// cancel the remote task (call CancelTask for that). Iteration ends after
// the first error.
func (a *Agent) SendStreaming(ctx context.Context, msg *Message) iter.Seq2[Event, error] {
	const op = "SendStreamingMessage"
	return func(yield func(Event, error) bool) {
		if msg == nil {
			yield(nil, &Error{Agent: a.name, Op: op, Kind: ErrInvalidOptions, Err: errors.New("nil message")})
			return
		}
		ctx, end := a.startCall(ctx, op)
		for ev, err := range a.client.SendStreamingMessage(ctx, &a2asdk.SendMessageRequest{Message: msg}) {
			if err != nil {
				err = a.wrap(ctx, op, err)
				end(err)
				yield(nil, err)
				return
			}
			if !yield(ev, nil) {
				end(nil)
				return
			}
		}
		end(nil)
	}
}

// Send sends msg with a unary SendMessage. With returnImmediately false the
// agent answers when the task is terminal or interrupted; with true it
// answers as soon as the task exists. The result is a *Task or a *Message.
func (a *Agent) Send(ctx context.Context, msg *Message, returnImmediately bool) (Event, error) {
	const op = "SendMessage"
	if msg == nil {
		return nil, &Error{Agent: a.name, Op: op, Kind: ErrInvalidOptions, Err: errors.New("nil message")}
	}
	req := &a2asdk.SendMessageRequest{Message: msg}
	if returnImmediately {
		// Unset means blocking; for v0.3 peers the SDK attaches a config
		// itself so that the legacy blocking=true default holds.
		req.Config = &a2asdk.SendMessageConfig{ReturnImmediately: true}
	}
	ctx, end := a.startCall(ctx, op)
	res, err := a.client.SendMessage(ctx, req)
	if err != nil {
		err = a.wrap(ctx, op, err)
		end(err)
		return nil, err
	}
	end(nil)
	return res, nil
}

// GetTask fetches the task's current state.
func (a *Agent) GetTask(ctx context.Context, id TaskID) (*Task, error) {
	const op = "GetTask"
	ctx, end := a.startCall(ctx, op)
	t, err := a.client.GetTask(ctx, &a2asdk.GetTaskRequest{ID: id})
	if err != nil {
		err = a.wrap(ctx, op, err)
		end(err)
		return nil, err
	}
	end(nil)
	return t, nil
}

// CancelTask asks the agent to cancel the task and returns it as updated.
// Repeating it on a canceled task returns the task; on another terminal task
// the error is ErrTaskNotCancelable.
func (a *Agent) CancelTask(ctx context.Context, id TaskID) (*Task, error) {
	const op = "CancelTask"
	ctx, end := a.startCall(ctx, op)
	t, err := a.client.CancelTask(ctx, &a2asdk.CancelTaskRequest{ID: id})
	if err != nil {
		err = a.wrap(ctx, op, err)
		end(err)
		return nil, err
	}
	end(nil)
	return t, nil
}

// Subscribe reattaches to a running task; the first event is a Task
// snapshot. It is not portable (§9 fact 10): an a2a-go server answers
// ErrTaskNotFound for a task without a live execution, including
// input-required ones. Use GetTask for state.
func (a *Agent) Subscribe(ctx context.Context, id TaskID) iter.Seq2[Event, error] {
	const op = "SubscribeToTask"
	return func(yield func(Event, error) bool) {
		ctx, end := a.startCall(ctx, op)
		for ev, err := range a.client.SubscribeToTask(ctx, &a2asdk.SubscribeToTaskRequest{ID: id}) {
			if err != nil {
				err = a.wrap(ctx, op, err)
				end(err)
				yield(nil, err)
				return
			}
			if !yield(ev, nil) {
				end(nil)
				return
			}
		}
		end(nil)
	}
}

// Close releases the client (the gRPC connection, idle HTTP connections of
// our own transport). Streams still open fail afterwards.
func (a *Agent) Close() error {
	err := a.client.Destroy()
	a.closeIdle()
	return err
}

func (a *Agent) closeIdle() {
	if a.transport != nil {
		a.transport.CloseIdleConnections()
	}
}

func (a *Agent) wrap(ctx context.Context, op string, err error) error {
	return &Error{Agent: a.name, Op: op, Kind: kindOf(ctx.Err(), err), Err: err}
}
