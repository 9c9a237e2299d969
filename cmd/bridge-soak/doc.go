// Command bridge-soak drives many concurrent runs through a real bridge in
// front of the demo agents for a while, checks every event of every run,
// and reports whether the bridge's goroutines and heap come back to where
// they were.
//
//	go run ./cmd/bridge-soak -concurrency 1000 -duration 10m
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
// streamed. Any difference is a failure, reported with a sample.
//
// Exit status 1 when any run failed or the bridge did not come back to its
// baseline; the report goes to stdout (-json for JSON).
package main
