package mcpotel_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpmw/mcpmw"
	mcpotel "github.com/mcpmw/mcpmw/otel"
)

// attrs returns a span's attributes by key.
func attrs(kvs []attribute.KeyValue) map[attribute.Key]string {
	m := make(map[attribute.Key]string, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value.String()
	}
	return m
}

// Every request gets exactly one span, started at the record's Time and
// ended at Time+Duration, whatever path it took: dispatched or refused
// before dispatch, audited or not.
func TestOneSpanPerRequest(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		r       func() *http.Request
		limited bool
		status  int
		span    string
		outcome mcpmw.Outcome
		code    codes.Code
		want    map[attribute.Key]string // a subset of the span's attributes
		absent  []attribute.Key
	}{
		{name: "success", r: func() *http.Request { return call("echo", "") }, status: 200,
			span: "tools/call echo", outcome: mcpmw.OutcomeOK, code: codes.Unset,
			want: map[attribute.Key]string{
				"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool",
				"jsonrpc.request.id": "req-7", "mcp.protocol.version": "2026-07-28",
				"http.response.status_code": "200", "client.address": "192.0.2.1", "mcpmw.outcome": "ok"},
			absent: []attribute.Key{"error.type", "rpc.response.status_code", "gen_ai.tool.call.arguments"}},
		{name: "tool error", r: func() *http.Request { return call("fails", "") }, status: 200,
			span: "tools/call fails", outcome: mcpmw.OutcomeError, code: codes.Error,
			want:   map[attribute.Key]string{"error.type": "tool_error", "mcpmw.outcome": "error"},
			absent: []attribute.Key{"rpc.response.status_code"}},
		{name: "denied", r: func() *http.Request { return call("write_it", "") }, status: 403,
			span: "tools/call write_it", outcome: mcpmw.OutcomeDenied, code: codes.Unset,
			want: map[attribute.Key]string{"gen_ai.tool.name": "write_it", "error.type": "-32602",
				"rpc.response.status_code": "-32602", "http.response.status_code": "403", "mcpmw.outcome": "denied"}},
		{name: "unknown tool", r: func() *http.Request { return call("nope", "") }, status: 200,
			span: "tools/call", outcome: mcpmw.OutcomeError, code: codes.Error,
			want: map[attribute.Key]string{"gen_ai.tool.name": "nope", "rpc.response.status_code": "-32602"}},
		{name: "unauthenticated", r: func() *http.Request { return call("echo", "", "Authorization", "Bearer nobody") }, status: 401,
			span: "POST", outcome: mcpmw.OutcomeDenied, code: codes.Unset,
			want:   map[attribute.Key]string{"http.response.status_code": "401", "mcpmw.outcome": "denied"},
			absent: []attribute.Key{"mcp.method.name", "gen_ai.tool.name"}},
		{name: "parse error", r: func() *http.Request { return post(`{`, "MCP-Protocol-Version", mcpmw.LatestVersion) }, status: 400,
			span: "POST", outcome: mcpmw.OutcomeError, code: codes.Error,
			want: map[attribute.Key]string{"error.type": "-32700", "rpc.response.status_code": "-32700"}},
		{name: "unknown method", r: func() *http.Request { return modern("1", "orders/cancel", "", "") }, status: 404,
			span: "_OTHER", outcome: mcpmw.OutcomeError, code: codes.Error,
			want: map[attribute.Key]string{"mcp.method.name": "_OTHER", "rpc.method_original": "orders/cancel",
				"rpc.response.status_code": "-32601", "jsonrpc.request.id": "1"}},
		{name: "notification", r: func() *http.Request {
			return post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "MCP-Protocol-Version", mcpmw.Version20251125)
		}, status: 202, span: "notifications/initialized", outcome: mcpmw.OutcomeAccepted, code: codes.Unset,
			want:   map[attribute.Key]string{"mcp.method.name": "notifications/initialized", "mcpmw.outcome": "accepted"},
			absent: []attribute.Key{"jsonrpc.request.id", "error.type"}},
		{name: "legacy list", r: func() *http.Request {
			return post(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, "MCP-Protocol-Version", mcpmw.Version20251125)
		}, status: 200, span: "tools/list", outcome: mcpmw.OutcomeOK, code: codes.Unset,
			want: map[attribute.Key]string{"mcp.protocol.version": "2025-11-25", "jsonrpc.request.id": "3"}},
		{name: "panic", r: func() *http.Request { return call("panics", "") }, status: 500,
			span: "tools/call panics", outcome: mcpmw.OutcomeError, code: codes.Error,
			want: map[attribute.Key]string{"error.type": "-32603", "http.response.status_code": "500"}},
		{name: "rate limited", r: func() *http.Request { return call("echo", "") }, limited: true, status: 429,
			span: "POST", outcome: mcpmw.OutcomeDenied, code: codes.Unset,
			want: map[attribute.Key]string{"http.response.status_code": "429", "mcpmw.outcome": "denied"}},
		{name: "GET", r: func() *http.Request { return httptest.NewRequest(http.MethodGet, "/mcp", nil) }, status: 405,
			span: "GET", outcome: mcpmw.OutcomeDenied, // a routine probe, not a server error
			want: map[attribute.Key]string{"http.response.status_code": "405"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			x := newHarness(t)
			x.limited.Store(tt.limited)
			require.Equal(t, tt.status, x.serve(tt.r()))

			require.Len(t, x.spans.Started(), 1, "exactly one span")
			require.Len(t, x.spans.Ended(), 1, "and it was ended")
			recs := x.obs.records()
			require.Len(t, recs, 1)
			rec, s := recs[0], x.spans.Ended()[0]
			assert.Equal(t, tt.outcome, rec.Outcome)
			assert.Equal(t, tt.span, s.Name())
			assert.Equal(t, trace.SpanKindServer, s.SpanKind())
			assert.True(t, s.StartTime().Equal(rec.Time), "starts when the handler started")
			assert.True(t, s.EndTime().Equal(rec.Time.Add(rec.Duration)), "ends when the record was made")
			assert.Equal(t, tt.code, s.Status().Code)
			if tt.code == codes.Error {
				assert.Equal(t, rec.Summary, s.Status().Description)
			}
			got := attrs(s.Attributes())
			for k, v := range tt.want {
				assert.Equal(t, v, got[k], "attribute %s", k)
			}
			for _, k := range tt.absent {
				assert.NotContains(t, got, k)
			}
			_, points := x.collect(t)
			require.Len(t, points, 1)
			assert.EqualValues(t, 1, points[0].Count)
		})
	}
}

