package mcpmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// The record's protocol version is the revision the request speaks; for a
// legacy request naming no served revision, the header's value (capped).
func TestRecordProtocolVersion(t *testing.T) {
	t.Parallel()
	h, a, _ := newTestHandler(t, nil)
	for _, tt := range []struct {
		name string
		req  func() (int, string)
	}{
		{"initialize without the header", func() (int, string) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`))
			return w.Code, "2025-06-18"
		}},
		{"unserved legacy header", func() (int, string) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, legacy("2024-11-05", "1", "tools/list", ""))
			return w.Code, "2024-11-05"
		}},
		{"2026-07-28", func() (int, string) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, modern("1", "tools/list", ""))
			return w.Code, "2026-07-28"
		}},
	} {
		before := len(a.records())
		_, want := tt.req()
		recs := a.records()
		require.Len(t, recs, before+1, tt.name)
		assert.Equal(t, want, recs[before].ProtocolVersion, tt.name)
	}
}

// errReader fails every Read: a body the client never finished sending.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset mid-body") }

// What the log line says of a failed request, the audit record says too: a
// bare "Internal error" is no account of what happened. Each case is a
// Response with a Cause (logged) and no Summary of its own.
func TestRecordSummaryCarriesTheLoggedCause(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "odd_content", Permission: "read",
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.ToolResult{Content: []mcpmw.Content{{Type: "video"}}}, nil
		}})
	reg.AddResources(mcpmw.Resource{URI: "e://empty", Name: "empty", Permission: "read",
		Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) { return nil, nil }})
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "t://{id}", Name: "t", Permission: "read",
		Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
			return nil, nil
		},
		List: func(context.Context, mcpmw.Caller) ([]mcpmw.Resource, error) {
			return nil, errors.New("tenant db unreachable")
		}})
	reg.AddPrompts(mcpmw.Prompt{Name: "silent", Permission: "read",
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{}, nil
		}})
	// A middleware that breaks the two methods only it serves.
	broken := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, r *mcpmw.Request) *mcpmw.Response {
			if r.Method == "tools/list" {
				return nil
			}
			if r.Method == "prompts/list" {
				return &mcpmw.Response{Result: json.RawMessage(`[1]`)}
			}
			return next.Dispatch(ctx, r)
		})
	}
	h, a, logs := resourceHandler(t, &reg, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{broken}})
	long := "t://" + strings.Repeat("x", 5000)
	body := httptest.NewRequest(http.MethodPost, "/mcp", errReader{})
	body.Header.Set("Content-Type", "application/json")
	body.Header.Set("Authorization", "Bearer reader")
	for _, tt := range []struct {
		name string
		req  *http.Request
		want string
	}{
		{"a Read with no contents and no error", readReq(mcpmw.LatestVersion, "reader", "e://empty"), "read failed: Read returned no contents and no error"},
		{"a template's Read with no contents, at a long URI", readReq(mcpmw.LatestVersion, "reader", long), "read failed: Read returned no contents and no error"},
		{"a template's List failing", listReq(mcpmw.LatestVersion, "reader", "resources/list", ""), `Internal error: resource template "t://{id}": List: tenant db unreachable`},
		{"a prompt with no messages", modern("1", "prompts/get", `"name":"silent"`, "Mcp-Name", "silent", "Authorization", "Bearer reader"), "prompt failed: no messages: Get must return at least one"},
		{"a tool result that cannot be encoded", listReq(mcpmw.LatestVersion, "reader", "tools/call", `"name":"odd_content"`), `tool failed: its result cannot be sent: content block type "video"`},
		{"a middleware returning no Response", listReq(mcpmw.LatestVersion, "reader", "tools/list", ""), `Internal error: dispatcher returned a nil Response for "tools/list"`},
		{"a middleware returning a result that is no object", listReq(mcpmw.LatestVersion, "reader", "prompts/list", ""), `Internal error: the Response to "prompts/list" has a Result that is not a JSON object`},
		{"a body that cannot be read", body, "Could not read the request body: connection reset mid-body"},
	} {
		before, logged := len(a.records()), len(logs.String())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, tt.req)
		recs := a.records()
		require.Len(t, recs, before+1, tt.name)
		assert.Contains(t, recs[before].Summary, tt.want, tt.name)
		line := logs.String()[logged:]
		assert.Contains(t, line, "mcpmw: request failed", "%s: the cause is logged", tt.name)
		assert.NotContains(t, line, strings.Repeat("x", 101), "%s: a client's URI is capped in the log line", tt.name)
		assert.NotContains(t, w.Body.String(), "tenant db", tt.name)
	}
}

// The record's Duration is set, positive and no longer than the request
// took, on every path: each refusal stage (those the Auditor never sees
// included: the Observer gets their record), every method, a panic, an
// event stream, a legacy cancellation, a client response, a listen stream
// (recorded when it opens).
func TestRecordDurationOnEveryPath(t *testing.T) {
	t.Parallel()
	reg := testResources()
	reg.AddTools(append(testTools(), mcpmw.Tool{Name: "progress", Description: "d", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			if err := mcpmw.Progress(ctx, 1, 2, "half"); err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult("done"), nil
		}})...)
	reg.AddPrompts(testPrompts()...)
	reg.AddPrompts(mcpmw.Prompt{Name: "completable", Description: "d", Permission: "read", Arguments: []mcpmw.PromptArgument{{Name: "a"}},
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{}, nil
		},
		Complete: map[string]mcpmw.Completer{"a": func(context.Context, mcpmw.Caller, mcpmw.CompletionRequest) (mcpmw.Completion, error) {
			return mcpmw.Completion{Values: []string{"x"}}, nil
		}}})
	obs := &observerSpy{}
	var limited atomic.Bool
	h := mcpmw.New(reg, tokenAuthn, &spy{}, &mcpmw.Options{Observer: obs, Logger: newTextLogger(&syncBuffer{}), MaxBodyBytes: 1 << 10,
		RateLimit: mcpmw.RateLimiterFunc(func(http.ResponseWriter, *http.Request, string) bool { return limited.Load() })})
	listen := func() *http.Request {
		r := req(`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+meta26+`}}`,
			"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen")
		ctx, cancel := context.WithTimeout(r.Context(), 50*time.Millisecond) // the client leaves
		t.Cleanup(cancel)
		return r.WithContext(ctx)
	}
	v25 := mcpmw.Version20251125
	for _, tc := range []struct {
		name   string
		r      func() *http.Request
		limit  bool
		status int
	}{
		{"rate limited", func() *http.Request { return modern("1", "tools/list", "") }, true, 429},
		{"not a POST", func() *http.Request { return httptest.NewRequest(http.MethodGet, "/mcp", nil) }, false, 405},
		{"origin", func() *http.Request { return modern("1", "tools/list", "", "Origin", "https://evil.example") }, false, 403},
		{"unauthenticated", func() *http.Request { return modern("1", "tools/list", "", "Authorization", "Bearer nobody") }, false, 401},
		{"authenticator panics", func() *http.Request { return modern("1", "tools/list", "", "Authorization", "Bearer boom") }, false, 500},
		{"media type", func() *http.Request { return modern("1", "tools/list", "", "Content-Type", "text/plain") }, false, 415},
		{"accept", func() *http.Request { return modern("1", "tools/list", "", "Accept", "text/html") }, false, 406},
		{"body too large", func() *http.Request { return req(`{"x":"` + strings.Repeat("a", 2<<10) + `"}`) }, false, 413},
		{"not JSON", func() *http.Request { return req(`{`) }, false, 400},
		{"not JSON-RPC", func() *http.Request { return req(`[]`) }, false, 400},
		{"duplicate key", func() *http.Request { return legacy(v25, "1", "tools/call", `"name":"echo","name":"add"`) }, false, 400},
		{"revision header", func() *http.Request { return modern("1", "tools/list", "", "MCP-Protocol-Version", "") }, false, 400},
		{"unknown method", func() *http.Request { return legacy(v25, "1", "orders/cancel", "") }, false, 200},
		{"denied", func() *http.Request { return legacy(v25, "1", "tools/call", `"name":"write_it"`) }, false, 403},
		{"unknown tool", func() *http.Request { return legacy(v25, "1", "tools/call", `"name":"nope"`) }, false, 200},
		{"discover", func() *http.Request { return modern("1", "server/discover", "") }, false, 200},
		{"initialize", func() *http.Request {
			return legacy(v25, "1", "initialize", `"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}`)
		}, false, 200},
		{"ping", func() *http.Request { return legacy(v25, "1", "ping", "") }, false, 200},
		{"tools/list", func() *http.Request { return modern("1", "tools/list", "") }, false, 200},
		{"tools/call", func() *http.Request { return modern("1", "tools/call", `"name":"echo","arguments":{"message":"m"}`) }, false, 200},
		{"tool error", func() *http.Request { return legacy(v25, "1", "tools/call", `"name":"breaks"`) }, false, 500},
		{"tool panics", func() *http.Request { return legacy(v25, "1", "tools/call", `"name":"panics"`) }, false, 500},
		{"stream", func() *http.Request {
			return legacy(v25, "1", "tools/call", `"name":"progress","_meta":{"progressToken":"p"}`)
		}, false, 200},
		{"prompts/list", func() *http.Request { return legacy(v25, "1", "prompts/list", "") }, false, 200},
		{"prompts/get", func() *http.Request { return legacy(v25, "1", "prompts/get", `"name":"greet","arguments":{"who":"x"}`) }, false, 200},
		{"resources/list", func() *http.Request { return legacy(v25, "1", "resources/list", "") }, false, 200},
		{"resources/templates/list", func() *http.Request { return legacy(v25, "1", "resources/templates/list", "") }, false, 200},
		{"resources/read", func() *http.Request { return legacy(v25, "1", "resources/read", `"uri":"test://motd"`) }, false, 200},
		{"resources/subscribe", func() *http.Request { return legacy(v25, "1", "resources/subscribe", `"uri":"test://motd"`) }, false, 200},
		{"completion/complete", func() *http.Request {
			return legacy(v25, "1", "completion/complete", `"ref":{"type":"ref/prompt","name":"completable"},"argument":{"name":"a","value":""}`)
		}, false, 200},
		{"notification", func() *http.Request {
			return req(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "MCP-Protocol-Version", v25)
		}, false, 202},
		{"cancellation", func() *http.Request {
			return req(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, "MCP-Protocol-Version", v25)
		}, false, 202},
		{"client response", func() *http.Request {
			return req(`{"jsonrpc":"2.0","id":"x","result":{}}`, "MCP-Protocol-Version", v25)
		}, false, 202},
		{"listen", listen, false, 200},
	} {
		limited.Store(tc.limit)
		r := tc.r()
		start := time.Now()
		h.ServeHTTP(httptest.NewRecorder(), r)
		took := time.Since(start)
		obs.mu.Lock()
		require.NotEmpty(t, obs.done, tc.name)
		rec := obs.done[len(obs.done)-1]
		obs.done = nil
		obs.mu.Unlock()
		assert.Equal(t, tc.status, rec.Status, "%s: %s", tc.name, rec.Summary)
		assert.Positive(t, rec.Duration, tc.name)
		assert.LessOrEqual(t, rec.Duration, took, tc.name)
		assert.False(t, rec.Time.Before(start), tc.name)
	}
}

