package mcpotel_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw"
	mcpotel "github.com/mcpmw/mcpmw/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// patience bounds every wait of these tests for something that must
// happen: so generous that a busy machine never runs out of it, since it
// only turns a hang into a failure.
const patience = 30 * time.Second

// perms is a Caller holding a set of permissions.
type perms []mcpmw.Permission

func (p perms) Can(x mcpmw.Permission) bool { return slices.Contains(p, x) }

// owner is a caller with an identity (CallerID), as a task's creator
// must have.
type owner struct{ perms }

func (owner) CallerID() string { return "owner" }

// authn admits "Bearer reader" with the read permission, and "Bearer
// owner" with the read permission and an identity.
var authn = mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
	switch r.Header.Get("Authorization") {
	case "Bearer reader":
		return perms{"read"}, nil
	case "Bearer owner":
		return owner{perms{"read"}}, nil
	}
	return nil, errors.New("no such token")
})

// toolSeen is what the "traced" tool saw: the span it started and the
// baggage its context carried.
type toolSeen struct {
	mu      sync.Mutex
	span    trace.SpanContext
	baggage string
}

func tools(seen *toolSeen) []mcpmw.Tool {
	text := func(s string) func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult(s), nil
		}
	}
	return []mcpmw.Tool{
		{Name: "echo", Description: "Echoes.", Permission: "read",
			Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				msg := args.String("message")
				return mcpmw.TextResult(msg), args.Err()
			}},
		{Name: "write_it", Description: "Needs write.", Permission: "write", Call: text("written")},
		{Name: "fails", Description: "A tool error.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				res := mcpmw.TextResult("the order does not exist")
				res.IsError = true
				return res, nil
			}},
		{Name: "panics", Description: "Panics.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) { panic("tool exploded") }},
		{Name: "traced", Description: "Starts its own span.", Permission: "read", Call: traced(seen)},
	}
}

// traced is the Call of a tool that starts a span of its own, "query
// orders", from its context, and notes that span and the baggage it sees.
func traced(seen *toolSeen) func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
	return func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
		_, span := trace.SpanFromContext(ctx).TracerProvider().Tracer("tool").Start(ctx, "query orders")
		defer span.End()
		seen.mu.Lock()
		defer seen.mu.Unlock()
		seen.span = span.SpanContext()
		seen.baggage = baggage.FromContext(ctx).Member("user").Value()
		return mcpmw.TextResult("ok"), nil
	}
}

// harness is a Handler observed by an Observer that records to memory.
type harness struct {
	h       *mcpmw.Handler
	tp      *sdktrace.TracerProvider
	spans   *tracetest.SpanRecorder
	metrics *sdkmetric.ManualReader
	obs     *recordingObserver
	limited atomic.Bool
	seen    toolSeen
}

// recordingObserver keeps the records Done and EndTask are given, then
// passes them on.
type recordingObserver struct {
	*mcpotel.Observer
	mu   sync.Mutex
	recs []mcpmw.CallRecord
	ends []mcpmw.CallRecord
}

func (o *recordingObserver) EndTask(ctx context.Context, rec mcpmw.CallRecord) {
	o.mu.Lock()
	o.ends = append(o.ends, rec)
	o.mu.Unlock()
	o.Observer.EndTask(ctx, rec)
}

// taskEnds returns the records EndTask was given.
func (o *recordingObserver) taskEnds() []mcpmw.CallRecord {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.ends)
}

func (o *recordingObserver) Done(ctx context.Context, r *http.Request, req *mcpmw.Request, rec mcpmw.CallRecord) {
	o.mu.Lock()
	o.recs = append(o.recs, rec)
	o.mu.Unlock()
	o.Observer.Done(ctx, r, req, rec)
}

func (o *recordingObserver) records() []mcpmw.CallRecord {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.recs)
}

var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessOf(t, func(x *harness, reg *mcpmw.Registry) { reg.AddTools(tools(&x.seen)...) })
}

// newHarnessOf is newHarness serving what fill adds to the registry.
func newHarnessOf(t *testing.T, fill func(x *harness, reg *mcpmw.Registry)) *harness {
	t.Helper()
	x := &harness{spans: tracetest.NewSpanRecorder(), metrics: sdkmetric.NewManualReader()}
	x.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(x.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(x.metrics))
	t.Cleanup(func() {
		_ = x.tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	x.obs = &recordingObserver{Observer: mcpotel.NewObserver(
		mcpotel.WithTracerProvider(x.tp), mcpotel.WithMeterProvider(mp), mcpotel.WithPropagator(propagator))}
	var reg mcpmw.Registry
	fill(x, &reg)
	x.h = mcpmw.New(&reg, authn, mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}), &mcpmw.Options{
		Observer: x.obs,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		RateLimit: mcpmw.RateLimiterFunc(func(http.ResponseWriter, *http.Request, string) bool {
			return x.limited.Load()
		}),
	})
	t.Cleanup(x.h.Close) // no task outlives the test
	return x
}

// serve sends r and returns the status.
func (x *harness) serve(r *http.Request) int {
	w := httptest.NewRecorder()
	x.h.ServeHTTP(w, r)
	return w.Code
}

// collect returns the data points of mcp.server.operation.duration.
func (x *harness) collect(t *testing.T) (metricdata.Metrics, []metricdata.HistogramDataPoint[float64]) {
	t.Helper()
	return x.collectOf(t, "mcp.server.operation.duration")
}

// collectOf returns the data points of the histogram name.
func (x *harness) collectOf(t *testing.T, name string) (metricdata.Metrics, []metricdata.HistogramDataPoint[float64]) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := x.metrics.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, m.Data.(metricdata.Histogram[float64]).DataPoints
			}
		}
	}
	t.Fatal("no " + name)
	return metricdata.Metrics{}, nil
}

// noCaps and tasksCaps are client capabilities: none, and the tasks
// extension.
const (
	noCaps    = `{}`
	tasksCaps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
)

// post builds a POST with the reader's token and hdr as name, value pairs
// (an empty value deletes the header).
func post(body string, hdr ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer reader")
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			r.Header.Del(hdr[i])
			continue
		}
		r.Header.Set(hdr[i], hdr[i+1])
	}
	return r
}

// modern builds a 2026-07-28 request from a client declaring no
// capabilities; extraMeta is added to params._meta.
func modern(id, method, params, extraMeta string, hdr ...string) *http.Request {
	return modernWith(noCaps, id, method, params, extraMeta, hdr...)
}

// modernWith is modern from a client declaring the capabilities caps.
func modernWith(caps, id, method, params, extraMeta string, hdr ...string) *http.Request {
	if params != "" {
		params += ","
	}
	if extraMeta != "" {
		extraMeta = "," + extraMeta
	}
	meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params + `"_meta":{` + meta + extraMeta + `}}}`
	h := []string{"MCP-Protocol-Version", mcpmw.LatestVersion, "Mcp-Method", method}
	return post(body, append(h, hdr...)...)
}

// call builds a 2026-07-28 tools/call of tool.
func call(tool, extraMeta string, hdr ...string) *http.Request {
	return modern(`"req-7"`, "tools/call", `"name":"`+tool+`","arguments":{"message":"hi"}`, extraMeta,
		append([]string{"Mcp-Name", tool}, hdr...)...)
}
