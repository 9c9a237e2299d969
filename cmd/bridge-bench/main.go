package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to the driver or to one of the hidden subcommands the
// driver starts as child processes, and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var err error
	switch {
	case len(args) > 0 && args[0] == "agent":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = cmdAgent(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "relay":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = cmdRelay(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "limit":
		// No signal handling: the limit holds nothing to clean up, so
		// SIGTERM from the driver may end it where it stands.
		err = cmdLimit(context.Background(), args[1:], stdin, stdout, stderr)
	default:
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = cmdBench(ctx, args, stdout, stderr)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	default:
		fmt.Fprintln(stderr, "bridge-bench:", err)
		return 1
	}
}

// cmdBench is the driver: it measures, then prints the report on stdout
// (progress goes to stderr).
func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseSettings(args, stderr)
	if err != nil {
		return err
	}
	rep, err := runBench(ctx, cfg, args, stderr)
	if err != nil {
		if ctx.Err() != nil {
			return errors.New("interrupted; children stopped, temp dir removed")
		}
		return err
	}
	if cfg.jsonFile != "" {
		var buf bytes.Buffer
		if err := rep.writeJSON(&buf); err != nil {
			return err
		}
		if err := os.WriteFile(cfg.jsonFile, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if cfg.json {
		return rep.writeJSON(stdout)
	}
	return rep.writeText(stdout)
}
