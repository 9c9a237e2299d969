package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/config"
)

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
	type row struct {
		name, version, binding, streaming, skills, problem string
	}
	rows := make([]row, len(cfg.Agents))
	var wg sync.WaitGroup
	for i, a := range cfg.Agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := row{name: a.Name, version: "-", binding: "-", streaming: "-", skills: "-"}
			dctx, cancel := context.WithTimeout(ctx, time.Duration(a.Timeouts.Request))
			defer cancel()
			ag, err := newRemoteAgent(a, instruments{}).connect(dctx)
			if err != nil {
				info := a2a.Classify(err)
				r.problem = info.Code + ": " + info.Message
				rows[i] = r
				return
			}
			defer ag.Close()
			b := ag.Binding()
			r.version, r.binding = b.ProtocolVersion, b.Transport
			r.streaming = fmt.Sprint(ag.Streaming())
			var skills []string
			for _, s := range ag.Card().Skills {
				skills = append(skills, s.ID)
			}
			r.skills = strings.Join(skills, ",")
			if r.skills == "" {
				r.skills = "-"
			}
			rows[i] = r
		}()
	}
	wg.Wait()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tPROTOCOL\tBINDING\tSTREAMING\tSKILLS\tSTATUS")
	bad := 0
	for _, r := range rows {
		status := "ok"
		if r.problem != "" {
			status = "UNUSABLE " + r.problem
			bad++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.name, r.version, r.binding, r.streaming, r.skills, status)
	}
	tw.Flush()
	if bad > 0 {
		return exitError{1, fmt.Sprintf("%d of %d agents unusable", bad, len(rows))}
	}
	return nil
}
