package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2a-agui-bridge/bridge/observe"
	"github.com/a2a-agui-bridge/bridge/tasks"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// testBridge is the real bridge handler in front of the real demo agents
// (a2asrv servers) over loopback, on a memory store the test can inspect.
type testBridge struct {
	url     string
	store   *store.MemoryStore
	demo    *agents.Server
	svc     *tasks.Service
	metrics *observe.Metrics
}

func startBridge(t *testing.T, tweak func(*config.Config)) *testBridge {
	t.Helper()
	return startBridgeWith(t, agents.Options{Delay: -1}, tweak)
}

// startBridgeWith is startBridge with the demo agents' options (a delay
// between streamed events makes a stream last long enough to cut).
func startBridgeWith(t *testing.T, opts agents.Options, tweak func(*config.Config)) *testBridge {
	t.Helper()
	return startBridgeTraced(t, opts, nil, tweak)
}

// startBridgeTraced is startBridgeWith with tracing (nil: off). Every test
// bridge has metrics, on the store it serves, as bridge serve wires them.
func startBridgeTraced(t *testing.T, opts agents.Options, tracing *observe.Tracing, tweak func(*config.Config)) *testBridge {
	t.Helper()
	demo, err := agents.Start(t.Context(), "127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { demo.Close() })
	cfg := config.Default()
	cfg.Store = config.Store{Kind: config.StoreMemory}
	for _, name := range demo.Names() {
		cfg.Agents = append(cfg.Agents, config.Agent{Name: name, URL: demo.URL(name)})
	}
	for _, b := range []struct{ suffix, transport string }{{"-rest", "HTTP+JSON"}, {"-grpc", "GRPC"}, {"-jsonrpc", "JSONRPC"}} {
		for _, name := range []string{"streamer", "asker", "failer", "chatter", "approver", "quiet-approver"} {
			cfg.Agents = append(cfg.Agents, config.Agent{Name: name + b.suffix, URL: demo.URL(name), Transports: []string{b.transport}})
		}
	}
	for _, name := range []string{"streamer", "asker", "failer", "narrator", "approver"} {
		cfg.Agents = append(cfg.Agents, config.Agent{Name: name + "-v03", URL: demo.URLv03(name)})
	}
	// v0.3 agents offering only HTTP+JSON or only gRPC (a2a-go v2.4.0's
	// compat transports; v2.3.1's v0.3 HTTP+JSON spoke v1 paths).
	for _, name := range []string{"streamer", "asker", "failer"} {
		cfg.Agents = append(cfg.Agents,
			config.Agent{Name: name + "-v03rest", URL: demo.URLv03REST(name)},
			config.Agent{Name: name + "-v03grpc", URL: demo.URLv03GRPC(name)})
	}
	cfg.Agents = append(cfg.Agents,
		config.Agent{Name: "unreachable", URL: "http://127.0.0.1:1/"},
		config.Agent{Name: "slow-timeout", URL: demo.URL("slow"),
			Timeouts: config.Timeouts{Run: config.Duration(400 * time.Millisecond)}},
	)
	cfg.Server.MaxBodyBytes = 64 << 10
	if tweak != nil {
		tweak(cfg)
	}
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	authn, err := newAuthenticator(t.Context(), cfg.Auth)
	if err != nil {
		t.Fatal(err)
	}
	mem := store.NewMemoryStore()
	metrics := observe.NewMetrics()
	b := build(cfg, store.Observe(mem, config.StoreMemory, metrics), slog.New(slog.DiscardHandler),
		instruments{metrics: metrics, tracing: tracing, authn: authn})
	srv := httptest.NewServer(b.public)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.svc.Close(ctx)
		b.handler.Shutdown(ctx)
		srv.Close()
		b.closeAgents()
	})
	return &testBridge{url: srv.URL, store: mem, demo: demo, svc: b.svc, metrics: metrics}
}

type runResult struct {
	status int
	body   []byte
	events []agui.Event
}

func runBody(threadID, runID string, v1 bool, messages ...agui.Message) []byte {
	in := map[string]any{"threadId": threadID, "runId": runID, "messages": messages,
		"tools": []any{}, "context": []any{}, "state": map[string]any{}, "forwardedProps": map[string]any{}}
	if v1 {
		in["protocolVersion"] = "1.0"
	}
	b, _ := json.Marshal(in)
	return b
}

