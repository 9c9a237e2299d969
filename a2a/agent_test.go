package a2a

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/go-cmp/cmp"
)

// pureV03Card is a card as a v0.3-only server (e.g. @a2a-js/sdk 0.3.x)
// writes it: no supportedInterfaces, type-style security schemes, "security".
const pureV03Card = `{
  "name": "v03", "description": "v0.3 agent", "version": "1.0.0",
  "protocolVersion": "0.3.0",
  "url": %q, "preferredTransport": "JSONRPC",
  "capabilities": {"streaming": true},
  "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
  "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
  "security": [{"bearer": []}],
  "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"]}]
}`

// protoJSONCard is a v1.0 card as the spec's ProtoJSON (and the JS SDK)
// writes it, with StringList scopes (P1).
const protoJSONCard = `{
  "name": "list", "description": "ProtoJSON card", "version": "1.0.0",
  "supportedInterfaces": [{"url": %q, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
  "capabilities": {"streaming": true},
  "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
  "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
  "securityRequirements": [{"schemes": {"bearer": {"list": ["read", "write"]}}}],
  "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"],
              "securityRequirements": [{"schemes": {"bearer": {}}}]}]
}`

type bindingCase struct {
	name    string
	card    func(s *testServer) http.Handler
	opts    Options // URL filled in by the test
	binding func(s *testServer) Binding
}

func bindingCases() []bindingCase {
	v1 := func(name string) func(s *testServer) Binding {
		return func(s *testServer) Binding {
			i := s.iface(name)
			return Binding{Transport: string(i.ProtocolBinding), ProtocolVersion: "1.0", URL: i.URL}
		}
	}
	static := func(names ...string) func(s *testServer) http.Handler {
		return func(s *testServer) http.Handler {
			var ifaces []*a2asdk.AgentInterface
			for _, n := range names {
				ifaces = append(ifaces, s.iface(n))
			}
			return a2asrv.NewStaticAgentCardHandler(testCard(ifaces...))
		}
	}
	v03 := func(s *testServer) Binding {
		return Binding{Transport: TransportJSONRPC, ProtocolVersion: "0.3", URL: s.URL + "/v03"}
	}
	return []bindingCase{
		{name: "jsonrpc", card: static("jsonrpc"), binding: v1("jsonrpc")},
		{name: "rest", card: static("rest"), binding: v1("rest")},
		{name: "rest a2a+json", card: static("rest-a2a"), binding: v1("rest-a2a")},
		{name: "grpc", card: static("grpc"), binding: v1("grpc")},
		{
			name: "v0.3 union card",
			card: func(s *testServer) http.Handler {
				return a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(testCard(s.iface("v03"))))
			},
			binding: v03,
		},
		{
			name: "v0.3 pure card",
			card: func(s *testServer) http.Handler { return rawCard(fmt.Sprintf(pureV03Card, s.URL+"/v03")) },
			binding: func(s *testServer) Binding {
				return Binding{Transport: TransportJSONRPC, ProtocolVersion: "0.3.0", URL: s.URL + "/v03"}
			},
		},
		{
			name: "v0.3 union card, HTTP+JSON only",
			card: func(s *testServer) http.Handler {
				return a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(testCard(s.iface("v03rest"))))
			},
			binding: func(s *testServer) Binding {
				return Binding{Transport: TransportHTTPJSON, ProtocolVersion: "0.3", URL: s.URL + "/v03rest"}
			},
		},
		{
			name: "v0.3 pure card, HTTP+JSON only",
			card: func(s *testServer) http.Handler {
				return rawCard(strings.Replace(fmt.Sprintf(pureV03Card, s.URL+"/v03rest"), `"JSONRPC"`, `"HTTP+JSON"`, 1))
			},
			binding: func(s *testServer) Binding {
				return Binding{Transport: TransportHTTPJSON, ProtocolVersion: "0.3.0", URL: s.URL + "/v03rest"}
			},
		},
		{
			name: "v0.3 union card, gRPC only",
			card: func(s *testServer) http.Handler {
				return a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(testCard(s.iface("v03grpc"))))
			},
			binding: func(s *testServer) Binding {
				return Binding{Transport: TransportGRPC, ProtocolVersion: "0.3", URL: s.GRPCAddr}
			},
		},
		{
			name:    "protojson list card",
			card:    func(s *testServer) http.Handler { return rawCard(fmt.Sprintf(protoJSONCard, s.URL+"/jsonrpc")) },
			binding: v1("jsonrpc"),
		},
		{name: "all bindings, card order", card: static("jsonrpc", "rest", "grpc", "v03"), binding: v1("jsonrpc")},
		{name: "all bindings, prefer grpc", card: static("v03", "jsonrpc", "rest", "grpc"), opts: Options{Transports: []string{"GRPC", "JSONRPC"}}, binding: v1("grpc")},
		{name: "all bindings, prefer rest", card: static("v03", "jsonrpc", "grpc", "rest"), opts: Options{Transports: []string{"http+json"}}, binding: v1("rest")},
	}
}

