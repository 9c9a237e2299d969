package mapping

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// scriptOptions is the first line of a testdata script: how to run the
// translator and what the output must show.
type scriptOptions struct {
	V1         bool   `json:"v1"`
	StatusText string `json:"statusText"`
	// Answer must appear exactly once in the assistant messages.
	Answer string `json:"answer"`
	// Hidden must not appear in the assistant messages (progress text).
	Hidden string `json:"hidden"`
	// Error is the expected RUN_ERROR code.
	Error string `json:"error"`
	// Outcome is the expected RUN_FINISHED outcome type ("" = success).
	Outcome string `json:"outcome"`
	// KnownToolCall gives the translator the thread's earlier tool call
	// call-1 (book_flight), as a resumed run has.
	KnownToolCall bool `json:"knownToolCall"`
	// WithInput gives the run a client history and state.
	WithInput bool `json:"withInput"`
	// TTL is the interrupt expiry.
	TTL string `json:"ttl"`
	// ResumedTask is the task a resume run answers.
	ResumedTask string `json:"resumedTask"`
	// Tools offers the frontend tool change_background.
	Tools bool `json:"tools"`
	// SentResult is the response the run's message carried for call-1
	// (a resume answering its approval).
	SentResult json.RawMessage `json:"sentResult"`
	// Results is how many TOOL_CALL_RESULT events the run must hold.
	Results int `json:"results"`
	// Earlier are artifacts of the task shown by earlier runs.
	Earlier []a2a.ArtifactID `json:"earlier"`
}

func readScript(t *testing.T, path string) (scriptOptions, []a2a.Event) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var opts scriptOptions
	var events []a2a.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for first := true; sc.Scan(); first = false {
		if first {
			var head struct{ Options scriptOptions }
			if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
				t.Fatalf("%s: options line: %v", path, err)
			}
			opts = head.Options
			continue
		}
		var sr a2asdk.StreamResponse
		if err := json.Unmarshal(sc.Bytes(), &sr); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		events = append(events, sr.Event)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return opts, events
}

func fakeClock() func() int64 {
	var now int64 = 1_700_000_000_000
	return func() int64 { now++; return now }
}