func userMsg(id, text string) agui.Message {
	return agui.Message{ID: id, Role: agui.RoleUser, Content: agui.TextContent(text)}
}

// post sends a run and reads the whole SSE response, decoding every frame.
func (b *testBridge) post(t *testing.T, agent string, body []byte) runResult {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, b.url+"/agents/"+agent, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	res := runResult{status: resp.StatusCode, body: raw}
	if resp.StatusCode != http.StatusOK {
		return res
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	if bytes.Contains(raw, []byte("\r")) {
		t.Fatal("SSE stream contains CR; clients split frames on LF only")
	}
	for _, frame := range strings.Split(string(raw), "\n\n") {
		for _, line := range strings.Split(frame, "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			ev, err := agui.Decode([]byte(data))
			if err != nil {
				t.Fatalf("frame %q: %v", data, err)
			}
			res.events = append(res.events, ev)
		}
	}
	return res
}

// check verifies the stream with the Go verifier port for the client
// generations that could read it, and that it ends exactly once.
func (r runResult) check(t *testing.T, v1 bool) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if err := agui.CheckStream(v1, r.events); err != nil {
		t.Fatalf("%v\n%s", err, r.body)
	}
	n := 0
	for _, e := range r.events {
		if e.Type() == agui.EventRunFinished || e.Type() == agui.EventRunError {
			n++
		}
	}
	if n != 1 || len(r.events) == 0 || (r.last().Type() != agui.EventRunFinished && r.last().Type() != agui.EventRunError) {
		t.Fatalf("stream must end exactly once with a terminal event:\n%s", r.body)
	}
}

func (r runResult) last() agui.Event { return r.events[len(r.events)-1] }

func (r runResult) text() string {
	var order []string
	msgs := map[string]*strings.Builder{}
	for _, e := range r.events {
		switch e := e.(type) {
		case *agui.TextMessageStart:
			if msgs[e.MessageID] == nil {
				msgs[e.MessageID] = &strings.Builder{}
				order = append(order, e.MessageID)
			}
		case *agui.TextMessageContent:
			msgs[e.MessageID].WriteString(e.Delta)
		}
	}
	var parts []string
	for _, id := range order {
		parts = append(parts, msgs[id].String())
	}
	return strings.Join(parts, "\n")
}

func (r runResult) wantAnswerOnce(t *testing.T, answer string) {
	t.Helper()
	if n := strings.Count(r.text(), answer); n != 1 {
		t.Fatalf("answer %q appears %d times; assistant text:\n%s\nstream:\n%s", answer, n, r.text(), r.body)
	}
}

func (r runResult) wantError(t *testing.T, code string) {
	t.Helper()
	e, ok := r.last().(*agui.RunError)
	if !ok || e.Code != code {
		t.Fatalf("want RUN_ERROR %q, got:\n%s", code, r.body)
	}
}

func (r runResult) outcome() *agui.Outcome {
	if f, ok := r.last().(*agui.RunFinished); ok {
		return f.Outcome
	}
	return nil
}

func TestAnswersOverEveryBinding(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	const q = "Hello there"
	cases := []struct {
		agent, answer string
	}{
		{"streamer", agents.StreamerAnswer(q)},
		{"streamer-jsonrpc", agents.StreamerAnswer(q)},
		{"streamer-rest", agents.StreamerAnswer(q)},
		{"streamer-grpc", agents.StreamerAnswer(q)},
		{"streamer-v03", agents.StreamerAnswer(q)},
		{"streamer-v03rest", agents.StreamerAnswer(q)},
		{"streamer-v03grpc", agents.StreamerAnswer(q)},
		{"narrator", agents.NarratorAnswer(q)},
		{"narrator-v03", agents.NarratorAnswer(q)},
		{"chatter", agents.ChatterAnswer},
		{"chatter-rest", agents.ChatterAnswer},
		{"chatter-grpc", agents.ChatterAnswer},
		{"cumulative", agents.CumulativeAnswer},
		{"repeater", agents.RepeaterAnswer},
		{"replier", agents.ReplierAnswer(q)},
		{"blocking", agents.BlockingAnswer},
		{"files", agents.FilesText},
	}
	for _, c := range cases {
		for _, v1 := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/v1=%v", c.agent, v1), func(t *testing.T) {
				t.Parallel()
				thread := fmt.Sprintf("th-%s-%v", c.agent, v1)
				r := b.post(t, c.agent, runBody(thread, "run-1", v1, userMsg("u1", q)))
				r.check(t, v1)
				if r.outcome() != nil {
					t.Fatalf("outcome %+v, want success:\n%s", r.outcome(), r.body)
				}
				r.wantAnswerOnce(t, c.answer)
			})
		}
	}
}

