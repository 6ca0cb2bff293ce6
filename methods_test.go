package mcpmw_test

import (
	"context"
	"io"
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

// discover declares the capabilities of the registered methods in name
// order, whatever order they were registered in, so that the encoded
// answer is the same on every instance.
func TestDiscoverDeclaresCapabilitiesInNameOrder(t *testing.T) {
	t.Parallel()
	h := mcpmw.New(&mcpmw.Registry{}, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{
		answering("resources/list", "resources", func() *mcpmw.Response { return mcpmw.ResultResponse(map[string]any{}) }),
		answering("prompts/list", "prompts", func() *mcpmw.Response { return mcpmw.ResultResponse(map[string]any{}) }),
		answering("completion/complete", "completions", func() *mcpmw.Response { return mcpmw.ResultResponse(map[string]any{}) }),
	}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "server/discover", ""))
	assert.Contains(t, w.Body.String(), `"capabilities":{"completions":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`)
}

// A Target without a Kind is named "target" in the denial; a permission
// that is no valid OAuth scope token is left out of the challenge.
func TestTargetDenialWording(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		target    mcpmw.Target
		message   string
		challenge string
	}{
		{mcpmw.Target{Name: "doc", Permission: "admin"}, `the caller may not use target "doc"`, `Bearer error="insufficient_scope", scope="admin"`},
		{mcpmw.Target{Kind: "prompt", Name: "doc", Permission: "read write"}, `the caller may not use prompt "doc"`, `Bearer error="insufficient_scope"`},
		{mcpmw.Target{Kind: "prompt", Name: "doc", Permission: `a"b`}, `the caller may not use prompt "doc"`, `Bearer error="insufficient_scope"`},
		{mcpmw.Target{Kind: "prompt", Name: "doc", Permission: `a\b`}, `the caller may not use prompt "doc"`, `Bearer error="insufficient_scope"`},
		{mcpmw.Target{Kind: "prompt", Name: "doc", Permission: "a\x7fb"}, `the caller may not use prompt "doc"`, `Bearer error="insufficient_scope"`},
		{mcpmw.Target{Kind: "prompt", Name: "doc", Permission: "!edge~"}, `the caller may not use prompt "doc"`, `Bearer error="insufficient_scope", scope="!edge~"`},
	} {
		target := tt.target
		h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{{
			Name: "prompts/get", Capability: "prompts",
			Target: func(*mcpmw.Request) (*mcpmw.Target, *mcpmw.Response) { return &target, nil },
			Handle: func(context.Context, *mcpmw.Request) *mcpmw.Response { return mcpmw.ResultResponse(map[string]any{}) },
		}}})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, modern("1", "prompts/get", `"name":"doc"`, "Mcp-Name", "doc"))
		require.Equal(t, 403, w.Code, w.Body.String())
		assert.True(t, strings.Contains(w.Body.String(), strings.ReplaceAll(tt.message, `"`, `\"`)), w.Body.String())
		assert.Equal(t, tt.challenge, w.Header().Get("WWW-Authenticate"))
	}
}

// Two methods of one capability may not set one settings key to two values
// in the same revision (what would discover declare?); the same value, or
// values in different revisions, are fine.
func TestMethodSettingsConflicts(t *testing.T) {
	t.Parallel()
	handle := func(context.Context, *mcpmw.Request) *mcpmw.Response { return mcpmw.ResultResponse(map[string]any{}) }
	build := func(a, b mcpmw.Method) func() {
		return func() { mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{a, b}}) }
	}
	one := mcpmw.Method{Name: "x/one", Capability: "experimental", Settings: map[string]any{"mode": "fast"}, Handle: handle}
	other := mcpmw.Method{Name: "x/two", Capability: "experimental", Settings: map[string]any{"mode": "slow"}, Handle: handle}
	same := mcpmw.Method{Name: "x/two", Capability: "experimental", Settings: map[string]any{"mode": "fast"}, Handle: handle}
	assert.PanicsWithValue(t, `mcpmw: method "x/two" sets experimental.mode to slow, another method of experimental to fast`, build(one, other))
	assert.NotPanics(t, build(one, same))

	modernOnly, legacyOnly := one, other
	modernOnly.Revisions = []string{mcpmw.LatestVersion}
	legacyOnly.Revisions = []string{mcpmw.Version20251125}
	assert.NotPanics(t, build(modernOnly, legacyOnly), "each revision declares its own")
}

