package observe

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2a-agui-bridge/bridge/agui"
)

func TestMetricsScrape(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	a := m.Agent("travel")
	a.RunStarted()
	a.FirstEvent(30 * time.Millisecond)
	a.Event(agui.EventRunStarted)
	a.Event(agui.EventTextMessageContent)
	a.Event(agui.EventTextMessageContent)
	a.Event(agui.EventType("SOMETHING_NEW"))
	a.RunEnded("error", "a2a_unavailable", 2*time.Second)
	m.CallDone("travel", "SendStreamingMessage", "a2a_unavailable")
	m.CallDone("travel", "GetTask", "") // a success is not an error
	m.Streams(TransportSSE).Inc()
	m.StoreOp("memory", "Append", time.Millisecond, false)
	m.StoreOp("memory", "Append", time.Millisecond, true)
	m.PendingInterrupts("travel", 2)

	if got := testutil.ToFloat64(m.events.WithLabelValues("travel", "TEXT_MESSAGE_CONTENT")); got != 2 {
		t.Errorf("TEXT_MESSAGE_CONTENT events = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.events.WithLabelValues("travel", "SOMETHING_NEW")); got != 1 {
		t.Errorf("an event type not known in advance is counted too: got %v", got)
	}
	if got := testutil.ToFloat64(m.inProgress.WithLabelValues("travel")); got != 0 {
		t.Errorf("runs in progress = %v after the run ended", got)
	}

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`bridge_runs_total{agent="travel",code="a2a_unavailable",outcome="error"} 1`,
		`bridge_run_duration_seconds_count{agent="travel",outcome="error"} 1`,
		`bridge_run_first_event_seconds_bucket{agent="travel",le="0.05"} 1`,
		`bridge_agui_events_total{agent="travel",type="RUN_STARTED"} 1`,
		`bridge_a2a_errors_total{agent="travel",code="a2a_unavailable",method="SendStreamingMessage"} 1`,
		`bridge_active_streams{transport="sse"} 1`,
		`bridge_active_streams{transport="websocket"} 0`,
		`bridge_pending_interrupts{agent="travel"} 2`,
		`bridge_store_operation_duration_seconds_count{backend="memory",op="Append"} 2`,
		`bridge_store_errors_total{backend="memory",op="Append"} 1`,
		"\ngo_goroutines ", // cmd/bridge-bench reads it
		"\nprocess_resident_memory_bytes ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if strings.Contains(body, `method="GetTask"`) {
		t.Error("a successful call was counted as an A2A error")
	}
}

func TestEventIndex(t *testing.T) {
	t.Parallel()
	for i, typ := range eventTypes {
		if got := eventIndex(typ); got != i {
			t.Errorf("eventIndex(%s) = %d, want %d", typ, got, i)
		}
	}
	if got := eventIndex("NOT_AN_EVENT"); got != -1 {
		t.Errorf("eventIndex of an unknown type = %d", got)
	}
}

// Counting an event is on the per-chunk hot path: it must not allocate.
func TestEventDoesNotAllocate(t *testing.T) {
	a := NewMetrics().Agent("a")
	if n := testing.AllocsPerRun(1000, func() { a.Event(agui.EventTextMessageContent) }); n != 0 {
		t.Errorf("Event allocates %v times per call", n)
	}
	m := NewMetrics()
	m.StoreOp("memory", "Append", time.Millisecond, false)
	if n := testing.AllocsPerRun(1000, func() { m.StoreOp("memory", "Append", time.Millisecond, false) }); n != 0 {
		t.Errorf("StoreOp allocates %v times per call", n)
	}
}

func BenchmarkEvent(b *testing.B) {
	a := NewMetrics().Agent("a")
	b.ReportAllocs()
	for b.Loop() {
		a.Event(agui.EventTextMessageContent)
	}
}

func TestNewLogger(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log, err := NewLogger(&buf, LogJSON, "warn")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown", "thread_id", "t1")
	if got := buf.String(); strings.Contains(got, "hidden") || !strings.Contains(got, `"msg":"shown","thread_id":"t1"`) {
		t.Errorf("JSON log at warn = %q", got)
	}
	if _, err := NewLogger(io.Discard, "xml", "info"); err == nil {
		t.Error("format xml accepted")
	}
	if _, err := NewLogger(io.Discard, LogText, "loud"); err == nil {
		t.Error("level loud accepted")
	}
	if l, err := NewLogger(io.Discard, LogText, "debug"); err != nil || !l.Enabled(context.Background(), slog.LevelDebug) {
		t.Errorf("debug logger: %v", err)
	}
}

func TestTracing(t *testing.T) {
	t.Parallel()
	if tr, err := NewTracing(t.Context(), TracingOptions{Exporter: ExporterNone}); tr != nil || err != nil {
		t.Fatalf("exporter none = %v, %v; want tracing off", tr, err)
	}
	var off *Tracing
	if off.Tracer() != nil || off.Propagator() != nil || off.Shutdown(t.Context()) != nil {
		t.Error("nil Tracing is not off")
	}
	if _, err := NewTracing(t.Context(), TracingOptions{Exporter: "zipkin"}); err == nil {
		t.Error("exporter zipkin accepted")
	}
	// The exporters connect lazily: building one needs no collector.
	for _, exp := range []string{ExporterOTLPHTTP, ExporterOTLPGRPC} {
		tr, err := NewTracing(t.Context(), TracingOptions{Exporter: exp, Endpoint: "http://127.0.0.1:1", SampleRatio: 1})
		if err != nil {
			t.Fatalf("%s: %v", exp, err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		_ = tr.Shutdown(ctx) // nothing to export
		cancel()
	}

	mem := tracetest.NewInMemoryExporter()
	tr := NewTracingWith(sdktrace.WithSyncer(mem), 0)
	// Ratio 0 records no new trace, but a sampled parent is followed.
	_, span := tr.Tracer().Start(t.Context(), "root")
	span.End()
	if n := len(mem.GetSpans()); n != 0 {
		t.Fatalf("ratio 0 recorded %d spans", n)
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	_, span = tr.Tracer().Start(trace.ContextWithRemoteSpanContext(t.Context(), parent), "child")
	span.End()
	if spans := mem.GetSpans(); len(spans) != 1 || spans[0].Parent.TraceID() != parent.TraceID() {
		t.Fatalf("a sampled caller's trace was not followed: %v", spans)
	}
}
