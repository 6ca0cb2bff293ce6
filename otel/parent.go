package mcpotel

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// metaKeys are the members of params._meta that carry W3C trace context
// and baggage (SEP-414), unprefixed.
var metaKeys = [...]string{"traceparent", "tracestate", "baggage"}

// ambient returns ctx when it already holds a span (an HTTP middleware's:
// its parent came from the same headers), else ctx with what the
// propagator reads from the HTTP headers.
func (o *Observer) ambient(ctx context.Context, h http.Header) context.Context {
	if trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	return o.prop.Extract(ctx, propagation.HeaderCarrier(h))
}

// parent returns the context a dispatched request's span starts in: the
// trace context in params._meta when it holds one, with a link to the
// ambient span, as the MCP semantic conventions ask; else the ambient
// context.
func (o *Observer) parent(ctx context.Context, h http.Header, meta json.RawMessage) (context.Context, []trace.Link) {
	amb := o.ambient(ctx, h)
	carrier := metaCarrier(meta)
	if carrier == nil {
		return amb, nil
	}
	p := o.prop.Extract(amb, carrier)
	pc, ac := trace.SpanContextFromContext(p), trace.SpanContextFromContext(amb)
	if ac.IsValid() && !pc.Equal(ac) {
		return p, []trace.Link{{SpanContext: ac}}
	}
	return p, nil
}

// metaCarrier returns the trace context members of a params._meta object
// that are strings, or nil when there are none.
func metaCarrier(meta json.RawMessage) propagation.MapCarrier {
	if !bytes.Contains(meta, []byte("trace")) && !bytes.Contains(meta, []byte("baggage")) {
		return nil // the common case, without decoding _meta
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(meta, &members) != nil {
		return nil
	}
	var c propagation.MapCarrier
	for _, k := range metaKeys {
		var s string
		if raw, ok := members[k]; !ok || json.Unmarshal(raw, &s) != nil || s == "" {
			continue
		}
		if c == nil {
			c = propagation.MapCarrier{}
		}
		c[k] = s
	}
	return c
}
