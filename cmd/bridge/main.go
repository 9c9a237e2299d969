// Command bridge puts remote A2A agents in front of AG-UI frontends.
//
//	bridge serve --config FILE [--listen ADDR] [--watch]
//	bridge demo [--listen ADDR] [--replicas N] [--redis URL]
//	bridge check --config FILE
//	bridge health [--url URL | --config FILE]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

const usage = `bridge puts remote A2A agents in front of AG-UI frontends.

Usage:
  bridge serve --config FILE [--listen ADDR] [--watch]
                                               run from a YAML config; SIGHUP (or, with
                                               --watch, a change of FILE) reloads it
  bridge demo [--listen ADDR]                  built-in demo agents + the bridge, no setup
  bridge demo --replicas N [--redis URL]       the same with N bridge instances sharing one Redis
  bridge check --config FILE                   validate the config and resolve every agent card
  bridge health [--url URL | --config FILE]    exit 0 when a running bridge's /healthz answers 200

Run "bridge COMMAND -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(ctx, args[1:], stdout, stderr)
	case "demo":
		err = cmdDemo(ctx, args[1:], stdout, log)
	case "check":
		err = cmdCheck(ctx, args[1:], stdout)
	case "health":
		err = cmdHealth(ctx, args[1:], stdout)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "bridge: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	var exit exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &exit):
		if exit.msg != "" {
			fmt.Fprintln(stderr, "bridge:", exit.msg)
		}
		return exit.code
	default:
		fmt.Fprintln(stderr, "bridge:", err)
		return 1
	}
}

// exitError ends a command with a specific exit code.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }
