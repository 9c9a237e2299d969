package agents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
)

const (
	// inactivityTimeout fails an execution that stops emitting events without
	// reaching a final state (a2asrv would otherwise keep it, and its stream,
	// open forever; see A2A-PROTOCOL.md pitfall P3). No demo agent is silent
	// this long on purpose.
	inactivityTimeout = 30 * time.Second
	// keepAlive makes idle SSE streams (the Blocking agent's, a slow network)
	// carry a comment now and then so proxies do not drop them.
	keepAlive = 15 * time.Second
	// shutdownGrace bounds how long Close waits for in-flight streams.
	shutdownGrace = 5 * time.Second
)

// Server serves every demo agent from one process.
//
// Agent NAME lives under http://HOST:PORT/NAME/:
//
//	/NAME/.well-known/agent-card.json      v1.0 card: JSON-RPC, HTTP+JSON, gRPC, in this order
//	/NAME/jsonrpc                          JSON-RPC 1.0
//	/NAME/rest/…                           HTTP+JSON 1.0
//	/NAME/v03/.well-known/agent-card.json  card whose only interface is v0.3 JSON-RPC
//	/NAME/v03/jsonrpc                      JSON-RPC 0.3 (same tasks as the v1.0 endpoints)
//	/NAME/v03rest/.well-known/agent-card.json  card whose only interface is v0.3 HTTP+JSON
//	/NAME/v03rest/a2a/v1/…                 HTTP+JSON 0.3 (the v0.3 wire: /v1 paths, kind-less ProtoJSON)
//	/NAME/v03grpc/.well-known/agent-card.json  card whose only interface is v0.3 gRPC (a2a.v1.A2AService)
//	/NAME/cancels                          GET: the CancelTask calls received, {"taskIds": [...]}
//
// gRPC has no path to route on, so each agent has its own gRPC listener on
// the HTTP listener's host; its card names it ([Server.GRPCAddr]).
type Server struct {
	base  string // http://host:port
	names []string
	grpc  map[string]grpcEndpoint
	http  *http.Server
	// cancels logs each agent's CancelTask calls.
	cancels map[string]*cancelLog

	quit      chan struct{} // closed by Close; ends Slow executions
	httpDone  chan struct{} // closed when the HTTP Serve loop has returned
	fresh     freshConns
	closeOnce sync.Once
	closeErr  error
	serving   sync.WaitGroup
	serveMu   sync.Mutex
	serveErrs []error
}

type grpcEndpoint struct {
	addr string
	srv  *grpc.Server
}

