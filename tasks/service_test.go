package tasks

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// scriptedAgent is a hand-written fake of the remote agent for the driver
// paths no well-behaved a2asrv agent produces: streams that break or end
// early, agents that never answer, failing GetTask calls. The end-to-end
// tests in package server cover real agents.
type scriptedAgent struct {
	streaming bool
	// stream is what SendStreaming yields; a nil event with an error ends
	// it with that error. turns, when set, are yielded by successive calls
	// instead (the last repeats).
	stream []scripted
	turns  [][]scripted
	// send is what Send returns.
	send    a2a.Event
	sendErr error
	// tasks are returned by successive GetTask calls (the last repeats).
	tasks  []*a2a.Task
	getErr error
	// block makes SendStreaming wait for ctx before yielding anything.
	block bool
	// hold makes SendStreaming wait, after its events, until ctx ends or
	// release is closed, then yield after and wait for ctx.
	hold    bool
	release chan struct{}
	after   []scripted
	// cancelErr is what CancelTask fails with.
	cancelErr error
	// subscribe is what Subscribe yields (TaskNotFound when empty).
	subscribe []scripted
	// extension makes the card declare the bridge's A2A extension.
	extension bool
	// delay is waited before each streamed event (agents answering at
	// once interleave only by chance).
	delay time.Duration

	mu       sync.Mutex
	gets     int
	canceled []a2a.TaskID
	sent     []*a2a.Message
}

type scripted struct {
	ev  a2a.Event
	err error
}

func (s *scriptedAgent) Streaming() bool { return s.streaming }

func (s *scriptedAgent) DeclaresExtension(string) bool { return s.extension }

func (s *scriptedAgent) SendStreaming(ctx context.Context, msg *a2a.Message) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		s.mu.Lock()
		s.sent = append(s.sent, msg)
		stream := s.stream
		if len(s.turns) > 0 {
			stream = s.turns[min(len(s.sent), len(s.turns))-1]
		}
		s.mu.Unlock()
		if s.block {
			<-ctx.Done()
			yield(nil, ctx.Err())
			return
		}
		for _, e := range stream {
			if s.delay > 0 {
				time.Sleep(s.delay)
			}
			if ctx.Err() != nil {
				yield(nil, ctx.Err())
				return
			}
			if !yield(e.ev, e.err) || e.err != nil {
				return
			}
		}
		if !s.hold {
			return
		}
		select {
		case <-ctx.Done():
			yield(nil, ctx.Err())
			return
		case <-s.release:
		}
		for _, e := range s.after {
			if !yield(e.ev, e.err) || e.err != nil {
				return
			}
		}
		// Then silence, like an agent whose task goes on.
		<-ctx.Done()
		yield(nil, ctx.Err())
	}
}

func (s *scriptedAgent) Send(_ context.Context, msg *a2a.Message, _ bool) (a2a.Event, error) {
	s.mu.Lock()
	s.sent = append(s.sent, msg)
	s.mu.Unlock()
	return s.send, s.sendErr
}

func (s *scriptedAgent) GetTask(ctx context.Context, _ a2a.TaskID) (*a2a.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.getErr != nil {
		return nil, s.getErr
	}
	if len(s.tasks) == 0 {
		return nil, a2a.ErrTaskNotFound
	}
	i := min(s.gets, len(s.tasks)-1)
	s.gets++
	return s.tasks[i], nil
}

func (s *scriptedAgent) Subscribe(ctx context.Context, id a2a.TaskID) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if len(s.subscribe) == 0 {
			yield(nil, a2a.ErrTaskNotFound)
			return
		}
		for _, e := range s.subscribe {
			if !yield(e.ev, e.err) || e.err != nil {
				return
			}
		}
	}
}

func (s *scriptedAgent) CancelTask(_ context.Context, id a2a.TaskID) (*a2a.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.canceled = append(s.canceled, id)
	if s.cancelErr != nil {
		return nil, s.cancelErr
	}
	return &a2a.Task{ID: id, Status: a2a.TaskStatus{State: a2a.TaskStateCanceled}}, nil
}

func task(state a2a.TaskState, text string) *a2a.Task {
	t := &a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: state}}
	if text != "" {
		t.Artifacts = []*a2a.Artifact{{ID: "a1", Parts: []*a2a.Part{a2a.NewTextPart(text)}}}
	}
	return t
}

