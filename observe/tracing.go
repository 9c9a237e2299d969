package observe

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Exporters (TracingOptions.Exporter), spelled as in the config.
const (
	ExporterNone     = "none"
	ExporterOTLPHTTP = "otlp-http"
	ExporterOTLPGRPC = "otlp-grpc"
)

// ServiceName is the service.name resource attribute of the bridge's spans.
const ServiceName = "a2a-agui-bridge"

// TracerName is the instrumentation scope of the bridge's own spans.
const TracerName = "github.com/a2a-agui-bridge/bridge"

// TracingOptions configure tracing.
type TracingOptions struct {
	// Exporter is ExporterNone (tracing off), ExporterOTLPHTTP or
	// ExporterOTLPGRPC.
	Exporter string
	// Endpoint is the collector's URL. http:// is plaintext, https:// TLS.
	// For otlp-http a URL without a path gets the standard /v1/traces.
	// Empty: the exporter's default, which honours the standard
	// OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT variables (else localhost:4318
	// for HTTP, localhost:4317 for gRPC).
	Endpoint string
	// SampleRatio is the share of new traces recorded, 0 to 1. A request
	// that arrives with a traceparent keeps its caller's decision.
	SampleRatio float64
}

// Tracing is the bridge's tracer provider and the W3C propagator. A nil
// *Tracing is tracing off: Tracer and Propagator return nil, which the
// bridge's packages take as "no spans, no traceparent".
type Tracing struct {
	provider *sdktrace.TracerProvider
}

// NewTracing starts the exporter o asks for; with ExporterNone it returns
// nil, nil. Call Shutdown to flush the spans still buffered.
func NewTracing(ctx context.Context, o TracingOptions) (*Tracing, error) {
	var exp sdktrace.SpanExporter
	var err error
	switch o.Exporter {
	case ExporterNone, "":
		return nil, nil
	case ExporterOTLPHTTP:
		var opts []otlptracehttp.Option
		if o.Endpoint != "" {
			u, perr := url.Parse(o.Endpoint)
			if perr != nil {
				return nil, fmt.Errorf("tracing endpoint: %w", perr)
			}
			if u.Path == "" || u.Path == "/" {
				u.Path = "/v1/traces" // the exporter would post to "/" otherwise
			}
			opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	case ExporterOTLPGRPC:
		var opts []otlptracegrpc.Option
		if o.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(o.Endpoint))
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	default:
		return nil, fmt.Errorf("tracing exporter %q: want none, otlp-http or otlp-grpc", o.Exporter)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing exporter %s: %w", o.Exporter, err)
	}
	// Batching: exporting never sits on a run's path.
	return NewTracingWith(sdktrace.WithBatcher(exp), o.SampleRatio), nil
}

// NewTracingWith builds tracing on a span processor of the caller's (tests
// use sdktrace.WithSyncer with tracetest's in-memory exporter).
func NewTracingWith(processor sdktrace.TracerProviderOption, sampleRatio float64) *Tracing {
	res := resource.NewSchemaless(attribute.String("service.name", ServiceName))
	return &Tracing{provider: sdktrace.NewTracerProvider(
		processor,
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(sampleRatio))),
	)}
}

// Tracer returns the bridge's tracer, or nil when t is nil.
func (t *Tracing) Tracer() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.provider.Tracer(TracerName)
}

// Propagator is W3C Trace Context (traceparent, tracestate), or nil when t
// is nil: with tracing off the bridge neither reads nor sends traceparent.
func (t *Tracing) Propagator() propagation.TextMapPropagator {
	if t == nil {
		return nil
	}
	return propagation.TraceContext{}
}

// Shutdown exports the spans still buffered and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return errors.Join(t.provider.ForceFlush(ctx), t.provider.Shutdown(ctx))
}
