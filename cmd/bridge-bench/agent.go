package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// agentStats is what GET /stats on the agent answers.
type agentStats struct {
	// A2AConnections counts the connections that have carried an A2A
	// request: how many a client opened, which shows whether it reuses them.
	A2AConnections int64 `json:"a2aConnections"`
}

// connSeen marks, per connection, whether it has carried an A2A request.
type connSeen struct{}

// agentStartup is the one JSON line the agent prints once it listens.
type agentStartup struct {
	URL string `json:"url"` // base URL; the card is at URL + ".well-known/agent-card.json"
}

// cmdAgent serves one [agents.Loader] over A2A v1.0 JSON-RPC and v0.3
// JSON-RPC until ctx is done. POST /release releases the slow agent's tasks
// (a control route of the bench, not A2A).
//
// Both bindings sit in one card: a2av0's union card lists the v1.0
// interface in supportedInterfaces, which a2a-go clients (the bridge, the
// limit) pick because it is the newest version, and names the v0.3 endpoint
// in the legacy url field, which is all @a2a-js/sdk 0.2 (the peer) reads.
func cmdAgent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "`host:port` to listen on")
	chunks := fs.Int("chunks", 500, "chunks per answer (at least; the slow agent may send more)")
	interval := fs.Duration("interval", 0, "pause between chunks (0: back to back)")
	hold := fs.Duration("hold", 0, "each task stays open at least this long")
	waitRelease := fs.Bool("release", false, "keep tasks open until POST /release")
	handlerKind := fs.String("handler", "direct", "`direct`: streams straight from the executor; a2asrv: a2asrv's default handler (task store, event queue)")
	if err := fs.Parse(args); err != nil {
		return err
	}

	release := make(chan struct{})
	loader := agents.Loader{Chunks: *chunks, Interval: *interval, Hold: *hold}
	if *waitRelease {
		loader.Release = release
	}
	exec := stampingExecutor{loader}

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", *listen)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String() + "/"
	card := &a2a.AgentCard{
		Name:        "bench",
		Description: "Streams one text artifact in many chunks (cmd/bridge-bench).",
		Version:     "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(base+"jsonrpc", a2a.TransportProtocolJSONRPC),
			{URL: base + "v03", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
		},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "stream", Name: "Stream", Description: "Answers in many chunks.",
			Tags: []string{"bench"}}},
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if *handlerKind != "direct" && *handlerKind != "a2asrv" {
		return fmt.Errorf("-handler must be direct or a2asrv, not %q", *handlerKind)
	}
	var handler a2asrv.RequestHandler = a2asrv.NewHandler(exec,
		a2asrv.WithLogger(logger),
		// Long enough for the slow agent's interval: a quiet execution is
		// failed after this (A2A-PROTOCOL.md pitfall P3).
		a2asrv.WithAgentInactivityTimeout(max(time.Minute, 4**interval)),
	)
	if *handlerKind == "direct" {
		handler = directHandler{RequestHandler: handler, exec: exec}
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(card)))
	var conns atomic.Int64
	countConns := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if seen, ok := r.Context().Value(connSeen{}).(*atomic.Bool); ok && !seen.Swap(true) {
				conns.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	}
	mux.Handle("/jsonrpc", countConns(a2asrv.NewJSONRPCHandler(handler)))
	mux.Handle("/v03", countConns(a2av0.NewJSONRPCHandler(handler)))
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(agentStats{A2AConnections: conns.Load()})
	})
	var releaseOnce sync.Once
	mux.HandleFunc("POST /release", func(w http.ResponseWriter, _ *http.Request) {
		releaseOnce.Do(func() { close(release) })
		w.WriteHeader(http.StatusNoContent)
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		// No ReadTimeout or WriteTimeout: they would cut the streams.
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, connSeen{}, new(atomic.Bool))
		},
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	serveErr := make(chan error, 1)
	wg.Go(func() { serveErr <- srv.Serve(ln) })

	if err := json.NewEncoder(stdout).Encode(agentStartup{URL: base}); err != nil {
		srv.Close()
		return fmt.Errorf("write startup line: %w", err)
	}
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		srv.Close() // streams still open: the parent is going away anyway
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// directHandler answers SendStreamingMessage for a new task straight from
// the executor, and leaves every other method to a2asrv's default handler.
//
// The default handler's task manager deep-copies the whole task (with gob)
// on every artifact update (a2a-go v2.3.1 internal/taskupdate), so an
// artifact of M appended chunks costs the agent O(M²): at 500 chunks the
// agent alone would use several times the CPU of everything it is meant to
// load. The bench measures the client side of the stream, so its agent keeps
// a2asrv's transports (JSON-RPC 1.0, and 0.3 through a2av0) and drops the
// task bookkeeping. -handler a2asrv brings it back.
type directHandler struct {
	a2asrv.RequestHandler
	exec a2asrv.AgentExecutor
}

