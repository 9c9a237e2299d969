package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2a-agui-bridge/bridge/tasks"
	"github.com/a2a-agui-bridge/bridge/tasks/threadview"
)

// liveRun is a run whose SSE stream is read as it arrives, so a test can
// act in the middle of it.
type liveRun struct {
	events chan agui.Event // every event, as it is decoded
	frames chan sseFrame   // the same, with its SSE id
	done   chan runResult  // the whole result once the stream ends
	cancel context.CancelFunc
}

// sseFrame is one SSE frame: its id (0 when it has none) and data.
type sseFrame struct {
	seq  int64
	data string
}

// open starts a run and reads its stream in the background.
func (b *testBridge) open(t *testing.T, agent string, body []byte) *liveRun {
	t.Helper()
	return b.stream(t, http.MethodPost, "/agents/"+agent, body, nil)
}

// stream reads an SSE response in the background.
func (b *testBridge) stream(t *testing.T, method, path string, body []byte, header http.Header) *liveRun {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	lr := &liveRun{events: make(chan agui.Event, 4096), frames: make(chan sseFrame, 4096), done: make(chan runResult, 1), cancel: cancel}
	go func() {
		defer close(lr.events)
		defer close(lr.frames)
		res := runResult{}
		defer func() { lr.done <- res }()
		req, _ := http.NewRequestWithContext(ctx, method, b.url+path, bytes.NewReader(body))
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res.status = -1
			return
		}
		defer resp.Body.Close()
		res.status = resp.StatusCode
		var raw bytes.Buffer
		sc := bufio.NewScanner(io.TeeReader(resp.Body, &raw))
		sc.Buffer(nil, 1<<20)
		var seq int64
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				seq, _ = strconv.ParseInt(v, 10, 64)
				continue
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			lr.frames <- sseFrame{seq: seq, data: data}
			seq = 0
			ev, err := agui.Decode([]byte(data))
			if err != nil {
				continue // check() reports the stream as a whole
			}
			res.events = append(res.events, ev)
			lr.events <- ev
		}
		res.body = raw.Bytes()
	}()
	return lr
}

// until waits for the first event that matches, failing the test when the
// stream ends first.
func (lr *liveRun) until(t *testing.T, match func(agui.Event) bool) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case ev, ok := <-lr.events:
			if !ok {
				t.Fatal("the stream ended before the awaited event")
			}
			if match(ev) {
				return
			}
		case <-timeout:
			t.Fatal("the awaited event did not come")
		}
	}
}

func (lr *liveRun) result(t *testing.T) runResult {
	t.Helper()
	for range lr.events {
	}
	select {
	case r := <-lr.done:
		return r
	case <-time.After(15 * time.Second):
		t.Fatal("the stream did not end")
		return runResult{}
	}
}

func isContent(ev agui.Event) bool { return ev.Type() == agui.EventTextMessageContent }

type cancelView struct {
	ActiveRunID string
	Task        struct{ ID, State string }
	Cancel      *threadview.CancelResult
}