// Start listens on addr ("127.0.0.1:0" picks a free port) for HTTP and on a
// free port of the same host for each agent's gRPC endpoint, and serves all
// demo agents until Close. ctx only bounds the setup; it does not stop the server.
// An unspecified host (":0", "0.0.0.0:0") listens everywhere but advertises
// 127.0.0.1 in the cards.
func Start(ctx context.Context, addr string, opts Options) (*Server, error) {
	var lc net.ListenConfig
	httpLis, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("demo agents: listen: %w", err)
	}
	tcp, ok := httpLis.Addr().(*net.TCPAddr)
	if !ok {
		httpLis.Close()
		return nil, fmt.Errorf("demo agents: %s is not a TCP address", httpLis.Addr())
	}
	listenHost, advertised := "", "127.0.0.1"
	if !tcp.IP.IsUnspecified() {
		listenHost, advertised = tcp.IP.String(), tcp.IP.String()
	}

	s := &Server{
		base:     "http://" + net.JoinHostPort(advertised, fmt.Sprint(tcp.Port)),
		grpc:     make(map[string]grpcEndpoint),
		cancels:  make(map[string]*cancelLog),
		quit:     make(chan struct{}),
		httpDone: make(chan struct{}),
	}
	// Listeners and servers created so far, released if a later step fails.
	var grpcLis []net.Listener
	fail := func(err error) (*Server, error) {
		httpLis.Close()
		for _, l := range grpcLis {
			l.Close()
		}
		for _, ep := range s.grpc {
			ep.srv.Stop()
		}
		return nil, err
	}

	logger := opts.logger()
	mux := http.NewServeMux()
	for _, agent := range catalog(opts, s.quit) {
		lis, err := lc.Listen(ctx, "tcp", net.JoinHostPort(listenHost, "0"))
		if err != nil {
			return fail(fmt.Errorf("demo agents: listen for %s gRPC: %w", agent.Name, err))
		}
		grpcLis = append(grpcLis, lis)
		grpcAddr := net.JoinHostPort(advertised, fmt.Sprint(lis.Addr().(*net.TCPAddr).Port))

		base := s.base + "/" + agent.Name
		card := agent.Card(
			a2a.NewAgentInterface(base+"/jsonrpc", a2a.TransportProtocolJSONRPC),
			a2a.NewAgentInterface(base+"/rest", a2a.TransportProtocolHTTPJSON),
			a2a.NewAgentInterface(grpcAddr, a2a.TransportProtocolGRPC),
		)
		cardV03 := agent.Card(&a2a.AgentInterface{
			URL:             base + "/v03/jsonrpc",
			ProtocolBinding: a2a.TransportProtocolJSONRPC,
			ProtocolVersion: a2av0.Version,
		})

		cardV03REST := agent.Card(&a2a.AgentInterface{
			URL:             base + "/v03rest/a2a",
			ProtocolBinding: a2a.TransportProtocolHTTPJSON,
			ProtocolVersion: a2av0.Version,
		})
		cardV03GRPC := agent.Card(&a2a.AgentInterface{
			URL:             grpcAddr,
			ProtocolBinding: a2a.TransportProtocolGRPC,
			ProtocolVersion: a2av0.Version,
		})

		cancels := &cancelLog{}
		s.cancels[agent.Name] = cancels
		interceptors := []a2asrv.CallInterceptor{cancels}
		if opts.CallInterceptor != nil {
			interceptors = append(interceptors, opts.CallInterceptor)
		}
		handler := a2asrv.NewHandler(agent.Executor,
			a2asrv.WithLogger(logger.With("agent", agent.Name)),
			a2asrv.WithCallInterceptors(interceptors...),
			// Reject what the card does not offer (streaming for Blocking,
			// push everywhere), as a real agent would.
			a2asrv.WithCapabilityChecks(&card.Capabilities),
			a2asrv.WithAgentInactivityTimeout(inactivityTimeout),
		)
		ka := a2asrv.WithTransportKeepAlive(keepAlive)
		prefix := "/" + agent.Name
		mux.Handle("GET "+prefix+a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
		mux.Handle(prefix+"/jsonrpc", a2asrv.NewJSONRPCHandler(handler, ka))
		mux.Handle(prefix+"/rest/", http.StripPrefix(prefix+"/rest", a2asrv.NewRESTHandler(handler, ka)))
		// The a2av0 producer writes the union card (v1 fields plus v0.3 url,
		// preferredTransport, protocolVersion) that both card parsers accept.
		mux.Handle("GET "+prefix+"/v03"+a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(cardV03)))
		mux.Handle(prefix+"/v03/jsonrpc", a2av0.NewJSONRPCHandler(handler, ka))
		mux.Handle("GET "+prefix+"/v03rest"+a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(cardV03REST)))
		mux.Handle(prefix+"/v03rest/a2a/", http.StripPrefix(prefix+"/v03rest/a2a", a2av0.NewRESTHandler(handler, ka)))
		mux.Handle("GET "+prefix+"/v03grpc"+a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(cardV03GRPC)))
		mux.Handle("GET "+prefix+"/cancels", cancels.handler())
		if sg, ok := agent.Executor.(Signin); ok {
			mux.Handle("POST "+prefix+"/authorize", sg.authorizeHandler())
		}

		gs := grpc.NewServer()
		a2agrpc.NewHandler(handler).RegisterWith(gs)
		// v0.3's service (a2a.v1.A2AService) beside v1.0's (lf.a2a.v1).
		a2agrpcv0.NewHandler(handler).RegisterWith(gs)
		s.grpc[agent.Name] = grpcEndpoint{addr: grpcAddr, srv: gs}
		s.names = append(s.names, agent.Name)
	}

	s.http = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		// No ReadTimeout or WriteTimeout: either would cut SSE streams (an
		// expired read deadline cancels the request context in net/http).
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ConnState:      s.fresh.track,
	}
	s.goServe(func() error {
		defer close(s.httpDone)
		return s.http.Serve(httpLis)
	}, http.ErrServerClosed)
	for i, name := range s.names {
		gs, lis := s.grpc[name].srv, grpcLis[i]
		s.goServe(func() error { return gs.Serve(lis) }, grpc.ErrServerStopped)
	}
	return s, nil
}

