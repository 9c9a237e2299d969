package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2a-agui-bridge/bridge/server"
)

// cmdDemo starts the built-in demo A2A agents on loopback and the bridge in
// front of them on a fresh embedded store, and prints what to try.
func cmdDemo(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	listen := fs.String("listen", config.DefaultListen, "`host:port` for the bridge (the first instance's, with --replicas)")
	replicas := fs.Int("replicas", 1, "run `N` bridge instances on one Redis, on consecutive ports from --listen's")
	redisURL := fs.String("redis", "", "Redis `URL` the instances share (default: start a redis-server on a free port); implies the Redis store")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *replicas < 1 || *replicas > 16 {
		return exitError{2, fmt.Sprintf("demo --replicas must be between 1 and 16 (got %d)", *replicas)}
	}
	if *replicas > 1 || *redisURL != "" {
		return demoReplicas(ctx, stdout, log, *listen, *replicas, *redisURL)
	}
	demo, err := agents.Start(ctx, "127.0.0.1:0", agents.Options{})
	if err != nil {
		return fmt.Errorf("start demo agents: %w", err)
	}
	defer demo.Close()

	dir, err := os.MkdirTemp("", "a2a-agui-bridge-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	cfg := config.Default()
	cfg.Listen = *listen
	cfg.Store = config.Store{Kind: config.StoreEmbedded, Path: filepath.Join(dir, "bridge.db")}
	cfg.Server.CORSOrigins = []string{"*"}
	addDemoAgents(cfg, demo)
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	return server.Serve(ctx, cfg, log, server.Options{Listening: func(addr net.Addr) {
		printDemo(stdout, "http://"+addr.String(), demo.Names(), demo.URL, cfg.Store.Path)
	}})
}

// printDemo writes what to open and try. agentURL gives a demo agent's A2A
// base URL, so that a newcomer can point a config of their own at one.
func printDemo(w io.Writer, base string, names []string, agentURL func(string) string, storePath string) {
	body := func(thread, text string) string {
		return fmt.Sprintf(`'{"threadId":%q,"runId":"run-1","protocolVersion":"1.0","messages":[{"id":"msg-1","role":"user","content":%q}]}'`, thread, text)
	}
	// A resume names the pending interrupt's id, which the thread's
	// snapshot lists first under pendingInterrupts: the printed lines read
	// it into $ID so that they work as pasted (bash, zsh; no jq needed).
	pending := func(agent, thread string) string {
		return fmt.Sprintf(`ID=$(curl -s %s/agents/%s/threads/%s | grep -o '"pendingInterrupts":\[{"id":"[^"]*"' | cut -d'"' -f6)`+"\n", base, agent, thread)
	}
	resume := func(thread, text, payload string) string {
		return fmt.Sprintf(`'{"threadId":%q,"runId":"run-2","protocolVersion":"1.0","messages":[{"id":"msg-1","role":"user","content":%q}],"resume":[{"interruptId":"'"$ID"'","status":"resolved","payload":%s}]}'`, thread, text, payload)
	}
	post := "curl -N " + base + "/agents/%s -H 'Content-Type: application/json' -d %s\n"
	// The console's URL comes first: it is what most people want to open.
	agentsAt := ""
	if len(names) > 0 {
		first := agentURL(names[0])
		agentsAt = " at " + strings.TrimSuffix(first, names[0]+"/") + "<name>/ (e.g. " + first + ")"
	}
	fmt.Fprintf(w, "a2a-agui-bridge demo — open the console: %s/\n  %d demo A2A agents on loopback%s: %s\n  the bridge: %s (embedded store %s)\n\n",
		base, len(names), agentsAt, strings.Join(names, ", "), base, storePath)
	fmt.Fprintf(w, "Stream an answer (AG-UI events over SSE):\n  "+post, "streamer", body("t1", "Hello"))
	fmt.Fprintf(w, "\nAn agent that narrates progress, then answers in an artifact:\n  "+post, "narrator", body("t2", "What is the answer?"))
	fmt.Fprintf(w, "\nA failing agent (RUN_ERROR with code a2a_failed):\n  "+post, "failer", body("t3", "Do it"))
	fmt.Fprintf(w, "\nHuman in the loop: an agent asks a question (the run ends with an interrupt outcome);\n"+
		"read the pending interrupt's id from the thread, then answer it with a resume:\n  "+post+"  %s  "+post,
		"asker", body("t4", "What is the weather?"), pending("asker", "t4"), "asker", resume("t4", "What is the weather?", `{"city":"Paris"}`))
	fmt.Fprintf(w, "\nTool approval: a booking proposed as a tool call; approve, deny or edit it:\n  "+post+"  %s  "+post,
		"approver", body("t5", "Book my flight"), pending("approver", "t5"), "approver", resume("t5", "Book my flight", `{"approved":true,"editedArgs":{"flight":"LH123","to":"Lisbon","date":"2026-12-24","passengers":3}}`))
	fmt.Fprintf(w, "\nShared state: data artifacts and UI keys arrive as STATE_DELTA under the \"a2a\" key; your keys stay yours:\n"+
		"  curl -N %s/agents/dashboard -H 'Content-Type: application/json' -d %s\n", base,
		`'{"threadId":"t6","runId":"run-1","protocolVersion":"1.0","state":{"userName":"Ada"},"messages":[{"id":"msg-1","role":"user","content":"Show me"}]}'`)
	fmt.Fprintf(w, "\nGenerative UI (A2UI): the booker sends a form as an a2ui-surface activity; submit it with forwardedProps.a2uiAction\n"+
		"(the monitor streams a live dashboard, the wizard asks in two steps, the planner speaks A2UI v1.0; the console renders all four):\n  "+post+"  "+post,
		"booker", body("t12", "A table please"), "booker",
		`'{"threadId":"t12","runId":"run-2","protocolVersion":"1.0","messages":[],"forwardedProps":{"a2uiAction":{"userAction":{"name":"book","surfaceId":"booking","sourceComponentId":"book","context":{"name":"Ada","date":"2026-12-24","guests":4}}}}}'`)
	fmt.Fprintf(w, "\nThe thread, its pending interrupts and task; cancel its task:\n  curl %s/agents/asker/threads/t4\n  curl -X POST %s/agents/asker/threads/t4/cancel\n", base, base)
	fmt.Fprintf(w, "\nStop a run while it streams: start the counter (it counts for ten seconds), cancel it from another terminal:\n  "+post+
		"  curl -X POST %s/agents/counter/threads/t7/cancel\n", "counter", body("t7", "Count for me"), base)
	fmt.Fprintf(w, "\nResume a thread's stream after the last event id you saw (then live until the run ends), or long-poll it:\n"+
		"  curl -N %s/agents/streamer/threads/t1/events -H 'Last-Event-ID: 3'\n"+
		"  curl '%s/agents/streamer/threads/t1/events?after=0&wait=10' -H 'Accept: application/json'\n", base, base)
	fmt.Fprintf(w, "\nThe same runs over a WebSocket (%s/agents/{name}/ws), e.g. from Node.js ≥ 22 (its built-in WebSocket; on Node 20 add --experimental-websocket):\n"+
		"  node -e 'const ws = new WebSocket(\"%s/agents/streamer/ws\"); ws.onopen = () => ws.send(JSON.stringify({type: \"run\", input: {threadId: \"t8\", runId: \"run-1\", messages: [{id: \"m1\", role: \"user\", content: \"Hi\"}]}})); ws.onmessage = (e) => { console.log(e.data); if (/RUN_(FINISHED|ERROR)/.test(e.data)) ws.close(); }'\n",
		strings.Replace(base, "http", "ws", 1), strings.Replace(base, "http", "ws", 1))
	fmt.Fprintf(w, "\nTeams: several agents behind one endpoint, every event attributed to its member (subagentRunId):\n"+
		"  parallel — the weather agent and the flight booker both ask; one resume answers both interrupts:\n  "+post+
		"  router — each message goes to the member whose skills match it (the choice is a CUSTOM a2a.route event):\n  "+post+
		"  sequential — the narrator's answer becomes the streamer's input:\n  "+post,
		"concierge", body("t9", "Weather in Lisbon and a flight there"), "desk", body("t10", "What is the weather in Paris?"),
		"pipeline", body("t11", "Tell me about Lisbon"))
	fmt.Fprintf(w, "\nThe agents and teams, their A2A cards and health:\n  curl %s/agents\n  curl %s/agents/concierge\n\nPress Ctrl-C to stop.\n", base, base)
}

// addDemoAgents puts every demo agent and team in cfg.
func addDemoAgents(cfg *config.Config, demo *agents.Server) {
	for _, name := range demo.Names() {
		cfg.Agents = append(cfg.Agents, config.Agent{Name: name, URL: demo.URL(name)})
	}
	for _, t := range agents.Teams() {
		cfg.Teams = append(cfg.Teams, config.Team{Name: t.Name, Description: t.Description, Strategy: t.Strategy, Members: t.Members})
	}
}