const (
	metaTrace   = "4bf92f3577b34da6a3ce929d0e0e4736"
	metaSpan    = "00f067aa0ba902b7"
	headerTrace = "0af7651916cd43dd8448eb211c80319c"
	headerSpan  = "b7ad6b7169203331"
)

func traceparent(traceID, spanID string) string { return "00-" + traceID + "-" + spanID + "-01" }

// The trace context in params._meta is the parent, with the HTTP headers'
// linked; the tool's own span is a child of the request's; the baggage in
// _meta reaches the tool.
func TestParentFromMeta(t *testing.T) {
	t.Parallel()
	x := newHarness(t)
	meta := `"traceparent":"` + traceparent(metaTrace, metaSpan) + `","tracestate":"rojo=00f067aa0ba902b7","baggage":"user=alice"`
	require.Equal(t, 200, x.serve(call("traced", meta, "traceparent", traceparent(headerTrace, headerSpan))))

	ended := x.spans.Ended()
	require.Len(t, ended, 2, "the tool's span and the request's")
	tool, req := ended[0], ended[1]
	assert.Equal(t, "tools/call traced", req.Name())
	assert.Equal(t, metaTrace, req.Parent().TraceID().String())
	assert.Equal(t, metaSpan, req.Parent().SpanID().String())
	assert.True(t, req.Parent().IsRemote())
	assert.Equal(t, "rojo=00f067aa0ba902b7", req.Parent().TraceState().String())
	require.Len(t, req.Links(), 1, "the ambient context is linked")
	assert.Equal(t, headerSpan, req.Links()[0].SpanContext.SpanID().String())

	assert.Equal(t, "query orders", tool.Name())
	assert.Equal(t, req.SpanContext().SpanID(), tool.Parent().SpanID(), "the tool's span is the request span's child")
	assert.Equal(t, metaTrace, tool.SpanContext().TraceID().String())
	x.seen.mu.Lock()
	defer x.seen.mu.Unlock()
	assert.Equal(t, tool.SpanContext(), x.seen.span)
	assert.Equal(t, "alice", x.seen.baggage)
}

