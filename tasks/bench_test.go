package tasks

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
	"github.com/a2a-agui-bridge/bridge/observe"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
	"github.com/a2a-agui-bridge/bridge/tasks/store/boltstore"
)

// BenchmarkRunStream drives whole runs of a scripted agent streaming 500
// artifact chunks through the service and reads them back as a client
// does: the bridge's cost per streamed token, storage included. The
// -observed variants add what bridge serve wires: Prometheus metrics (run
// observer, instrumented store) and a tracer recording every run (its
// spans batched to an exporter that drops them), so the difference is
// what observability costs.
func BenchmarkRunStream(b *testing.B) {
	const chunks = 500
	stream := []scripted{{ev: task(a2a.TaskStateWorking, "")}}
	for i := range chunks {
		stream = append(stream, scripted{ev: chunk("token "+strconv.Itoa(i)+" ", i > 0)})
	}
	stream = append(stream, scripted{ev: status(a2a.TaskStateCompleted)})
	for _, name := range []string{"memory", "embedded", "memory-observed", "embedded-observed"} {
		kind, observed := strings.CutSuffix(name, "-observed")
		b.Run(name, func(b *testing.B) {
			var st Store = store.NewMemoryStore()
			if kind == "embedded" {
				s, err := boltstore.OpenBoltStore(filepath.Join(b.TempDir(), "bench.db"))
				if err != nil {
					b.Fatal(err)
				}
				st = s
			}
			defer st.Close()
			agent := &scriptedAgent{streaming: true, stream: stream}
			spec := AgentSpec{Name: "a", Connect: func(context.Context) (Agent, error) { return agent, nil }}
			opt := Options{Store: st, ExclusiveStore: true}
			if observed {
				m := observe.NewMetrics()
				spec.Observer = m.Agent("a")
				opt.Store = store.Observe(st, kind, m)
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
				defer tp.Shutdown(context.Background())
				opt.Tracer = tp.Tracer("bench")
			}
			opt.Agents = []AgentSpec{spec}
			svc := NewService(opt)
			defer svc.Close(context.Background())
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++
				run, err := svc.StartRun(context.Background(), "a", input("th-"+strconv.Itoa(n), "r"))
				if err != nil {
					b.Fatal(err)
				}
				for _, err := range run.Events(context.Background()) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*chunks), "ns/chunk")
		})
	}
}

// BenchmarkTextChunkPath is what the driver does for one streamed text
// chunk (an appended artifact, or a status message of a streaming agent):
// translate, check against the client's verifier, encode.
func BenchmarkTextChunkPath(b *testing.B) {
	for _, kind := range []string{"artifact", "status"} {
		b.Run(kind, func(b *testing.B) {
			in := input("t", "r")
			in.ProtocolVersion = "1.0"
			tr := mapping.Alone(mapping.Options{ThreadID: "t", RunID: "r", V1: true, Now: func() int64 { return 1796290000000 }})
			guard := agui.NewGuard(true)
			step := func(ev a2a.Event) int {
				n := 0
				for _, e := range tr.Translate(ev) {
					if err := guard.Check(e); err != nil {
						b.Fatal(err)
					}
					if _, err := agui.Marshal(e); err != nil {
						b.Fatal(err)
					}
					n++
				}
				return n
			}
			step(task(a2a.TaskStateWorking, ""))
			// Distinct tokens, made before the timer starts: a streaming
			// agent's status messages each carry the next token.
			status := func(id, token string) a2a.Event {
				return &a2a.StatusUpdate{TaskID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
					Message: &a2a.Message{ID: id, Role: a2a.RoleAgent, Parts: []*a2a.Part{a2a.NewTextPart(token)}}}}
			}
			events := make([]a2a.Event, 4096)
			for i := range events {
				token := "token " + strconv.Itoa(i) + " "
				if kind == "artifact" {
					events[i] = chunk(token, true)
				} else {
					events[i] = status("m"+strconv.Itoa(i), token)
				}
			}
			if kind == "artifact" {
				step(chunk("start ", false))
			} else {
				// A task's first status text is held until the next event
				// decides what it is (statusText auto); the second shows
				// both as the answer, and from then on a token is an event.
				step(status("warm-0", "warm "))
				step(status("warm-1", "up "))
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if n := step(events[i%len(events)]); n != 1 {
					b.Fatalf("chunk %d made %d events, want 1", i, n)
				}
				i++
			}
		})
	}
}