// A Method whose Lifetime is LifetimeStream answers with an event stream
// that outlives its record, over HTTP/1.1 and HTTP/2: the record is made
// from the Response Handle returns, before Then runs, and Then's Response
// is the stream's last event. A client that rules out an event stream is
// refused with 406 and, once the Handler is closed, every request with
// 503, before Handle runs. Then in the Response of any other method is
// the method's mistake.
func TestLifetimeStreamRecordsWhenTheStreamOpens(t *testing.T) {
	t.Parallel()
	var handled atomic.Int32
	recorded := make(chan mcpmw.CallRecord, 8)
	audit := mcpmw.AuditFunc(func(_ context.Context, rec mcpmw.CallRecord) { recorded <- rec })
	watch := mcpmw.Method{Name: "watch/things", Revisions: []string{mcpmw.LatestVersion}, Lifetime: mcpmw.LifetimeStream,
		Handle: func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			handled.Add(1)
			return &mcpmw.Response{Summary: "watching", Then: func(ctx context.Context) *mcpmw.Response {
				select { // the record is made before the stream is served
				case rec := <-recorded:
					return mcpmw.ResultResponse(map[string]string{"opened": rec.Summary})
				case <-time.After(patience):
					return mcpmw.ResultResponse(map[string]string{"opened": "never"})
				}
			}}
		}}
	wrong := mcpmw.Method{Name: "wrong/then", Revisions: []string{mcpmw.LatestVersion}, Streams: true,
		Handle: func(context.Context, *mcpmw.Request) *mcpmw.Response {
			return &mcpmw.Response{Then: func(context.Context) *mcpmw.Response { return mcpmw.ResultResponse(map[string]string{"then": "ran"}) }}
		}}
	h := mcpmw.New(nil, tokenAuthn, audit, &mcpmw.Options{Methods: []mcpmw.Method{watch, wrong}})
	for _, proto := range protocols {
		srv, client := serveOver(t, proto, h)
		resp := postOver(t.Context(), t, client, proto, srv.URL, "reader",
			`{"jsonrpc":"2.0","id":1,"method":"watch/things","params":{`+meta26+`}}`, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "watch/things")
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode, proto)
		assert.Contains(t, string(body), `"opened":"watching"`, "%s: the record came first: %s", proto, body)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("2", "watch/things", "", "Accept", "application/json"))
	assert.Equal(t, http.StatusNotAcceptable, w.Code)
	for _, r := range []*http.Request{
		modern("3", "wrong/then", ""),
		// A method that streams, with its stream open, is still not one
		// whose stream outlives its record.
		req(`{"jsonrpc":"2.0","id":3,"method":"wrong/then","params":{"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "wrong/then"),
	} {
		w = httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, http.StatusInternalServerError, w.Code, w.Body.String())
		assert.NotContains(t, w.Body.String(), "ran", "Then does not run")
	}
	// Sent as a notification, a request's method is not run at all.
	w = httptest.NewRecorder()
	h.ServeHTTP(w, req(`{"jsonrpc":"2.0","method":"watch/things","params":{`+meta26+`}}`, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "watch/things"))
	assert.Equal(t, http.StatusAccepted, w.Code, w.Body.String())
	assert.Empty(t, w.Body.String())
	h.Close()
	w = httptest.NewRecorder()
	h.ServeHTTP(w, modern("4", "watch/things", ""))
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.EqualValues(t, 2, handled.Load(), "406 and 503 come before Handle; a notification never reaches it")
}

// TestRequestSentAsNotificationIsNotRun: a message without an id that
// names a request's method (tools/call, prompts/get, resources/read,
// an application's own) is no request: nothing runs it, neither the
// method nor a middleware, on any revision, whatever its permission or
// headers; it is answered 202 with no body, and recorded once, as
// ignored. A notification's own method (notifications/*) still runs.
func TestRequestSentAsNotificationIsNotRun(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "prog", Permission: "read", Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
		ran.Add(1)
		mcpmw.Progress(ctx, 1, 2, "half")
		return mcpmw.TextResult("done"), nil
	}}, mcpmw.Tool{Name: "admin_only", Permission: "write", Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		ran.Add(1)
		return mcpmw.TextResult("done"), nil
	}})
	reg.AddPrompts(mcpmw.Prompt{Name: "p", Permission: "read", Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
		ran.Add(1)
		return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("hi"))}}, nil
	}})
	reg.AddResources(mcpmw.Resource{URI: "db://r", Name: "r", Permission: "read", Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
		ran.Add(1)
		return []mcpmw.ResourceContents{{URI: "db://r", Text: "x"}}, nil
	}})
	app := mcpmw.Method{Name: "app/sync", Handle: func(context.Context, *mcpmw.Request) *mcpmw.Response {
		ran.Add(1)
		return mcpmw.ResultResponse(map[string]any{})
	}}
	var notified atomic.Int32
	note := mcpmw.Method{Name: "notifications/app", Handle: func(context.Context, *mcpmw.Request) *mcpmw.Response {
		notified.Add(1)
		return mcpmw.ResultResponse(map[string]any{})
	}}
	var seen atomic.Int32
	spyMW := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			seen.Add(1)
			return next.Dispatch(ctx, req)
		})
	}
	a := &spy{}
	h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{Methods: []mcpmw.Method{app, note}, Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{spyMW}})
	legacyN := func(method, params string) *http.Request {
		return req(`{"jsonrpc":"2.0","method":"`+method+`","params":{`+params+`}}`, "MCP-Protocol-Version", mcpmw.Version20251125)
	}
	modernN := func(method, params string, hdr ...string) *http.Request {
		return req(`{"jsonrpc":"2.0","method":"`+method+`","params":{`+params+`,`+meta26+`}}`,
			append([]string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method}, hdr...)...)
	}
	for i, tt := range []struct {
		name   string
		r      *http.Request
		method string
	}{
		{"tools/call, legacy, with a progress token", legacyN("tools/call", `"name":"prog","_meta":{"progressToken":1}`), "tools/call"},
		{"tools/call, modern", modernN("tools/call", `"name":"prog"`, "Mcp-Name", "prog"), "tools/call"},
		{"tools/call of a tool the caller may not use", legacyN("tools/call", `"name":"admin_only"`), "tools/call"},
		{"prompts/get", legacyN("prompts/get", `"name":"p"`), "prompts/get"},
		{"prompts/get, modern", modernN("prompts/get", `"name":"p"`, "Mcp-Name", "p"), "prompts/get"},
		{"resources/read", legacyN("resources/read", `"uri":"db://r"`), "resources/read"},
		{"an application's method", legacyN("app/sync", `"x":1`), "app/sync"},
		{"an unknown method", legacyN("nope/nothing", `"x":1`), "nope/nothing"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, tt.r)
		assert.Equal(t, http.StatusAccepted, w.Code, "%s: %s", tt.name, w.Body.String())
		assert.Empty(t, w.Body.String(), tt.name)
		assert.NotEqual(t, "text/event-stream", w.Header().Get("Content-Type"), tt.name)
		recs := a.records()
		require.Len(t, recs, i+1, "%s: one record", tt.name)
		rec := recs[i]
		assert.Equal(t, mcpmw.OutcomeAccepted, rec.Outcome, tt.name)
		assert.Equal(t, "ignored: "+tt.method+" sent as a notification (no id); a request needs an id, and nothing ran", rec.Summary, tt.name)
		assert.Equal(t, 202, rec.Status, tt.name)
	}
	// A routing header that contradicts the body is refused as for any
	// POST (4xx, as the transport allows for a notification): nothing runs.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modernN("tools/call", `"name":"prog"`, "Mcp-Name", "other"))
	assert.Equal(t, http.StatusBadRequest, w.Code)
	assert.Zero(t, ran.Load(), "no tool, prompt, resource or method ran")
	assert.Zero(t, seen.Load(), "no middleware saw them")

	w = httptest.NewRecorder()
	h.ServeHTTP(w, legacyN("notifications/app", `"x":1`))
	assert.Equal(t, http.StatusAccepted, w.Code)
	assert.EqualValues(t, 1, notified.Load(), "a notification's own method runs")
	assert.EqualValues(t, 1, seen.Load(), "through the middleware")
}

// A middleware that dispatches a request of its own without an id gets
// the same answer: nothing runs it.
func TestDispatchIgnoresARequestMethodWithoutAnID(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "t", Permission: "read", Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		ran.Add(1)
		return mcpmw.TextResult("done"), nil
	}})
	var got *mcpmw.Response
	strip := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			own := *req
			own.ID = nil
			got = next.Dispatch(ctx, &own)
			return next.Dispatch(ctx, req)
		})
	}
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{strip}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, legacy(mcpmw.Version20251125, "1", "tools/call", `"name":"t"`))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.EqualValues(t, 1, ran.Load(), "the request ran once, its id-less copy not at all")
	require.NotNil(t, got)
	assert.Equal(t, mcpmw.OutcomeAccepted, got.Outcome)
	assert.Contains(t, got.Summary, "ignored: tools/call sent as a notification")
}