// A request refused after it was parsed (here, by the permission gate)
// still takes its parent from params._meta.
func TestParentFromMetaWhenRefusedAfterParsing(t *testing.T) {
	t.Parallel()
	x := newHarness(t)
	meta := `"traceparent":"` + traceparent(metaTrace, metaSpan) + `"`
	require.Equal(t, 403, x.serve(call("write_it", meta, "traceparent", traceparent(headerTrace, headerSpan))))
	require.Len(t, x.spans.Ended(), 1)
	s := x.spans.Ended()[0]
	assert.Equal(t, metaTrace, s.Parent().TraceID().String())
	assert.Equal(t, metaSpan, s.Parent().SpanID().String())
	require.Len(t, s.Links(), 1, "the header context is linked")
}

// Without trace context in _meta, the parent comes from the HTTP headers,
// for dispatched and refused requests alike.
func TestParentFromHeaders(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		r    *http.Request
	}{
		{"dispatched", call("echo", "", "traceparent", traceparent(headerTrace, headerSpan))},
		{"refused", call("echo", "", "traceparent", traceparent(headerTrace, headerSpan), "Authorization", "Bearer nobody")},
		{"legacy", post(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, "MCP-Protocol-Version", mcpmw.Version20251125,
			"traceparent", traceparent(headerTrace, headerSpan))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			x := newHarness(t)
			x.serve(tt.r)
			require.Len(t, x.spans.Ended(), 1)
			s := x.spans.Ended()[0]
			assert.Equal(t, headerTrace, s.Parent().TraceID().String())
			assert.Equal(t, headerSpan, s.Parent().SpanID().String())
			assert.Empty(t, s.Links())
		})
	}
}

// A span already in the HTTP request's context (an HTTP middleware's, such
// as otelhttp's) is the parent, and the span the Observer started is ended
// by that request's Done only.
func TestParentFromAmbientSpan(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		r    *http.Request
	}{
		{"dispatched", call("echo", "")},
		{"refused", call("echo", "", "Authorization", "Bearer nobody")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			x := newHarness(t)
			ctx, outer := x.tp.Tracer("http").Start(context.Background(), "HTTP POST")
			x.serve(tt.r.WithContext(ctx))
			outer.End()
			ended := x.spans.Ended()
			require.Len(t, ended, 2)
			assert.Equal(t, outer.SpanContext().SpanID(), ended[0].Parent().SpanID())
			assert.False(t, ended[0].Parent().IsRemote())
		})
	}
}

// A Handler called from a tool with the tool's context (an in-process
// hop) gets its own span, a child of the outer request's, and its Done
// leaves the outer span alone.
func TestNestedHandler(t *testing.T) {
	t.Parallel()
	x := newHarness(t)
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "forward", Description: "Asks the inner endpoint.", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			w := httptest.NewRecorder()
			x.h.ServeHTTP(w, call("echo", "", "Authorization", "Bearer nobody").WithContext(ctx))
			return mcpmw.TextResult(http.StatusText(w.Code)), nil
		}})
	outer := mcpmw.New(&reg, authn, mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}), &mcpmw.Options{Observer: x.obs})
	w := httptest.NewRecorder()
	outer.ServeHTTP(w, call("forward", ""))
	require.Equal(t, 200, w.Code)

	require.Len(t, x.spans.Started(), 2)
	ended := x.spans.Ended()
	require.Len(t, ended, 2)
	inner, out := ended[0], ended[1]
	assert.Equal(t, "POST", inner.Name())
	assert.Equal(t, "tools/call forward", out.Name())
	assert.Equal(t, out.SpanContext().SpanID(), inner.Parent().SpanID())
	recs := x.obs.records()
	require.Len(t, recs, 2)
	assert.True(t, out.EndTime().Equal(recs[1].Time.Add(recs[1].Duration)), "the outer span ends at its own record")
}

