package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

// withTeams adds the demo teams and a team with a member that is down.
func withTeams(c *config.Config) {
	for _, t := range agents.Teams() {
		c.Teams = append(c.Teams, config.Team{Name: t.Name, Strategy: t.Strategy, Members: t.Members})
	}
	c.Teams = append(c.Teams, config.Team{Name: "panel", Strategy: config.StrategyParallel,
		Members: []string{"streamer", "narrator", "unreachable"}})
}

// attribution checks a team run's events: every member event of a 1.0 run
// carries its member's subagentRunId, opened by SUBAGENT_STARTED and
// closed by SUBAGENT_FINISHED or SUBAGENT_ERROR; run-level events carry
// none. It returns each member's assistant text, by name.
func attribution(t *testing.T, events []agui.Event, v1 bool) map[string]string {
	t.Helper()
	names := map[string]string{} // subagentRunId → member
	open := map[string]bool{}
	owner := map[string]string{} // message id → member
	text := map[string]string{}
	for i, e := range events {
		b := agui.BaseOf(e)
		switch e := e.(type) {
		case *agui.RunStarted, *agui.RunFinished, *agui.RunError, *agui.MessagesSnapshot:
			if b.SubagentRunID != "" {
				t.Fatalf("event %d %s carries subagentRunId", i, e.Type())
			}
			continue
		case *agui.SubagentStarted:
			names[b.SubagentRunID], open[b.SubagentRunID] = e.Name, true
			continue
		case *agui.SubagentFinished, *agui.SubagentError:
			if !open[b.SubagentRunID] {
				t.Fatalf("event %d %s closes a subagent that is not open", i, e.Type())
			}
			open[b.SubagentRunID] = false
			continue
		case *agui.TextMessageStart:
			owner[e.MessageID] = e.Name
			if v1 && names[b.SubagentRunID] != e.Name {
				t.Fatalf("event %d: %s's message carries subagentRunId of %q", i, e.Name, names[b.SubagentRunID])
			}
		case *agui.TextMessageContent:
			text[owner[e.MessageID]] += e.Delta
		}
		if v1 && b.SubagentRunID == "" {
			if _, isState := e.(*agui.StateSnapshot); !isState {
				t.Fatalf("event %d %s of a 1.0 team run has no subagentRunId", i, e.Type())
			}
		}
	}
	for id, o := range open {
		if o {
			t.Fatalf("subagent %s (%s) never ended", id, names[id])
		}
	}
	return text
}

// TestTeamTwoInterruptsOneResume: in a parallel team both members
// interrupt in one run; one resume answers both, each answer reaches its
// member's task, both tasks complete; the journal replays with the same
// attribution.
func TestTeamTwoInterruptsOneResume(t *testing.T) {
	t.Parallel()
	b := startBridge(t, withTeams)
	for _, v1 := range []bool{true, false} {
		thread := fmt.Sprintf("th-concierge-%v", v1)
		first := b.post(t, "concierge", runBody(thread, "run-1", v1, userMsg("u1", "Weather in Lisbon and a flight there")))
		first.check(t, v1)
		attribution(t, first.events, v1)
		out := first.outcome()
		if out == nil || out.Type != agui.OutcomeInterrupt || len(out.Interrupts) != 2 {
			t.Fatalf("v1=%v: want two interrupts in one outcome:\n%s", v1, first.body)
		}
		var resume []map[string]any
		for _, in := range out.Interrupts {
			payload := map[string]any{"city": "Lisbon"}
			if strings.HasPrefix(in.ID, "approver:") {
				payload = map[string]any{"approved": true}
			} else if !strings.HasPrefix(in.ID, "asker:") {
				t.Fatalf("interrupt id %q is not namespaced by its member", in.ID)
			}
			resume = append(resume, map[string]any{"interruptId": in.ID, "status": "resolved", "payload": payload})
		}
		body := map[string]any{"threadId": thread, "runId": "run-2", "messages": []agui.Message{userMsg("u1", "Weather in Lisbon and a flight there")}, "resume": resume}
		if v1 {
			body["protocolVersion"] = "1.0"
		}
		raw, _ := json.Marshal(body)
		second := b.post(t, "concierge", raw)
		second.check(t, v1)
		text := attribution(t, second.events, v1)
		if strings.Count(text["asker"], agents.WeatherAnswer("Lisbon")) != 1 ||
			strings.Count(text["approver"], agents.BookedAnswer(agents.BookingArgs())) != 1 {
			t.Fatalf("v1=%v: answers by member %q", v1, text)
		}
		var view struct {
			Members map[string]struct{ State string } `json:"members"`
			Pending []any                             `json:"pendingInterrupts"`
		}
		getJSON(t, b.url+"/agents/concierge/threads/"+thread, &view)
		if len(view.Pending) != 0 || view.Members["asker"].State != "completed" || view.Members["approver"].State != "completed" {
			t.Fatalf("v1=%v: thread after the resume: %+v", v1, view)
		}
		// A client that reconnects reads the same attribution from the journal.
		replay := collectFrames(t, b.stream(t, http.MethodGet, "/agents/concierge/threads/"+thread+"/events?after=0", nil,
			http.Header{"Accept": {"text/event-stream"}}))
		events := decodeFrames(t, replay)
		if len(events) != len(first.events)+len(second.events) {
			t.Fatalf("v1=%v: the journal holds %d events, the two runs streamed %d", v1, len(events), len(first.events)+len(second.events))
		}
		if got := attribution(t, events[len(first.events):], v1); got["asker"] != text["asker"] || got["approver"] != text["approver"] {
			t.Fatalf("v1=%v: replayed attribution %q, live %q", v1, got, text)
		}
	}
}

