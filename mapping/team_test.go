package mapping

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// memberScript is what one member's agent says in a team test.
func memberScript(task, answer string, end a2a.TaskState) []a2a.Event {
	evs := []a2a.Event{&a2a.Task{ID: a2a.TaskID(task), ContextID: "ctx-" + task, Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}
	for i, w := range strings.Fields(answer) {
		evs = append(evs, &a2a.ArtifactUpdate{TaskID: a2a.TaskID(task), ContextID: "ctx-" + task, Append: i > 0,
			Artifact: &a2a.Artifact{ID: "answer", Parts: []*a2a.Part{a2a.NewTextPart(w + " ")}}})
	}
	st := &a2a.StatusUpdate{TaskID: a2a.TaskID(task), ContextID: "ctx-" + task, Status: a2a.TaskStatus{State: end}}
	if end == a2a.TaskStateInputRequired {
		st.Status.Message = &a2a.Message{ID: "q-" + task, Role: a2a.RoleAgent, Parts: []*a2a.Part{a2a.NewTextPart("Which city?")}}
	}
	if end == a2a.TaskStateFailed {
		st.Status.Message = &a2a.Message{ID: "f-" + task, Role: a2a.RoleAgent, Parts: []*a2a.Part{a2a.NewTextPart("no forecast today")}}
	}
	return append(evs, st)
}

// runTeam feeds two members' scripts to a Team, interleaved event by
// event (as 1.0 clients may see them) or one member after the other (as
// the bridge serializes them for older clients).
func runTeam(t *testing.T, v1, interleave bool, scripts map[string][]a2a.Event) ([]agui.Event, *Team) {
	t.Helper()
	team := NewTeam(TeamOptions{ThreadID: "th", RunID: "run", Name: "concierge", Strategy: "parallel", V1: v1,
		Now: func() int64 { return 1 }, Input: &agui.RunAgentInput{ThreadID: "th", RunID: "run",
			Messages: []agui.Message{{ID: "u1", Role: agui.RoleUser, Content: agui.TextContent("plan my trip")}}}})
	names := []string{"travel", "weather"}
	out := team.Start()
	trs := map[string]*Member{}
	for _, n := range names {
		trs[n] = team.Member(n, n+" agent", Options{Agent: n})
	}
	if interleave {
		for _, n := range names {
			out = append(out, team.Pass(trs[n].Start())...)
		}
		for i := 0; ; i++ {
			more := false
			for _, n := range names {
				if i < len(scripts[n]) {
					more = true
					out = append(out, team.Pass(trs[n].Translate(scripts[n][i]))...)
					checkTeamSize(t, team)
				}
			}
			if !more {
				break
			}
		}
	} else {
		for _, n := range names {
			out = append(out, team.Pass(trs[n].Start())...)
			for _, ev := range scripts[n] {
				out = append(out, team.Pass(trs[n].Translate(ev))...)
				checkTeamSize(t, team)
			}
		}
	}
	for _, n := range names {
		if !trs[n].Done() {
			t.Fatalf("member %s is not done", n)
		}
	}
	return append(out, team.Finish()...), team
}

// checkTeamSize requires the team's running count of its state's size
// (what the state limit is checked against) to be the state's encoding.
func checkTeamSize(t *testing.T, team *Team) {
	t.Helper()
	if n, want := team.StateSize(), len(team.State()); n != want {
		t.Fatalf("StateSize is %d; the state's encoding takes %d bytes", n, want)
	}
}

func TestTeamStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		v1         bool
		interleave bool
	}{{"1.0 interleaved", true, true}, {"1.0 one after the other", true, false}, {"0.0.x serialized", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, team := runTeam(t, tc.v1, tc.interleave, map[string][]a2a.Event{
				"travel":  memberScript("t1", "Fly to Lisbon on Friday", a2a.TaskStateCompleted),
				"weather": memberScript("t2", "Sunny all weekend", a2a.TaskStateInputRequired),
			})
			if err := agui.CheckStream(tc.v1, out); err != nil {
				t.Fatalf("the team's stream fails the verifier: %v\n%s", err, dump(t, out))
			}
			// Attribution: every member event of a 1.0 run carries its
			// member's subagentRunId; text starts carry the name for all.
			text := map[string]string{}
			owner := map[string]string{}
			for _, e := range out {
				b := agui.BaseOf(e)
				switch e := e.(type) {
				case *agui.RunStarted, *agui.RunFinished, *agui.RunError, *agui.MessagesSnapshot:
					if b.SubagentRunID != "" {
						t.Errorf("%s carries subagentRunId", e.Type())
					}
				case *agui.TextMessageStart:
					owner[e.MessageID] = e.Name
					if tc.v1 && b.SubagentRunID != team.SubagentRunID(e.Name) {
						t.Errorf("text of %s has subagentRunId %q", e.Name, b.SubagentRunID)
					}
				case *agui.TextMessageContent:
					text[owner[e.MessageID]] += e.Delta
					if tc.v1 && b.SubagentRunID != team.SubagentRunID(owner[e.MessageID]) {
						t.Errorf("content of %s has subagentRunId %q", owner[e.MessageID], b.SubagentRunID)
					}
				}
			}
			if text["travel"] != "Fly to Lisbon on Friday " || !strings.Contains(text["weather"], "Sunny all weekend ") {
				t.Errorf("text by member: %q", text)
			}
			// The interrupt's MESSAGES_SNAPSHOT keeps the members' messages
			// attributed (1.0): a snapshot says who owns each message, and
			// one without the ids would hand them to the parent agent.
			snapshots := 0
			for _, e := range out {
				snap, ok := e.(*agui.MessagesSnapshot)
				if !ok {
					continue
				}
				snapshots++
				for _, m := range snap.Messages {
					if m.Role != agui.RoleAssistant {
						continue
					}
					want := ""
					if tc.v1 {
						want = team.SubagentRunID(m.Name)
					}
					if m.Name == "" || m.SubagentRunID != want {
						t.Errorf("snapshot message %s of %q has subagentRunId %q, want %q", m.ID, m.Name, m.SubagentRunID, want)
					}
				}
			}
			if snapshots == 0 {
				t.Errorf("no MESSAGES_SNAPSHOT in an interrupted run")
			}
			last, ok := out[len(out)-1].(*agui.RunFinished)
			if !ok || last.Outcome == nil || last.Outcome.Type != agui.OutcomeInterrupt || len(last.Outcome.Interrupts) != 1 ||
				!strings.HasPrefix(last.Outcome.Interrupts[0].ID, "weather:") {
				t.Fatalf("want an interrupt outcome with weather's interrupt, got %s", dump(t, out[len(out)-1:]))
			}
			if p := team.Interrupts(); len(p) != 1 || p[0].Member != "weather" || p[0].TaskID != "t2" {
				t.Errorf("pending interrupts %+v", p)
			}
			var state map[string]map[string]any
			if err := json.Unmarshal(team.State(), &state); err != nil {
				t.Fatal(err)
			}
			members, _ := state["a2a"]["members"].(map[string]any)
			if len(members) != 2 {
				t.Errorf("state members %v", members)
			}
		})
	}
}

