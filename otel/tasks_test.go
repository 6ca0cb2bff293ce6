package mcpotel_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpmw/mcpmw"
	mcpotel "github.com/mcpmw/mcpmw/otel"
)

// taskTools are tools that become tasks (TaskOptional): report succeeds
// (starting a span of its own and noting the baggage it sees), broken
// returns an isError result, crash a JSON-RPC error, endless runs until
// it is cancelled (closing started first).
func taskTools(seen *toolSeen, started chan<- struct{}) []mcpmw.Tool {
	return []mcpmw.Tool{
		{Name: "report", Description: "Builds a report.", Permission: "read", Task: mcpmw.TaskOptional, Call: traced(seen)},
		{Name: "broken", Description: "Reports a tool error.", Permission: "read", Task: mcpmw.TaskOptional,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ErrorResult("the report source is down"), nil
			}},
		{Name: "crash", Description: "Ends in a JSON-RPC error.", Permission: "read", Task: mcpmw.TaskOptional,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{}, &mcpmw.Error{Code: -32042, Message: "the job hit a wall"}
			}},
		{Name: "endless", Description: "Runs until cancelled.", Permission: "read", Task: mcpmw.TaskOptional,
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				close(started)
				<-ctx.Done()
				return mcpmw.ToolResult{}, ctx.Err()
			}},
	}
}

// newTaskHarness is a harness serving taskTools; started is closed when
// endless starts.
func newTaskHarness(t *testing.T) (*harness, <-chan struct{}) {
	t.Helper()
	started := make(chan struct{})
	return newHarnessOf(t, func(x *harness, reg *mcpmw.Registry) { reg.AddTools(taskTools(&x.seen, started)...) }), started
}

