package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/tasks/store/boltstore"
)

// cmdCompact shrinks a stopped bridge's embedded store file: deleted and
// expired threads free pages that the store reuses but never gives back.
func cmdCompact(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	path := fs.String("store", "", "the embedded store `file` (store.path) of a stopped bridge")
	cfgPath := fs.String("config", "", "YAML config `file`: compact its store.path")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" && *cfgPath != "" {
		cfg, err := config.Load(*cfgPath)
		if err != nil {
			return exitError{2, err.Error()}
		}
		if cfg.Store.Kind != config.StoreEmbedded {
			return exitError{2, fmt.Sprintf("bridge compact: store.kind is %q; only the embedded store is a file to compact", cfg.Store.Kind)}
		}
		*path = cfg.Store.Path
	}
	if *path == "" {
		return exitError{2, "bridge compact: give --store FILE or --config FILE"}
	}
	before, after, err := boltstore.Compact(*path)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d bytes before, %d after\n", *path, before, after)
	return nil
}