// summarize turns events into comparable strings; ids are random.
func summarize(ev Event) string {
	switch e := ev.(type) {
	case *Task:
		return "task " + string(e.Status.State)
	case *Message:
		return "message " + textOf(e.Parts)
	case *StatusUpdate:
		return "status " + string(e.Status.State)
	case *ArtifactUpdate:
		return fmt.Sprintf("artifact append=%v last=%v %q", e.Append, e.LastChunk, textOf(e.Artifact.Parts))
	}
	return fmt.Sprintf("unknown %T", ev)
}

func textOf(parts []*Part) string {
	var s string
	for _, p := range parts {
		s += p.Text()
	}
	return s
}

func collect(t *testing.T, seq iter.Seq2[Event, error]) ([]string, *Task, error) {
	t.Helper()
	var got []string
	var task *Task
	for ev, err := range seq {
		if err != nil {
			return got, task, err
		}
		if tk, ok := ev.(*Task); ok && task == nil {
			task = tk
		}
		got = append(got, summarize(ev))
	}
	return got, task, nil
}

var staticHeaders = map[string]string{"Authorization": "Bearer t0k", "X-Bridge-Test": "yes"}

func TestBindings(t *testing.T) {
	t.Parallel()
	for _, tc := range bindingCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			s := newTestServer(t)
			o := tc.opts
			o.Name = "test"
			o.URL = s.serveCard("c", tc.card(s))
			o.Headers = staticHeaders
			o.AllowHosts = []string{s.GRPCAddr} // the gRPC server has its own port
			agent, err := Dial(ctx, o)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			t.Cleanup(func() { _ = agent.Close() })

			if diff := cmp.Diff(tc.binding(s), agent.Binding()); diff != "" {
				t.Errorf("Binding (-want +got):\n%s", diff)
			}
			if !agent.Streaming() {
				t.Error("Streaming() = false, card says true")
			}
			if h := s.lastCardHeaders(); h.Get("A2A-Version") != "1.0" || h.Get("Authorization") != "Bearer t0k" {
				t.Errorf("card request headers: A2A-Version=%q Authorization=%q", h.Get("A2A-Version"), h.Get("Authorization"))
			}

			// Streaming send: every event kind arrives in order.
			got, task, err := collect(t, agent.SendStreaming(ctx, NewUserMessage("", "", NewTextPart("stream please"))))
			if err != nil {
				t.Fatalf("SendStreaming: %v", err)
			}
			want := []string{
				"task " + string(TaskStateSubmitted),
				"status " + string(TaskStateWorking),
				`artifact append=false last=false "chunk-1 "`,
				`artifact append=true last=false "chunk-2 "`,
				`artifact append=true last=true "chunk-3"`,
				"status " + string(TaskStateCompleted),
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stream (-want +got):\n%s", diff)
			}
			if task == nil {
				t.Fatal("stream had no task")
			}
			done, err := agent.GetTask(ctx, task.ID)
			if err != nil {
				t.Fatalf("GetTask: %v", err)
			}
			if done.Status.State != TaskStateCompleted || len(done.Artifacts) != 1 || textOf(done.Artifacts[0].Parts) != "chunk-1 chunk-2 chunk-3" {
				t.Errorf("GetTask = state %s, %d artifacts", done.Status.State, len(done.Artifacts))
			}

			// Input required, then resume on the same task and context.
			got, asked, err := collect(t, agent.SendStreaming(ctx, NewUserMessage("", "", NewTextPart("input"))))
			if err != nil || asked == nil {
				t.Fatalf("SendStreaming input: %v (task %v)", err, asked)
			}
			if want := "status " + string(TaskStateInputRequired); got[len(got)-1] != want {
				t.Fatalf("input stream ended with %q, want %q", got[len(got)-1], want)
			}
			got, _, err = collect(t, agent.SendStreaming(ctx, NewUserMessage(asked.ContextID, asked.ID, NewTextPart("Paris"))))
			if err != nil {
				t.Fatalf("SendStreaming resume: %v", err)
			}
			if want := []string{`artifact append=false last=false "weather for Paris"`, "status " + string(TaskStateCompleted)}; !hasSuffix(got, want) {
				t.Errorf("resume stream = %q, want it to end with %q", got, want)
			}

			// A direct Message reply over a unary send.
			res, err := agent.Send(ctx, NewUserMessage("", "", NewTextPart("hello")), false)
			if err != nil {
				t.Fatalf("Send hello: %v", err)
			}
			if got := summarize(res); got != "message hi" {
				t.Errorf("Send hello = %s", got)
			}

			// A slow task: return immediately, subscribe, cancel, watch it end.
			res, err = agent.Send(ctx, NewUserMessage("", "", NewTextPart("slow")), true)
			if err != nil {
				t.Fatalf("Send slow: %v", err)
			}
			slow, ok := res.(*Task)
			if !ok {
				t.Fatalf("Send slow returned %T, want *Task", res)
			}
			next, stop := iter.Pull2(agent.Subscribe(ctx, slow.ID))
			defer stop()
			first, err, ok := next()
			if !ok || err != nil {
				t.Fatalf("Subscribe first event: ok=%v err=%v", ok, err)
			}
			if snap, isTask := first.(*Task); !isTask || snap.ID != slow.ID {
				t.Fatalf("Subscribe first event = %s, want the task snapshot", summarize(first))
			}
			canceled, err := agent.CancelTask(ctx, slow.ID)
			if err != nil {
				t.Fatalf("CancelTask: %v", err)
			}
			if canceled.Status.State != TaskStateCanceled {
				t.Errorf("CancelTask state = %s", canceled.Status.State)
			}
			var last string
			for {
				ev, err, ok := next()
				if !ok {
					break
				}
				if err != nil {
					t.Fatalf("Subscribe: %v", err)
				}
				last = summarize(ev)
			}
			if want := "status " + string(TaskStateCanceled); last != want {
				t.Errorf("subscription ended with %q, want %q", last, want)
			}
			if after, err := agent.GetTask(ctx, slow.ID); err != nil || after.Status.State != TaskStateCanceled {
				t.Errorf("GetTask after cancel = %v, %v", after, err)
			}

			// Typed errors survive every binding.
			_, err = agent.GetTask(ctx, "no-such-task")
			if !errors.Is(err, ErrTaskNotFound) {
				t.Errorf("GetTask(unknown) = %v, want ErrTaskNotFound", err)
			}
			if got, want := Classify(err), "a2a_task_not_found"; got.Code != want || got.HTTPStatus != http.StatusNotFound {
				t.Errorf("Classify = %+v, want %s/404", got, want)
			}
			var ae *Error
			if !errors.As(err, &ae) || ae.Op != "GetTask" || ae.Agent != "test" {
				t.Errorf("error %#v is not an *Error for GetTask/test", err)
			}

			// Static headers reached the server on every call.
			for _, m := range []string{"SendStreamingMessage", "SendMessage", "GetTask", "CancelTask", "SubscribeToTask"} {
				if got := s.rec.get(m, "Authorization"); !cmp.Equal(got, []string{"Bearer t0k"}) {
					t.Errorf("%s: Authorization = %q", m, got)
				}
				if got := s.rec.get(m, "X-Bridge-Test"); !cmp.Equal(got, []string{"yes"}) {
					t.Errorf("%s: X-Bridge-Test = %q", m, got)
				}
			}
		})
	}
}