// TestGolden runs every script in testdata through the translator, checks
// the output with the Go port of the @ag-ui/client verifier for every client
// generation that could be reading, checks the run's expectations, and
// compares the bytes with the golden file.
func TestGolden(t *testing.T) {
	scripts, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, path := range scripts {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts, events := readScript(t, path)
			out := translateAll(opts, events)
			verifyAll(t, opts.V1, out)
			checkExpectations(t, opts, out)

			var got bytes.Buffer
			for _, e := range out {
				b, err := agui.Marshal(e)
				if err != nil {
					t.Fatal(err)
				}
				got.Write(b)
				got.WriteByte('\n')
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./mapping -update)", err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("output differs from %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

func translateAll(opts scriptOptions, events []a2a.Event) []agui.Event {
	tr := New(scriptTranslatorOptions(opts))
	out := tr.Start()
	for _, ev := range events {
		out = append(out, tr.Translate(ev)...)
	}
	if !tr.Done() {
		out = append(out, tr.Fail("a2a_incomplete", "the script ended before the task did")...)
	}
	return out
}

// scriptTranslatorOptions are the translator's options for a script.
func scriptTranslatorOptions(opts scriptOptions) Options {
	o := Options{ThreadID: "thread-1", RunID: "run-1", Agent: "demo", V1: opts.V1,
		StatusText: StatusTextPolicy(opts.StatusText), Now: fakeClock()}
	if opts.KnownToolCall {
		o.KnownToolCalls = []ToolCallRef{{CallID: "call-1", Name: "book_flight", Args: json.RawMessage(`{"flight":"LH123"}`),
			ToolCallID: ToolCallID("thread-1", "task-1", "call-1")}}
	}
	if opts.WithInput {
		o.Input = &agui.RunAgentInput{ThreadID: "thread-1", RunID: "run-1",
			State: json.RawMessage(`{"theme":"dark","a2a":{"stale":true}}`),
			Messages: []agui.Message{
				{ID: "u1", Role: agui.RoleUser, Content: agui.TextContent("Weather?")},
				{ID: "act", Role: agui.RoleActivity, ActivityType: "x", Content: &agui.Content{Kind: agui.ContentObject, Object: json.RawMessage(`{}`)}},
			}}
	}
	if opts.TTL != "" {
		d, _ := time.ParseDuration(opts.TTL)
		o.InterruptTTL = d
	}
	o.ResumedTask = a2a.TaskID(opts.ResumedTask)
	if opts.Tools && o.Input != nil {
		o.Input.Tools = []agui.Tool{{Name: "change_background", Description: "Changes the page background",
			Parameters: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}}}`)}}
	}
	if opts.SentResult != nil {
		var response any
		if err := json.Unmarshal(opts.SentResult, &response); err != nil {
			panic(err)
		}
		o.SentResults = []SentToolResult{{Call: o.KnownToolCalls[0], Response: response}}
	}
	o.EarlierArtifacts = opts.Earlier
	return o
}

// verifyAll checks the stream against the verifier of each client
// generation that might be reading it.
func verifyAll(t *testing.T, v1 bool, out []agui.Event) {
	t.Helper()
	if err := agui.CheckStream(v1, out); err != nil {
		t.Fatal(err)
	}
	terminals := 0
	results := map[string]int{}
	starts := map[string]int{}
	for _, e := range out {
		if e.Type() == agui.EventRunFinished || e.Type() == agui.EventRunError {
			terminals++
		}
		switch e := e.(type) {
		case *agui.ToolCallResult:
			if results[e.ToolCallID]++; results[e.ToolCallID] > 1 {
				t.Fatalf("two TOOL_CALL_RESULT events for tool call %s", e.ToolCallID)
			}
		case *agui.ToolCallStart:
			// One card per tool call, however often the agent repeats it.
			if starts[e.ToolCallID]++; starts[e.ToolCallID] > 1 {
				t.Fatalf("two TOOL_CALL_START events for tool call %s", e.ToolCallID)
			}
		case *agui.MessagesSnapshot:
			entries := map[string]int{}
			for _, m := range e.Messages {
				for _, c := range m.ToolCalls {
					if entries[c.ID]++; entries[c.ID] > 1 {
						t.Fatalf("MESSAGES_SNAPSHOT lists tool call %s twice", c.ID)
					}
				}
			}
		}
	}
	if terminals != 1 || !isTerminal(out[len(out)-1]) {
		t.Fatalf("the stream must end exactly once with a terminal event; got %d terminals, last %s", terminals, out[len(out)-1].Type())
	}
}

func isTerminal(e agui.Event) bool {
	return e.Type() == agui.EventRunFinished || e.Type() == agui.EventRunError
}

func checkExpectations(t *testing.T, opts scriptOptions, out []agui.Event) {
	t.Helper()
	if opts.Answer != "" {
		text := assistantText(out)
		if n := strings.Count(text, opts.Answer); n != 1 {
			t.Errorf("answer %q appears %d times in the assistant text:\n%s", opts.Answer, n, text)
		}
	}
	if opts.Hidden != "" && strings.Contains(assistantText(out), opts.Hidden) {
		t.Errorf("%q is progress, not the answer; the assistant text holds it:\n%s", opts.Hidden, assistantText(out))
	}
	results := 0
	for _, e := range out {
		if _, ok := e.(*agui.ToolCallResult); ok {
			results++
		}
	}
	if results != opts.Results {
		t.Errorf("%d TOOL_CALL_RESULT events, want %d", results, opts.Results)
	}
	last := out[len(out)-1]
	switch e := last.(type) {
	case *agui.RunError:
		if e.Code != opts.Error {
			t.Errorf("RUN_ERROR code %q, want %q (message %q)", e.Code, opts.Error, e.Message)
		}
	case *agui.RunFinished:
		if opts.Error != "" {
			t.Errorf("run finished, want RUN_ERROR %q", opts.Error)
		}
		got := ""
		if e.Outcome != nil {
			got = e.Outcome.Type
		}
		if got != opts.Outcome {
			t.Errorf("outcome %q, want %q", got, opts.Outcome)
		}
	}
}

// assistantText rebuilds the assistant messages the way the client reducer
// does (content appended by message id) and joins them one per line.
func assistantText(out []agui.Event) string {
	var order []string
	text := map[string]*strings.Builder{}
	for _, e := range out {
		switch e := e.(type) {
		case *agui.TextMessageStart:
			if text[e.MessageID] == nil {
				text[e.MessageID] = &strings.Builder{}
				order = append(order, e.MessageID)
			}
		case *agui.TextMessageContent:
			text[e.MessageID].WriteString(e.Delta)
		}
	}
	var all []string
	for _, id := range order {
		all = append(all, text[id].String())
	}
	return strings.Join(all, "\n")
}

// TestDeterministic checks that the same input gives byte-identical output,
// which is what makes a journal replay equal the live stream.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	opts, events := readScript(t, "testdata/interleaved_artifacts.jsonl")
	a, b := translateAll(opts, events), translateAll(opts, events)
	if diff := cmp.Diff(marshalAll(t, a), marshalAll(t, b)); diff != "" {
		t.Fatal(diff)
	}
}

// TestIDsDifferAcrossRuns checks that two runs of a thread never share a
// message id: a reused id would append to the old message client-side.
func TestIDsDifferAcrossRuns(t *testing.T) {
	t.Parallel()
	_, events := readScript(t, "testdata/artifacts_only.jsonl")
	ids := map[string]string{}
	for _, run := range []string{"run-1", "run-2"} {
		tr := New(Options{ThreadID: "thread-1", RunID: run})
		for _, ev := range events {
			for _, e := range tr.Translate(ev) {
				if s, ok := e.(*agui.TextMessageStart); ok {
					if prev, dup := ids[s.MessageID]; dup && prev != run {
						t.Fatalf("message id %s used by %s and %s", s.MessageID, prev, run)
					}
					ids[s.MessageID] = run
				}
			}
		}
	}
}

func TestAfterDoneNothing(t *testing.T) {
	t.Parallel()
	tr := New(Options{ThreadID: "t", RunID: "r"})
	tr.Start()
	if out := tr.Fail("x", "y"); len(out) != 1 {
		t.Fatalf("Fail gave %d events", len(out))
	}
	if out := tr.Translate(&a2a.StatusUpdate{Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}); out != nil {
		t.Fatalf("events after the end: %v", out)
	}
	if out := tr.Complete(); out != nil {
		t.Fatalf("events after the end: %v", out)
	}
}

func marshalAll(t *testing.T, out []agui.Event) []string {
	t.Helper()
	var s []string
	for _, e := range out {
		b, err := agui.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		s = append(s, string(b))
	}
	return s
}

// Issue 33 item 10: an event naming another task (or context) than the
// run's replaced the thread's task mid-stream, and a later cancel went to
// the task the agent named. It ends the run with a2a_task_mismatch, and
// the run's task stays its own.
func TestAgentCannotSwitchTheRunsTask(t *testing.T) {
	t.Parallel()
	text := func(s string) *a2a.Message {
		return &a2a.Message{ID: "m-" + s, Role: a2a.RoleAgent, Parts: []*a2a.Part{a2a.NewTextPart(s)}}
	}
	for name, ev := range map[string]a2a.Event{
		"status":   &a2a.StatusUpdate{TaskID: "other", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: text("b")}},
		"artifact": &a2a.ArtifactUpdate{TaskID: "other", ContextID: "ctx-1", Artifact: &a2a.Artifact{ID: "a", Parts: []*a2a.Part{a2a.NewTextPart("b")}}},
		"task":     &a2a.Task{ID: "other", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
		"context":  &a2a.StatusUpdate{TaskID: "task-1", ContextID: "ctx-2", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
	} {
		tr := New(Options{ThreadID: "t", RunID: "r", V1: true})
		tr.Translate(&a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: text("a")}})
		out := tr.Translate(ev)
		last, ok := out[len(out)-1].(*agui.RunError)
		if !ok || last.Code != agui.CodeTaskMismatch {
			t.Errorf("%s: the run goes on after an event of another task or context: %v", name, out)
		}
		if tr.TaskID() != "task-1" || tr.ContextID() != "ctx-1" {
			t.Errorf("%s: the run's task became %q in %q", name, tr.TaskID(), tr.ContextID())
		}
	}
}
