// Command demo-agents serves the demo A2A agents of package agents on
// localhost, for `bridge demo`, manual testing and the Node conformance suite.
//
// Once listening it prints one line of JSON to stdout,
//
//	{"agents":{"streamer":{"url":"http://127.0.0.1:PORT/streamer/","urlV03":"…/streamer/v03/","grpc":"127.0.0.1:PORT"}, …},
//	 "teams":[{"name":"concierge","strategy":"parallel","members":["asker","approver"],…}, …]}
//
// and serves until SIGINT or SIGTERM, then shuts down gracefully. Logs go to stderr.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "demo-agents:", err)
		}
		os.Exit(2)
	}
}

// endpoint is one agent's entry in the startup line.
type endpoint struct {
	URL    string `json:"url"`
	URLV03 string `json:"urlV03"`
	GRPC   string `json:"grpc"`
}

// run serves until ctx is done.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo-agents", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "HTTP listen address; each agent's gRPC endpoint gets a free port on the same host")
	delay := fs.Duration("delay", 0, "pause between streamed events (0 means 30ms, negative means none)")
	verbose := fs.Bool("v", false, "log at debug level")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	srv, err := agents.Start(ctx, *listen, agents.Options{Delay: *delay, Logger: logger})
	if err != nil {
		return err
	}
	startup := struct {
		Agents map[string]endpoint `json:"agents"`
		// Teams are the demo teams over these agents, for a bridge config.
		Teams []agents.Team `json:"teams"`
	}{Agents: make(map[string]endpoint), Teams: agents.Teams()}
	for _, name := range srv.Names() {
		startup.Agents[name] = endpoint{URL: srv.URL(name), URLV03: srv.URLv03(name), GRPC: srv.GRPCAddr(name)}
	}
	// Encode writes the object and a newline in one call: the single line a
	// parent process waits for.
	if err := json.NewEncoder(stdout).Encode(startup); err != nil {
		return errors.Join(fmt.Errorf("write startup line: %w", err), srv.Close())
	}
	logger.Info("demo agents serving", "agents", len(startup.Agents), "first", srv.URL(srv.Names()[0]))

	<-ctx.Done()
	logger.Info("shutting down")
	return srv.Close()
}
