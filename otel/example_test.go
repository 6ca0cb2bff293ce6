package mcpotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpmw/mcpmw"
	mcpotel "github.com/mcpmw/mcpmw/otel"
)

// A tools/call whose client put its trace context in params._meta gets a
// span in the client's trace. In an application, the providers and the
// propagator are usually the global ones: NewObserver() with no options.
func Example() {
	spans := tracetest.NewSpanRecorder() // in-memory, for the example
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	obs := mcpotel.NewObserver(mcpotel.WithTracerProvider(tp), mcpotel.WithPropagator(propagation.TraceContext{}))

	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "echo", Description: "Echoes.", Permission: "read",
		Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult(args.String("message")), args.Err()
		}})
	anyone := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return perms{"read"}, nil })
	h := mcpmw.New(&reg, anyone, mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}), &mcpmw.Options{Observer: obs})

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},
		"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},
		"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"} {
		r.Header.Set(k, v)
	}
	h.ServeHTTP(httptest.NewRecorder(), r)

	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.SpanKind(), "in trace", s.SpanContext().TraceID())
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "mcp.method.name", "gen_ai.tool.name", "mcpmw.outcome":
				fmt.Printf("  %s=%s\n", kv.Key, kv.Value.String())
			}
		}
	}
	// Output:
	// tools/call echo server in trace 4bf92f3577b34da6a3ce929d0e0e4736
	//   mcp.method.name=tools/call
	//   gen_ai.tool.name=echo
	//   mcpmw.outcome=ok
}

// A tools/call that becomes a task is answered at once; the tool's run
// gets a span of its own, the root of its own trace, linked to the call's.
func Example_task() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	obs := mcpotel.NewObserver(mcpotel.WithTracerProvider(tp), mcpotel.WithPropagator(propagation.TraceContext{}))

	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "report", Description: "Builds a report.", Permission: "read", Task: mcpmw.TaskOptional,
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("the report"), nil
		}})
	identified := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return owner{perms{"read"}}, nil })
	h := mcpmw.New(&reg, identified, mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}), &mcpmw.Options{Observer: obs})

	post := func(method, name, params string) map[string]any {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `,
			"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
			"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},
			"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name} {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var msg struct{ Result map[string]any }
		_ = json.Unmarshal(w.Body.Bytes(), &msg)
		return msg.Result
	}
	id := post("tools/call", "report", `"name":"report","arguments":{}`)["taskId"].(string)
	for range 1000 { // poll, within 5 s
		if post("tasks/get", id, `"taskId":"`+id+`"`)["status"] == "completed" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.Close() // waits for the run's end

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byName[s.Name()] = s
	}
	call, run := byName["tools/call report"], byName["execute_tool report"]
	fmt.Println(call.Name(), call.SpanKind(), "in trace", call.SpanContext().TraceID())
	fmt.Println(run.Name(), run.SpanKind(), "a root:", !run.Parent().IsValid(),
		"linked to the call:", len(run.Links()) == 1 && run.Links()[0].SpanContext.Equal(call.SpanContext()))
	// Output:
	// tools/call report server in trace 4bf92f3577b34da6a3ce929d0e0e4736
	// execute_tool report internal a root: true linked to the call: true
}
