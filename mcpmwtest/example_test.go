package mcpmwtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// newEndpoint is an application's MCP endpoint: an echo tool any reader may
// call, a delete tool only writers may, and its auditor.
func newEndpoint(audit mcpmw.Auditor) *mcpmw.Handler {
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	return mcpmw.New(&reg, testTokens, audit, nil)
}

// The package documentation's test, run as an Example: without a
// testing.TB, the endpoint runs on an httptest.Server and NewClient talks
// to it.
func Example() {
	rec := mcpmwtest.NewRecorder()
	srv := httptest.NewServer(newEndpoint(rec))
	defer srv.Close()

	c := mcpmwtest.NewClient(srv.URL, mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision("2025-11-25"))
	res, err := c.CallTool(context.Background(), "echo", map[string]any{"message": "hi"})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text, res.IsError)
	last := rec.Last()
	fmt.Println(last.Method, last.Tool, last.Outcome, last.Status, last.Caller)
	// Output:
	// hi false
	// tools/call echo ok 200 reader
}

// A refusal is an *Error carrying both the JSON-RPC error and the HTTP
// exchange.
func ExampleError() {
	srv := httptest.NewServer(newEndpoint(mcpmwtest.NewRecorder()))
	defer srv.Close()
	c := mcpmwtest.NewClient(srv.URL, mcpmwtest.Bearer("reader-token"))

	_, err := c.CallTool(context.Background(), "note_delete", map[string]any{"message": "x"})
	var e *mcpmwtest.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Header.Get("WWW-Authenticate"))
	}
	_, err = c.CallTool(context.Background(), "no_such_tool", nil)
	if errors.As(err, &e) {
		fmt.Println(e.Code, e.Message)
	}
	// Output:
	// 403 Bearer error="insufficient_scope", scope="write"
	// -32602 Unknown tool: no_such_tool
}

// A tool that reports progress answers with an event stream; its
// notifications come with the result.
func ExampleClient_CallTool_progress() {
	srv := httptest.NewServer(newEndpoint(mcpmwtest.NewRecorder()))
	defer srv.Close()
	c := mcpmwtest.NewClient(srv.URL, mcpmwtest.Bearer("reader-token"), mcpmwtest.RequestProgress())

	res, err := c.CallTool(context.Background(), "count", nil)
	if err != nil {
		panic(err)
	}
	for _, p := range res.Progress() {
		fmt.Printf("%s %v/%v\n", p.Message, p.Progress, p.Total)
	}
	fmt.Println(res.Stream, res.Text)
	// Output:
	// step 1/3
	// step 2/3
	// step 3/3
	// true 3
}

// Structured content decodes into the test's own type.
func ExampleToolResult_Decode() {
	srv := httptest.NewServer(newEndpoint(mcpmwtest.NewRecorder()))
	defer srv.Close()
	c := mcpmwtest.NewClient(srv.URL, mcpmwtest.Bearer("reader-token"))

	res, err := c.CallTool(context.Background(), "add", map[string]any{"a": 2, "b": 3})
	if err != nil {
		panic(err)
	}
	var out struct{ Sum float64 }
	if err := res.Decode(&out); err != nil {
		panic(err)
	}
	fmt.Println(out.Sum)
	// Output: 5
}

// ListTools follows every page and shows only what the caller may use.
func ExampleClient_ListTools() {
	srv := httptest.NewServer(newEndpoint(mcpmwtest.NewRecorder()))
	defer srv.Close()

	for _, token := range []string{"reader-token", "writer-token"} {
		tools, err := mcpmwtest.NewClient(srv.URL, mcpmwtest.Bearer(token)).ListTools(context.Background())
		if err != nil {
			panic(err)
		}
		fmt.Print(token, ":")
		for _, t := range tools {
			fmt.Print(" ", t.Name)
		}
		fmt.Println()
	}
	// Output:
	// reader-token: echo add fails count weather
	// writer-token: echo add fails note_delete count weather
}
