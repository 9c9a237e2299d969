package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2asrv"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2a-agui-bridge/bridge/observe"
)

// scrape reads GET /metrics as Prometheus would.
func (b *testBridge) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(b.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// sample is the value of the metric with exactly these labels (a
// histogram's sample count), or -1 when there is none.
func sample(mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	mf := mfs[name]
	if mf == nil {
		return -1
	}
next:
	for _, m := range mf.GetMetric() {
		if len(m.GetLabel())*2 != len(labels) {
			continue
		}
		for i := 0; i < len(labels); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// The metrics move with real runs through real a2asrv agents: every
// outcome, the events the client read, A2A errors by code, open streams,
// pending interrupts and store latency; and the Go runtime's gauges that
// cmd/bridge-bench reads are there.
func TestMetricsAfterRealRuns(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	before := b.scrape(t)
	if v := sample(before, "go_goroutines"); v <= 0 {
		t.Fatalf("go_goroutines = %v", v)
	}
	if v := sample(before, "bridge_runs_total", "agent", "streamer", "outcome", "finished", "code", ""); v != -1 {
		t.Fatalf("a run counted before any ran: %v", v)
	}

	streamed := b.post(t, "streamer", runBody("th-m1", "run-1", true, userMsg("u1", "Hello")))
	streamed.check(t, true)
	b.post(t, "asker", runBody("th-m2", "run-1", true, userMsg("u1", "Weather?"))).check(t, true)
	b.post(t, "failer-grpc", runBody("th-m3", "run-1", true, userMsg("u1", "Do it"))).check(t, true)
	if r := b.post(t, "unreachable", runBody("th-m4", "run-1", true, userMsg("u1", "Hi"))); r.status != http.StatusBadGateway {
		t.Fatalf("unreachable agent: %d %s", r.status, r.body)
	}
	ws := b.mustDialWS(t, "streamer")
	ws.run(t, runBody("th-m5", "run-1", true, userMsg("u1", "Hello")))
	ws.untilTerminal(t)

	m := b.scrape(t)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"bridge_runs_total", []string{"agent", "streamer", "outcome", "finished", "code", ""}, 2},
		{"bridge_runs_total", []string{"agent", "asker", "outcome", "interrupted", "code", ""}, 1},
		{"bridge_runs_total", []string{"agent", "failer-grpc", "outcome", "error", "code", "a2a_failed"}, 1},
		{"bridge_runs_total", []string{"agent", "unreachable", "outcome", "error", "code", "a2a_card_unavailable"}, 1},
		{"bridge_run_duration_seconds", []string{"agent", "streamer", "outcome", "finished"}, 2},
		{"bridge_run_first_event_seconds", []string{"agent", "streamer"}, 2},
		{"bridge_run_first_event_seconds", []string{"agent", "unreachable"}, 0},
		{"bridge_runs_in_progress", []string{"agent", "streamer"}, 0},
		{"bridge_a2a_errors_total", []string{"agent", "unreachable", "method", "card", "code", "a2a_card_unavailable"}, 1},
		{"bridge_pending_interrupts", []string{"agent", "asker"}, 1},
		{"bridge_active_streams", []string{"transport", "websocket"}, 1}, // still open
	} {
		if got := sample(m, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Every event the SSE client read was counted (the WebSocket run of
	// the same agent produced as many of each type).
	perType := map[agui.EventType]float64{}
	for _, e := range streamed.events {
		perType[e.Type()] += 2
	}
	for typ, n := range perType {
		got := sample(m, "bridge_agui_events_total", "agent", "streamer", "type", string(typ))
		if typ == agui.EventTextMessageContent || typ == agui.EventStateDelta {
			// Counted as translated; a client may get fewer, merged
			// while the store was busy.
			if got < n {
				t.Errorf("bridge_agui_events_total{streamer,%s} = %v, want at least %v", typ, got, n)
			}
			continue
		}
		if got != n {
			t.Errorf("bridge_agui_events_total{streamer,%s} = %v, want %v", typ, got, n)
		}
	}
	for _, op := range []string{"GetThread", "PutThread", "PutThreadAndAppend", "Append", "LastSeq"} {
		if got := sample(m, "bridge_store_operation_duration_seconds", "backend", "memory", "op", op); got < 1 {
			t.Errorf("store op %s observed %v times", op, got)
		}
	}

	// Closed connections leave the gauge.
	ws.conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for sample(b.scrape(t), "bridge_active_streams", "transport", "websocket") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the closed WebSocket is still counted")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := sample(b.scrape(t), "bridge_active_streams", "transport", "sse"); got != 0 {
		t.Errorf("SSE streams open after every run ended: %v", got)
	}
}

// traceparents records the traceparent of every call the demo agents
// receive, by method.
type traceparents struct {
	a2asrv.PassthroughCallInterceptor
	mu   sync.Mutex
	seen []string // "method traceparent"
}

func (p *traceparents) Before(ctx context.Context, cc *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	v, _ := cc.ServiceParams().Get("traceparent")
	p.mu.Lock()
	p.seen = append(p.seen, cc.Method()+" "+strings.Join(v, ","))
	p.mu.Unlock()
	return ctx, nil, nil
}

func (p *traceparents) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.seen
	p.seen = nil
	return out
}

// A run is a span that joins the caller's trace (its traceparent), with
// one client span per A2A call inside it; the agent receives the call
// span's trace context over every binding.
func TestTraceOfARun(t *testing.T) {
	t.Parallel()
	mem := tracetest.NewInMemoryExporter()
	tracing := observe.NewTracingWith(sdktrace.WithSyncer(mem), 1)
	seen := &traceparents{}
	b := startBridgeTraced(t, agents.Options{Delay: -1, CallInterceptor: seen}, tracing, nil)

	for _, agent := range []string{"streamer-jsonrpc", "streamer-rest", "streamer-grpc", "streamer-v03"} {
		t.Run(agent, func(t *testing.T) {
			// Not parallel: the exporter and the interceptor are shared.
			mem.Reset()
			seen.take()
			const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, b.url+"/agents/"+agent,
				bytes.NewReader(runBody("th-trace-"+agent, "run-1", true, userMsg("u1", "Hello"))))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Contains(body, []byte("RUN_FINISHED")) {
				t.Fatalf("run: %d %s", resp.StatusCode, body)
			}

			// The run's span ends before its terminal event is readable; the
			// streaming call's span ends when the driver stops reading the
			// stream, just after: wait for it.
			var run tracetest.SpanStub
			var calls []tracetest.SpanStub
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				run, calls = tracetest.SpanStub{}, nil
				for _, s := range mem.GetSpans() {
					switch {
					case s.Name == "bridge.run":
						run = s
					case strings.HasPrefix(s.Name, "a2a/"):
						calls = append(calls, s)
					}
				}
				if slices.ContainsFunc(calls, func(s tracetest.SpanStub) bool { return s.Name == "a2a/SendStreamingMessage" }) ||
					time.Now().After(deadline) {
					break
				}
			}
			if run.Name == "" {
				t.Fatalf("no run span among %d spans", len(mem.GetSpans()))
			}
			if run.Parent.TraceID().String() != callerTrace || run.Parent.SpanID().String() != callerSpan {
				t.Errorf("run span's parent = %v, want the caller's traceparent", run.Parent)
			}
			if !hasAttr(run, "bridge.run.outcome", "finished") || !hasAttr(run, "agui.thread_id", "th-trace-"+agent) {
				t.Errorf("run span attributes %v", run.Attributes)
			}
			var stream *tracetest.SpanStub
			for i, c := range calls {
				if c.Parent.SpanID() == run.SpanContext.SpanID() && c.Name == "a2a/SendStreamingMessage" {
					stream = &calls[i]
				}
			}
			if stream == nil {
				t.Fatalf("no a2a/SendStreamingMessage span under the run span; A2A spans: %v", names(calls))
			}
			if stream.SpanKind != trace.SpanKindClient || stream.SpanContext.TraceID().String() != callerTrace {
				t.Errorf("A2A call span: kind %v trace %v", stream.SpanKind, stream.SpanContext.TraceID())
			}

			want := "00-" + callerTrace + "-" + stream.SpanContext.SpanID().String() + "-01"
			got := seen.take()
			found := false
			for _, s := range got {
				method, tp, _ := strings.Cut(s, " ")
				if strings.Contains(strings.ToLower(method), "stream") && tp == want {
					found = true
				}
			}
			if !found {
				t.Errorf("the agent did not receive traceparent %s on the streaming call; it received %q", want, got)
			}
		})
	}
}

