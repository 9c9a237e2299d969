package a2a

import (
	"context"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Observer is told how every call to an agent ended (Options.Observer;
// nil: nothing), for metrics and the agents' health. It is called
// concurrently.
type Observer interface {
	// CallDone reports one finished call: op is the A2A method
	// ("SendStreamingMessage", "GetTask", …, a stream once it ends) or
	// "card" for the card fetch of Dial; code is Classify(err).Code, ""
	// for a success.
	CallDone(agent, op, code string)
}

// opCard names the card fetch in spans and in Observer reports.
const opCard = "card"

// startCall opens the span of one call to the agent, when tracing is on,
// and returns the context to make the call in and the function that ends
// it with the call's error (nil for success). The interceptor below
// sends the span's trace context to the agent.
func (a *Agent) startCall(ctx context.Context, op string) (context.Context, func(error)) {
	return startCall(ctx, a.tracer, a.obs, a.name, op, a.binding)
}

func startCall(ctx context.Context, tracer trace.Tracer, obs Observer, agent, op string, b Binding) (context.Context, func(error)) {
	var span trace.Span
	if tracer != nil {
		attrs := []attribute.KeyValue{
			attribute.String("rpc.system", "a2a"),
			attribute.String("rpc.method", op),
			attribute.String("bridge.agent", agent),
		}
		if b.Transport != "" {
			attrs = append(attrs, attribute.String("a2a.binding", b.Transport),
				attribute.String("a2a.protocol_version", b.ProtocolVersion))
		}
		if u, err := url.Parse(b.URL); err == nil && u.Hostname() != "" {
			attrs = append(attrs, attribute.String("server.address", u.Hostname()))
		}
		ctx, span = tracer.Start(ctx, "a2a/"+op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	}
	return ctx, func(err error) {
		code := ""
		if err != nil {
			code = Classify(err).Code
		}
		if obs != nil {
			obs.CallDone(agent, op, code)
		}
		if span == nil {
			return
		}
		if code != "" {
			// The code, not the error's text: that may quote the agent's
			// answer, which a trace backend should not keep.
			span.SetAttributes(attribute.String("error.type", code))
			span.SetStatus(codes.Error, code)
		}
		span.End()
	}
}

// traceInterceptor sends the W3C trace context of the call's span
// (traceparent, tracestate) as service parameters, which every binding
// turns into HTTP headers (JSON-RPC, HTTP+JSON) or gRPC metadata.
type traceInterceptor struct {
	a2aclient.PassthroughInterceptor
	prop propagation.TextMapPropagator
}

func (t *traceInterceptor) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	if req.ServiceParams == nil {
		req.ServiceParams = a2aclient.ServiceParams{}
	}
	t.prop.Inject(ctx, paramsCarrier(req.ServiceParams))
	return ctx, nil, nil
}

// paramsCarrier adapts ServiceParams (lower-case keys) to the propagator.
type paramsCarrier a2aclient.ServiceParams

func (c paramsCarrier) Get(key string) string {
	if v := a2aclient.ServiceParams(c).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set replaces the value: the call's own trace context wins over one a
// static header might carry.
func (c paramsCarrier) Set(key, value string) { c[strings.ToLower(key)] = []string{value} }

func (c paramsCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}
