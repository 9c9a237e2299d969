package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
	"github.com/a2a-agui-bridge/bridge/tasks/store/boltstore"
)

// recorder is a hand-written RunObserver and StoreObserver.
type recorder struct {
	mu      sync.Mutex
	started int
	first   int
	events  map[agui.EventType]int
	ended   []string // outcome/code
	pending map[string]int
	ops     map[string]int
	failed  int
}

func newRecorder() *recorder {
	return &recorder{events: map[agui.EventType]int{}, pending: map[string]int{}, ops: map[string]int{}}
}

func (r *recorder) RunStarted() { r.mu.Lock(); r.started++; r.mu.Unlock() }
func (r *recorder) FirstEvent(time.Duration) {
	r.mu.Lock()
	r.first++
	r.mu.Unlock()
}
func (r *recorder) Event(t agui.EventType) { r.mu.Lock(); r.events[t]++; r.mu.Unlock() }
func (r *recorder) RunEnded(outcome, code string, elapsed time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, outcome+"/"+code)
}
func (r *recorder) StoreOp(_, op string, _ time.Duration, failed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops[op]++
	if failed {
		r.failed++
	}
}
func (r *recorder) PendingInterrupts(agent string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending[agent] = n
}

func (r *recorder) snapshot() (started, first int, ended []string, pending int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started, r.first, append([]string(nil), r.ended...), r.pending["a"]
}

// spanAgent records the span each streaming call was made in.
type spanAgent struct {
	*scriptedAgent
	mu    sync.Mutex
	spans []trace.SpanContext
}

func (s *spanAgent) SendStreaming(ctx context.Context, msg *a2a.Message) iter.Seq2[a2a.Event, error] {
	s.mu.Lock()
	s.spans = append(s.spans, trace.SpanContextFromContext(ctx))
	s.mu.Unlock()
	return s.scriptedAgent.SendStreaming(ctx, msg)
}

func TestRunsAreObserved(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		stream  []scripted
		wantErr bool
		ended   string
		pending int
	}{
		{"finished", []scripted{{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("hello", false)}, {ev: status(a2a.TaskStateCompleted)}},
			false, OutcomeFinished + "/", 0},
		{"interrupted", []scripted{{ev: task(a2a.TaskStateSubmitted, "")}, {ev: status(a2a.TaskStateInputRequired, a2a.NewTextPart("Which city?"))}},
			false, OutcomeInterrupted + "/", 1},
		{"failed", []scripted{{ev: task(a2a.TaskStateWorking, "")}, {ev: status(a2a.TaskStateFailed, a2a.NewTextPart("no"))}},
			false, OutcomeError + "/a2a_failed", 0},
		{"cancelled", []scripted{{ev: task(a2a.TaskStateWorking, "")}, {ev: status(a2a.TaskStateCanceled)}},
			false, OutcomeCancelled + "/", 0},
		{"unreachable", []scripted{{err: &a2a.Error{Op: "SendStreamingMessage", Kind: a2a.ErrUnavailable, Err: errors.New("connection refused")}}},
			true, OutcomeError + "/a2a_unavailable", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder()
			mem := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mem))
			agent := &spanAgent{scriptedAgent: &scriptedAgent{streaming: true, stream: tt.stream}}
			store := store.Observe(store.NewMemoryStore(), "memory", rec)
			svc := NewService(Options{Store: store, Tracer: tp.Tracer("test"), FirstEventWait: time.Second,
				Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
				Agents: []AgentSpec{{Name: "a", Observer: rec, Connect: func(context.Context) (Agent, error) { return agent, nil }}}})
			t.Cleanup(func() { _ = svc.Close(context.Background()) })

			// The request's trace, as aguihttp extracts it from traceparent.
			caller := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0xab}, SpanID: trace.SpanID{0xcd},
				TraceFlags: trace.FlagsSampled, Remote: true})
			run, err := svc.StartRun(trace.ContextWithRemoteSpanContext(t.Context(), caller), "a", input("th", "r1"))
			if (err != nil) != tt.wantErr {
				t.Fatalf("StartRun: %v", err)
			}
			var events []agui.Event
			if err == nil {
				events = collect(t, run)
			}
			// The run's end is reported before its terminal event is
			// readable, so nothing here waits.
			started, first, ended, pending := rec.snapshot()
			if diff := cmp.Diff([]string{tt.ended}, ended); diff != "" {
				t.Errorf("RunEnded (-want +got):\n%s", diff)
			}
			if started != 1 {
				t.Errorf("RunStarted called %d times", started)
			}
			if want := map[bool]int{false: 1, true: 0}[tt.wantErr]; first != want {
				t.Errorf("FirstEvent called %d times, want %d", first, want)
			}
			if pending != tt.pending {
				t.Errorf("pending interrupts = %d, want %d", pending, tt.pending)
			}
			rec.mu.Lock()
			counted := 0
			for _, n := range rec.events {
				counted += n
			}
			ops := rec.ops["PutThread"] + rec.ops["PutThreadAndAppend"]
			rec.mu.Unlock()
			if counted != len(events) {
				t.Errorf("counted %d events, the client read %d", counted, len(events))
			}
			if ops == 0 {
				t.Error("no store write was observed")
			}

			spans := mem.GetSpans()
			if len(spans) != 1 || spans[0].Name != "bridge.run" {
				t.Fatalf("spans %v, want the run's", spans)
			}
			s := spans[0]
			if s.Parent.SpanID() != caller.SpanID() || s.SpanContext.TraceID() != caller.TraceID() {
				t.Errorf("run span's parent %v, want the caller's %v", s.Parent, caller)
			}
			agent.mu.Lock()
			defer agent.mu.Unlock()
			if len(agent.spans) != 1 || agent.spans[0].SpanID() != s.SpanContext.SpanID() {
				t.Errorf("the A2A call was made in span %v, want the run's %v", agent.spans, s.SpanContext.SpanID())
			}
		})
	}
}

