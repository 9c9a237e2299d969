// Package server is the bridge wired together. From a config.Config it
// opens the store, builds the authenticator, the agent registry, the run
// service (tasks) and the HTTP handler (aguihttp), and serves them on one
// http.Server until its context ends (Serve). It is the one package that
// knows which store backend, transports and instruments are wired in: the
// packages it composes take their own option structs and do not import
// config. Command bridge (cmd/bridge) is its command line: flags, signals
// and exit codes around Serve, CheckExposure and Check.
//
// Where to look:
//
//   - serve.go: Serve (tracing, the store, take-over of runs left in
//     progress, the listener, graceful shutdown), build and wire (config →
//     tasks.Options and aguihttp.Options), the store and the authenticator
//     the config names, CheckExposure, the BRIDGE_PPROF profiler;
//   - agents.go: the agent registry — one a2a client per configured agent,
//     its card kept fresh (a2a.Resolver), its health from its last call and
//     a probe while it is down — and the catalog behind GET /agents,
//     /agents/{name} and /readyz;
//   - reload.go: config generations and live reload (Options.Reload);
//   - enums.go: config's enum values mapped to the engine's and the
//     translator's, one switch each;
//   - check.go: Check, the card of every agent resolved and reported.
//
// Concurrency contract: Serve stops what it starts before it returns: it
// waits for the http.Server, the reload loop and the run service's
// goroutines (tasks.Service.Close), and closes the agents' clients, the
// authenticators and the store. What a config says about agents, teams,
// auth, allow lists and the handler is one generation, built whole and
// swapped in with one atomic store; a request, stream or run keeps the
// generation it started with. Only the reload loop builds generations
// after the first, so reloads never overlap.
//
// Tests: the end-to-end tests (*_e2e_test.go) start the real demo A2A
// agents (examples/agents, a2asrv) in-process and the handler build wires
// in httptest, and read the real SSE and WebSocket bytes. The process
// tests (restart_test.go, shutdown_test.go, reload_e2e_test.go,
// scale_e2e_test.go, failover_e2e_test.go) build ./cmd/bridge and
// ./examples/cmd/demo-agents, run them as processes on real stores
// (embedded, redis-server, Sentinel, Cluster) and SIGKILL, SIGTERM or
// SIGHUP the bridge. TestThousandWebSocketRuns, the load test `make
// loadtest` runs, counts events only; under -race it is skipped.
package server
