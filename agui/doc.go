// Package agui is the AG-UI side of the bridge: the wire types of the
// AG-UI protocol (one struct per event behind the sealed Event interface,
// and the Message union), their encoding (Marshal, Decode, SSE frames via
// AppendSSE), request decoding (DecodeRunAgentInput), and a Go port of the
// @ag-ui/client verifier for each client generation in circulation
// (Verifier, Guard). It also names the bridge's public error codes, the
// "code" clients read in RUN_ERROR and in refused requests, and the HTTP
// status each refusal has (codes.go; the strings and statuses are package
// errcode's one table). Beyond those
// status numbers it knows nothing of HTTP, and nothing of A2A or the store.
// The reference for every rule here is /work/shared/docs/AGUI-PROTOCOL.md
// (cited by section).
//
// Optional means omitted, never null. Real clients (0.0.59 and 1.0) fail
// the run on null for any optional member (§1), so every optional field is
// omitempty and Marshal never writes null except where the protocol
// requires the key and allows null as a value (CUSTOM.value, RAW.event,
// STATE_SNAPSHOT.snapshot). Decode rejects a null where a client would.
//
// The bridge writes every event through a Guard. The Guard checks the
// event against every client generation that could be reading the stream
// (1.0 when the request says protocolVersion "1.0", else both 0.0.59 and
// 0.0.36) and refuses anything after the terminal event, so an event order
// or value some client would throw on cannot reach the wire: the writer
// gets an error instead, and the stream stays valid for what it writes
// next.
package agui
