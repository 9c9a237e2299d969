package aguihttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// readiness is a Catalog whose Ready answers what the test says.
type readiness struct {
	oneAgent
	rd Readiness
}

func (c readiness) Ready(context.Context) Readiness { return c.rd }

func TestReadyz(t *testing.T) {
	t.Parallel()
	ok, down := Health{Status: HealthOK}, Health{Status: HealthUnavailable, Error: "the agent is unreachable"}
	tests := []struct {
		name   string
		rd     Readiness
		status int
		want   string // a substring of the body
		log    string // a substring of the log ("": nothing logged)
	}{
		{"all up", Readiness{Store: ok, Agents: []AgentHealth{{Name: "a", Health: ok}, {Name: "b", Health: ok}}}, 200, `"status":"ready"`, ""},
		{"one agent down", Readiness{Store: ok, Agents: []AgentHealth{{Name: "a", Health: down}, {Name: "b", Health: ok}}}, 200,
			`{"name":"a","status":"unavailable","error":"the agent is unreachable"}`, ""},
		{"every agent down", Readiness{Store: ok, Agents: []AgentHealth{{Name: "a", Health: down, Cause: "GET http://a/.well-known/agent-card.json: connection refused"}, {Name: "b", Health: down}}}, 503, `"message":"every agent is unreachable"`,
			`agents="a: GET http://a/.well-known/agent-card.json: connection refused; b: the agent is unreachable"`},
		{"store down", Readiness{Store: Health{Status: HealthUnavailable, Error: "closed"}, Agents: []AgentHealth{{Name: "a", Health: ok}}}, 503,
			`"message":"the bridge's store is not available"`, `reason="the bridge's store is not available"`},
		{"no agents", Readiness{Store: ok}, 200, `"agents":[]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logged bytes.Buffer
			h := New(Options{Catalog: readiness{rd: tt.rd}, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.want) {
				t.Fatalf("GET /readyz = %d %s; want %d with %s", rec.Code, rec.Body, tt.status, tt.want)
			}
			// The log names each unreachable agent and why; the body,
			// which clients read, names no host.
			if tt.log != "" && !strings.Contains(logged.String(), tt.log) {
				t.Errorf("log = %q, want it to hold %s", logged.String(), tt.log)
			}
			if strings.Contains(rec.Body.String(), "http://a/") {
				t.Errorf("body names the agent's URL: %s", rec.Body)
			}
			var body struct {
				Agents []AgentHealth `json:"agents"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body.Agents) != len(tt.rd.Agents) {
				t.Fatalf("body lists %d agents (%v), want each of %d", len(body.Agents), err, len(tt.rd.Agents))
			}
		})
	}
}

func TestMetricsRoute(t *testing.T) {
	t.Parallel()
	h := New(Options{Catalog: oneAgent{}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("GET /metrics without Options.Metrics = %d, want 404", rec.Code)
	}
	h = New(Options{Catalog: oneAgent{}, Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "go_goroutines 1\n")
	})})
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "go_goroutines 1\n" {
		t.Fatalf("GET /metrics = %d %q", rec.Code, rec.Body)
	}
}

type counter struct{ n, max atomic.Int64 }

func (c *counter) Inc() {
	if v := c.n.Add(1); v > c.max.Load() {
		c.max.Store(v)
	}
}
func (c *counter) Dec() { c.n.Add(-1) }

// A run's request carries the caller's trace context to the Runner, and
// its SSE stream is counted while it is open.
func TestRunRequestTraceAndStreamGauge(t *testing.T) {
	t.Parallel()
	var got trace.SpanContext
	run := RunnerFunc(func(ctx context.Context, _ string, _ *agui.RunAgentInput) (Stream, error) {
		got = trace.SpanContextFromContext(ctx)
		return slowStream{events: [][]byte{
			[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
			[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
		}}, nil
	})
	sse := &counter{}
	h := New(Options{Runner: run, Catalog: oneAgent{}, SSEStreams: sse, Propagator: propagation.TraceContext{}, KeepAlive: time.Second})
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/agents/a",
		strings.NewReader(`{"threadId":"t","runId":"r","messages":[]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if got.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || got.SpanID().String() != "00f067aa0ba902b7" || !got.IsRemote() {
		t.Errorf("the runner got span context %v, want the caller's", got)
	}
	if sse.max.Load() != 1 || sse.n.Load() != 0 {
		t.Errorf("SSE gauge went up to %d and ended at %d, want 1 and 0", sse.max.Load(), sse.n.Load())
	}
}
