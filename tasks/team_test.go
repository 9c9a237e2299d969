package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// teamTurn is one scripted turn of a member: a task that streams answer and
// ends in state (input-required asks a question).
func teamTurn(task, answer string, state a2a.TaskState) []scripted {
	out := []scripted{{ev: &a2a.Task{ID: a2a.TaskID(task), ContextID: "ctx-" + task, Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}}
	for i, w := range strings.Fields(answer) {
		out = append(out, scripted{ev: &a2a.ArtifactUpdate{TaskID: a2a.TaskID(task), ContextID: "ctx-" + task, Append: i > 0,
			Artifact: &a2a.Artifact{ID: a2a.ArtifactID("art-" + task), Parts: []*a2a.Part{a2a.NewTextPart(w + " ")}}}})
	}
	st := &a2a.StatusUpdate{TaskID: a2a.TaskID(task), ContextID: "ctx-" + task, Status: a2a.TaskStatus{State: state}}
	if state == a2a.TaskStateInputRequired {
		st.Status.Message = &a2a.Message{ID: "q-" + task, Role: a2a.RoleAgent, Parts: []*a2a.Part{a2a.NewTextPart("Which city?")}}
	}
	return append(out, scripted{ev: st})
}

type teamCase struct {
	strategy Strategy
	members  map[string]*scriptedAgent
	order    []string
	down     map[string]bool
}

func newTeamService(t *testing.T, tc teamCase) *Service {
	t.Helper()
	var specs []AgentSpec
	for _, name := range tc.order {
		agent := tc.members[name]
		down := tc.down[name]
		specs = append(specs, AgentSpec{Name: name, Connect: func(context.Context) (Agent, error) {
			if down {
				return nil, &a2a.Error{Agent: name, Op: "card", Kind: a2a.ErrCardUnavailable, Err: errors.Join(a2a.ErrUnavailable, errors.New("connection refused"))}
			}
			return agent, nil
		}, PollInitial: time.Millisecond, PollMax: 5 * time.Millisecond, RequestTimeout: time.Second})
	}
	svc := NewService(Options{Store: store.NewMemoryStore(), Agents: specs, FirstEventWait: 2 * time.Second,
		Teams: []TeamSpec{{Name: "team", Strategy: tc.strategy, Members: tc.order}}})
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	return svc
}

func teamInput(run string, v1 bool) *agui.RunAgentInput {
	in := input("th", run)
	if v1 {
		in.ProtocolVersion = "1.0"
	}
	return in
}

// collectChecked reads a run to its end and checks it against the verifier
// of the client generation.
func collectChecked(t *testing.T, run *RunReader, v1 bool) []agui.Event {
	t.Helper()
	events := collect(t, run)
	if err := agui.CheckStream(v1, events); err != nil {
		var b strings.Builder
		for _, e := range events {
			j, _ := agui.Marshal(e)
			b.Write(j)
			b.WriteByte('\n')
		}
		t.Fatalf("v1=%v: %v\n%s", v1, err, b.String())
	}
	last := int64(0)
	for i, e := range events {
		ts := agui.BaseOf(e).Timestamp
		if ts < last {
			t.Fatalf("v1=%v: event %d (%s) has timestamp %d, before the previous %d", v1, i, e.Type(), ts, last)
		}
		last = ts
	}
	return events
}

func memberText(events []agui.Event) map[string]string {
	owner := map[string]string{}
	out := map[string]string{}
	for _, e := range events {
		switch e := e.(type) {
		case *agui.TextMessageStart:
			owner[e.MessageID] = e.Name
		case *agui.TextMessageContent:
			out[owner[e.MessageID]] += e.Delta
		}
	}
	return out
}

// TestTeamParallelInterruptsAndOneResume: both members interrupt in one
// run; one resume answers both, each answer reaching its own member's
// task; both complete. For every client generation.
func TestTeamParallelInterruptsAndOneResume(t *testing.T) {
	t.Parallel()
	for _, v1 := range []bool{true, false} {
		// Both stream at the same pace, so their events interleave.
		travel := &scriptedAgent{streaming: true, delay: 3 * time.Millisecond, turns: [][]scripted{
			teamTurn("t1", "Where to go this spring?", a2a.TaskStateInputRequired), teamTurn("t1", "Booked Lisbon", a2a.TaskStateCompleted)}}
		weather := &scriptedAgent{streaming: true, delay: 3 * time.Millisecond, turns: [][]scripted{
			teamTurn("w1", "For which city do you ask?", a2a.TaskStateInputRequired), teamTurn("w1", "Sunny in Lisbon", a2a.TaskStateCompleted)}}
		svc := newTeamService(t, teamCase{strategy: StrategyParallel, order: []string{"travel", "weather"},
			members: map[string]*scriptedAgent{"travel": travel, "weather": weather}})
		run := must(svc.StartRun(t.Context(), "team", teamInput("r1", v1)))
		events := collectChecked(t, run, v1)
		fin, ok := events[len(events)-1].(*agui.RunFinished)
		if !ok || fin.Outcome == nil || fin.Outcome.Type != agui.OutcomeInterrupt || len(fin.Outcome.Interrupts) != 2 {
			t.Fatalf("v1=%v: want one interrupt outcome with both interrupts, got %+v", v1, events[len(events)-1])
		}
		var resume []agui.ResumeEntry
		for _, in := range fin.Outcome.Interrupts {
			resume = append(resume, agui.ResumeEntry{InterruptID: in.ID, Status: agui.ResumeResolved, Payload: json.RawMessage(`"Lisbon"`)})
		}
		in := teamInput("r2", v1)
		in.Resume = resume
		run2 := must(svc.StartRun(t.Context(), "team", in))
		events = collectChecked(t, run2, v1)
		if _, ok := events[len(events)-1].(*agui.RunFinished); !ok {
			t.Fatalf("v1=%v: the resume ends with %s", v1, events[len(events)-1].Type())
		}
		text := memberText(events)
		if text["travel"] != "Booked Lisbon " || text["weather"] != "Sunny in Lisbon " {
			t.Fatalf("v1=%v: text by member %q", v1, text)
		}
		for name, a := range map[string]*scriptedAgent{"travel": travel, "weather": weather} {
			a.mu.Lock()
			sent := a.sent
			a.mu.Unlock()
			if len(sent) != 2 || string(sent[1].TaskID) != map[string]string{"travel": "t1", "weather": "w1"}[name] {
				t.Fatalf("v1=%v: %s got %d messages; the answer must go to its own task", v1, name, len(sent))
			}
		}
		th, err := svc.store.GetThread(t.Context(), run.Key)
		if err != nil || len(th.Interrupts) != 0 || th.Members["travel"].TaskState != string(a2a.TaskStateCompleted) ||
			th.Members["weather"].ContextID != "ctx-w1" {
			t.Fatalf("v1=%v: thread after the resume: %+v %v", v1, th, err)
		}
		svc.Close(context.Background())
	}
}

// TestTeamMemberDown: a member that cannot be reached is a SUBAGENT_ERROR
// (1.0) and the others answer; when none can be reached, the run is an
// HTTP error like a single agent's.
func TestTeamMemberDown(t *testing.T) {
	t.Parallel()
	weather := &scriptedAgent{streaming: true, stream: teamTurn("w1", "Sunny", a2a.TaskStateCompleted)}
	svc := newTeamService(t, teamCase{strategy: StrategyParallel, order: []string{"travel", "weather"},
		members: map[string]*scriptedAgent{"travel": {}, "weather": weather}, down: map[string]bool{"travel": true}})
	events := collectChecked(t, must(svc.StartRun(t.Context(), "team", teamInput("r1", true))), true)
	var subErr *agui.SubagentError
	for _, e := range events {
		if se, ok := e.(*agui.SubagentError); ok {
			subErr = se
		}
	}
	if subErr == nil || subErr.Code != "a2a_card_unavailable" {
		t.Fatalf("want SUBAGENT_ERROR a2a_card_unavailable for travel, got %+v", subErr)
	}
	if _, ok := events[len(events)-1].(*agui.RunFinished); !ok || memberText(events)["weather"] != "Sunny " {
		t.Fatalf("the team run must go on without travel: %s", events[len(events)-1].Type())
	}

	svc = newTeamService(t, teamCase{strategy: StrategyParallel, order: []string{"travel", "weather"},
		members: map[string]*scriptedAgent{"travel": {}, "weather": {}}, down: map[string]bool{"travel": true, "weather": true}})
	_, err := svc.StartRun(t.Context(), "team", teamInput("r1", true))
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus() != http.StatusBadGateway {
		t.Fatalf("every member down: want HTTP 502, got %v", err)
	}
}

// TestTeamRouter: forwardedProps.agent picks a member; otherwise the
// member whose skills match the text; the choice is a CUSTOM a2a.route.
func TestTeamRouter(t *testing.T) {
	t.Parallel()
	travel := &scriptedAgent{streaming: true, stream: teamTurn("t1", "Flights found", a2a.TaskStateCompleted)}
	weather := &scriptedAgent{streaming: true, stream: teamTurn("w1", "Rain", a2a.TaskStateCompleted)}
	svc := newTeamService(t, teamCase{strategy: StrategyRouter, order: []string{"travel", "weather"},
		members: map[string]*scriptedAgent{"travel": travel, "weather": weather}})
	in := teamInput("r1", true)
	in.ForwardedProps = json.RawMessage(`{"agent":"weather"}`)
	events := collectChecked(t, must(svc.StartRun(t.Context(), "team", in)), true)
	var route map[string]any
	for _, e := range events {
		if c, ok := e.(*agui.Custom); ok && c.Name == "a2a.route" {
			_ = json.Unmarshal(c.Value, &route)
		}
	}
	if route["member"] != "weather" || memberText(events)["weather"] != "Rain " || len(travel.sent) != 0 {
		t.Fatalf("route %v, text %v", route, memberText(events))
	}
}

// TestTeamSequential: the second member gets the first member's answer.
func TestTeamSequential(t *testing.T) {
	t.Parallel()
	for _, v1 := range []bool{true, false} {
		writer := &scriptedAgent{streaming: true, stream: teamTurn("a1", "A draft about Lisbon", a2a.TaskStateCompleted)}
		editor := &scriptedAgent{streaming: true, stream: teamTurn("b1", "A better draft", a2a.TaskStateCompleted)}
		svc := newTeamService(t, teamCase{strategy: StrategySequential, order: []string{"writer", "editor"},
			members: map[string]*scriptedAgent{"writer": writer, "editor": editor}})
		events := collectChecked(t, must(svc.StartRun(t.Context(), "team", teamInput("r1", v1))), v1)
		text := memberText(events)
		if text["writer"] != "A draft about Lisbon " || text["editor"] != "A better draft " {
			t.Fatalf("v1=%v: text %q", v1, text)
		}
		editor.mu.Lock()
		got := editor.sent
		editor.mu.Unlock()
		if len(got) != 1 || got[0].Parts[0].Text() != "A draft about Lisbon" {
			t.Fatalf("v1=%v: the editor got %+v", v1, got)
		}
		svc.Close(context.Background())
	}
}

// TestTeamCancel: a cancel during a team run cancels every member's task;
// the run ends cancelled.
func TestTeamCancel(t *testing.T) {
	t.Parallel()
	a := &scriptedAgent{streaming: true, hold: true, release: make(chan struct{}), stream: teamTurn("t1", "working", a2a.TaskStateWorking)}
	b := &scriptedAgent{streaming: true, hold: true, release: make(chan struct{}), stream: teamTurn("w1", "working", a2a.TaskStateWorking)}
	svc := newTeamService(t, teamCase{strategy: StrategyParallel, order: []string{"travel", "weather"},
		members: map[string]*scriptedAgent{"travel": a, "weather": b}})
	run := must(svc.StartRun(t.Context(), "team", teamInput("r1", true)))
	waitFor(t, func() bool {
		a.mu.Lock()
		b.mu.Lock()
		defer a.mu.Unlock()
		defer b.mu.Unlock()
		return len(a.sent) == 1 && len(b.sent) == 1
	})
	time.Sleep(50 * time.Millisecond) // let both tasks be named
	v, err := svc.Cancel(t.Context(), "team", "th")
	if err != nil || v.Cancel == nil || !v.Cancel.Requested {
		t.Fatalf("cancel: %+v %v", v, err)
	}
	events := collectChecked(t, run, true)
	fin, ok := events[len(events)-1].(*agui.RunFinished)
	if !ok || fin.Outcome == nil || fin.Outcome.Type != agui.OutcomeCancelled {
		t.Fatalf("want a cancelled outcome, got %+v", events[len(events)-1])
	}
	if len(a.canceled) != 1 || len(b.canceled) != 1 {
		t.Fatalf("CancelTask calls: travel %v, weather %v", a.canceled, b.canceled)
	}
}

// TestTeamToolApprovalsWithTheClientsToolMessages: two members each
// propose a tool call; CopilotKit answers both approvals with one resume
// and one tool message per call. The run goes through, each member gets
// its own function_response, and each call keeps the client's message as
// its one result.
func TestTeamToolApprovalsWithTheClientsToolMessages(t *testing.T) {
	t.Parallel()
	for _, v1 := range []bool{true, false} {
		propose := func(task string) []scripted {
			st := &a2a.StatusUpdate{TaskID: a2a.TaskID(task), ContextID: "ctx-" + task, Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired,
				Message: &a2a.Message{ID: "q-" + task, Role: a2a.RoleAgent, Parts: []*a2a.Part{a2a.NewTextPart("Approve?"), callPart("c-" + task)}}}}
			return []scripted{{ev: &a2a.Task{ID: a2a.TaskID(task), ContextID: "ctx-" + task, Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}, {ev: st}}
		}
		travel := &scriptedAgent{streaming: true, turns: [][]scripted{propose("t1"), teamTurn("t1", "Booked", a2a.TaskStateCompleted)}}
		hotel := &scriptedAgent{streaming: true, turns: [][]scripted{propose("h1"), teamTurn("h1", "Reserved", a2a.TaskStateCompleted)}}
		svc := newTeamService(t, teamCase{strategy: StrategyParallel, order: []string{"travel", "hotel"},
			members: map[string]*scriptedAgent{"travel": travel, "hotel": hotel}})
		events := collectChecked(t, must(svc.StartRun(t.Context(), "team", teamInput("r1", v1))), v1)
		fin, ok := events[len(events)-1].(*agui.RunFinished)
		if !ok || fin.Outcome == nil || len(fin.Outcome.Interrupts) != 2 {
			t.Fatalf("v1=%v: want two interrupts, got %+v", v1, events[len(events)-1])
		}
		in := teamInput("r2", v1)
		for i, it := range fin.Outcome.Interrupts {
			in.Resume = append(in.Resume, agui.ResumeEntry{InterruptID: it.ID, Status: agui.ResumeResolved, Payload: json.RawMessage(`{"approved":true}`)})
			in.Messages = append(in.Messages, agui.Message{ID: "ck-tool-" + string(rune('a'+i)), Role: agui.RoleTool, ToolCallID: it.ToolCallID,
				Content: agui.TextContent(`{"approved":true}`)})
		}
		events = collectChecked(t, must(svc.StartRun(t.Context(), "team", in)), v1)
		var last *agui.MessagesSnapshot
		for _, e := range events {
			switch e := e.(type) {
			case *agui.RunError:
				t.Fatalf("v1=%v: RUN_ERROR %s: %s", v1, e.Code, e.Message)
			case *agui.ToolCallResult:
				t.Fatalf("v1=%v: a second result for a call the client answered: %+v", v1, e)
			case *agui.MessagesSnapshot:
				last = e
			}
		}
		// The run's last snapshot is the whole conversation, with each
		// call's result in the client's own tool message, once.
		if last == nil || last.SubagentRunID != "" {
			t.Fatalf("v1=%v: snapshot %+v", v1, last)
		}
		tools := map[string]int{}
		for _, m := range last.Messages {
			if m.Role == agui.RoleTool {
				tools[m.ID]++
			}
		}
		if len(tools) != 2 || tools["ck-tool-a"] != 1 || tools["ck-tool-b"] != 1 {
			t.Fatalf("v1=%v: tool messages in the snapshot %v", v1, tools)
		}
		if text := memberText(events); text["travel"] != "Booked " || text["hotel"] != "Reserved " {
			t.Fatalf("v1=%v: text by member %q", v1, text)
		}
		for name, a := range map[string]*scriptedAgent{"travel": travel, "hotel": hotel} {
			a.mu.Lock()
			sent := a.sent
			a.mu.Unlock()
			if len(sent) != 2 || len(sent[1].Parts) != 1 || sent[1].Parts[0].Metadata["adk_type"] != "function_response" {
				b, _ := json.Marshal(sent[len(sent)-1].Parts)
				t.Fatalf("v1=%v: %s got %d messages, last %s; want one function_response", v1, name, len(sent), b)
			}
		}
	}
}