// A request refused before it is routed (here: by the revision's rules, a
// missing Mcp-Method header) is recorded with the target its method's
// Target func finds, as one past the gate is: the tool (its arguments
// too), the prompt, the resource URI in normal form (invariant 8: one
// view of a URI, however it was spelt), the prompt a completion completes.
func TestRecordNamesTheTargetOfARequestRefusedBeforeRouting(t *testing.T) {
	t.Parallel()
	reg := testResources()
	reg.AddTools(testTools()...)
	reg.AddPrompts(testPrompts()...)
	for _, tc := range []struct {
		reg                *mcpmw.Registry
		method, params     string
		target, tool, args string
	}{
		{reg, "tools/call", `"name":"echo","arguments":{"message":"x"}`, "echo", "echo", `{"message":"x"}`},
		{reg, "tools/call", `"name":"nope","arguments":{"message":"x"}`, "nope", "nope", `{"message":"x"}`},
		{reg, "prompts/get", `"name":"greet"`, "greet", "", ""},
		{reg, "resources/read", `"uri":"TEST://static-%74ext"`, "test://static-text", "", ""},
		{reg, "resources/read", `"uri":"TEST://notes/%31"`, "test://notes/1", "", ""},
		{completionRegistry(), "completion/complete", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"lang","value":""}`, "greet", "", ""},
	} {
		a := &spy{}
		h := mcpmw.New(tc.reg, tokenAuthn, a, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, modern("1", tc.method, tc.params, "Mcp-Method", ""))
		require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
		assert.Contains(t, w.Body.String(), "Mcp-Method header is required")
		require.Len(t, a.records(), 1)
		rec := a.records()[0]
		assert.Equal(t, tc.target, rec.Target, "%s %s", tc.method, tc.params)
		assert.Equal(t, tc.tool, rec.Tool, tc.method)
		if tc.args == "" {
			assert.Nil(t, rec.Arguments, tc.method)
		} else {
			assert.JSONEq(t, tc.args, string(rec.Arguments), tc.method)
		}
	}
}
