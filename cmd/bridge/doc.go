// Command bridge puts remote A2A agents in front of AG-UI frontends.
//
//	bridge serve --config FILE [--listen ADDR] [--watch]
//	bridge demo [--listen ADDR] [--replicas N] [--redis URL]
//	bridge check --config FILE
//	bridge health [--url URL | --config FILE]
//
// It is the command line of package server, which holds the wiring. This
// package parses flags, loads the config and sets up the logger; turns
// SIGINT and SIGTERM into the end of server.Serve's context (a graceful
// shutdown) and, for serve, SIGHUP into a reload; and maps what went wrong
// to an exit code: 0 done, 1 failed (the bridge could not start, an agent
// is unusable, a bridge is unhealthy), 2 a usage or config error.
//
// bridge demo runs the demo A2A agents (examples/agents) on loopback and
// serves them on a fresh embedded store; with --replicas it runs N `bridge
// serve` children of this binary on one Redis (demoreplicas.go), so that a
// user can kill one and watch another adopt its runs. bridge health exists
// for images without a shell or curl.
//
// The tests here are the command line's: usage, exit codes, flags, the
// health command, the demo's walkthrough. The end-to-end tests of the
// bridge are in package server, next to the wiring they test.
package main