// TestTeamMemberDownDoesNotSinkTheRun: a member that cannot be reached
// is reported and the others answer.
func TestTeamMemberDownDoesNotSinkTheRun(t *testing.T) {
	t.Parallel()
	b := startBridge(t, withTeams)
	for _, v1 := range []bool{true, false} {
		r := b.post(t, "panel", runBody(fmt.Sprintf("th-panel-%v", v1), "run-1", v1, userMsg("u1", "Tell me about Lisbon")))
		r.check(t, v1)
		text := attribution(t, r.events, v1)
		if r.last().Type() != agui.EventRunFinished || strings.Count(text["streamer"], agents.StreamerAnswer("Tell me about Lisbon")) != 1 ||
			strings.Count(text["narrator"], agents.NarratorAnswer("Tell me about Lisbon")) != 1 {
			t.Fatalf("v1=%v: %q\n%s", v1, text, r.body)
		}
		failed := false
		for _, e := range r.events {
			switch e := e.(type) {
			case *agui.SubagentError:
				failed = e.Code == "a2a_card_unavailable"
			case *agui.Custom:
				failed = failed || (e.Name == "a2a.member_error" && strings.Contains(string(e.Value), `"member":"unreachable"`))
			}
		}
		if !failed {
			t.Fatalf("v1=%v: the unreachable member's failure is not reported:\n%s", v1, r.body)
		}
	}
}

// TestTeamRouterAndPipeline: a router sends each message to the member
// whose skills match; a pipeline passes the first member's answer on.
func TestTeamRouterAndPipeline(t *testing.T) {
	t.Parallel()
	b := startBridge(t, withTeams)
	for text, member := range map[string]string{"What is the weather in Paris?": "asker", "Book me a flight to Lisbon": "approver"} {
		r := b.post(t, "desk", runBody("th-desk-"+member, "run-1", true, userMsg("u1", text)))
		r.check(t, true)
		var route struct{ Member string }
		for _, e := range r.events {
			if c, ok := e.(*agui.Custom); ok && c.Name == "a2a.route" {
				_ = json.Unmarshal(c.Value, &route)
			}
		}
		if route.Member != member {
			t.Fatalf("%q went to %q, want %s:\n%s", text, route.Member, member, r.body)
		}
	}
	r := b.post(t, "pipeline", runBody("th-pipe", "run-1", true, userMsg("u1", "Tell me about Lisbon")))
	r.check(t, true)
	text := attribution(t, r.events, true)
	want := agents.StreamerAnswer(agents.NarratorAnswer("Tell me about Lisbon"))
	if strings.Count(text["streamer"], want) != 1 {
		t.Fatalf("the streamer must echo the narrator's answer: %q", text)
	}
}

// TestTeamDiscovery: GET /agents lists teams; GET /agents/{team} lists
// its members as multiAgent.subagents, with their health.
func TestTeamDiscovery(t *testing.T) {
	t.Parallel()
	b := startBridge(t, withTeams)
	var info struct {
		Name         string
		Capabilities struct {
			MultiAgent struct {
				Supported bool
				Subagents []struct{ Name string }
			} `json:"multiAgent"`
		}
		Team struct {
			Strategy string
			Members  []struct {
				Name   string
				Health struct{ Status string }
			}
		}
		Health struct{ Status string }
	}
	getJSON(t, b.url+"/agents/panel", &info)
	if !info.Capabilities.MultiAgent.Supported || len(info.Capabilities.MultiAgent.Subagents) != 3 || info.Team.Strategy != "parallel" ||
		info.Health.Status != "degraded" || info.Team.Members[2].Health.Status != "unavailable" {
		t.Fatalf("GET /agents/panel: %+v", info)
	}
	var list struct{ Agents []struct{ Name string } }
	getJSON(t, b.url+"/agents", &list)
	found := 0
	for _, a := range list.Agents {
		if a.Name == "concierge" || a.Name == "desk" || a.Name == "pipeline" || a.Name == "panel" {
			found++
		}
	}
	if found != 4 {
		t.Fatalf("GET /agents lists %d of the 4 teams", found)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
