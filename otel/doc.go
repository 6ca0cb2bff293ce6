// Package mcpotel traces and measures the requests an mcpmw.Handler
// answers, and the runs of its tasks, with OpenTelemetry. It is a module of its own
// (github.com/mcpmw/mcpmw/otel), so that the core's go.mod never requires
// OpenTelemetry; its package name is mcpotel rather than otel so that it
// can be imported next to go.opentelemetry.io/otel without renaming either.
//
//	h := mcpmw.New(&reg, authn, auditor, &mcpmw.Options{
//		Observer: mcpotel.NewObserver(), // the global providers and propagator
//	})
//
// # Spans
//
// Every request gets exactly one span of kind Server, refused ones
// included (the 429 and 405 the Auditor never sees), from the moment the
// handler started on it until its answer was decided. A request that is
// dispatched to its method gets its span before the middleware runs, and
// the method's context carries it: spans a tool starts from its ctx are its
// children. A request refused before dispatch (authentication, a malformed
// body, a denied tool…) gets its whole span when its answer is decided.
//
// The parent is, in this order: the W3C trace context in the request's
// params._meta (traceparent, tracestate, baggage; SEP-414, the MCP
// semantic conventions' choice), linking the ambient context when there is
// one; else the span already in the HTTP request's context (an HTTP
// middleware's, such as otelhttp); else the HTTP request's headers. All are
// read through the configured TextMapPropagator: with the default global
// one, which propagates nothing, install one, for example
//
//	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(
//		propagation.TraceContext{}, propagation.Baggage{}))
//
// Spans follow the OpenTelemetry semantic conventions for MCP (named
// "tools/call echo", "tools/list"…, with mcp.method.name,
// mcp.protocol.version, gen_ai.tool.name, jsonrpc.request.id,
// rpc.response.status_code, error.type, client.address and
// http.response.status_code), plus mcpmw.outcome: ok, error, denied or
// accepted, and mcpmw.task.id on the spans about a task: a tools/call
// answered with a task, and tasks/get, tasks/update and tasks/cancel. A span's status is Error when the outcome is error; a denial
// (401, 403, 429) is the server doing its job, and leaves it unset, as the
// HTTP conventions do for a server's 4xx. Arguments, results and
// credentials are never recorded.
//
// # Tasks
//
// An Observer is an mcpmw.TaskObserver: a tools/call that becomes a task
// (mcpmw.Tool.Task) is answered at once, and its span ends then; the
// tool runs on, and its run gets a span of its own, named "execute_tool
// {tool}" as the GenAI conventions name a tool's execution, of kind
// Internal. That span is the root of a trace of its own (a task may run
// for an hour, longer than a trace should stay open), linked to the span
// of the tools/call that created it, so a backend leads from either to
// the other; a sampler decides on it as on any root. The tool's own spans
// are its children, and the tool sees the creating call's baggage. The
// span has gen_ai.tool.name, gen_ai.operation.name execute_tool and
// mcpmw.task.id from its start, and when the run ends (its end stored)
// mcpmw.outcome, mcpmw.task.status (completed, failed or cancelled),
// error.type (the JSON-RPC code of a failed run, tool_error for an
// isError result, cancelled) and rpc.response.status_code. Its status is
// Error when the outcome is error, as a request's is: a cancelled task's
// is too. Each tasks/get poll is a request like any other, with a span of
// its own in the poller's trace.
//
// The task id is on spans as it is in the audit records' Target: a task
// answers its creator only (its CallerID), so the id alone reaches
// nothing (SECURITY.md, "Tasks"), and traces stay as trusted as logs.
//
// # Metrics
//
// One histogram, mcp.server.operation.duration (seconds), whose count is
// the number of requests. Its attributes are bounded whatever clients
// send: a method name the server does not serve is recorded as _OTHER, a
// protocol version it does not serve as _OTHER, and a tool's name only
// when the tool exists (it ran, or the permission gate refused it), never
// for an unknown-tool request.
//
// The runs of tasks go to a histogram of their own, mcpmw.task.duration
// (seconds, with buckets up to an hour), whose count is the number of
// runs that ended: a run is not a request, and in the requests' histogram
// it would count each task's tools/call twice and mix minutes into
// milliseconds. Its attributes are those of the run's end, without the
// task id.
package mcpotel