func TestFailures(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	cases := []struct{ agent, code, message string }{
		{"failer", "a2a_failed", agents.FailerError},
		{"failer-grpc", "a2a_failed", agents.FailerError},
		{"failer-rest", "a2a_failed", agents.FailerError},
		{"failer-v03", "a2a_failed", agents.FailerError},
		{"failer-v03rest", "a2a_failed", agents.FailerError},
		{"failer-v03grpc", "a2a_failed", agents.FailerError},
		{"rejecter", "a2a_rejected", ""},
		{"slow-timeout", "a2a_timeout", ""},
	}
	for _, c := range cases {
		t.Run(c.agent, func(t *testing.T) {
			t.Parallel()
			r := b.post(t, c.agent, runBody("th-"+c.agent, "run-1", false, userMsg("u1", "go")))
			r.check(t, false)
			r.wantError(t, c.code)
			if c.message != "" && !strings.Contains(r.last().(*agui.RunError).Message, c.message) {
				t.Fatalf("message %q does not carry the agent's %q", r.last().(*agui.RunError).Message, c.message)
			}
		})
	}
}

// TestTimeoutCancelsTask checks that a run timeout cancels the A2A task.
func TestTimeoutCancelsTask(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	r := b.post(t, "slow-timeout", runBody("th-timeout", "run-1", false, userMsg("u1", "go")))
	r.wantError(t, "a2a_timeout")
	th, err := b.store.GetThread(t.Context(), tasks.ThreadKey{Agent: "slow-timeout", ThreadID: "th-timeout"})
	if err != nil {
		t.Fatal(err)
	}
	ag, err := a2a.Dial(t.Context(), a2a.Options{URL: b.demo.URL("slow")})
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	task, err := ag.GetTask(t.Context(), a2a.TaskID(th.Own().TaskID))
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("task state %s, want canceled", task.Status.State)
	}
}

// TestInterruptThenResume: INPUT_REQUIRED ends the run with snapshots and
// an interrupt outcome; a resume continues the same A2A task, over every
// binding.
func TestInterruptThenResume(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	for _, agent := range []string{"asker", "asker-grpc", "asker-rest", "asker-v03", "asker-v03rest", "asker-v03grpc"} {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			thread := "th-" + agent
			r := b.post(t, agent, runBody(thread, "run-1", true, userMsg("u1", "What's the weather?")))
			r.check(t, true)
			o := r.outcome()
			if o == nil || o.Type != agui.OutcomeInterrupt || len(o.Interrupts) != 1 {
				t.Fatalf("want an interrupt outcome:\n%s", r.body)
			}
			in := o.Interrupts[0]
			if in.Reason != "input_required" || in.ResponseSchema == nil || in.Message != agents.AskerQuestion {
				t.Fatalf("interrupt %+v", in)
			}
			n := len(r.events)
			if r.events[n-3].Type() != agui.EventStateSnapshot || r.events[n-2].Type() != agui.EventMessagesSnapshot {
				t.Fatalf("snapshots must precede the interrupt:\n%s", r.body)
			}
			if snap := r.events[n-2].(*agui.MessagesSnapshot); snap.Messages[0].ID != "u1" {
				t.Fatalf("messages snapshot lost the client's message id: %+v", snap.Messages)
			}
			meta := in.Metadata["a2a"].(map[string]any)
			th, err := b.store.GetThread(t.Context(), tasks.ThreadKey{Agent: agent, ThreadID: thread})
			if err != nil {
				t.Fatal(err)
			}
			if meta["taskId"] != th.Own().TaskID || meta["contextId"] != th.Own().ContextID || th.Own().ContextID == "" || meta["agent"] != agent {
				t.Fatalf("interrupt metadata %v, thread %+v", meta, th)
			}

			resume := resumeBody(thread, "run-2", in.ID, `{"city":"Paris"}`, userMsg("u1", "What's the weather?"))
			r2 := b.post(t, agent, resume)
			r2.check(t, true)
			r2.wantAnswerOnce(t, agents.WeatherAnswer("Paris"))
			th2, err := b.store.GetThread(t.Context(), tasks.ThreadKey{Agent: agent, ThreadID: thread})
			if err != nil {
				t.Fatal(err)
			}
			if th2.Own().TaskID != th.Own().TaskID || th2.Own().ContextID != th.Own().ContextID || th2.Own().TaskState != string(a2a.TaskStateCompleted) {
				t.Fatalf("thread after resume %+v, before %+v", th2, th)
			}
			// The same resume again is answered from the journal.
			r3 := b.post(t, agent, resumeBody(thread, "run-3", in.ID, `{"city":"Paris"}`, userMsg("u1", "What's the weather?")))
			if !bytes.Equal(r3.body, r2.body) {
				t.Fatalf("replay differs:\n%s\n---\n%s", r2.body, r3.body)
			}
		})
	}
}