func TestProtoJSONCardScopes(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	agent, err := Dial(t.Context(), Options{Name: "list", URL: s.serveCard("list", rawCard(fmt.Sprintf(protoJSONCard, s.URL+"/jsonrpc")))})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	card := agent.Card()
	want := a2asdk.SecurityRequirementsOptions{{"bearer": {"read", "write"}}}
	if diff := cmp.Diff(want, card.SecurityRequirements); diff != "" {
		t.Errorf("securityRequirements (-want +got):\n%s", diff)
	}
	wantSkill := a2asdk.SecurityRequirementsOptions{{"bearer": {}}}
	if diff := cmp.Diff(wantSkill, card.Skills[0].SecurityRequirements); diff != "" {
		t.Errorf("skill securityRequirements (-want +got):\n%s", diff)
	}
}

func TestPerCallHeadersWin(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	agent, err := Dial(t.Context(), Options{URL: s.serveCard("c", a2asrv.NewStaticAgentCardHandler(testCard(s.iface("jsonrpc")))), Headers: staticHeaders})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	ctx := WithHeaders(t.Context(), map[string]string{"authorization": "Bearer user"})
	if _, err := agent.GetTask(ctx, "x"); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("GetTask: %v", err)
	}
	if got := s.rec.get("GetTask", "Authorization"); !cmp.Equal(got, []string{"Bearer user"}) {
		t.Errorf("Authorization = %q, want the per-call value only", got)
	}
}

