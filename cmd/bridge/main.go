package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/observe"
	"github.com/a2a-agui-bridge/bridge/server"
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
  bridge compact --store FILE | --config FILE  shrink a stopped bridge's embedded store file

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
	case "compact":
		err = cmdCompact(args[1:], stdout)
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

// cmdServe runs the bridge from a config file; its logs go to stderr in
// the config's log format and level.
func cmdServe(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	path := fs.String("config", "", "YAML config `file` (required)")
	listen := fs.String("listen", "", "`host:port` to listen on (overrides the config's listen)")
	watch := fs.Bool("watch", false, "reload the config when the file changes (as on SIGHUP)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// From here SIGHUP reloads the config instead of ending the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	if *path == "" {
		return exitError{2, "serve needs --config FILE"}
	}
	loadedSum := server.FileSum(*path) // before the load: see Reload.LoadedSum
	cfg, err := config.Load(*path)
	if err != nil {
		return exitError{2, err.Error()}
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	level := new(slog.LevelVar)
	if err := observe.SetLevel(level, cfg.Log.Level); err != nil {
		return exitError{2, err.Error()} // Validate already refused bad values
	}
	log, err := observe.NewRedactingLoggerVar(stderr, cfg.Log.Format, level, cfg.RedactKeys)
	if err != nil {
		return exitError{2, err.Error()}
	}
	// Before anything opens: a refused config leaves no store file behind.
	if err := server.CheckExposure(cfg); err != nil {
		return exitError{2, err.Error()}
	}
	return server.Serve(ctx, cfg, log, server.Options{
		Listening: func(addr net.Addr) {
			log.Info("bridge listening", "addr", addr.String(), "agents", len(cfg.Agents), "store", cfg.Store.Kind)
		},
		Reload: &server.Reload{Path: *path, Listen: *listen, Watch: *watch, LoadedSum: loadedSum, Level: level, Signals: hup},
	})
}

// cmdCheck validates the config, resolves every agent card and prints one
// row per agent; it fails when any agent is unusable.
func cmdCheck(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	path := fs.String("config", "", "YAML config `file` (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" {
		return exitError{2, "check needs --config FILE"}
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return exitError{2, err.Error()}
	}
	if err := server.Check(ctx, cfg, stdout); err != nil {
		return exitError{1, err.Error()}
	}
	return nil
}
