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
)

// cmdDemo starts the built-in demo A2A agents on loopback and the bridge in
// front of them on a fresh embedded store, and prints what to try.
func cmdDemo(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	listen := fs.String("listen", config.DefaultListen, "`host:port` for the bridge")
	if err := fs.Parse(args); err != nil {
		return err
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
	for _, name := range demo.Names() {
		cfg.Agents = append(cfg.Agents, config.Agent{Name: name, URL: demo.URL(name)})
	}
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	return serve(ctx, cfg, log, func(addr net.Addr) {
		printDemo(stdout, "http://"+addr.String(), demo.Names(), cfg.Store.Path)
	})
}

func printDemo(w io.Writer, base string, names []string, storePath string) {
	body := func(text string) string {
		return fmt.Sprintf(`'{"threadId":"thread-1","runId":"run-1","messages":[{"id":"msg-1","role":"user","content":%q}]}'`, text)
	}
	fmt.Fprintf(w, `a2a-agui-bridge demo
  %d demo A2A agents on loopback: %s
  the bridge: %s (embedded store %s)

Stream an answer (AG-UI events over SSE):
  curl -N %s/agents/streamer -H 'Content-Type: application/json' -d %s

An agent that narrates progress, then answers in an artifact:
  curl -N %s/agents/narrator -H 'Content-Type: application/json' -d %s

An agent that asks a question (the run ends with an interrupt outcome):
  curl -N %s/agents/asker -H 'Content-Type: application/json' -d %s

A failing agent (RUN_ERROR with code a2a_failed):
  curl -N %s/agents/failer -H 'Content-Type: application/json' -d %s

The agents and their A2A cards:
  curl %s/agents

Press Ctrl-C to stop.
`, len(names), strings.Join(names, ", "), base, storePath,
		base, body("Hello"), base, body("What is the answer?"), base, body("What's the weather?"),
		base, body("Do it"), base)
}
