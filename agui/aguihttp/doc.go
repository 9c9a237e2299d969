// Package aguihttp serves AG-UI over HTTP: POST /agents/{name} streams one
// run as Server-Sent Events, and the discovery and health routes describe
// the agents behind the bridge.
//
// Errors found before the stream starts are HTTP statuses with the JSON body
// {"error":{"code","message"}}; after the first byte of the stream every
// failure is a RUN_ERROR written by the run itself. The handler knows
// nothing of A2A or of stores: it depends on the small Runner and Catalog
// interfaces, and reads a run's events as an iterator. An SSE stream is read
// and written on one goroutine, a batch of stored events per write (sse.go);
// a WebSocket connection carries several streams, so each feeds the
// connection's bounded queue batch by batch and one writer drains it, a
// burst per write call site (stream.go, ws.go). A
// client that disconnects stops only its own copy of the stream, never the
// run.
//
// With Options.Auth, every route but the probes, the console's files and
// (optionally) /metrics authenticates its caller before routing (401
// otherwise); the principal rides in the request's context, where the run
// service reads it to keep each thread to its owner. Allow lists (403) and
// the per-principal request rate (429) are applied here too.
package aguihttp