func TestCardURL(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	s.mux.Handle("/custom/card.json", a2asrv.NewStaticAgentCardHandler(testCard(s.iface("rest"))))
	agent, err := Dial(t.Context(), Options{URL: "http://ignored.invalid", CardURL: s.URL + "/custom/card.json"})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if got := agent.Binding().Transport; got != TransportHTTPJSON {
		t.Errorf("transport = %s", got)
	}
}

func TestStreamCanceledByCaller(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for _, b := range []string{"jsonrpc", "rest", "grpc", "v03"} {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			agent, err := Dial(t.Context(), Options{URL: s.serveCard(b, a2asrv.NewStaticAgentCardHandler(testCard(s.iface(b)))), AllowHosts: []string{s.GRPCAddr}})
			if err != nil {
				t.Fatal(err)
			}
			defer agent.Close()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var taskID TaskID
			var streamErr error
			for ev, err := range agent.SendStreaming(ctx, NewUserMessage("", "", NewTextPart("slow"))) {
				if err != nil {
					streamErr = err
					break
				}
				if taskID == "" {
					taskID = ev.TaskInfo().TaskID
				}
				if se, ok := ev.(*StatusUpdate); ok && se.Status.State == TaskStateWorking {
					cancel() // the client goes away mid-stream
				}
			}
			if got := Classify(streamErr); got.Code != "a2a_canceled" {
				t.Errorf("Classify(%v) = %+v, want a2a_canceled", streamErr, got)
			}
			// Stopping the stream does not cancel the task (§4); do it explicitly.
			task, err := agent.CancelTask(t.Context(), taskID)
			if err != nil || task.Status.State != TaskStateCanceled {
				t.Errorf("CancelTask = %v, %v", task, err)
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for _, b := range []string{"jsonrpc", "rest", "grpc", "v03"} {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			agent, err := Dial(t.Context(), Options{URL: s.serveCard(b, a2asrv.NewStaticAgentCardHandler(testCard(s.iface(b)))), AllowHosts: []string{s.GRPCAddr}})
			if err != nil {
				t.Fatal(err)
			}
			defer agent.Close()
			ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Hour))
			defer cancel()
			_, err = agent.GetTask(ctx, "x")
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want DeadlineExceeded", err)
			}
			if got := Classify(err); got.Code != "a2a_timeout" || got.HTTPStatus != http.StatusGatewayTimeout {
				t.Errorf("Classify = %+v", got)
			}
		})
	}
}

// TestNonStreamingCard: when the card says streaming is off, SendStreaming
// still works; the SDK sends a blocking SendMessage and yields its result.
func TestNonStreamingCard(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	card := testCard(s.iface("jsonrpc"))
	card.Capabilities.Streaming = false
	agent, err := Dial(t.Context(), Options{URL: s.serveCard("c", a2asrv.NewStaticAgentCardHandler(card))})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if agent.Streaming() {
		t.Error("Streaming() = true")
	}
	got, _, err := collect(t, agent.SendStreaming(t.Context(), NewUserMessage("", "", NewTextPart("stream"))))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"task " + string(TaskStateCompleted)}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// TestCustomHTTPClient: a caller-supplied client carries the card fetch and
// every HTTP call.
func TestCustomHTTPClient(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	ct := &countingTransport{base: http.DefaultTransport}
	agent, err := Dial(t.Context(), Options{
		URL:        s.serveCard("c", a2asrv.NewStaticAgentCardHandler(testCard(s.iface("rest")))),
		HTTPClient: &http.Client{Transport: ct},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if _, err := agent.GetTask(t.Context(), "x"); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("GetTask: %v", err)
	}
	if got := ct.n.Load(); got != 2 {
		t.Errorf("custom transport saw %d requests, want 2 (card + GetTask)", got)
	}
}

func hasSuffix(got, want []string) bool {
	return len(got) >= len(want) && cmp.Equal(got[len(got)-len(want):], want)
}
