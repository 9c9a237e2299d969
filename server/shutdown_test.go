package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

// TestShutdownWithRunsInFlight: SIGTERM while runs stream over SSE and
// WebSocket. The grace period is short, so the runs are cut: every client
// gets a terminal event (RUN_ERROR "server_shutdown", not journaled),
// WebSockets close with 1001, and the process exits cleanly. The A2A tasks
// go on; the restarted bridge takes the runs over and finishes them into
// the journal, where a client resuming after its last id reads the rest:
// one valid run each, the answer once.
func TestShutdownWithRunsInFlight(t *testing.T) {
	t.Parallel()
	bridgeBin, demoBin := buildBinaries(t)
	demo := startDemoAgents(t, demoBin)
	procs := newBridgeProcsWith(t, bridgeBin, demo, "server: {shutdownGrace: 300ms}\n", "counter")
	b := procs.start(t)

	type client struct {
		thread string
		seen   []sseFrame // what the client read, the shutdown notice included
	}
	var clients []*client
	var lrs []*liveRun
	for i := range 3 {
		c := &client{thread: fmt.Sprintf("th-sse-%d", i)}
		lr := b.open(t, "counter", runBody(c.thread, "run-1", i%2 == 0, userMsg("u1", "count")))
		for f := range lr.frames {
			c.seen = append(c.seen, f)
			if strings.Contains(f.data, "TEXT_MESSAGE_CONTENT") {
				break
			}
		}
		clients, lrs = append(clients, c), append(lrs, lr)
	}
	ws := b.mustDialWS(t, "counter")
	wsThreads := []string{"th-ws-0", "th-ws-1"}
	for _, th := range wsThreads {
		ws.run(t, runBody(th, "run-1", true, userMsg("u1", "count")))
	}
	wsSeen := map[string][]sseFrame{}
	for started := 0; started < len(wsThreads); {
		env := ws.next(t)
		wsSeen[env.ThreadID] = append(wsSeen[env.ThreadID], sseFrame{seq: env.Seq, data: string(env.Event)})
		if strings.Contains(string(env.Event), `"delta":"1 "`) {
			started++
		}
	}

	procs.terminate(t)

	for i, c := range clients {
		c.seen = append(c.seen, collectFrames(t, lrs[i])...)
	}
	for {
		env, ok := <-ws.envelopes
		if !ok {
			break
		}
		wsSeen[env.ThreadID] = append(wsSeen[env.ThreadID], sseFrame{seq: env.Seq, data: string(env.Event)})
	}
	var ce *websocket.CloseError
	if err := <-ws.closed; !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
		t.Fatalf("the WebSocket closed with %v, want 1001", err)
	}
	for _, th := range wsThreads {
		clients = append(clients, &client{thread: th, seen: wsSeen[th]})
	}

	b = procs.start(t)
	for _, c := range clients {
		notice := c.seen[len(c.seen)-1]
		var e struct{ Type, Code string }
		_ = json.Unmarshal([]byte(notice.data), &e)
		if notice.seq != 0 || e.Type != "RUN_ERROR" || e.Code != "server_shutdown" {
			t.Fatalf("%s: the stream ends with %+v, want the unjournaled RUN_ERROR server_shutdown", c.thread, notice)
		}
		// The notice and what closed open things before it carry no id.
		var kept []sseFrame
		for _, f := range c.seen {
			if f.seq > 0 {
				kept = append(kept, f)
			}
		}
		last := kept[len(kept)-1].seq
		rest := collectFrames(t, b.stream(t, http.MethodGet,
			fmt.Sprintf("/agents/counter/threads/%s/events?after=%d", c.thread, last), nil, http.Header{"Accept": {"text/event-stream"}}))
		events := decodeFrames(t, append(kept, rest...))
		v1 := strings.Contains(kept[0].data, `"protocolVersion":"1.0"`)
		if err := agui.CheckStream(v1, events); err != nil {
			t.Fatalf("%s: not one valid run after the restart: %v", c.thread, err)
		}
		res := runResult{events: events}
		if res.last().Type() != agui.EventRunFinished {
			t.Fatalf("%s: the run ends with %s", c.thread, res.last().Type())
		}
		res.wantAnswerOnce(t, agents.CounterText(agents.DefaultCounterCount))
	}
}
