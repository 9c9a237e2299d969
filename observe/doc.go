// Package observe is the bridge's observability plumbing: Prometheus
// metrics on a registry of their own (served at GET /metrics), OpenTelemetry
// tracing with a configurable OTLP exporter, and the log/slog logger.
//
// The packages that do the work do not import Prometheus or the tracing
// SDK. Each declares the small interface it calls where it calls it —
// tasks.Observer and tasks.StoreObserver, a2a.Observer, aguihttp's Gauge —
// and *Metrics implements them all; package server hands it to each. A nil
// observer costs nothing. Tracing goes the same way: tasks and a2a take a
// trace.Tracer and a propagation.TextMapPropagator (the OpenTelemetry API,
// which is meant to be imported by libraries), and only this package and
// package server know the SDK and the exporters.
//
// Hot path: a streamed chunk is about 17 µs of bridge CPU, so counting an
// AG-UI event must stay a switch and an atomic add (about 8 ns). An agent's
// counter of an event type is resolved once, on its first use, and no
// metric method allocates after that.
package observe
