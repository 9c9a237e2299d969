package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// startEndless serves agents.Endless (1 KiB chunks appended to one
// artifact without end) from a real a2asrv JSON-RPC server; the handler is
// returned to read the agent's own view of its tasks.
func startEndless(t *testing.T) (url string, h a2asrv.RequestHandler) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/"
	card := &a2a.AgentCard{Name: "endless", Description: "never stops", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(base+"jsonrpc", a2a.TransportProtocolJSONRPC)},
		Capabilities:        a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "endless", Name: "Endless", Description: "Never stops talking.", Tags: []string{"test"}}}}
	h = a2asrv.NewHandler(agents.Endless{ChunkBytes: 1024, Interval: time.Millisecond}, a2asrv.WithLogger(slog.New(slog.DiscardHandler)))
	mux := http.NewServeMux()
	mux.Handle("GET "+a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(h))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return base, h
}

// startBudgetBridge is a test bridge with the run budget set to budget
// and the endless agent configured as "endless" (a minute's run timeout,
// far past what the budget allows), tweaked further by tweak.
func startBudgetBridge(t *testing.T, budget int64, tweak func(*config.Config)) (*testBridge, a2asrv.RequestHandler) {
	t.Helper()
	url, agent := startEndless(t)
	return startBridge(t, func(c *config.Config) {
		c.Limits.MaxRunBytes = budget
		c.Limits.MaxThreadJournalBytes = 4 * budget
		c.Agents = append(c.Agents, config.Agent{Name: "endless", URL: url,
			Timeouts: config.Timeouts{Run: config.Duration(time.Minute)}})
		if tweak != nil {
			tweak(c)
		}
	}), agent
}