func TestTeamMemberFailureDoesNotSinkTheRun(t *testing.T) {
	t.Parallel()
	out, _ := runTeam(t, true, true, map[string][]a2a.Event{
		"travel":  memberScript("t1", "Fly to Lisbon", a2a.TaskStateCompleted),
		"weather": memberScript("t2", "", a2a.TaskStateFailed),
	})
	if err := agui.CheckStream(true, out); err != nil {
		t.Fatalf("%v\n%s", err, dump(t, out))
	}
	var sawError bool
	for _, e := range out {
		if se, ok := e.(*agui.SubagentError); ok {
			sawError = strings.Contains(se.Message, "no forecast today")
		}
	}
	if _, ok := out[len(out)-1].(*agui.RunFinished); !ok || !sawError {
		t.Fatalf("want SUBAGENT_ERROR for weather and RUN_FINISHED:\n%s", dump(t, out))
	}
	// Every member failing fails the run.
	out, _ = runTeam(t, false, false, map[string][]a2a.Event{
		"travel":  memberScript("t1", "", a2a.TaskStateFailed),
		"weather": memberScript("t2", "", a2a.TaskStateFailed),
	})
	if err := agui.CheckStream(false, out); err != nil {
		t.Fatalf("%v\n%s", err, dump(t, out))
	}
	if e, ok := out[len(out)-1].(*agui.RunError); !ok || e.Code != CodeTeamFailed {
		t.Fatalf("want RUN_ERROR team_failed:\n%s", dump(t, out[len(out)-1:]))
	}
}

// FuzzTeam: any two members' A2A event sequences, interleaved as the fuzz
// input says (1.0 clients) or one member after the other (older clients),
// give a team stream the client's verifier accepts, ending exactly once.
func FuzzTeam(f *testing.F) {
	f.Add([]byte{0, 0x12, 1, 0x13, 2, 0x01, 15, 0x10}, []byte{5, 0x14, 5, 0x15, 10, 0x02}, uint64(0x5555))
	f.Add([]byte{35, 0x15, 0, 0x00}, []byte{3, 0x01, 8, 0x11, 4, 0x30}, uint64(0xf0f0))
	f.Fuzz(func(t *testing.T, a, b []byte, order uint64) {
		for _, v1 := range []bool{true, false} {
			team := NewTeam(TeamOptions{ThreadID: "th", RunID: "r", Name: "t", Strategy: "parallel", V1: v1,
				Input: &agui.RunAgentInput{ThreadID: "th", RunID: "r"}})
			scripts := [][]a2a.Event{scriptFromBytes(a), scriptFromBytes(b)}
			trs := []*Member{team.Member("one", "", Options{Agent: "one"}), team.Member("two", "", Options{Agent: "two"})}
			out := team.Start()
			for _, tr := range trs {
				out = append(out, team.Pass(tr.Start())...)
			}
			if v1 {
				// Interleaved as the input says.
				next := []int{0, 0}
				for step := 0; next[0] < len(scripts[0]) || next[1] < len(scripts[1]); step++ {
					i := int(order>>(step%64)) & 1
					if next[i] >= len(scripts[i]) {
						i = 1 - i
					}
					out = append(out, team.Pass(trs[i].Translate(scripts[i][next[i]]))...)
					next[i]++
				}
				for _, tr := range trs {
					out = append(out, team.Pass(tr.Fail("a2a_incomplete", "ended"))...)
				}
			} else {
				// Older clients: one member's part after the other's, as
				// the bridge's lane shows them.
				for i, tr := range trs {
					for _, ev := range scripts[i] {
						out = append(out, team.Pass(tr.Translate(ev))...)
					}
					out = append(out, team.Pass(tr.Fail("a2a_incomplete", "ended"))...)
				}
			}
			out = append(out, team.Finish()...)
			if err := agui.CheckStream(v1, out); err != nil {
				t.Fatalf("v1=%v: %v\n%s", v1, err, dump(t, out))
			}
		}
	})
}
