package mcpotel

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/echo"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// A task's run outlives the tools/call that created it, whose span ends
// when the call is answered with the task. The run gets a span of its
// own, the root of a trace of its own (a trace that lasts as long as a
// task would keep the creating call's trace open for minutes or an hour),
// linked to the creating call's span; its duration goes to an instrument
// of its own.

// TaskDurationName is the name of the histogram of task runs' durations,
// in seconds: from the start of a run until its end was stored.
const TaskDurationName = "mcpmw.task.duration"

// taskDurationBuckets are the bucket boundaries of TaskDurationName, in
// seconds: tasks are the calls that take too long to wait for, up to
// their TTL (an hour by default), so the buckets go on where those of
// mcp.server.operation.duration stop.
var taskDurationBuckets = []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600}

// newTaskDuration returns the histogram of task runs' durations, or, when
// the meter refuses to create it, reports why to otel.Handle and returns
// one that records nothing.
func newTaskDuration(meter metric.Meter) metric.Float64Histogram {
	h, err := meter.Float64Histogram(TaskDurationName, metric.WithUnit("s"),
		metric.WithDescription("Duration of the run of an MCP task, from its start until its end was stored."),
		metric.WithExplicitBucketBoundaries(taskDurationBuckets...))
	if err != nil {
		otel.Handle(err)
		return noop.Float64Histogram{}
	}
	return h
}

// taskRun is what StartTask leaves in the run's context for EndTask.
type taskRun struct {
	span  trace.Span
	ended atomic.Bool
}

var taskRunKey = &ctxKey{"task run"}

// StartTask starts the span of task t's run, at start: a new root, kind
// Internal, linked to the span of the tools/call that created the task
// (in created), named "execute_tool {tool}" as the GenAI conventions name
// a tool's execution. It returns ctx with that span, so the tool's own
// spans are its children, and with the creating call's baggage, so the
// tool sees what it would see run as a plain call.
func (o *Observer) StartTask(ctx, created context.Context, t *mcpmw.Task, start time.Time) context.Context {
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(start), trace.WithAttributes(taskStartAttributes(t.Tool, t.ID)...)}
	if link := trace.LinkFromContext(created); link.SpanContext.IsValid() {
		opts = append(opts, trace.WithLinks(link))
	}
	ctx = baggage.ContextWithBaggage(ctx, baggage.FromContext(created))
	ctx, span := o.tracer.Start(ctx, taskSpanName(t.Tool), opts...)
	return context.WithValue(ctx, taskRunKey, &taskRun{span: span})
}

// EndTask ends the span StartTask started for the run in ctx, at the
// moment the run ended (rec.Time: the record of a task's end is made
// then, and its Duration is how long the task ran), with the record's
// outcome; its status is Error when the outcome is error, as a request's
// is. It then records the run's duration. Without a run of its own in ctx
// (StartTask was not called), it records the whole span now, from
// rec.Time less rec.Duration, as a new root; a second EndTask of one run
// records nothing.
func (o *Observer) EndTask(ctx context.Context, rec mcpmw.CallRecord) {
	run, _ := ctx.Value(taskRunKey).(*taskRun)
	if run != nil && !run.ended.CompareAndSwap(false, true) {
		return
	}
	attrs := taskEndAttributes(rec)
	var span trace.Span
	if run != nil {
		span = run.span
		span.SetAttributes(attrs...)
	} else {
		ctx, span = o.tracer.Start(ctx, taskSpanName(rec.Tool), trace.WithNewRoot(),
			trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(rec.Time.Add(-rec.Duration)),
			trace.WithAttributes(append(taskStartAttributes(rec.Tool, rec.Target), attrs...)...))
	}
	if rec.Outcome == mcpmw.OutcomeError {
		span.SetStatus(codes.Error, rec.Summary)
	}
	span.End(trace.WithTimestamp(rec.Time))
	o.taskDuration.Record(ctx, rec.Duration.Seconds(), metric.WithAttributeSet(attribute.NewSet(attrs...)))
}

// taskSpanName is the name of a task run's span: the GenAI conventions'
// name of a tool's execution, the tool capped as every span-start value.
func taskSpanName(tool string) string {
	return "execute_tool " + echo.Cap(tool)
}

// taskStartAttributes are the attributes a task run's span starts with,
// for samplers: the operation, the tool and the task, capped (both come
// from the registry and the handler, but a TaskObserver's caller may be
// any code).
func taskStartAttributes(tool, id string) []attribute.KeyValue {
	return []attribute.KeyValue{semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(echo.Cap(tool)), TaskIDKey.String(echo.Cap(id))}
}

// taskEndAttributes are the attributes of a task run's end, on its span
// and its duration alike, all bounded: the tool (a registered one), the
// outcome, the status the task ended in, error.type and the JSON-RPC
// code. The task id, one per task, is on the span only.
func taskEndAttributes(rec mcpmw.CallRecord) []attribute.KeyValue {
	status := taskStatus(rec.Summary)
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(echo.Cap(rec.Tool)),
		OutcomeKey.String(string(rec.Outcome)))
	if status != "" {
		attrs = append(attrs, TaskStatusKey.String(string(status)))
	}
	if et := taskErrorType(rec, status); et != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(et))
	}
	if rec.ErrorCode != 0 {
		attrs = append(attrs, semconv.RPCResponseStatusCode(strconv.Itoa(rec.ErrorCode)))
	}
	return attrs
}

// taskStatus is the terminal status a task's end record names: its
// summary starts with "task " and the status ("task completed: ok",
// "task failed: …", "task cancelled by the client"), the one place the
// record says it; "" when it names none.
func taskStatus(summary string) mcpmw.TaskStatus {
	rest, ok := strings.CutPrefix(summary, "task ")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, ": "); i >= 0 {
		rest = rest[:i]
	}
	if s := mcpmw.TaskStatus(rest); s.Terminal() {
		return s
	}
	return ""
}

// taskErrorType is error.type for a task's end: the JSON-RPC error code
// of a failed run, cancelled for a cancelled one, tool_error for an
// isError result (as for a call); "" for a run that succeeded.
func taskErrorType(rec mcpmw.CallRecord, status mcpmw.TaskStatus) string {
	switch {
	case rec.ErrorCode != 0:
		return strconv.Itoa(rec.ErrorCode)
	case rec.Outcome != mcpmw.OutcomeError:
		return ""
	case status == mcpmw.TaskCancelled:
		return string(mcpmw.TaskCancelled)
	}
	return "tool_error"
}
