package server

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/config"
)

// Check resolves the card of every agent cfg configures, as Serve would,
// and writes one row per agent to w: its protocol version, binding,
// streaming and skills, or why it is unusable; below the table, for each
// unusable agent, the URL it tried and the cause. It returns an error when
// any agent is unusable.
func Check(ctx context.Context, cfg *config.Config, w io.Writer) error {
	type row struct {
		name, version, binding, streaming, skills, problem string
		// detail is where the failed call went and why (a2a.Explain).
		detail string
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
				r.detail = a2a.Explain(err)
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
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
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
	// The causes below the table: a URL and a dial error would stretch
	// every row of it.
	first := true
	for _, r := range rows {
		if r.detail == "" {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		fmt.Fprintf(w, "%s: %s\n", r.name, r.detail)
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d agents unusable", bad, len(rows))
	}
	return nil
}
