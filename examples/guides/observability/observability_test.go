// Package observability_test is the tested source of the OpenTelemetry
// snippet of docs/audit.md.
package observability_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// !+otel
import mcpotel "github.com/mcpmw/mcpmw/otel"

func observed(reg *mcpmw.Registry, authn mcpmw.Authenticator, auditor mcpmw.Auditor) *mcpmw.Handler {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return mcpmw.New(reg, authn, auditor, &mcpmw.Options{Observer: mcpotel.NewObserver()}) // global providers; or WithTracerProvider, WithMeterProvider, WithPropagator
}

// !-otel

// TestOneSpanPerRequest installs a global tracer provider that records,
// before any handler runs (the only test of this package changes the
// globals, and nothing reads them yet), then checks the span of a call:
// its name, its parent from params._meta, its outcome.
func TestOneSpanPerRequest(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))

	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "echo", Permission: "read",
		Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("hi"), nil
		}})
	authn := mcpmwtest.Tokens{"t": &mcpmwtest.User{Name: "ann", Permissions: []mcpmw.Permission{"read"}}}
	srv := mcpmwtest.NewServer(t, observed(&reg, authn, mcpmwtest.NewRecorder()))

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	_, err := srv.Client(mcpmwtest.Bearer("t")).Call(t.Context(), "tools/call", map[string]any{"name": "echo",
		"_meta": map[string]any{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"}})
	require.NoError(t, err)

	ended := spans.Ended()
	require.Len(t, ended, 1)
	s := ended[0]
	assert.Equal(t, "tools/call echo", s.Name())
	assert.Equal(t, traceID, s.SpanContext().TraceID().String(), "the parent comes from params._meta")
	var outcome string
	for _, a := range s.Attributes() {
		if a.Key == "mcpmw.outcome" {
			outcome = a.Value.AsString()
		}
	}
	assert.Equal(t, "ok", outcome)
}