// answer sends r, requires 200 and returns the JSON-RPC result, from a
// JSON answer or the last event of an event stream.
func (x *harness) answer(t *testing.T, r *http.Request) map[string]any {
	t.Helper()
	w := httptest.NewRecorder()
	x.h.ServeHTTP(w, r)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	body := w.Body.Bytes()
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		i := bytes.LastIndex(body, []byte("data: "))
		require.GreaterOrEqual(t, i, 0, "an event in %s", body)
		body, _, _ = bytes.Cut(body[i+len("data: "):], []byte("\n"))
	}
	var msg struct {
		Result map[string]any  `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &msg), "%s", body)
	require.Nil(t, msg.Error, "%s", body)
	return msg.Result
}

// createTask calls tool as a task, by the owner, with extraMeta in
// params._meta, and returns the task's id.
func (x *harness) createTask(t *testing.T, tool, extraMeta string) string {
	t.Helper()
	res := x.answer(t, modernWith(tasksCaps, `"call-1"`, "tools/call", `"name":"`+tool+`","arguments":{}`, extraMeta,
		"Mcp-Name", tool, "Authorization", "Bearer owner"))
	require.Equal(t, "task", res["resultType"], "%v", res)
	id, _ := res["taskId"].(string)
	require.NotEmpty(t, id)
	return id
}

// taskRequest builds the owner's tasks/* request about task id.
func taskRequest(method, id string) *http.Request {
	return modernWith(tasksCaps, `"`+method+`"`, method, `"taskId":"`+id+`"`, "", "Mcp-Name", id, "Authorization", "Bearer owner")
}

// waitTerminal polls tasks/get until the task is terminal, for at most
// patience, and returns its status and how many tasks/get it sent.
func (x *harness) waitTerminal(t *testing.T, id string) (mcpmw.TaskStatus, int) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for gets := 1; ; gets++ {
		status := mcpmw.TaskStatus(x.answer(t, taskRequest("tasks/get", id))["status"].(string))
		if status.Terminal() {
			return status, gets
		}
		require.True(t, time.Now().Before(deadline), "task %s still %s after %v", id, status, patience)
		time.Sleep(5 * time.Millisecond)
	}
}

// spansNamed returns the ended spans named name.
func spansNamed(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// A task's run gets one span: a root of its own, kind Internal, linked to
// the span of the tools/call that created the task, with the task's id
// and how it ended; the creating call, each tasks/get and a tasks/cancel
// are spans of their own, as every request. The run's duration goes to
// mcpmw.task.duration, not to the requests' histogram.
func TestTaskRunSpan(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		tool, status string
		cancel       bool
		code         codes.Code
		want         map[attribute.Key]string // a subset of the run span's attributes (and all of the metric's, without the task id)
		absent       []attribute.Key
	}{
		{tool: "report", status: "completed", code: codes.Unset,
			want:   map[attribute.Key]string{"mcpmw.outcome": "ok", "mcpmw.task.status": "completed"},
			absent: []attribute.Key{"error.type", "rpc.response.status_code"}},
		{tool: "broken", status: "completed", code: codes.Error,
			want:   map[attribute.Key]string{"mcpmw.outcome": "error", "mcpmw.task.status": "completed", "error.type": "tool_error"},
			absent: []attribute.Key{"rpc.response.status_code"}},
		{tool: "crash", status: "failed", code: codes.Error,
			want: map[attribute.Key]string{"mcpmw.outcome": "error", "mcpmw.task.status": "failed",
				"error.type": "-32042", "rpc.response.status_code": "-32042"}},
		{tool: "endless", status: "cancelled", cancel: true, code: codes.Error,
			want:   map[attribute.Key]string{"mcpmw.outcome": "error", "mcpmw.task.status": "cancelled", "error.type": "cancelled"},
			absent: []attribute.Key{"rpc.response.status_code"}},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			t.Parallel()
			x, started := newTaskHarness(t)
			meta := `"traceparent":"` + traceparent(metaTrace, metaSpan) + `"`
			id := x.createTask(t, tt.tool, meta)
			requests := 1
			if tt.cancel {
				select {
				case <-started:
				case <-time.After(patience):
					t.Fatal("the task's tool never started")
				}
				assert.Equal(t, "complete", x.answer(t, taskRequest("tasks/cancel", id))["resultType"])
				requests++
			}
			status, gets := x.waitTerminal(t, id)
			requests += gets
			assert.EqualValues(t, tt.status, status)
			x.h.Close() // waits for the run's end to be observed

			ended := x.spans.Ended()
			require.Len(t, x.spans.Started(), len(ended), "every span started was ended")
			creating := spansNamed(ended, "tools/call "+tt.tool)
			require.Len(t, creating, 1)
			c := creating[0]
			assert.Equal(t, trace.SpanKindServer, c.SpanKind())
			assert.Equal(t, metaSpan, c.Parent().SpanID().String(), "the creating call's parent is its client's")
			assert.Equal(t, codes.Unset, c.Status().Code)
			assert.Equal(t, id, attrs(c.Attributes())["mcpmw.task.id"])
			assert.Equal(t, "ok", attrs(c.Attributes())["mcpmw.outcome"])

			runs := spansNamed(ended, "execute_tool "+tt.tool)
			require.Len(t, runs, 1, "one span per run")
			run := runs[0]
			assert.Equal(t, trace.SpanKindInternal, run.SpanKind())
			assert.False(t, run.Parent().IsValid(), "the run's span is a root")
			assert.NotEqual(t, c.SpanContext().TraceID(), run.SpanContext().TraceID(), "in a trace of its own")
			require.Len(t, run.Links(), 1)
			assert.Equal(t, c.SpanContext(), run.Links()[0].SpanContext, "linked to the creating call's span")
			got := attrs(run.Attributes())
			assert.Equal(t, id, got["mcpmw.task.id"])
			assert.Equal(t, tt.tool, got["gen_ai.tool.name"])
			assert.Equal(t, "execute_tool", got["gen_ai.operation.name"])
			for k, v := range tt.want {
				assert.Equal(t, v, got[k], "attribute %s", k)
			}
			for _, k := range tt.absent {
				assert.NotContains(t, got, k)
			}
			ends := x.obs.taskEnds()
			require.Len(t, ends, 1, "EndTask once")
			rec := ends[0]
			assert.Equal(t, id, rec.Target)
			assert.True(t, run.StartTime().Equal(rec.Time.Add(-rec.Duration)), "starts when the run started")
			assert.True(t, run.EndTime().Equal(rec.Time), "ends when the run ended")
			assert.Equal(t, tt.code, run.Status().Code)
			if tt.code == codes.Error {
				assert.Equal(t, rec.Summary, run.Status().Description)
			}

			getSpans := spansNamed(ended, "tasks/get")
			assert.Len(t, getSpans, gets, "each tasks/get is a span of its own")
			for _, s := range append(getSpans, spansNamed(ended, "tasks/cancel")...) {
				assert.Equal(t, trace.SpanKindServer, s.SpanKind())
				assert.Equal(t, id, attrs(s.Attributes())["mcpmw.task.id"], s.Name())
				assert.NotEqual(t, run.SpanContext().TraceID(), s.SpanContext().TraceID(), "%s is not in the run's trace", s.Name())
			}
			if tt.cancel {
				assert.Len(t, spansNamed(ended, "tasks/cancel"), 1)
			}
			wantSpans := requests + 1 // and the run's
			if tt.tool == "report" {
				wantSpans++ // and the tool's own
			}
			assert.Len(t, ended, wantSpans)

			_, points := x.collectOf(t, mcpotel.TaskDurationName)
			require.Len(t, points, 1)
			assert.EqualValues(t, 1, points[0].Count)
			assert.InDelta(t, rec.Duration.Seconds(), points[0].Sum, 1e-9)
			wantMetric := map[attribute.Key]string{"gen_ai.tool.name": tt.tool, "gen_ai.operation.name": "execute_tool"}
			for k, v := range tt.want {
				wantMetric[k] = v
			}
			assert.Equal(t, wantMetric, attrs(points[0].Attributes.ToSlice()), "bounded attributes: no task id")
			_, reqPoints := x.collect(t)
			var total uint64
			for _, p := range reqPoints {
				total += p.Count
			}
			assert.EqualValues(t, requests, total, "the requests' histogram counts requests, not runs")
		})
	}
}

// The run's context carries its span, so the tool's own spans are its
// children, and the creating call's baggage, which the tool would see run
// as a plain call.
func TestTaskRunContext(t *testing.T) {
	t.Parallel()
	x, _ := newTaskHarness(t)
	meta := `"traceparent":"` + traceparent(metaTrace, metaSpan) + `","baggage":"user=alice"`
	id := x.createTask(t, "report", meta)
	x.waitTerminal(t, id)
	x.h.Close()

	runs := spansNamed(x.spans.Ended(), "execute_tool report")
	tool := spansNamed(x.spans.Ended(), "query orders")
	require.Len(t, runs, 1)
	require.Len(t, tool, 1)
	assert.Equal(t, runs[0].SpanContext().SpanID(), tool[0].Parent().SpanID(), "the tool's span is the run span's child")
	assert.Equal(t, runs[0].SpanContext().TraceID(), tool[0].SpanContext().TraceID())
	x.seen.mu.Lock()
	defer x.seen.mu.Unlock()
	assert.Equal(t, tool[0].SpanContext(), x.seen.span)
	assert.Equal(t, "alice", x.seen.baggage)
}

// A call of a task tool that does not become a task (the client did not
// declare the extension) is a plain call: no task id, no run.
func TestTaskToolCalledPlainly(t *testing.T) {
	t.Parallel()
	x, _ := newTaskHarness(t)
	res := x.answer(t, modern(`"call-1"`, "tools/call", `"name":"report","arguments":{}`, "", "Mcp-Name", "report", "Authorization", "Bearer owner"))
	assert.NotEqual(t, "task", res["resultType"])
	x.h.Close()
	require.Len(t, spansNamed(x.spans.Ended(), "tools/call report"), 1)
	assert.NotContains(t, attrs(spansNamed(x.spans.Ended(), "tools/call report")[0].Attributes()), mcpotel.TaskIDKey)
	assert.Empty(t, spansNamed(x.spans.Ended(), "execute_tool report"))
	assert.Empty(t, x.obs.taskEnds())
}

// The tasks extension's methods are MCP's own: a request refused before
// dispatch (here, by its Mcp-Name header) is recorded under its name, not
// _OTHER, on its span and in the histogram.
func TestTaskMethodNamedWhenRefused(t *testing.T) {
	t.Parallel()
	x, _ := newTaskHarness(t)
	r := modernWith(tasksCaps, "1", "tasks/get", `"taskId":"abc"`, "", "Mcp-Name", "xyz", "Authorization", "Bearer owner")
	require.Equal(t, http.StatusBadRequest, x.serve(r))
	require.Len(t, x.spans.Ended(), 1)
	s := x.spans.Ended()[0]
	assert.Equal(t, "tasks/get", s.Name())
	assert.Equal(t, "tasks/get", attrs(s.Attributes())["mcp.method.name"])
	_, points := x.collect(t)
	require.Len(t, points, 1)
	assert.Equal(t, "tasks/get", attrs(points[0].Attributes.ToSlice())["mcp.method.name"])
}

// The methods MCP defines for tasks that this server does not serve
// (2025-11-25's, in its core) and the notifications it only sends keep
// their names too: a bounded set, like the semantic conventions' list.
func TestMCPMethodsNotServedKeepTheirNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"tasks/list", "tasks/result", "notifications/tasks/status", "notifications/subscriptions/acknowledged"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			x := newHarness(t)
			require.Equal(t, http.StatusNotFound, x.serve(modern("1", name, "", "")))
			require.Len(t, x.spans.Ended(), 1)
			assert.Equal(t, name, x.spans.Ended()[0].Name())
			assert.NotContains(t, attrs(x.spans.Ended()[0].Attributes()), attribute.Key("rpc.method_original"))
		})
	}
}

// A tasks/* span starts with the task id the client sent, capped, as a
// tool name is.
func TestTaskRequestSpanStartsWithCappedID(t *testing.T) {
	t.Parallel()
	sampler, spans, tp := newSampledProvider(t)
	var reg mcpmw.Registry
	reg.AddTools(taskTools(&toolSeen{}, make(chan struct{}))...)
	h := mcpmw.New(&reg, authn, mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}), &mcpmw.Options{
		Observer: mcpotel.NewObserver(mcpotel.WithTracerProvider(tp)),
	})
	t.Cleanup(h.Close)
	long := strings.Repeat("é", 300)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modernWith(tasksCaps, "1", "tasks/get", `"taskId":"`+long+`"`, "", "Mcp-Name", "=?base64?"+base64.StdEncoding.EncodeToString([]byte(long))+"?=", "Authorization", "Bearer owner"))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String()) // not found: a -32602 for a task the caller may not know
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	require.Len(t, sampler.starts, 1)
	capped := strings.Repeat("é", 100) + "…"
	assert.Equal(t, capped, attrs(sampler.starts[0].Attributes)["mcpmw.task.id"])
	require.Len(t, spans.Ended(), 1)
	assert.Equal(t, capped, attrs(spans.Ended()[0].Attributes())["mcpmw.task.id"], "the record's Target, capped by the handler")
}

// Only a tasks/* request's taskId names a task: another method's params
// may hold one, and a tasks/get may lack it.
func TestTaskIDOnlyFromTaskMethods(t *testing.T) {
	t.Parallel()
	sampler, spans, tp := newSampledProvider(t)
	var reg mcpmw.Registry
	reg.AddTools(taskTools(&toolSeen{}, make(chan struct{}))...)
	h := mcpmw.New(&reg, authn, mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}), &mcpmw.Options{
		Observer: mcpotel.NewObserver(mcpotel.WithTracerProvider(tp)),
	})
	t.Cleanup(h.Close)
	for _, r := range []*http.Request{
		modernWith(tasksCaps, "1", "tools/list", `"taskId":"abc"`, "", "Authorization", "Bearer owner"),
		modernWith(tasksCaps, "2", "tasks/get", `"id":"abc"`, "", "Authorization", "Bearer owner"),
	} {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	require.Len(t, sampler.starts, 2)
	require.Len(t, spans.Ended(), 2)
	for i, p := range sampler.starts {
		assert.NotContains(t, attrs(p.Attributes), mcpotel.TaskIDKey, p.Name)
		assert.NotContains(t, attrs(spans.Ended()[i].Attributes()), mcpotel.TaskIDKey, p.Name)
	}
}

// The values a run's span starts with are capped as a request's are,
// whoever calls StartTask; EndTask without StartTask records the whole
// span, once more capped; a second EndTask of a run records nothing.
func TestTaskObserverCalledDirectly(t *testing.T) {
	t.Parallel()
	sampler, spans, tp := newSampledProvider(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	obs := mcpotel.NewObserver(mcpotel.WithTracerProvider(tp), mcpotel.WithMeterProvider(mp))
	long := strings.Repeat("é", 300)
	capped := strings.Repeat("é", 100) + "…"
	start := time.Now()
	ctx := obs.StartTask(context.Background(), context.Background(), &mcpmw.Task{ID: long, Tool: long}, start)
	rec := mcpmw.CallRecord{Time: start.Add(time.Second), Duration: time.Second, Method: "tools/call", Target: long, Tool: long,
		Outcome: mcpmw.OutcomeOK, Summary: "task completed: ok"}
	obs.EndTask(ctx, rec)
	obs.EndTask(ctx, rec)
	obs.EndTask(context.Background(), mcpmw.CallRecord{Time: start.Add(2 * time.Second), Duration: 2 * time.Second, Target: long, Tool: long,
		Outcome: mcpmw.OutcomeError, ErrorCode: mcpmw.CodeInternalError, Summary: "task failed: stopped"})

	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	require.Len(t, sampler.starts, 2, "a span for the run, and one for the end without a start")
	for _, p := range sampler.starts {
		assert.Equal(t, "execute_tool "+capped, p.Name)
		assert.Equal(t, capped, attrs(p.Attributes)["gen_ai.tool.name"])
		assert.Equal(t, capped, attrs(p.Attributes)["mcpmw.task.id"])
		for _, kv := range p.Attributes {
			assert.LessOrEqual(t, utf8.RuneCountInString(kv.Value.String()), 101, "%s", kv.Key)
		}
	}
	ended := spans.Ended()
	require.Len(t, ended, 2, "one span per run, ended once")
	assert.Empty(t, ended[0].Links(), "no creating span, no link")
	assert.Equal(t, codes.Unset, ended[0].Status().Code)
	assert.True(t, ended[0].EndTime().Equal(start.Add(time.Second)))
	whole := ended[1]
	assert.False(t, whole.Parent().IsValid())
	assert.Equal(t, trace.SpanKindInternal, whole.SpanKind())
	assert.True(t, whole.StartTime().Equal(start))
	assert.True(t, whole.EndTime().Equal(start.Add(2*time.Second)))
	assert.Equal(t, codes.Error, whole.Status().Code)
	assert.Equal(t, "failed", attrs(whole.Attributes())["mcpmw.task.status"])
	assert.Equal(t, "-32603", attrs(whole.Attributes())["error.type"])

	x := &harness{metrics: reader}
	_, points := x.collectOf(t, mcpotel.TaskDurationName)
	var total uint64
	for _, p := range points {
		total += p.Count
		assert.Equal(t, []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600}, p.Bounds)
	}
	assert.EqualValues(t, 2, total, "one measurement per end")
}

// A summary that names no terminal status gives no mcpmw.task.status, and
// error.type falls back to tool_error.
func TestTaskStatusFromSummary(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ summary, status, errType string }{
		{"task completed: ok", "completed", ""},
		{"task completed", "completed", ""},
		{"task failed: the job hit a wall", "failed", "-32042"},
		{"task cancelled by the client", "cancelled", "cancelled"},
		{"task working", "", "tool_error"},
		{"tasks completed", "", "tool_error"},
		{"completed", "", "tool_error"},
		{"", "", "tool_error"},
	} {
		t.Run(tt.summary, func(t *testing.T) {
			t.Parallel()
			spans := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
			t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			obs := mcpotel.NewObserver(mcpotel.WithTracerProvider(tp))
			rec := mcpmw.CallRecord{Time: time.Now(), Tool: "report", Outcome: mcpmw.OutcomeError, Summary: tt.summary}
			if tt.status == "completed" {
				rec.Outcome = mcpmw.OutcomeOK
			}
			if tt.status == "failed" {
				rec.ErrorCode = -32042
			}
			obs.EndTask(obs.StartTask(context.Background(), context.Background(), &mcpmw.Task{ID: "t1", Tool: "report"}, rec.Time), rec)
			require.Len(t, spans.Ended(), 1)
			got := attrs(spans.Ended()[0].Attributes())
			if tt.status == "" {
				assert.NotContains(t, got, mcpotel.TaskStatusKey)
			} else {
				assert.Equal(t, tt.status, got[mcpotel.TaskStatusKey])
			}
			if tt.errType == "" {
				assert.NotContains(t, got, attribute.Key("error.type"))
			} else {
				assert.Equal(t, tt.errType, got["error.type"])
			}
		})
	}
}
