package a2a

import (
	"context"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
)

// testExecutor is a tiny agent. The first word of the message picks the
// behaviour:
//
//	hello  a single Message reply, no task
//	slow   Task, WORKING, then wait until canceled
//	input  Task, WORKING, INPUT_REQUIRED; the next message on the task
//	       resumes it: artifact "weather for <first word>", COMPLETED
//	other  Task, WORKING, three artifact chunks, COMPLETED
type testExecutor struct{}

func (testExecutor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2asdk.Event, error] {
	return func(yield func(a2asdk.Event, error) bool) {
		mode := firstWord(ec.Message)
		if mode == "hello" {
			yield(a2asdk.NewMessageForTask(a2asdk.MessageRoleAgent, ec, a2asdk.NewTextPart("hi")), nil)
			return
		}
		if ec.StoredTask == nil && !yield(a2asdk.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2asdk.NewStatusUpdateEvent(ec, a2asdk.TaskStateWorking, nil), nil) {
			return
		}
		if ec.StoredTask != nil && ec.StoredTask.Status.State == a2asdk.TaskStateInputRequired {
			// Resume: answer with the user's reply and finish.
			if !yield(a2asdk.NewArtifactEvent(ec, a2asdk.NewTextPart("weather for "+mode)), nil) {
				return
			}
			yield(a2asdk.NewStatusUpdateEvent(ec, a2asdk.TaskStateCompleted, nil), nil)
			return
		}
		if mode == "input" {
			yield(a2asdk.NewStatusUpdateEvent(ec, a2asdk.TaskStateInputRequired,
				a2asdk.NewMessageForTask(a2asdk.MessageRoleAgent, ec, a2asdk.NewTextPart("which city?"))), nil)
			return
		}
		if mode == "slow" {
			// The execution context is cancelled when CancelTask is processed.
			<-ctx.Done()
			return
		}
		first := a2asdk.NewArtifactEvent(ec, a2asdk.NewTextPart("chunk-1 "))
		if !yield(first, nil) {
			return
		}
		if !yield(a2asdk.NewArtifactUpdateEvent(ec, first.Artifact.ID, a2asdk.NewTextPart("chunk-2 ")), nil) {
			return
		}
		last := a2asdk.NewArtifactUpdateEvent(ec, first.Artifact.ID, a2asdk.NewTextPart("chunk-3"))
		last.LastChunk = true
		if !yield(last, nil) {
			return
		}
		yield(a2asdk.NewStatusUpdateEvent(ec, a2asdk.TaskStateCompleted, nil), nil)
	}
}

func (testExecutor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2asdk.Event, error] {
	return func(yield func(a2asdk.Event, error) bool) {
		yield(a2asdk.NewStatusUpdateEvent(ec, a2asdk.TaskStateCanceled, nil), nil)
	}
}

func firstWord(m *a2asdk.Message) string {
	if m == nil {
		return ""
	}
	for _, p := range m.Parts {
		if f := strings.Fields(p.Text()); len(f) > 0 {
			return f[0]
		}
	}
	return ""
}

// headerRecorder is a server interceptor that remembers, per A2A method,
// the values of the headers the tests send.
type headerRecorder struct {
	a2asrv.PassthroughCallInterceptor
	mu   sync.Mutex
	seen map[string]map[string][]string // method → lower-case header → values
}

func (r *headerRecorder) Before(ctx context.Context, cc *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]map[string][]string{}
	}
	m := map[string][]string{}
	for k, v := range cc.ServiceParams().List() {
		m[k] = v
	}
	r.seen[cc.Method()] = m
	return ctx, nil, nil
}

func (r *headerRecorder) get(method, header string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[method][strings.ToLower(header)]
}