func (b *testBridge) cancelThread(t *testing.T, agent, thread string) cancelView {
	t.Helper()
	resp, err := http.Post(b.url+"/agents/"+agent+"/threads/"+thread+"/cancel", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("cancel: %d %s", resp.StatusCode, body)
	}
	var v cancelView
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func (b *testBridge) threadView(t *testing.T, agent, thread string) cancelView {
	t.Helper()
	resp, err := http.Get(b.url + "/agents/" + agent + "/threads/" + thread)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v cancelView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// wantCancelledRun checks the terminal event of a cancelled run: the
// cancelled outcome for 1.0 clients, RUN_ERROR "cancelled" for older ones.
func wantCancelledRun(t *testing.T, r runResult, v1 bool) {
	t.Helper()
	r.check(t, v1)
	if v1 {
		if o := r.outcome(); o == nil || o.Type != agui.OutcomeCancelled {
			t.Fatalf("want the cancelled outcome:\n%s", r.body)
		}
		return
	}
	r.wantError(t, "cancelled")
}

// TestCancelWhileStreaming: a cancel request in the middle of a stream
// reaches the agent once (two concurrent requests included), the stream
// ends cancelled, the thread records the task's final state and takes the
// next run.
func TestCancelWhileStreaming(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	for _, v1 := range []bool{true, false} {
		t.Run(fmt.Sprintf("v1=%v", v1), func(t *testing.T) {
			t.Parallel()
			thread := fmt.Sprintf("th-cancel-%v", v1)
			run := b.open(t, "counter", runBody(thread, "run-1", v1, userMsg("u1", "count")))
			run.until(t, isContent)
			var wg sync.WaitGroup
			views := make([]cancelView, 2)
			for i := range views {
				wg.Go(func() { views[i] = b.cancelThread(t, "counter", thread) })
			}
			wg.Wait()
			// One cancel sends CancelTask. The other either finds the run
			// still going (requested, marked repeated) or, since the counter
			// stops the moment CancelTask reaches it, finds the run already
			// ended and the task cancelled: it then sends nothing either.
			first, second := 0, 0
			for _, v := range views {
				c := v.Cancel
				switch {
				case c == nil || c.Refused != nil:
					t.Fatalf("cancel answers %+v %+v", views[0].Cancel, views[1].Cancel)
				case c.Requested && !c.Repeated:
					first++
				case c.Repeated || c.TaskState == "canceled":
					second++
				}
			}
			if first != 1 || second != 1 {
				t.Fatalf("want one cancel that sends CancelTask and one that does not: %+v %+v", views[0].Cancel, views[1].Cancel)
			}
			r := run.result(t)
			wantCancelledRun(t, r, v1)
			after := b.threadView(t, "counter", thread)
			if after.ActiveRunID != "" || after.Task.State != "canceled" {
				t.Fatalf("thread after the cancel: %+v", after)
			}
			if got := b.demo.Cancels("counter"); countOf(got, a2a.TaskID(after.Task.ID)) != 1 {
				t.Fatalf("the agent got CancelTask %v for task %s, want once", got, after.Task.ID)
			}
			// Cancelling again is answered, and sends nothing.
			if v := b.cancelThread(t, "counter", thread); v.Cancel.Requested {
				t.Fatalf("a cancel after the end: %+v", v.Cancel)
			}
			if got := b.demo.Cancels("counter"); countOf(got, a2a.TaskID(after.Task.ID)) != 1 {
				t.Fatalf("CancelTask %v after a repeat", got)
			}
			// The thread is free: the next run streams, and is cancelled too.
			next := b.open(t, "counter", runBody(thread, "run-2", v1, userMsg("u1", "count"), userMsg("u2", "again")))
			next.until(t, isContent)
			b.cancelThread(t, "counter", thread)
			wantCancelledRun(t, next.result(t), v1)
		})
	}
}

// TestCancelBeforeFirstEvent: a cancel that arrives while the agent has not
// said anything yet goes out as soon as the agent names its task.
func TestCancelBeforeFirstEvent(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	run := b.open(t, "latecomer", runBody("th-late", "run-1", true, userMsg("u1", "count")))
	deadline := time.Now().Add(5 * time.Second)
	for b.threadView(t, "latecomer", "th-late").ActiveRunID != "run-1" {
		if time.Now().After(deadline) {
			t.Fatal("the run never became active")
		}
		time.Sleep(5 * time.Millisecond)
	}
	v := b.cancelThread(t, "latecomer", "th-late")
	if v.Cancel == nil || !v.Cancel.Requested || !v.Cancel.WaitingForTask {
		t.Fatalf("cancel before the task: %+v", v.Cancel)
	}
	wantCancelledRun(t, run.result(t), true)
	after := b.threadView(t, "latecomer", "th-late")
	if got := b.demo.Cancels("latecomer"); len(got) != 1 || got[0] != a2a.TaskID(after.Task.ID) {
		t.Fatalf("CancelTask calls %v, want one for %s", got, after.Task.ID)
	}
}

// TestCancelRefused: an agent that refuses the cancel is reported in the
// answer, and the run ends as the agent reports it.
func TestCancelRefused(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	run := b.open(t, "stubborn", runBody("th-stubborn", "run-1", true, userMsg("u1", "count")))
	run.until(t, isContent)
	v := b.cancelThread(t, "stubborn", "th-stubborn")
	if v.Cancel == nil || !v.Cancel.Requested || v.Cancel.Refused == nil || v.Cancel.Refused.Code != "a2a_task_not_cancelable" {
		t.Fatalf("refused cancel: %+v", v.Cancel)
	}
	r := run.result(t)
	r.check(t, true)
	if o := r.outcome(); o != nil && o.Type != agui.OutcomeSuccess {
		t.Fatalf("the run must complete as the agent says:\n%s", r.body)
	}
	r.wantAnswerOnce(t, agents.CounterText(15))
}

func countOf(ids []a2a.TaskID, id a2a.TaskID) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}

// wantOneResultBeforeText checks that a resumed run reports exactly one
// TOOL_CALL_RESULT, on toolCallID, holding contains, before any text.
func wantOneResultBeforeText(t *testing.T, r runResult, toolCallID, contains string) {
	t.Helper()
	var results []*agui.ToolCallResult
	text := false
	for _, e := range r.events {
		switch e := e.(type) {
		case *agui.ToolCallStart, *agui.ToolCallArgs, *agui.ToolCallEnd:
			t.Fatalf("the resumed run re-emitted %s:\n%s", e.Type(), r.body)
		case *agui.TextMessageStart:
			text = true
		case *agui.ToolCallResult:
			if text {
				t.Fatalf("TOOL_CALL_RESULT after the answer's text:\n%s", r.body)
			}
			results = append(results, e)
		}
	}
	if len(results) != 1 || results[0].ToolCallID != toolCallID || !strings.Contains(results[0].Content, contains) {
		t.Fatalf("want one TOOL_CALL_RESULT on %s containing %s, got %+v:\n%s", toolCallID, contains, results, r.body)
	}
}

// TestToolResultWithoutEcho: agents that never echo the function_response
// (quiet-approver) still get the call's result shown, once, before their
// answer — approve, deny and edit, over every binding; the agent that
// echoes (approver) has its own result shown instead.
func TestToolResultWithoutEcho(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	edited := agents.BookingArgs()
	edited["passengers"] = 3
	cases := []struct {
		name, payload, contains, answer string
	}{
		{"approve", `{"approved":true}`, `"approved":true`, agents.BookedAnswer(agents.BookingArgs())},
		{"deny", `{"approved":false}`, `"approved":false`, agents.ApproverDenied},
		{"edit", `{"approved":true,"editedArgs":{"date":"2026-12-24","flight":"LH123","passengers":3,"to":"Lisbon"}}`, `"passengers":3`, agents.BookedAnswer(edited)},
	}
	for _, agent := range []string{"quiet-approver", "quiet-approver-rest", "quiet-approver-grpc", "approver"} {
		for _, c := range cases {
			for _, v1 := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%s/v1=%v", agent, c.name, v1), func(t *testing.T) {
					t.Parallel()
					thread := fmt.Sprintf("th-%s-%s-%v", agent, c.name, v1)
					r := b.post(t, agent, runBody(thread, "run-1", v1, userMsg("u1", "Book my flight")))
					r.check(t, v1)
					in := r.outcome().Interrupts[0]
					body := map[string]any{"threadId": thread, "runId": "run-2", "messages": []any{userMsg("u1", "Book my flight")},
						"resume": []any{map[string]any{"interruptId": in.ID, "status": "resolved", "payload": json.RawMessage(c.payload)}}}
					if v1 {
						body["protocolVersion"] = "1.0"
					}
					raw, _ := json.Marshal(body)
					r2 := b.post(t, agent, raw)
					r2.check(t, v1)
					contains := c.contains
					if agent == "approver" && c.name != "deny" {
						contains = agents.ApproverConfirmation // its own result
					}
					wantOneResultBeforeText(t, r2, in.ToolCallID, contains)
					r2.wantAnswerOnce(t, c.answer)
					th, err := b.store.GetThread(t.Context(), tasks.ThreadKey{Agent: agent, ThreadID: thread})
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for _, m := range th.Messages {
						if m.Role == agui.RoleTool && m.ToolCallID == in.ToolCallID {
							n++
						}
					}
					if n != 1 {
						t.Fatalf("the thread holds %d tool messages for the call, want 1: %+v", n, th.Messages)
					}
					// An identical replay is the same bytes.
					if got := dataLines(b.post(t, agent, raw).body); got != dataLines(r2.body) {
						t.Fatalf("replay differs:\n%s\n---\n%s", dataLines(r2.body), got)
					}
				})
			}
		}
	}
}