// SendStreamingMessage implements [a2asrv.RequestHandler].
func (h directHandler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	if req == nil || req.Message == nil || req.Message.TaskID != "" {
		return h.RequestHandler.SendStreamingMessage(ctx, req) // errors and follow-ups: not the bench's path
	}
	contextID := req.Message.ContextID
	if contextID == "" {
		contextID = a2a.NewContextID()
	}
	return h.exec.Execute(ctx, &a2asrv.ExecutorContext{
		Message:   req.Message,
		TaskID:    a2a.NewTaskID(),
		ContextID: contextID,
		Metadata:  req.Metadata,
	})
}

// stampingExecutor stamps every text chunk the executor emits with the Unix
// time in microseconds at which it is handed to the transport, which writes
// it at once: chunk "w12 " becomes "w12@1796351071549847 ". Every reader
// (the limit, the Go SSE reader, the @ag-ui/client reader) subtracts the
// stamp from the time it reads the chunk; they run on the same machine, so
// the difference is the latency the path between them adds. The JS agent
// (bench/jsagent) writes the same stamps.
type stampingExecutor struct {
	a2asrv.AgentExecutor
}

// Execute implements [a2asrv.AgentExecutor].
func (s stampingExecutor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		for ev, err := range s.AgentExecutor.Execute(ctx, ec) {
			if up, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && up.Artifact != nil && len(up.Artifact.Parts) == 1 {
				if text := up.Artifact.Parts[0].Text(); text != "" {
					up.Artifact.Parts[0] = a2a.NewTextPart(stampChunk(text, time.Now()))
				}
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// stampChunk puts the time t into a chunk text "w12 " as "w12@<µs> ".
func stampChunk(text string, t time.Time) string {
	return strings.TrimSuffix(text, " ") + "@" + strconv.FormatInt(t.UnixMicro(), 10) + " "
}

// chunkStamp finds the stamp "w<i>@<µs>" in data (a chunk's text, or any
// event that carries one, as JSON) and returns the microseconds, or false
// when there is none.
func chunkStamp(data []byte) (int64, bool) {
	us, _, ok := nextStamp(data)
	return us, ok
}

// chunkStamps finds every stamp in data: one per chunk the agent sent, so
// several in a text delta the bridge merged from chunks that queued while
// its store was busy.
func chunkStamps(data []byte) []int64 {
	var out []int64
	for {
		us, end, ok := nextStamp(data)
		if !ok {
			return out
		}
		out = append(out, us)
		data = data[end:]
	}
}

// nextStamp finds the first stamp in data and where it ends.
func nextStamp(data []byte) (us int64, end int, ok bool) {
	for i := 0; i < len(data); i++ {
		at := bytes.IndexByte(data[i:], '@')
		if at < 0 {
			return 0, 0, false
		}
		at += i
		i = at
		// Before '@': at least one digit, then 'w'.
		j := at - 1
		for j >= 0 && data[j] >= '0' && data[j] <= '9' {
			j--
		}
		if j == at-1 || j < 0 || data[j] != 'w' {
			continue
		}
		k := at + 1
		var us int64
		for k < len(data) && data[k] >= '0' && data[k] <= '9' && k-at <= 18 {
			us = us*10 + int64(data[k]-'0')
			k++
		}
		if k > at+1 {
			return us, k, true
		}
	}
	return 0, 0, false
}
