package mcpotel

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mcpmw/mcpmw"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the spans and metrics an
// Observer records.
const ScopeName = "github.com/mcpmw/mcpmw/otel"

// durationBuckets are the bucket boundaries the MCP semantic conventions
// advise for mcp.server.operation.duration, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// An Observer is an mcpmw.Observer that records one span and one duration
// measurement for every request a Handler receives, and an
// mcpmw.TaskObserver that records one span and one duration measurement
// for every run of a task (see the package documentation). Make one with
// NewObserver; it is safe for concurrent use, and one Observer may serve
// several Handlers.
type Observer struct {
	tracer       trace.Tracer
	prop         propagation.TextMapPropagator
	duration     metric.Float64Histogram
	taskDuration metric.Float64Histogram // see tasks.go
}

// An Observer sees the runs of tasks too, with no wiring of its own.
var _ mcpmw.TaskObserver = (*Observer)(nil)

// An Option configures NewObserver.
type Option func(*config)

type config struct {
	tp   trace.TracerProvider
	mp   metric.MeterProvider
	prop propagation.TextMapPropagator
}

// WithTracerProvider sets where spans go. Nil, or no option, means the
// global provider (otel.GetTracerProvider), which forwards to one
// installed later.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets where measurements go. Nil, or no option, means
// the global provider (otel.GetMeterProvider), which forwards to one
// installed later.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithPropagator sets how trace context and baggage are read from
// params._meta and the HTTP headers. Nil, or no option, means the global
// propagator (otel.GetTextMapPropagator), which forwards to one installed
// later; until then it reads nothing.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *config) { c.prop = p }
}

// NewObserver returns an Observer recording to the given providers, by
// default the global ones. An instrument the meter refuses to create is
// reported to otel.Handle and replaced by one that records nothing.
func NewObserver(opts ...Option) *Observer {
	var c config
	for _, opt := range opts {
		opt(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.prop == nil {
		c.prop = otel.GetTextMapPropagator()
	}
	meter := c.mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	d, err := mcpconv.NewServerOperationDuration(meter, metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		otel.Handle(err)
	}
	return &Observer{
		tracer:       c.tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:         c.prop,
		duration:     d.Inst(),
		taskDuration: newTaskDuration(meter),
	}
}

// served is what Serve leaves in the context for Done: the span it
// started, and which request it belongs to.
type served struct {
	span         trace.Span
	start        time.Time // the request's start, which its CallRecord repeats
	notification bool
	ended        atomic.Bool
}

// ctxKey is the type of the keys under which an Observer leaves values in
// a context. It has a field so that two keys are never equal: pointers to
// distinct zero-size values may be.
type ctxKey struct{ name string }

var servedKey = &ctxKey{"served"}

// Serve starts the request's span, at start, as a child of the trace
// context in params._meta or else the ambient one (see the package
// documentation), and returns ctx with that span: the middleware and the
// method run under it.
func (o *Observer) Serve(ctx context.Context, req *mcpmw.Request, start time.Time) context.Context {
	parent, links := o.parent(ctx, req.Header, req.Param("_meta"))
	attrs := startAttributes(req)
	ctx, span := o.tracer.Start(parent, spanName(attrs.method, attrs.tool, ""),
		trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start),
		trace.WithLinks(links...), trace.WithAttributes(attrs.list...))
	return context.WithValue(ctx, servedKey, &served{span: span, start: start, notification: req.IsNotification()})
}

// Done ends the span Serve started for the request, at the moment its
// record was made, with the record's attributes; for a request refused
// before dispatch, it records the whole span now, from rec.Time, as a child
// of the ambient context. It then records the request's duration.
func (o *Observer) Done(ctx context.Context, r *http.Request, req *mcpmw.Request, rec mcpmw.CallRecord) {
	s, _ := ctx.Value(servedKey).(*served)
	if s != nil && (!s.start.Equal(rec.Time) || !s.ended.CompareAndSwap(false, true)) {
		s = nil // another request's span (a Handler called from a tool): not ours to end
	}
	a := recordAttributes(rec, s)
	name := spanName(a.method, a.tool, r.Method)
	var span trace.Span
	if s != nil {
		span = s.span
		span.SetName(name)
		span.SetAttributes(a.span...)
	} else {
		// Refused before dispatch: the parent comes from params._meta when
		// the request was parsed that far, else from the HTTP request.
		parent, links := o.ambient(ctx, r.Header), []trace.Link(nil)
		if req != nil {
			parent, links = o.parent(ctx, r.Header, req.Param("_meta"))
		}
		ctx, span = o.tracer.Start(parent, name,
			trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(rec.Time),
			trace.WithLinks(links...), trace.WithAttributes(a.span...))
	}
	if rec.Outcome == mcpmw.OutcomeError {
		span.SetStatus(codes.Error, rec.Summary)
	}
	span.End(trace.WithTimestamp(rec.Time.Add(rec.Duration)))
	o.duration.Record(ctx, rec.Duration.Seconds(), metric.WithAttributeSet(attribute.NewSet(a.metric...)))
}

// spanName is "{method} {tool}" when the tool is known to exist, else the
// method; without one (the body was never read), the HTTP method.
func spanName(method, tool, httpMethod string) string {
	switch {
	case method == "":
		return httpMethod
	case tool != "":
		return method + " " + tool
	}
	return method
}