// testServer serves one a2asrv handler over every binding: JSON-RPC at
// /jsonrpc, REST at /rest/, REST answering application/a2a+json at
// /rest-a2a/, v0.3 JSON-RPC at /v03, v0.3 HTTP+JSON at /v03rest/, and gRPC
// (v1.0 and v0.3 services) on its own listener. Cards are
// registered per test under /cards/<name>/.
type testServer struct {
	URL      string
	GRPCAddr string
	mux      *http.ServeMux
	rec      *headerRecorder

	cardMu      sync.Mutex
	cardHeaders http.Header // headers of the last card request
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	rec := &headerRecorder{}
	// The server logs routine events at Info (e.g. "skipping old event"); keep
	// test output for failures.
	h := a2asrv.NewHandler(testExecutor{}, a2asrv.WithCallInterceptors(rec), a2asrv.WithLogger(slog.New(slog.DiscardHandler)))

	mux := http.NewServeMux()
	mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(h))
	mux.Handle("/rest/", http.StripPrefix("/rest", a2asrv.NewRESTHandler(h)))
	mux.Handle("/rest-a2a/", http.StripPrefix("/rest-a2a", a2aJSONContentType(a2asrv.NewRESTHandler(h))))
	mux.Handle("/v03", a2av0.NewJSONRPCHandler(h))
	mux.Handle("/v03rest/", http.StripPrefix("/v03rest", a2av0.NewRESTHandler(h)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	a2agrpc.NewHandler(h).RegisterWith(gs)
	a2agrpcv0.NewHandler(h).RegisterWith(gs) // a2a.v1.A2AService beside lf.a2a.v1's
	var wg sync.WaitGroup
	wg.Go(func() { _ = gs.Serve(lis) })
	t.Cleanup(func() {
		gs.Stop()
		wg.Wait()
	})
	return &testServer{URL: srv.URL, GRPCAddr: lis.Addr().String(), mux: mux, rec: rec}
}

// iface returns the interface of this server for a binding name used in
// the tests: jsonrpc, rest, rest-a2a, grpc, v03, v03rest, v03grpc.
func (s *testServer) iface(name string) *a2asdk.AgentInterface {
	switch name {
	case "jsonrpc":
		return a2asdk.NewAgentInterface(s.URL+"/jsonrpc", a2asdk.TransportProtocolJSONRPC)
	case "rest":
		return a2asdk.NewAgentInterface(s.URL+"/rest", a2asdk.TransportProtocolHTTPJSON)
	case "rest-a2a":
		return a2asdk.NewAgentInterface(s.URL+"/rest-a2a", a2asdk.TransportProtocolHTTPJSON)
	case "grpc":
		return a2asdk.NewAgentInterface(s.GRPCAddr, a2asdk.TransportProtocolGRPC)
	case "v03":
		return &a2asdk.AgentInterface{URL: s.URL + "/v03", ProtocolBinding: a2asdk.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version}
	case "v03rest":
		return &a2asdk.AgentInterface{URL: s.URL + "/v03rest", ProtocolBinding: a2asdk.TransportProtocolHTTPJSON, ProtocolVersion: a2av0.Version}
	case "v03grpc":
		return &a2asdk.AgentInterface{URL: s.GRPCAddr, ProtocolBinding: a2asdk.TransportProtocolGRPC, ProtocolVersion: a2av0.Version}
	}
	panic("unknown binding " + name)
}

func testCard(ifaces ...*a2asdk.AgentInterface) *a2asdk.AgentCard {
	return &a2asdk.AgentCard{
		Name: "test", Description: "test agent", Version: "1.0.0",
		Capabilities:        a2asdk.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"text/plain"},
		DefaultOutputModes:  []string{"text/plain"},
		Skills:              []a2asdk.AgentSkill{{ID: "s", Name: "s", Description: "s", Tags: []string{"t"}}},
		SupportedInterfaces: ifaces,
	}
}

// serveCard serves h as the card of base URL s.URL/cards/<name> and returns
// that base URL.
func (s *testServer) serveCard(name string, h http.Handler) string {
	base := "/cards/" + url.PathEscape(strings.NewReplacer(" ", "-", "/", "-").Replace(name))
	s.mux.Handle(base+a2asrv.WellKnownAgentCardPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.cardMu.Lock()
		s.cardHeaders = r.Header.Clone()
		s.cardMu.Unlock()
		h.ServeHTTP(w, r)
	}))
	return s.URL + base
}

func (s *testServer) lastCardHeaders() http.Header {
	s.cardMu.Lock()
	defer s.cardMu.Unlock()
	return s.cardHeaders
}

func rawCard(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	})
}

// a2aJSONContentType makes a handler answer application/a2a+json instead of
// application/json, like the JS SDK's REST server (P4).
func a2aJSONContentType(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&ctRewriter{ResponseWriter: w}, r)
	})
}

type ctRewriter struct{ http.ResponseWriter }

func (c *ctRewriter) rewrite() {
	if ct := c.Header().Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		c.Header().Set("Content-Type", "application/a2a+json")
	}
}

func (c *ctRewriter) WriteHeader(code int) { c.rewrite(); c.ResponseWriter.WriteHeader(code) }

func (c *ctRewriter) Write(b []byte) (int, error) { c.rewrite(); return c.ResponseWriter.Write(b) }

// Flush is needed because the SDK's SSE writer type-asserts http.Flusher.
func (c *ctRewriter) Flush() { http.NewResponseController(c.ResponseWriter).Flush() }

// deadAddr returns a loopback address nobody listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close()
	return addr
}
