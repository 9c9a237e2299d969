// Package limits enforces the bridge's admission limits: a request rate per
// principal (token buckets from golang.org/x/time/rate), and caps on the
// runs in progress per principal and on the whole instance.
//
// A refusal is an *Error carrying the HTTP status, the stable error code
// and how long the caller should wait (Retry-After). Limits are per bridge
// instance: behind a load balancer each instance counts its own callers.
package limits
