// Command bridge-soak drives many concurrent runs through a real bridge in
// front of the demo agents for a while, checks every event of every run,
// and reports whether the bridge's goroutines, heap, RSS and open file
// descriptors come back to where they were.
//
//	go run ./cmd/bridge-soak -concurrency 1000 -duration 10m
//	go run ./cmd/bridge-soak -concurrency 1000 -duration 10m -abuse   # the same, under abuse
//
// It builds ./cmd/bridge, starts the demo agents in process
// (examples/agents) and `bridge serve` as a child process on the chosen
// store, with its profiler on a private port (BRIDGE_PPROF) for the
// goroutine and heap figures. Each worker repeats a mix of scenarios —
// streamed answers, an interrupt and its resume, a tool approval, a team
// with two interrupts and one resume, a pipeline — with a random client
// generation, and checks each run: HTTP 200, a stream the client's verifier
// accepts, exactly one terminal event, the expected answer exactly once,
// and the thread's journal read back (GET …/events) equal to what was
// streamed. Any difference is a failure, reported with a sample; the
// latency of the scenarios that passed is reported too.
//
// The bridge is measured at its baseline (after a warm-up, its idle
// connections closed), every 5 s while the load is on (the peak) and
// through the settle period after it (the last sample is "after"):
// goroutines and runtime.MemStats after a GC from the profiler, VmRSS and
// RssAnon from /proc/PID/status, the entries of /proc/PID/fd, and the
// embedded store's file size. Each sample's GC is also what wakes the
// runtime's scavenger, which an idle bridge gets from the runtime's forced
// GC every two minutes anyway. "Back" means, at the end of the settle:
// goroutines within -goroutine-slack of the baseline, HeapInuse within
// -heap-slack times the baseline plus 16 MiB, RssAnon within twice the
// baseline plus -rss-slack MiB (VmRSS also counts the store's mapped file,
// which is the store's size, not held memory), open fds within -fd-slack.
//
// With -abuse, hostile clients run beside the honest workers, all at once,
// each under its own principal (the bridge gets API keys, and a
// per-principal rate with -abuse-rate, so that the limits tell honest
// users from abusers):
//
//   - endless agents: [agents.Endless] (1 KiB chunks appended without end,
//     served in process) behind the agent "endless", whose run timeout is
//     -endless-timeout; -endless SSE readers each run it on a long-lived
//     thread of their own, half reading 64 KiB and stalling for -stall (a
//     small receive buffer, so the bridge's writes stop), half reading 16
//     KiB and disconnecting. Each run must end, without a reader, by its
//     bounds: RUN_ERROR run_too_large (limits.maxRunBytes, written with
//     -max-run-bytes) or a2a_timeout, counted by code; the readers wait for
//     the thread to be at rest and read the rest of its journal back;
//   - subscribe floods: -floods WebSocket connections each start an
//     endless run and send bursts of -flood-frames frames at its thread
//     while it lasts: subscribe (merged after the first), run (the thread
//     is busy) and subscribe to threads that do not exist. Every refusal
//     must be a RUN_ERROR too_many_streams, rate_limited, thread_busy or
//     unknown_thread, and the connection must stay;
//   - slow bodies: -slow-bodies requests announcing 100 000 bytes and
//     sending one a second must be answered 4xx, connection closed, by the
//     bridge's 30 s body deadline (plus 15 s);
//   - slowloris: -slowloris requests sending their headers a byte a second
//     must be cut by server.readHeaderTimeout (10 s, plus 15 s);
//   - oversized bodies: -oversized clients post 2 MiB (announced or
//     chunked) and must get 413.
//
// Anything else is a violation, reported with a sample. The duration must
// exceed the endless timeout and 45 s, or some kind of abuse never
// completes; that fails the soak too.
//
// Exit status 1 when any honest run failed, any violation was met, or the
// bridge did not come back to its baseline; the report goes to stdout
// (-json for JSON). -keep DIR saves the bridge's log and its heap and
// goroutine profiles after the settle period.
package main