// The pending-interrupt count follows the thread: set by the interrupted
// run, cleared by a cancel, and seeded from the store at start.
func TestPendingInterruptsFollowTheThread(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"memory", "embedded"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var inner Store = store.NewMemoryStore()
			if kind == "embedded" {
				s, err := boltstore.OpenBoltStore(filepath.Join(t.TempDir(), "b.db"))
				if err != nil {
					t.Fatal(err)
				}
				inner = s
			}
			defer inner.Close()
			rec := newRecorder()
			agent := &scriptedAgent{streaming: true, stream: []scripted{{ev: task(a2a.TaskStateSubmitted, "")},
				{ev: status(a2a.TaskStateInputRequired, a2a.NewTextPart("Which city?"))}}}
			svc := NewService(Options{Store: store.Observe(inner, kind, rec), ExclusiveStore: true,
				Agents: []AgentSpec{{Name: "a", Connect: func(context.Context) (Agent, error) { return agent, nil }}}})
			defer svc.Close(context.Background())
			for _, th := range []string{"t1", "t2"} {
				run, err := svc.StartRun(t.Context(), "a", input(th, "r1"))
				if err != nil {
					t.Fatal(err)
				}
				collect(t, run)
			}
			if _, _, _, n := rec.snapshot(); n != 2 {
				t.Fatalf("pending = %d after two interrupted runs", n)
			}

			// A new process over the same store starts from what it holds.
			seeded := newRecorder()
			if err := store.Observe(inner, kind, seeded).CountInterrupts(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, _, _, n := seeded.snapshot(); n != 2 {
				t.Fatalf("seeded pending = %d, want 2", n)
			}

			if _, err := svc.Cancel(t.Context(), "a", "t1"); err != nil {
				t.Fatal(err)
			}
			if _, _, _, n := rec.snapshot(); n != 1 {
				t.Fatalf("pending = %d after cancelling one thread's interrupt", n)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for the run goroutine's logs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Split(strings.TrimSpace(b.buf.String()), "\n")
}

// A run's log lines name the agent, thread and run, and the task and
// context once the agent named them, and the trace when there is one.
func TestRunLogsCarryIDs(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	agent := &scriptedAgent{streaming: true,
		stream: []scripted{{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("partial ", false)}, {err: errors.New("connection reset")}},
		tasks:  []*a2a.Task{task(a2a.TaskStateCompleted, "partial answer")}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
	svc := NewService(Options{Store: store.NewMemoryStore(), Logger: slog.New(slog.NewJSONHandler(&out, nil)), Tracer: tp.Tracer("test"),
		Agents: []AgentSpec{{Name: "a", PollInitial: time.Millisecond, Connect: func(context.Context) (Agent, error) { return agent, nil }}}})
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	run, err := svc.StartRun(t.Context(), "a", input("th", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	collect(t, run)
	var line map[string]any
	for _, l := range out.lines() {
		if strings.Contains(l, "agent stream broke") {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	if line == nil {
		t.Fatalf("no line about the broken stream in %q", out.lines())
	}
	for k, want := range map[string]string{"agent": "a", "thread_id": "th", "run_id": "r1", "task_id": "task-1", "context_id": "ctx-1"} {
		if line[k] != want {
			t.Errorf("%s = %v, want %q (line %v)", k, line[k], want, line)
		}
	}
	if id, _ := line["trace_id"].(string); len(id) != 32 {
		t.Errorf("trace_id = %v", line["trace_id"])
	}
}