func chunk(text string, appendParts bool) *a2a.ArtifactUpdate {
	return &a2a.ArtifactUpdate{TaskID: "task-1", ContextID: "ctx-1", Append: appendParts,
		Artifact: &a2a.Artifact{ID: "a1", Parts: []*a2a.Part{a2a.NewTextPart(text)}}}
}

func newTestService(t *testing.T, agent Agent, tweak func(*AgentSpec)) (*Service, Store) {
	t.Helper()
	store := store.NewMemoryStore()
	spec := AgentSpec{Name: "a", Connect: func(context.Context) (Agent, error) { return agent, nil },
		PollInitial: time.Millisecond, PollMax: 5 * time.Millisecond, RequestTimeout: time.Second}
	if tweak != nil {
		tweak(&spec)
	}
	svc := NewService(Options{Store: store, Agents: []AgentSpec{spec}, FirstEventWait: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
		CancelGrace: 100 * time.Millisecond})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = svc.Close(ctx)
	})
	return svc, store
}

func input(thread, run string) *agui.RunAgentInput {
	return &agui.RunAgentInput{ThreadID: thread, RunID: run,
		Messages: []agui.Message{{ID: "u1", Role: agui.RoleUser, Content: agui.TextContent("hi")}}}
}

// collect reads a run's events to the end and returns them decoded.
func collect(t *testing.T, run *RunReader) []agui.Event {
	t.Helper()
	var out []agui.Event
	for b, err := range run.Events(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		e, err := agui.Decode(b.Event)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func text(events []agui.Event) string {
	var b strings.Builder
	for _, e := range events {
		if c, ok := e.(*agui.TextMessageContent); ok {
			b.WriteString(c.Delta)
		}
	}
	return b.String()
}

func lastError(t *testing.T, events []agui.Event) *agui.RunError {
	t.Helper()
	e, ok := events[len(events)-1].(*agui.RunError)
	if !ok {
		t.Fatalf("want RUN_ERROR last, got %s", events[len(events)-1].Type())
	}
	return e
}

func TestStreamEndingEarlyIsRecoveredWithGetTask(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true,
		stream: []scripted{{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("chunk-1 ", false)}},
		tasks:  []*a2a.Task{task(a2a.TaskStateWorking, "chunk-1 chunk-2"), task(a2a.TaskStateCompleted, "chunk-1 chunk-2 chunk-3")}}
	svc, _ := newTestService(t, agent, nil)
	run, err := svc.StartRun(t.Context(), "a", input("th", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, run)
	if got := text(events); got != "chunk-1 chunk-2 chunk-3" {
		t.Fatalf("text %q", got)
	}
	if events[len(events)-1].Type() != agui.EventRunFinished {
		t.Fatalf("last %s", events[len(events)-1].Type())
	}
}

func TestStreamBreakingMidwayIsRecovered(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true,
		stream: []scripted{{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("partial ", false)}, {err: errors.New("connection reset")}},
		tasks:  []*a2a.Task{task(a2a.TaskStateCompleted, "partial answer")}}
	svc, _ := newTestService(t, agent, nil)
	run, err := svc.StartRun(t.Context(), "a", input("th", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := text(collect(t, run)); got != "partial answer" {
		t.Fatalf("text %q", got)
	}
}

func TestGetTaskFailingEndsWithRunError(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true,
		stream: []scripted{{ev: task(a2a.TaskStateWorking, "")}},
		getErr: errors.New("dial tcp: connection refused")}
	svc, _ := newTestService(t, agent, nil)
	run, err := svc.StartRun(t.Context(), "a", input("th", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	if e := lastError(t, collect(t, run)); e.Code == "" || e.Message == "" {
		t.Fatalf("RUN_ERROR %+v", e)
	}
}

func TestPollingAgentWithoutStreaming(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{send: task(a2a.TaskStateSubmitted, ""),
		tasks: []*a2a.Task{task(a2a.TaskStateWorking, ""), task(a2a.TaskStateWorking, ""), task(a2a.TaskStateCompleted, "done")}}
	svc, _ := newTestService(t, agent, nil)
	run, err := svc.StartRun(t.Context(), "a", input("th", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := text(collect(t, run)); got != "done" {
		t.Fatalf("text %q", got)
	}
}

func TestIdleTimeoutCancelsTheTask(t *testing.T) {
	t.Parallel()
	// The task stays WORKING forever: polling brings no progress.
	agent := &scriptedAgent{streaming: true, stream: []scripted{{ev: task(a2a.TaskStateWorking, "")}},
		tasks: []*a2a.Task{task(a2a.TaskStateWorking, "")}}
	svc, _ := newTestService(t, agent, func(s *AgentSpec) { s.IdleTimeout = 100 * time.Millisecond })
	run, err := svc.StartRun(t.Context(), "a", input("th", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	if e := lastError(t, collect(t, run)); e.Code != "a2a_timeout" {
		t.Fatalf("code %q", e.Code)
	}
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if len(agent.canceled) != 1 || agent.canceled[0] != "task-1" {
		t.Fatalf("canceled %v", agent.canceled)
	}
}

func TestUnreachableAgentIsAnHTTPErrorAndWritesNothing(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, stream: []scripted{{err: errors.New("dial tcp 127.0.0.1:1: connection refused")}}}
	svc, store := newTestService(t, agent, nil)
	_, err := svc.StartRun(t.Context(), "a", input("th", "r1"))
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus() < 500 {
		t.Fatalf("err %v", err)
	}
	if _, err := store.GetThread(t.Context(), ThreadKey{Agent: "a", ThreadID: "th"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("thread written: %v", err)
	}
	if n, _ := store.LastSeq(t.Context(), ThreadKey{Agent: "a", ThreadID: "th"}); n != 0 {
		t.Fatalf("journal has %d entries", n)
	}
	// The thread stays usable.
	agent.stream = []scripted{{ev: &a2a.Message{ID: "m", Role: a2a.RoleAgent, Parts: []*a2a.Part{a2a.NewTextPart("ok")}}}}
	run, err := svc.StartRun(t.Context(), "a", input("th", "r2"))
	if err != nil {
		t.Fatal(err)
	}
	if got := text(collect(t, run)); got != "ok" {
		t.Fatalf("text %q", got)
	}
}

func TestSilentAgentGetsAStreamThatEnds(t *testing.T) {
	t.Parallel()
	// The agent accepts the connection but never answers: after
	// FirstEventWait the HTTP response starts, and the run timeout ends it.
	agent := &scriptedAgent{streaming: true, block: true}
	svc, _ := newTestService(t, agent, func(s *AgentSpec) { s.RunTimeout = 400 * time.Millisecond })
	run, err := svc.StartRun(t.Context(), "a", input("th", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, run)
	if events[0].Type() != agui.EventRunStarted {
		t.Fatalf("first %s", events[0].Type())
	}
	if e := lastError(t, events); e.Code != "a2a_timeout" {
		t.Fatalf("code %q", e.Code)
	}
}

func TestOneActiveRunPerThread(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, block: true}
	svc, _ := newTestService(t, agent, func(s *AgentSpec) { s.RunTimeout = 300 * time.Millisecond })
	run, err := svc.StartRun(t.Context(), "a", input("th", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.StartRun(t.Context(), "a", input("th", "r2"))
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus() != http.StatusConflict || !errors.Is(err, ErrThreadBusy) {
		t.Fatalf("second run: %v", err)
	}
	collect(t, run)
	// Once the first run has ended the thread takes new runs again.
	agent.block = false
	agent.stream = []scripted{{ev: &a2a.Message{ID: "m", Role: a2a.RoleAgent, Parts: []*a2a.Part{a2a.NewTextPart("ok")}}}}
	run, err = svc.StartRun(t.Context(), "a", input("th", "r3"))
	if err != nil {
		t.Fatal(err)
	}
	collect(t, run)
}

func TestUnknownAgent(t *testing.T) {
	t.Parallel()
	svc, _ := newTestService(t, &scriptedAgent{}, nil)
	_, err := svc.StartRun(t.Context(), "nobody", input("th", "r1"))
	if !errors.Is(err, ErrUnknownAgent) {
		t.Fatalf("err %v", err)
	}
}

func TestNoNewInputFinishesWithoutCallingTheAgent(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true}
	svc, _ := newTestService(t, agent, nil)
	in := input("th", "r1")
	in.Messages = nil
	run, err := svc.StartRun(t.Context(), "a", in)
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, run)
	if events[0].Type() != agui.EventRunStarted || events[len(events)-1].Type() != agui.EventRunFinished {
		t.Fatalf("events %v", events)
	}
	if len(agent.sent) != 0 {
		t.Fatal("the agent was called")
	}
}

func TestShutdownCutsRunsWithRunError(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, block: true}
	store := store.NewMemoryStore()
	svc := NewService(Options{Store: store, FirstEventWait: 50 * time.Millisecond, Agents: []AgentSpec{{Name: "a",
		Connect: func(context.Context) (Agent, error) { return agent, nil }}}})
	run, err := svc.StartRun(t.Context(), "a", input("th", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_ = svc.Close(ctx)
	if e := lastError(t, collect(t, run)); e.Code != agui.CodeServerShutdown {
		t.Fatalf("code %q", e.Code)
	}
	// The notice is not journaled: the run stays in progress for the next
	// process to take over.
	th, err := store.GetThread(t.Context(), run.Key)
	if err != nil || !th.Running("r1") {
		t.Fatalf("thread after shutdown: %+v %v", th, err)
	}
	entries, _ := store.Read(t.Context(), run.Key, 0, 100)
	for _, e := range entries {
		if e.Terminal {
			t.Fatalf("a terminal event was journaled: %s", e.Event)
		}
	}
	if _, err := svc.StartRun(t.Context(), "a", input("th2", "r1")); !errors.Is(err, ErrShuttingDown) {
		t.Fatalf("after Close: %v", err)
	}
}

// failingStore loses entries, as a broken disk would: every terminal one,
// or every one once failAll is set.
type failingStore struct {
	*store.MemoryStore
	failAll bool
}

func (f failingStore) Append(ctx context.Context, key ThreadKey, entries ...Entry) error {
	if f.failAll || hasTerminal(entries) {
		return errors.New("disk full")
	}
	return f.MemoryStore.Append(ctx, key, entries...)
}

func (f failingStore) PutThreadAndAppend(ctx context.Context, th *Thread, entries ...Entry) (int64, error) {
	if f.failAll || hasTerminal(entries) {
		return 0, errors.New("disk full")
	}
	return f.MemoryStore.PutThreadAndAppend(ctx, th, entries...)
}

func hasTerminal(entries []Entry) bool {
	for _, e := range entries {
		if e.Terminal {
			return true
		}
	}
	return false
}

// TestLostTerminalDoesNotHang: a run whose terminal event could not be
// stored still ends for its readers in this process, which follow the
// run's live log, and a reader of the journal alone (another process)
// gets an error instead of waiting forever.
func TestLostTerminalDoesNotHang(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, stream: []scripted{{ev: &a2a.Message{ID: "m", Role: a2a.RoleAgent,
		Parts: []*a2a.Part{a2a.NewTextPart("ok")}}}}}
	svc := NewService(Options{Store: failingStore{MemoryStore: store.NewMemoryStore()}, StoreOutage: 100 * time.Millisecond, Agents: []AgentSpec{{Name: "a",
		Connect: func(context.Context) (Agent, error) { return agent, nil }}}})
	defer svc.Close(t.Context())
	run := must(svc.StartRun(t.Context(), "a", input("th", "r1")))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var last agui.Envelope
	for env, err := range run.Events(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		last = env
	}
	if !agui.IsTerminalEvent(last.Event) {
		t.Fatalf("the stream ended with %s", last.Event)
	}
}

// TestStoreFailureFailsTheRun: when the journal cannot take a run's events
// the run stops with RUN_ERROR{code:"store_unavailable"} rather than show
// events nobody could read back.
func TestStoreFailureFailsTheRun(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, stream: []scripted{{ev: &a2a.Message{ID: "m", Role: a2a.RoleAgent,
		Parts: []*a2a.Part{a2a.NewTextPart("ok")}}}}}
	svc := NewService(Options{Store: failingStore{MemoryStore: store.NewMemoryStore(), failAll: true}, StoreOutage: 100 * time.Millisecond, Agents: []AgentSpec{{Name: "a",
		Connect: func(context.Context) (Agent, error) { return agent, nil }}}})
	defer svc.Close(t.Context())
	// The claim itself is a PutThread, which this store still takes.
	run, err := svc.StartRun(t.Context(), "a", input("th", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var last agui.Envelope
	for env, err := range run.Events(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		last = env
	}
	if !bytes.Contains(last.Event, []byte(`"code":"store_unavailable"`)) {
		t.Fatalf("the stream ended with %s", last.Event)
	}
}