// TestRunBudget: an agent that streams without end is stopped at
// limits.maxRunBytes with RUN_ERROR run_too_large, once, well before its
// run timeout; its A2A task is cancelled; the run journaled about the
// budget and no more; the thread takes the next run.
func TestRunBudget(t *testing.T) {
	t.Parallel()
	const budget = 256 << 10
	b, agent := startBudgetBridge(t, budget, nil)
	for i, v1 := range []bool{false, true} {
		runID := fmt.Sprintf("r%d", i+1)
		ev := runEvents(t, b.do(t, http.MethodPost, "/agents/endless", "", runBody("th-endless", runID, v1, userMsg("u"+runID, "go"))))
		if code := terminalCode(ev); code != agui.CodeRunTooLarge {
			t.Fatalf("run %s: ended with %q (%T), want RUN_ERROR run_too_large", runID, code, ev[len(ev)-1])
		}
		if msg := ev[len(ev)-1].(*agui.RunError).Message; !strings.Contains(msg, "limits.maxRunBytes") {
			t.Errorf("run %s: RUN_ERROR message %q does not name the limit", runID, msg)
		}
	}

	// What the first run journaled: about the budget (one event over it
	// at most), not the minute's worth the agent would have sent. (The
	// second opens with a snapshot of the conversation, the first run's
	// answer included, which the budget leaves out.)
	entries, err := b.store.Read(t.Context(), store.ThreadKey{Agent: "endless", ThreadID: "th-endless"}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	journaled := 0
	for _, e := range entries {
		if e.RunID == "r1" {
			journaled += len(e.Event)
		}
	}
	if journaled < budget || journaled > budget+8<<10 {
		t.Errorf("the first run journaled %d bytes; the budget is %d", journaled, budget)
	}

	// The thread's record keeps the newest of its conversation within the
	// budget (the second answer), not every answer whole.
	view := b.do(t, http.MethodGet, "/agents/endless/threads/th-endless", "", nil)
	if n := len(view.body); n > budget*3/2 {
		t.Errorf("the thread's record is %d bytes after two runs of a %d-byte budget; want about one run's", n, budget)
	}

	// The agent's own record of the tasks: cancelled, not left working.
	var th struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	if err := json.Unmarshal(view.body, &th); err != nil || th.Task.ID == "" {
		t.Fatalf("thread view: %d %.300s", view.status, view.body)
	}
	// The agent settles the cancel behind the chunks it queued: under the
	// race detector on a loaded 2-core machine that has taken over 10 s.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for {
		task, err := agent.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(th.Task.ID)})
		if err == nil && task.Status.State == a2a.TaskStateCanceled {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the agent's task %s after run_too_large: %v, %v; want canceled", th.Task.ID, task, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestThreadJournalCompaction: runs on one thread past
// limits.maxThreadJournalBytes drop the oldest finished runs' events,
// whole runs, never the latest; a full replay starts at a kept run's
// RUN_STARTED, a replay from inside what was dropped is 410
// journal_compacted, and the thread's conversation is all still there.
func TestThreadJournalCompaction(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	b := startBridge(t, func(c *config.Config) {
		c.Limits.MaxRunBytes = limit
		c.Limits.MaxThreadJournalBytes = limit
	})
	// Each run opens with a snapshot of the conversation so far (the client
	// sends only its new message), so the journal grows faster than the
	// answers: 30 runs of 400-byte messages journal about 400 KB.
	words := strings.Repeat("word ", 80)
	const runs = 30
	for i := range runs {
		id := fmt.Sprint(i)
		ev := runEvents(t, b.do(t, http.MethodPost, "/agents/streamer", "", runBody("th-long", "r"+id, false, userMsg("u"+id, words+id))))
		if code := terminalCode(ev); code != "" {
			t.Fatalf("run %d: RUN_ERROR %q", i, code)
		}
	}
	key := store.ThreadKey{Agent: "streamer", ThreadID: "th-long"}
	entries, err := b.store.Read(t.Context(), key, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, e := range entries {
		total += len(e.Event)
	}
	if total > limit {
		t.Errorf("the thread's journal holds %d bytes after %d runs; the cap is %d", total, runs, limit)
	}
	if len(entries) == 0 || entries[len(entries)-1].RunID != fmt.Sprintf("r%d", runs-1) {
		t.Fatalf("the latest run is not in the journal")
	}
	first := entries[0].Seq

	// A full replay: from the first kept run's start, ending exactly once.
	replay := b.do(t, http.MethodGet, "/agents/streamer/threads/th-long/events", "", nil)
	if replay.status != http.StatusOK {
		t.Fatalf("replay: %d %s", replay.status, replay.body)
	}
	frames := strings.SplitN(string(replay.body), "\n\n", 3)
	if len(frames) < 2 || !strings.Contains(frames[0]+frames[1], `"RUN_STARTED"`) {
		t.Fatalf("the replay does not start with a run's RUN_STARTED:\n%.400s", replay.body)
	}
	if n := bytes.Count(replay.body, []byte(`"RUN_STARTED"`)); n < 1 || n >= runs/2 {
		t.Errorf("the replay holds %d runs; want the kept ones only (at least one, fewer than %d)", n, runs/2)
	}

	// From inside what was dropped: told, not shown a gap.
	gone := b.do(t, http.MethodGet, fmt.Sprintf("/agents/streamer/threads/th-long/events?after=%d", first/2), "", nil)
	if gone.status != http.StatusGone || errorCode(t, gone.body) != agui.CodeJournalCompacted {
		t.Fatalf("replay after %d (compacted): %d %s; want 410 journal_compacted", first/2, gone.status, gone.body)
	}
	poll := b.do(t, http.MethodGet, fmt.Sprintf("/agents/streamer/threads/th-long/events?after=%d", first/2), "", nil, "Accept", "application/json")
	if poll.status != http.StatusGone {
		t.Fatalf("long-poll after %d (compacted): %d %s; want 410", first/2, poll.status, poll.body)
	}
	kept := b.do(t, http.MethodGet, fmt.Sprintf("/agents/streamer/threads/th-long/events?after=%d", first-1), "", nil)
	if kept.status != http.StatusOK || !bytes.Contains(kept.body, []byte(fmt.Sprintf("r%d", runs-1))) {
		t.Fatalf("replay after %d (kept): %d", first-1, kept.status)
	}

	// The conversation lives in the thread's record, not the journal.
	view := b.do(t, http.MethodGet, "/agents/streamer/threads/th-long", "", nil)
	for _, i := range []int{0, runs - 1} {
		if !bytes.Contains(view.body, []byte(fmt.Sprintf(`"id":"u%d"`, i))) {
			t.Errorf("the thread's messages lost user message u%d", i)
		}
	}

	// The thread goes on.
	if ev := runEvents(t, b.do(t, http.MethodPost, "/agents/streamer", "", runBody("th-long", "r-next", true, userMsg("u-next", "more")))); terminalCode(ev) != "" {
		t.Fatalf("the next run: RUN_ERROR %q", terminalCode(ev))
	}
}

// TestTeamRunBudget: the budget is the team run's: a parallel team of the
// endless agent and the streamer ends the endless member's part with
// run_too_large (its task cancelled), and the run still ends exactly once.
func TestTeamRunBudget(t *testing.T) {
	t.Parallel()
	const budget = 128 << 10
	b, _ := startBudgetBridge(t, budget, func(c *config.Config) {
		c.Teams = append(c.Teams, config.Team{Name: "chorus", Strategy: config.StrategyParallel, Members: []string{"streamer", "endless"}})
	})
	r := b.do(t, http.MethodPost, "/agents/chorus", "", runBody("th-chorus", "r1", true, userMsg("u1", "go")))
	ev := runEvents(t, r)
	if !bytes.Contains(r.body, []byte(`"run_too_large"`)) {
		t.Fatalf("no run_too_large in the team run (ended with %T)", ev[len(ev)-1])
	}
	if len(r.body) > 2*budget+64<<10 {
		t.Errorf("the team run streamed %d bytes; the budget is %d", len(r.body), budget)
	}
}
