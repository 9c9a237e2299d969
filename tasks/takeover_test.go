package tasks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// TestTakeOverAfterShutdown: a run cut by a shutdown stays in progress on
// its thread; the next service on the same store takes it over, reattaches
// to the task and finishes it into the journal, which then holds one valid
// run with the answer once.
func TestTakeOverAfterShutdown(t *testing.T) {
	t.Parallel()
	for _, v1 := range []bool{true, false} {
		store := store.NewMemoryStore()
		first := &scriptedAgent{streaming: true, hold: true, stream: []scripted{
			{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("Hello ", false)},
		}}
		svc1 := NewService(Options{Store: store, ExclusiveStore: true, Agents: []AgentSpec{{Name: "a",
			Connect: func(context.Context) (Agent, error) { return first, nil }}}})
		in := input("th", "r1")
		if v1 {
			in.ProtocolVersion = "1.0"
		}
		run := must(svc1.StartRun(t.Context(), "a", in))
		waitFor(t, func() bool {
			es, _ := store.Read(t.Context(), run.Key, 0, 100)
			return strings.Contains(string(joined(es)), "Hello ")
		})
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		_ = svc1.Close(ctx)
		cancel()
		if e := lastError(t, collect(t, run)); e.Code != agui.CodeServerShutdown {
			t.Fatalf("the open stream ends with %q", e.Code)
		}

		snapshot := task(a2a.TaskStateWorking, "Hello ")
		second := &scriptedAgent{streaming: true, subscribe: []scripted{
			{ev: snapshot}, {ev: chunk("world.", true)}, {ev: status(a2a.TaskStateCompleted)},
		}}
		svc2 := NewService(Options{Store: store, ExclusiveStore: true, Agents: []AgentSpec{{Name: "a",
			Connect: func(context.Context) (Agent, error) { return second, nil }}}})
		t.Cleanup(func() { _ = svc2.Close(context.Background()) })
		n, err := svc2.Recover(t.Context())
		if err != nil || n != 1 {
			t.Fatalf("Recover took %d runs: %v", n, err)
		}
		follow, err := svc2.Follow(t.Context(), "a", "th", 0)
		if err != nil {
			t.Fatal(err)
		}
		events := collect(t, follow)
		if err := agui.CheckStream(v1, events); err != nil {
			t.Fatalf("v1=%v: the journal is not one valid run: %v", v1, err)
		}
		var text strings.Builder
		for _, e := range events {
			if c, ok := e.(*agui.TextMessageContent); ok {
				text.WriteString(c.Delta)
			}
		}
		if text.String() != "Hello world." {
			t.Fatalf("v1=%v: text %q", v1, text.String())
		}
		if _, ok := events[len(events)-1].(*agui.RunFinished); !ok {
			t.Fatalf("v1=%v: the run ends with %s", v1, events[len(events)-1].Type())
		}
		th, err := store.GetThread(t.Context(), run.Key)
		if err != nil || th.Active != nil || th.Own().TaskState != string(a2a.TaskStateCompleted) {
			t.Fatalf("thread after the takeover: %+v %v", th, err)
		}
	}
}

func joined(es []Entry) []byte {
	var b []byte
	for _, e := range es {
		b = append(b, e.Event...)
	}
	return b
}

