//go:build race

package server

// raceEnabled: the race detector slows the bridge and the demo agents in
// the same process about tenfold; load tests that only count (they check
// no event is lost, not data races) run in the plain `go test` pass of
// `make test` instead.
const raceEnabled = true