// NewObserver without options records to the global providers, which
// record nothing until the application installs its own.
func TestNewObserverDefaults(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(tools(&toolSeen{})...)
	h := mcpmw.New(&reg, authn, mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}), &mcpmw.Options{Observer: mcpotel.NewObserver()})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, call("echo", "", "traceparent", traceparent(headerTrace, headerSpan)))
	assert.Equal(t, 200, w.Code)
}

// startSampler records what a span starts with: what a sampler sees.
type startSampler struct {
	mu     sync.Mutex
	starts []sdktrace.SamplingParameters
}

func (s *startSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.starts = append(s.starts, p)
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
}

func (s *startSampler) Description() string { return "records span starts" }

// newSampledProvider returns a TracerProvider sampling with a
// startSampler and recording its spans, shut down when the test ends.
func newSampledProvider(t *testing.T) (*startSampler, *tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	t.Helper()
	sampler, spans := &startSampler{}, tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return sampler, spans, tp
}

// The attributes (and the name) a span starts with carry client values
// capped, as Done's do: a tools/call sent as a notification reaches Serve
// without the gate having found its tool, with whatever name the client
// chose. Every string a sampler sees is bounded, and valid UTF-8.
func TestSpanStartsWithCappedValues(t *testing.T) {
	t.Parallel()
	sampler, spans, tp := newSampledProvider(t)
	var reg mcpmw.Registry
	reg.AddTools(tools(&toolSeen{})...)
	h := mcpmw.New(&reg, authn, mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}), &mcpmw.Options{
		Observer: mcpotel.NewObserver(mcpotel.WithTracerProvider(tp)),
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		ClientIP: func(*http.Request) string { return strings.Repeat("9", 300) },
	})
	long := strings.Repeat("é", 300)
	for _, r := range []*http.Request{
		post(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"`+long+`"}}`, "MCP-Protocol-Version", mcpmw.Version20251125),
		post(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"\ud800`+long+`"}}`, "MCP-Protocol-Version", mcpmw.Version20251125),
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, http.StatusAccepted, w.Code)
	}
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	require.Len(t, sampler.starts, 2)
	capped := strings.Repeat("é", 100) + "…"
	for i, p := range sampler.starts {
		got := attrs(p.Attributes)
		if i == 0 {
			assert.Equal(t, capped, got["gen_ai.tool.name"])
			assert.Equal(t, "tools/call "+capped, p.Name)
		}
		for _, kv := range p.Attributes {
			v := kv.Value.String()
			assert.LessOrEqual(t, utf8.RuneCountInString(v), 101, "%s", kv.Key)
			assert.True(t, utf8.ValidString(v), "%s", kv.Key)
		}
		assert.LessOrEqual(t, utf8.RuneCountInString(p.Name), len("tools/call ")+101)
		assert.True(t, utf8.ValidString(p.Name))
	}
	for _, s := range spans.Ended() {
		got := attrs(s.Attributes())
		assert.Equal(t, strings.Repeat("9", 100)+"…", got["client.address"], "Done caps what ClientIP gives")
		for _, kv := range s.Attributes() {
			assert.LessOrEqual(t, utf8.RuneCountInString(kv.Value.String()), 101, "%s", kv.Key)
		}
	}
	assert.Len(t, spans.Ended(), 2)
}