// TestTeamRunTakenOverEnds: a team run cut by a shutdown is not followed
// again by the next service: Recover ends it (before, the driver it
// started had no span and panicked), and the thread is released for the
// next run. Its member's open message leaves the RUN_ERROR unwritable for
// older clients, so the journal's run has no end.
func TestTeamRunTakenOverEnds(t *testing.T) {
	t.Parallel()
	st := store.NewMemoryStore()
	member := &scriptedAgent{streaming: true, hold: true, stream: teamTurn("t1", "Hello there", a2a.TaskStateWorking)[:2]}
	specs := func(agent Agent) []AgentSpec {
		return []AgentSpec{{Name: "m", Connect: func(context.Context) (Agent, error) { return agent, nil }}}
	}
	teams := []TeamSpec{{Name: "team", Strategy: StrategyParallel, Members: []string{"m"}}}
	svc1 := NewService(Options{Store: st, ExclusiveStore: true, Agents: specs(member), Teams: teams})
	run := must(svc1.StartRun(t.Context(), "team", input("th", "r1")))
	waitFor(t, func() bool {
		es, _ := st.Read(t.Context(), run.Key, 0, 100)
		return strings.Contains(string(joined(es)), "Hello")
	})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	_ = svc1.Close(ctx)
	cancel()

	svc2 := NewService(Options{Store: st, ExclusiveStore: true, Agents: specs(&scriptedAgent{streaming: true}), Teams: teams})
	t.Cleanup(func() { _ = svc2.Close(context.Background()) })
	if n, err := svc2.Recover(t.Context()); err != nil || n != 1 {
		t.Fatalf("Recover took %d runs: %v", n, err)
	}
	follow, err := svc2.Follow(t.Context(), "team", "th", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := agui.CheckStream(false, collect(t, follow)); err != nil && !strings.Contains(err.Error(), "RUN_FINISHED or RUN_ERROR") {
		t.Fatalf("the journal is not a valid run: %v", err)
	}
	waitFor(t, func() bool {
		th, err := st.GetThread(t.Context(), run.Key)
		return err == nil && th.Active == nil
	})
}

// TestTeamRunCutByShutdown: the client of a team run the bridge cut by a
// shutdown reads the run to a RUN_ERROR server_shutdown, though a member
// had a message open (before, the verifier refused that RUN_ERROR and the
// reader was told the run was lost).
func TestTeamRunCutByShutdown(t *testing.T) {
	t.Parallel()
	for _, v1 := range []bool{false, true} {
		st := store.NewMemoryStore()
		member := &scriptedAgent{streaming: true, hold: true, stream: teamTurn("t1", "Hello there", a2a.TaskStateWorking)[:2]}
		svc := NewService(Options{Store: st, ExclusiveStore: true,
			Agents: []AgentSpec{{Name: "m", Connect: func(context.Context) (Agent, error) { return member, nil }}},
			Teams:  []TeamSpec{{Name: "team", Strategy: StrategyParallel, Members: []string{"m"}}}})
		run := must(svc.StartRun(t.Context(), "team", teamInput("r1", v1)))
		waitFor(t, func() bool {
			es, _ := st.Read(t.Context(), run.Key, 0, 100)
			return strings.Contains(string(joined(es)), "Hello")
		})
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		_ = svc.Close(ctx)
		cancel()
		events := collect(t, run)
		if err := agui.CheckStream(v1, events); err != nil {
			t.Fatalf("v1=%v: %v", v1, err)
		}
		if e := lastError(t, events); e.Code != agui.CodeServerShutdown {
			t.Fatalf("v1=%v: the stream ends with %q", v1, e.Code)
		}
	}
}

// TestTakeOverKeepsTheClientsToolMessage: a CopilotKit resume (the
// approval and the client's own tool message for the call) cut by a
// shutdown before the call's result was reported: the process that takes
// the run over still puts the result into the client's message, so the
// call keeps one result.
func TestTakeOverKeepsTheClientsToolMessage(t *testing.T) {
	t.Parallel()
	st := store.NewMemoryStore()
	turns := approvalTurns(false, "")
	turns[1] = []scripted{{ev: status(a2a.TaskStateWorking)}} // then silence: the task goes on
	first := &scriptedAgent{streaming: true, hold: true, turns: turns}
	svc1 := NewService(Options{Store: st, ExclusiveStore: true, Agents: []AgentSpec{{Name: "a",
		Connect: func(context.Context) (Agent, error) { return first, nil }}}})
	in, _ := interruptRun(t, svc1, "th")
	req := resumeInput("th", "r2", resolved(in.ID, `{"approved":true}`))
	req.Messages = append(req.Messages, agui.Message{ID: "ck-tool-1", Role: agui.RoleTool, ToolCallID: in.ToolCallID,
		Content: agui.TextContent(`{"approved":true}`)})
	run := must(svc1.StartRun(t.Context(), "a", req))
	waitFor(t, func() bool {
		es, _ := st.Read(t.Context(), run.Key, 0, 100)
		return strings.Contains(string(joined(es)), `"a2a:working"`) && strings.Count(string(joined(es)), "RUN_STARTED") == 2
	})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	_ = svc1.Close(ctx)
	cancel()
	collect(t, run)

	second := &scriptedAgent{streaming: true, subscribe: []scripted{
		{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("Booked.", false)}, {ev: status(a2a.TaskStateCompleted)},
	}}
	svc2 := NewService(Options{Store: st, ExclusiveStore: true, Agents: []AgentSpec{{Name: "a",
		Connect: func(context.Context) (Agent, error) { return second, nil }}}})
	t.Cleanup(func() { _ = svc2.Close(context.Background()) })
	if n, err := svc2.Recover(t.Context()); err != nil || n != 1 {
		t.Fatalf("Recover took %d runs: %v", n, err)
	}
	follow, err := svc2.Follow(t.Context(), "a", "th", 0)
	if err != nil {
		t.Fatal(err)
	}
	var snapshot *agui.MessagesSnapshot
	for _, e := range collect(t, follow) {
		switch e := e.(type) {
		case *agui.ToolCallResult:
			t.Fatalf("a TOOL_CALL_RESULT beside the client's own tool message: %+v", e)
		case *agui.MessagesSnapshot:
			snapshot = e
		}
	}
	results := 0
	for _, m := range snapshot.Messages {
		if m.Role == agui.RoleTool && m.ToolCallID == in.ToolCallID {
			results++
			if m.ID != "ck-tool-1" || !strings.Contains(m.Content.Text, `"approved":true`) {
				t.Fatalf("the call's result %+v", m)
			}
		}
	}
	if results != 1 {
		t.Fatalf("%d results for the call in the last snapshot", results)
	}
}
