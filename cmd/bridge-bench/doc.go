// Command bridge-bench measures what the bridge costs per streamed chunk,
// against a byte-only reverse proxy ("the relay", the floor of anything
// between an agent and a client), the least any A2A→AG-UI translator must
// spend ("the limit") and the TypeScript peer adapter @ag-ui/a2a, and what
// an open stream costs it. One invocation takes every number of its report
// from one run:
//
//	go run ./cmd/bridge-bench [-runs 200 -chunks 500 -concurrency 10] [-store memory] [-json]
//	go run ./cmd/bridge-bench -agent js -reader httpagent -shape paced
//	go run ./cmd/bridge-bench -mode streams [-streams 10000 -interval 5s -hold 20s]
//
// The agent is a2a-go (-agent go) or @a2a-js/sdk 1.3.0 (-agent js,
// bench/jsagent); the relay, the bridge and the peer are read by the bench's
// Go SSE reader (-reader go) or by @ag-ui/client 1.0.0 HttpAgent (-reader
// httpagent, bench/aguireader, a child process driven like the limit). The
// bulk shape sends chunks back to back; -shape paced sends one every -pace
// (20 ms) per run, 100 runs in flight. Both agents stamp every chunk with
// the time they wrote it, so every reader reports agent write → client read
// latency.
//
// # Processes
//
// Everything measured runs as its own child process, so that its CPU time
// (utime+stime from /proc/PID/stat) and peak RSS (VmHWM from
// /proc/PID/status) are its own:
//
//   - the agent: this binary's hidden "agent" subcommand, an a2asrv server on
//     loopback answering each message with a task whose text artifact comes
//     in -chunks append/lastChunk chunks, back to back, then COMPLETED. It
//     serves A2A 1.0 JSON-RPC and, through a2av0, 0.3 JSON-RPC, under one
//     union card. A fresh agent serves each target.
//   - the JS agent: node bench/jsagent/server.mjs, the same answer through
//     @a2a-js/sdk 1.3.0's JSON-RPC transport (v1.0, and v0.3 through its
//     legacyCompat), each chunk flushed in its own turn of the event loop.
//   - the relay: the hidden "relay" subcommand, httputil.ReverseProxy with
//     FlushInterval -1 in front of the agent.
//   - the HttpAgent reader: node bench/aguireader/reader.mjs, commands on
//     stdin like the limit.
//   - the limit: the hidden "limit" subcommand, the a2a-go client (built from
//     the card, no 3-minute http.Client timeout) reading the agent's stream
//     and discarding the events. It does its own runs on the driver's command
//     (stdin), so its CPU is the cost of receiving A2A and nothing else.
//   - the bridge: `bridge serve` built from this module (go build
//     ./cmd/bridge), with a generated config naming the agent and the
//     embedded store in a temp dir (-store memory for the memory store, -store
//     redis for the Redis store on a redis-server the bench starts). The
//     driver posts RunAgentInput and reads the SSE itself.
//   - the peer: bench/peer/server.mjs under node, @ag-ui/a2a 0.0.6 behind a
//     small SSE server; skipped when node is not on PATH. The driver runs
//     `npm ci --prefix bench/peer` when its node_modules is missing.
//
// Children start in their own process group with Pdeathsig, and are stopped
// (SIGTERM, then SIGKILL) when their phase ends, on Ctrl-C and on error; the
// temp dir goes with them.
//
// # Chunks mode (the default)
//
// Per target, one at a time: -warmup runs, then -runs runs at -concurrency
// (the measured phase), then -ttfe runs one at a time. Reported per target:
//
//   - CPU µs/chunk: Δ(utime+stime) of the target process (relay, limit,
//     bridge or node) over the measured phase ÷ (runs × chunks);
//   - read/write syscalls per chunk: Δsyscr and Δsyscw from /proc/PID/io of
//     the target over the same phase ÷ (runs × chunks);
//   - latency p50/p99: over every chunk, the reader's clock when it had the
//     event minus the agent's stamp;
//   - chunks/s: chunk-bearing events received ÷ the phase's wall time;
//   - peak RSS: the translating process's VmHWM at the end of its phase;
//   - TTFE: the median, over the sequential runs, of the time from sending
//     the request to the first event that carries a chunk (limit: the first
//     artifact update; bridge: the first TEXT_MESSAGE_CONTENT; peer: the
//     first RAW artifact-update or text chunk event);
//   - chunk events per A2A chunk and events per run, since the targets do
//     not emit the same events (a text delta the bridge merged from chunks
//     that queued behind a busy store counts each chunk it carries, and
//     lowers the events per run);
//   - the agent's and the driver's own CPU over the same phase, for context
//     (on a small machine they share the cores with the target);
//   - the ratios bridge/limit and peer/bridge of CPU per chunk.
//
// Every run must end as it should (COMPLETED for the limit, RUN_FINISHED
// for the others) with exactly -chunks chunk-bearing events; failures are
// counted and the first one is shown.
//
// # Streams mode
//
// -mode streams opens -streams runs at once to the bridge in front of a slow
// agent (a chunk every -interval, tasks held open at least -hold and until
// the driver releases them once every stream has its first chunk), and
// reports the bridge's RSS at baseline and at the plateau, the difference per
// open stream, goroutines from GET /metrics (go_goroutines) when the bridge
// has it and OS threads otherwise, open files, and every failure: non-200
// answers, RUN_ERROR codes, streams that ended without RUN_FINISHED. The
// bench raises its RLIMIT_NOFILE to the hard limit first (children inherit
// it); when fewer streams could be open than asked, it says why.
//
// The hidden subcommands are internal: their flags may change with the
// driver.
package main