func hasAttr(s tracetest.SpanStub, key, value string) bool {
	for _, a := range s.Attributes {
		if string(a.Key) == key && a.Value.String() == value {
			return true
		}
	}
	return false
}

func names(spans []tracetest.SpanStub) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name+"("+s.Parent.SpanID().String()+")")
	}
	return out
}

// With tracing off (the default) no traceparent is read or sent.
func TestNoTraceparentWithTracingOff(t *testing.T) {
	t.Parallel()
	seen := &traceparents{}
	b := startBridgeTraced(t, agents.Options{Delay: -1, CallInterceptor: seen}, nil, nil)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, b.url+"/agents/streamer",
		bytes.NewReader(runBody("th-notrace", "run-1", true, userMsg("u1", "Hello"))))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, s := range seen.take() {
		if _, tp, _ := strings.Cut(s, " "); tp != "" {
			t.Errorf("the agent received a traceparent with tracing off: %s", s)
		}
	}
}

// GET /readyz lists the store and every agent; one agent down leaves the
// bridge ready, every agent down does not.
func TestReadyzReflectsAgents(t *testing.T) {
	t.Parallel()
	readyz := func(b *testBridge) (int, map[string]any) {
		resp, err := http.Get(b.url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body
	}
	agentStatus := func(body map[string]any, name string) string {
		list, _ := body["agents"].([]any)
		for _, a := range list {
			if m, _ := a.(map[string]any); m["name"] == name {
				s, _ := m["status"].(string)
				return s
			}
		}
		return "missing"
	}

	b := startBridge(t, nil) // its agents include "unreachable"
	status, body := readyz(b)
	if status != http.StatusOK || body["status"] != "ready" {
		t.Fatalf("readyz with one agent down: %d %v", status, body)
	}
	if agentStatus(body, "streamer") != "ok" || agentStatus(body, "unreachable") != "unavailable" {
		t.Errorf("agents' health: %v", body["agents"])
	}
	if s, _ := body["store"].(map[string]any); s["status"] != "ok" {
		t.Errorf("store health: %v", body["store"])
	}

	down := startBridge(t, func(c *config.Config) {
		c.Agents = []config.Agent{{Name: "gone", URL: "http://127.0.0.1:1/"}, {Name: "gone-too", URL: "http://127.0.0.1:1/x/"}}
	})
	status, body = readyz(down)
	if status != http.StatusServiceUnavailable || body["status"] != "not_ready" {
		t.Fatalf("readyz with every agent down: %d %v", status, body)
	}
	if e, _ := body["error"].(map[string]any); e["code"] != "not_ready" || agentStatus(body, "gone-too") != "unavailable" {
		t.Errorf("body %v", body)
	}
}