func resumeBody(threadID, runID, interruptID, payload string, messages ...agui.Message) []byte {
	in := map[string]any{"threadId": threadID, "runId": runID, "messages": messages, "protocolVersion": "1.0",
		"resume": []any{map[string]any{"interruptId": interruptID, "status": "resolved", "payload": json.RawMessage(payload)}}}
	b, _ := json.Marshal(in)
	return b
}

// TestToolApprovalOverEveryBinding: the approver's proposed booking is a
// server tool call awaiting approval; approving reports the result on the
// original tool call without re-emitting it.
func TestToolApprovalOverEveryBinding(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	for _, agent := range []string{"approver", "approver-grpc", "approver-rest", "approver-v03"} {
		for _, v1 := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/v1=%v", agent, v1), func(t *testing.T) {
				t.Parallel()
				thread := fmt.Sprintf("th-%s-%v", agent, v1)
				r := b.post(t, agent, runBody(thread, "run-1", v1, userMsg("u1", "Book my flight")))
				r.check(t, v1)
				in := r.outcome().Interrupts[0]
				if in.Reason != "tool_call" || in.ToolCallID == "" {
					t.Fatalf("interrupt %+v", in)
				}
				body := map[string]any{"threadId": thread, "runId": "run-2", "messages": []any{userMsg("u1", "Book my flight")},
					"resume": []any{map[string]any{"interruptId": in.ID, "status": "resolved", "payload": map[string]any{"approved": true}}}}
				if v1 {
					body["protocolVersion"] = "1.0"
				}
				raw, _ := json.Marshal(body)
				r2 := b.post(t, agent, raw)
				r2.check(t, v1)
				var result *agui.ToolCallResult
				for _, e := range r2.events {
					switch e := e.(type) {
					case *agui.ToolCallStart:
						t.Fatal("the resumed run re-emitted TOOL_CALL_START")
					case *agui.ToolCallResult:
						result = e
					}
				}
				if result == nil || result.ToolCallID != in.ToolCallID || !strings.Contains(result.Content, "ABC123") {
					t.Fatalf("result %+v\n%s", result, r2.body)
				}
				r2.wantAnswerOnce(t, agents.BookedAnswer(agents.BookingArgs()))
			})
		}
	}
}

// TestContextCarriesAcrossRuns: the second run of a thread goes to the
// contextId the agent chose, and sends only the new user message.
func TestContextCarriesAcrossRuns(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	r1 := b.post(t, "streamer", runBody("th-ctx", "run-1", false, userMsg("u1", "first")))
	r1.check(t, false)
	th1, _ := b.store.GetThread(t.Context(), tasks.ThreadKey{Agent: "streamer", ThreadID: "th-ctx"})
	r2 := b.post(t, "streamer", runBody("th-ctx", "run-2", false,
		userMsg("u1", "first"), agui.Message{ID: "a1", Role: agui.RoleAssistant, Content: agui.TextContent(r1.text())}, userMsg("u2", "second")))
	r2.check(t, false)
	// The streamer echoes exactly what it received: only the new message.
	r2.wantAnswerOnce(t, agents.StreamerAnswer("second"))
	if strings.Contains(r2.text(), "first") {
		t.Fatalf("the agent was sent an old message again:\n%s", r2.text())
	}
	th2, _ := b.store.GetThread(t.Context(), tasks.ThreadKey{Agent: "streamer", ThreadID: "th-ctx"})
	if th1.Own().ContextID == "" || th2.Own().ContextID != th1.Own().ContextID {
		t.Fatalf("context changed: %q then %q", th1.Own().ContextID, th2.Own().ContextID)
	}
	if th2.Own().TaskID == th1.Own().TaskID {
		t.Fatal("a completed task must not be reused")
	}
}

