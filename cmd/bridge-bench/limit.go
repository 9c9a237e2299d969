package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// cmdLimit is "the limit": the least any A2A→AG-UI translator must do per
// chunk, which is to receive and decode the agent's stream. It reads the
// agent's stream with the a2a-go client the bridge uses and discards every
// event.
//
// It takes commands on stdin, one per line, so that the driver can read this
// process's CPU time around exactly the work it wants to measure:
//
//	warmup   -warmup runs at -concurrency
//	run      -runs runs at -concurrency
//	ttfe     -ttfe runs one at a time, recording each time to first chunk
//
// and answers each with one JSON line ([commandReply]) on stdout. It exits when
// stdin ends.
func cmdLimit(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("limit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	agentURL := fs.String("agent", "", "agent base `URL` (card at URL/.well-known/agent-card.json)")
	runs := fs.Int("runs", 200, "runs for the run command")
	concurrency := fs.Int("concurrency", 10, "runs in flight at once")
	chunks := fs.Int("chunks", 500, "chunks each run must carry")
	warmup := fs.Int("warmup", 20, "runs for the warmup command")
	ttfeRuns := fs.Int("ttfe", 30, "sequential runs for the ttfe command")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *agentURL == "" {
		return errors.New("limit needs -agent URL")
	}
	client, err := newLimitClient(ctx, *agentURL, *concurrency)
	if err != nil {
		return err
	}
	run := limitRun(client, *chunks)

	out := json.NewEncoder(stdout)
	commands := bufio.NewScanner(stdin)
	for commands.Scan() {
		var reply commandReply
		switch cmd := strings.TrimSpace(commands.Text()); cmd {
		case "warmup":
			reply = commandReply{cmd, runLoad(ctx, *warmup, *concurrency, run)}
		case "run":
			reply = commandReply{cmd, runLoad(ctx, *runs, *concurrency, run)}
		case "ttfe":
			reply = commandReply{cmd, runSequential(ctx, *ttfeRuns, run)}
		default:
			return fmt.Errorf("unknown command %q", cmd)
		}
		if err := out.Encode(reply); err != nil {
			return err
		}
	}
	return commands.Err()
}

// newLimitClient builds the a2a-go client the way the bridge does: card
// resolved with the a2av0 parser (it reads v1.0, v0.3 and union cards), an
// http.Client with no Timeout (the SDK's default cuts streams after 3
// minutes, A2A-PROTOCOL.md pitfall P2), and a transport that keeps one idle
// connection per concurrent run, so no run pays for a new connection.
func newLimitClient(ctx context.Context, agentURL string, concurrency int) (*a2aclient.Client, error) {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	hc := &http.Client{Transport: &http.Transport{
		DialContext:         dialer.DialContext,
		MaxIdleConns:        max(100, concurrency),
		MaxIdleConnsPerHost: concurrency,
		IdleConnTimeout:     90 * time.Second,
	}}
	resolver := &agentcard.Resolver{Client: hc, CardParser: a2av0.NewAgentCardParser()}
	card, err := resolver.Resolve(ctx, agentURL)
	if err != nil {
		return nil, fmt.Errorf("resolve card: %w", err)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return client, nil
}

// limitRun streams one answer, counting artifact updates as chunks. The run
// must end COMPLETED with exactly chunks artifact updates.
func limitRun(client *a2aclient.Client, chunks int) runFunc {
	return func(ctx context.Context) outcome {
		req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go"))}
		var (
			o     outcome
			state a2a.TaskState
		)
		start := time.Now()
		for ev, err := range client.SendStreamingMessage(ctx, req) {
			if err != nil {
				o.err = fmt.Errorf("stream after %d events: %w", o.events, err)
				return o
			}
			o.events++
			switch ev := ev.(type) {
			case *a2a.TaskArtifactUpdateEvent:
				o.chunks++
				if o.ttfe == 0 {
					o.ttfe = time.Since(start)
				}
				if ev.Artifact != nil && len(ev.Artifact.Parts) > 0 {
					if stamp, ok := chunkStamp([]byte(ev.Artifact.Parts[0].Text())); ok {
						o.latency = append(o.latency, time.Now().UnixMicro()-stamp)
					}
				}
			case *a2a.TaskStatusUpdateEvent:
				state = ev.Status.State
			case *a2a.Task:
				state = ev.Status.State
			}
		}
		switch {
		case state != a2a.TaskStateCompleted:
			o.err = fmt.Errorf("stream ended in state %q, want COMPLETED", state)
		case o.chunks != int64(chunks):
			o.err = fmt.Errorf("%d artifact updates, want %d", o.chunks, chunks)
		}
		return o
	}
}