func (s *Server) goServe(serve func() error, closed error) {
	s.serving.Go(func() {
		if err := serve(); err != nil && !errors.Is(err, closed) {
			s.serveMu.Lock()
			s.serveErrs = append(s.serveErrs, err)
			s.serveMu.Unlock()
		}
	})
}

// URL returns the v1.0 base URL of agent name, with a trailing slash; its card
// is at URL+".well-known/agent-card.json". It returns "" for an unknown name.
func (s *Server) URL(name string) string {
	if _, ok := s.grpc[name]; !ok {
		return ""
	}
	return s.base + "/" + name + "/"
}

// URLv03 returns the base URL of agent name's v0.3-only card, with a trailing
// slash, or "" for an unknown name.
func (s *Server) URLv03(name string) string {
	if _, ok := s.grpc[name]; !ok {
		return ""
	}
	return s.base + "/" + name + "/v03/"
}

// URLv03REST returns the base URL of agent name's card whose only
// interface is v0.3 HTTP+JSON, with a trailing slash, or "" for an unknown
// name.
func (s *Server) URLv03REST(name string) string {
	if _, ok := s.grpc[name]; !ok {
		return ""
	}
	return s.base + "/" + name + "/v03rest/"
}

// URLv03GRPC returns the base URL of agent name's card whose only
// interface is v0.3 gRPC, with a trailing slash, or "" for an unknown name.
func (s *Server) URLv03GRPC(name string) string {
	if _, ok := s.grpc[name]; !ok {
		return ""
	}
	return s.base + "/" + name + "/v03grpc/"
}

// GRPCAddr returns the host:port of agent name's gRPC endpoint, as listed in
// its card, or "" for an unknown name.
func (s *Server) GRPCAddr(name string) string {
	return s.grpc[name].addr
}

// Cancels lists the CancelTask calls agent name received, in order (a task
// cancelled twice appears twice).
func (s *Server) Cancels(name string) []a2a.TaskID {
	if l := s.cancels[name]; l != nil {
		return l.list()
	}
	return nil
}

// Names lists the agents in a fixed order.
func (s *Server) Names() []string {
	return append([]string(nil), s.names...)
}

// Close shuts the server down gracefully: running Slow executions end with
// FAILED, in-flight streams get up to 5s to finish, then connections are cut.
// It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.quit)
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()

		var wg sync.WaitGroup
		for _, ep := range s.grpc {
			wg.Go(func() { stopGRPC(ctx, ep.srv) })
		}
		shutdown := make(chan error, 1)
		go func() { shutdown <- s.http.Shutdown(ctx) }()
		// Shutdown waits up to 5s for connections that never sent a request
		// (StateNew), such as the spare ones http.Transport dials when
		// requests race. They carry no work: once Serve has stopped accepting,
		// close them so Close does not stall.
		<-s.httpDone
		s.fresh.closeAll()

		var errs []error
		if err := <-shutdown; err != nil {
			errs = append(errs, fmt.Errorf("demo agents: http shutdown: %w", err))
			s.http.Close()
		}
		wg.Wait()
		s.serving.Wait()
		s.closeErr = errors.Join(append(errs, s.serveErrs...)...)
	})
	return s.closeErr
}

// stopGRPC stops gs gracefully, or forcibly once ctx is done.
func stopGRPC(ctx context.Context, gs *grpc.Server) {
	done := make(chan struct{})
	go func() {
		gs.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		gs.Stop()
		<-done
	}
}

// freshConns tracks HTTP connections that have not yet sent a request.
type freshConns struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// track is an [http.Server.ConnState] hook.
func (f *freshConns) track(c net.Conn, state http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if state != http.StateNew {
		delete(f.conns, c)
		return
	}
	if f.conns == nil {
		f.conns = make(map[net.Conn]struct{})
	}
	f.conns[c] = struct{}{}
}

func (f *freshConns) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		c.Close()
	}
	clear(f.conns)
}