// TestDisconnectDoesNotCancel: the client leaving mid-stream leaves the run
// (and the A2A task) to finish into the journal.
func TestDisconnectDoesNotCancel(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	demo, err := agents.Start(t.Context(), "127.0.0.1:0", agents.Options{Delay: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer demo.Close()
	b2 := startBridge(t, func(c *config.Config) {
		c.Agents = append(c.Agents, config.Agent{Name: "slow-narrator", URL: demo.URL("narrator")})
	})
	_ = b
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, b2.url+"/agents/slow-narrator",
		bytes.NewReader(runBody("th-dc", "run-1", false, userMsg("u1", "q"))))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "RUN_STARTED") {
			break
		}
	}
	cancel()
	resp.Body.Close()

	key := tasks.ThreadKey{Agent: "slow-narrator", ThreadID: "th-dc"}
	var after int64
	for {
		entries, err := b2.store.Read(t.Context(), key, after, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			after = e.Seq
			if e.Terminal {
				if !strings.Contains(string(e.Event), "RUN_FINISHED") {
					t.Fatalf("run ended with %s", e.Event)
				}
				return
			}
		}
		if err := b2.store.Wait(t.Context(), key, after); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBadInput is the bad-input table: each request gets a precise status
// and JSON error, and nothing is written to the thread.
func TestBadInput(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	valid := runBody("th-bad", "run-1", false, userMsg("u1", "hi"))
	big := runBody("th-bad", "run-1", false, userMsg("u1", strings.Repeat("x", 70<<10)))
	cases := []struct {
		name, agent, contentType string
		body                     []byte
		status                   int
		code                     string
	}{
		{"unknown agent", "nobody", "application/json", valid, 404, "unknown_agent"},
		{"text/plain", "streamer", "text/plain", valid, 415, "unsupported_media_type"},
		{"no content type", "streamer", "", valid, 415, "unsupported_media_type"},
		{"too large", "streamer", "application/json", big, 413, "body_too_large"},
		{"malformed json", "streamer", "application/json", []byte(`{"threadId":`), 400, "invalid_input"},
		{"not an object", "streamer", "application/json", []byte(`[1,2]`), 400, "invalid_input"},
		{"missing threadId", "streamer", "application/json", []byte(`{"runId":"r","messages":[]}`), 400, "invalid_input"},
		{"missing runId", "streamer", "application/json", []byte(`{"threadId":"th-bad","messages":[]}`), 400, "invalid_input"},
		{"threadId wrong type", "streamer", "application/json", []byte(`{"threadId":5,"runId":"r","messages":[]}`), 400, "invalid_input"},
		{"messages wrong type", "streamer", "application/json", []byte(`{"threadId":"th-bad","runId":"r","messages":{}}`), 400, "invalid_input"},
		{"bad role", "streamer", "application/json", []byte(`{"threadId":"th-bad","runId":"r","messages":[{"id":"1","role":"robot","content":"x"}]}`), 400, "invalid_input"},
		{"invalid utf-8", "streamer", "application/json", []byte("{\"threadId\":\"th-bad\",\"runId\":\"r\xff\",\"messages\":[]}"), 400, "invalid_input"},
		{"bad base64 image", "streamer", "application/json", []byte(`{"threadId":"th-bad","runId":"r","messages":[{"id":"1","role":"user","content":[{"type":"image","source":{"type":"data","value":"%%%","mimeType":"image/png"}}]}]}`), 400, "invalid_input"},
		{"agent unreachable", "unreachable", "application/json", valid, 502, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, b.url+"/agents/"+c.agent, bytes.NewReader(c.body))
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error struct{ Code, Message string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatalf("status %d, body not the JSON error shape: %v", resp.StatusCode, err)
			}
			if resp.StatusCode != c.status || (c.code != "" && body.Error.Code != c.code) || body.Error.Message == "" {
				t.Fatalf("got %d %+v, want %d %s", resp.StatusCode, body.Error, c.status, c.code)
			}
			if _, err := b.store.GetThread(t.Context(), tasks.ThreadKey{Agent: c.agent, ThreadID: "th-bad"}); err == nil {
				t.Fatal("a rejected request wrote the thread")
			}
		})
	}
}

