// Package limits enforces the bridge's admission limits: a request rate per
// principal (token buckets from golang.org/x/time/rate), and caps on the
// runs in progress per principal and on the whole instance.
//
// A refusal is an *Error carrying the HTTP status, the stable error code
// and how long the caller should wait (Retry-After). Limits are per bridge
// instance: behind a load balancer each instance counts its own callers.
//
// A run's own limits (run.go) are here too: the size of an agent's event
// and of the shared state it builds, and the run's output budget. Each
// check answers with the RUN_ERROR code and message that end the run.
package limits