// TestThreadBusy: a second run on a thread with an active run gets 409, and
// the first run is unaffected.
func TestThreadBusy(t *testing.T) {
	t.Parallel()
	demo, err := agents.Start(t.Context(), "127.0.0.1:0", agents.Options{Delay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer demo.Close()
	b := startBridge(t, func(c *config.Config) {
		c.Agents = append(c.Agents, config.Agent{Name: "slow-streamer", URL: demo.URL("streamer")})
	})
	first := make(chan runResult, 1)
	started := make(chan struct{})
	go func() {
		req, _ := http.NewRequest(http.MethodPost, b.url+"/agents/slow-streamer",
			bytes.NewReader(runBody("th-busy", "run-1", false, userMsg("u1", "hi"))))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- runResult{}
			close(started)
			return
		}
		close(started) // headers are sent once the agent accepted the run
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		first <- runResult{status: resp.StatusCode, body: raw}
	}()
	<-started
	r := b.post(t, "slow-streamer", runBody("th-busy", "run-2", false, userMsg("u1", "hi")))
	if r.status != http.StatusConflict || !bytes.Contains(r.body, []byte("thread_busy")) {
		t.Fatalf("second run: %d %s", r.status, r.body)
	}
	if got := <-first; got.status != 200 || !bytes.Contains(got.body, []byte("RUN_FINISHED")) {
		t.Fatalf("first run: %d %s", got.status, got.body)
	}
}

func TestDiscoveryAndHealth(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	for path, want := range map[string]string{
		"/healthz":         `"ok"`,
		"/readyz":          `"ready"`,
		"/agents":          `"streamer"`,
		"/agents/streamer": `"streaming":true`,
		"/agents/blocking": `"streaming":false`,
	} {
		resp, err := http.Get(b.url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(body, []byte(want)) {
			t.Errorf("%s: %d %s (want %s)", path, resp.StatusCode, body, want)
		}
	}
	resp, err := http.Get(b.url + "/agents/unreachable")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(body, []byte(`"unavailable"`)) {
		t.Errorf("unreachable agent health: %s", body)
	}
}

// TestThreadRoutes: the thread snapshot shows a pending interrupt; cancel
// cancels the A2A task, clears the interrupt, is idempotent, and 404s for
// unknown threads.
func TestThreadRoutes(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	r := b.post(t, "asker", runBody("th-routes", "run-1", true, userMsg("u1", "Weather?")))
	r.check(t, true)
	interrupt := r.outcome().Interrupts[0]

	var view struct {
		ThreadID          string
		ContextID         string
		Task              struct{ ID, State string }
		Messages          []agui.Message
		State             map[string]any
		PendingInterrupts []agui.Interrupt
		Cancel            *struct {
			Requested bool
			TaskState string
		}
	}
	getJSON := func(method, path string, wantStatus int, v any) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, b.url+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != wantStatus {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, body)
		}
		if v != nil {
			if err := json.Unmarshal(body, v); err != nil {
				t.Fatalf("%s: %v", body, err)
			}
		}
	}
	getJSON("GET", "/agents/asker/threads/th-routes", 200, &view)
	if len(view.PendingInterrupts) != 1 || view.PendingInterrupts[0].ID != interrupt.ID ||
		view.Task.State != "input_required" || len(view.Messages) != 2 || view.Messages[0].ID != "u1" ||
		view.State["a2a"] == nil {
		t.Fatalf("thread view %+v", view)
	}
	getJSON("POST", "/agents/asker/threads/th-routes/cancel", 200, &view)
	if view.Cancel == nil || !view.Cancel.Requested || view.Cancel.TaskState != "canceled" || len(view.PendingInterrupts) != 0 {
		t.Fatalf("cancel %+v", view)
	}
	ag, err := a2a.Dial(t.Context(), a2a.Options{URL: b.demo.URL("asker")})
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	task, err := ag.GetTask(t.Context(), a2a.TaskID(view.Task.ID))
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("agent task %v %v", task, err)
	}
	getJSON("POST", "/agents/asker/threads/th-routes/cancel", 200, &view)
	if view.Cancel.Requested {
		t.Fatal("a second cancel must be a no-op")
	}
	getJSON("GET", "/agents/asker/threads/nope", 404, nil)
	getJSON("POST", "/agents/asker/threads/nope/cancel", 404, nil)
	getJSON("GET", "/agents/nobody/threads/th-routes", 404, nil)
	// The thread takes new input again.
	r2 := b.post(t, "asker", runBody("th-routes", "run-2", true, userMsg("u1", "Weather?"), userMsg("u2", "Again?")))
	r2.check(t, true)
	if o := r2.outcome(); o == nil || o.Type != agui.OutcomeInterrupt {
		t.Fatalf("after cancel:\n%s", r2.body)
	}
}

// authorize completes the signin agent's out-of-band sign-in for a task.
func (b *testBridge) authorize(t *testing.T, taskID string) {
	t.Helper()
	resp, err := http.Post(b.demo.URL("signin")+"authorize?task="+taskID, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("authorize: %d", resp.StatusCode)
	}
}

func authInterrupt(t *testing.T, b *testBridge, thread string) agui.Interrupt {
	t.Helper()
	r := b.post(t, "signin", runBody(thread, "run-1", true, userMsg("u1", "Show my files")))
	r.check(t, true)
	o := r.outcome()
	if o == nil || o.Type != agui.OutcomeInterrupt || o.Interrupts[0].Reason != "a2a:auth_required" {
		t.Fatalf("want an auth interrupt:\n%s", r.body)
	}
	in := o.Interrupts[0]
	if a := in.Metadata["a2a"].(map[string]any); a["auth"] == nil || in.Message != agents.SigninQuestion {
		t.Fatalf("the interrupt must carry the agent's message and auth details: %+v", in)
	}
	return in
}

// TestAuthRequiredContinuesOutOfBand: the credential arrives out of band
// after the run ended; the bridge kept following the task, so the resume
// run shows what happened, and the agent gets no message it does not need.
func TestAuthRequiredContinuesOutOfBand(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	in := authInterrupt(t, b, "th-auth-1")
	taskID := in.Metadata["a2a"].(map[string]any)["taskId"].(string)
	b.authorize(t, taskID)
	ag, err := a2a.Dial(t.Context(), a2a.Options{URL: b.demo.URL("signin")})
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		task, err := ag.GetTask(t.Context(), a2a.TaskID(taskID))
		if err == nil && task.Status.State == a2a.TaskStateCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task did not complete after authorization: %v %v", task, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := b.post(t, "signin", resumeBody("th-auth-1", "run-2", in.ID, `{"signedIn":true}`, userMsg("u1", "Show my files")))
	r.check(t, true)
	r.wantAnswerOnce(t, agents.SigninAnswer)
	task, err := ag.GetTask(t.Context(), a2a.TaskID(taskID))
	if err != nil {
		t.Fatal(err)
	}
	users := 0
	for _, m := range task.History {
		if m.Role == a2a.RoleUser {
			users++
		}
	}
	if users != 1 {
		t.Fatalf("the agent got %d user messages, want 1 (no answer is needed once the task went on)", users)
	}
}

// TestAuthRequiredResumedBeforeSignIn: the resume arrives while the task
// still waits; the run follows it until the credential arrives.
func TestAuthRequiredResumedBeforeSignIn(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	in := authInterrupt(t, b, "th-auth-2")
	taskID := in.Metadata["a2a"].(map[string]any)["taskId"].(string)
	go func() {
		// Sign in once the resume run is under way.
		for i := 0; i < 500; i++ {
			th, err := b.store.GetThread(context.Background(), tasks.ThreadKey{Agent: "signin", ThreadID: "th-auth-2"})
			if err == nil && th.Running("run-2") {
				http.Post(b.demo.URL("signin")+"authorize?task="+taskID, "text/plain", nil)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	r := b.post(t, "signin", resumeBody("th-auth-2", "run-2", in.ID, `{"signedIn":true}`, userMsg("u1", "Show my files")))
	r.check(t, true)
	r.wantAnswerOnce(t, agents.SigninAnswer)
}
