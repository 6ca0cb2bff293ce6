package mcpmw_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// listResources is an application's resources/list method.
var listResources = mcpmw.Method{Name: "resources/list", Capability: "resources",
	Handle: func(_ context.Context, req *mcpmw.Request) *mcpmw.Response {
		result := map[string]any{"resources": []any{map[string]any{"uri": "test://a", "name": "a"}}}
		if !req.Legacy() {
			result["ttlMs"], result["cacheScope"] = 1000, "public"
		}
		resp := mcpmw.ResultResponse(result)
		resp.Summary = "listed resources for " + req.Caller.(*user).name
		return resp
	}}

// answering is a method that answers every request with resp.
func answering(name, capability string, resp func() *mcpmw.Response) mcpmw.Method {
	return mcpmw.Method{Name: name, Capability: capability,
		Handle: func(context.Context, *mcpmw.Request) *mcpmw.Response { return resp() }}
}

func TestDispatcherMiddleware(t *testing.T) {
	t.Parallel()
	var order []string
	trace := func(name string) func(mcpmw.Dispatcher) mcpmw.Dispatcher {
		return func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
			return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
				order = append(order, name)
				return next.Dispatch(ctx, req)
			})
		}
	}
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	a := &spy{}
	h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{
		Methods:    []mcpmw.Method{listResources},
		Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{trace("outer"), trace("inner")},
	})

	for _, tt := range []struct {
		name  string
		req   *http.Request
		check func(t *testing.T, a answer)
	}{
		{"2026 result completed by the handler", modern("1", "resources/list", ""), func(t *testing.T, a answer) {
			assert.Equal(t, "complete", a.Result["resultType"])
			assert.Equal(t, "public", a.Result["cacheScope"])
			assert.Equal(t, map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "mcp-server", "version": "0.0.0"}}, a.Result["_meta"])
		}},
		{"legacy result left alone", legacy("2025-11-25", "1", "resources/list", ""), func(t *testing.T, a answer) {
			assert.Equal(t, map[string]any{"resources": []any{map[string]any{"uri": "test://a", "name": "a"}}}, a.Result)
		}},
	} {
		order = order[:0]
		w := httptest.NewRecorder()
		h.ServeHTTP(w, tt.req)
		require.Equal(t, 200, w.Code, "%s: %s", tt.name, w.Body)
		tt.check(t, decode(t, w))
		assert.Equal(t, []string{"outer", "inner"}, order, "%s: the middleware wraps the application's methods too", tt.name)
	}

	// Discover and initialize advertise the added capability.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("2", "server/discover", ""))
	assert.Equal(t, map[string]any{"tools": map[string]any{"listChanged": true}, "resources": map[string]any{"listChanged": true, "subscribe": true}}, decode(t, w).Result["capabilities"],
		"subscriptions/listen delivers their changes on 2026-07-28")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, req(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	assert.Equal(t, map[string]any{"tools": map[string]any{}, "resources": map[string]any{}}, decode(t, w).Result["capabilities"], "no stream to deliver changes on")

	// The built-in methods pass through every layer too.
	order = order[:0]
	w = httptest.NewRecorder()
	h.ServeHTTP(w, modern("3", "tools/list", ""))
	assert.Equal(t, 200, w.Code)
	assert.Equal(t, []string{"outer", "inner"}, order)

	recs := a.records()
	require.Len(t, recs, 5, "the extension's requests are audited by the same path")
	assert.Equal(t, "listed resources for reader", recs[0].Summary)
	assert.Equal(t, "resources/list", recs[0].Method)
}

// A method the table does not have is not found, before any middleware
// sees it: what discover advertises is exactly what is served.
func TestUnregisteredMethodsAreNotFound(t *testing.T) {
	t.Parallel()
	reached := false
	sneaky := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			if req.Method == "server/discover" {
				return next.Dispatch(ctx, req)
			}
			reached = true
			return mcpmw.ResultResponse(map[string]any{"prompts": []any{}})
		})
	}
	h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{sneaky}})
	for _, r := range []*http.Request{modern("1", "prompts/list", ""), modern("2", "tools/list", "")} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, 404, w.Code, "not advertised, not served")
		assert.Equal(t, mcpmw.CodeMethodNotFound, decode(t, w).Error.Code)
	}
	assert.False(t, reached)

	// Without a registry, discover advertises no tools.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("3", "server/discover", ""))
	assert.Equal(t, map[string]any{}, decode(t, w).Result["capabilities"])
}

func TestDispatcherBadResponses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		resp *mcpmw.Response
	}{
		{"nil response", nil},
		{"result not an object", &mcpmw.Response{Result: json.RawMessage(`[1,2]`)}},
		{"result not JSON", &mcpmw.Response{Result: json.RawMessage(`{"a":`)}},
		{"unencodable result", mcpmw.ResultResponse(map[string]any{"f": func() {}})},
		{"scalar result", mcpmw.ResultResponse(42)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			logs := &syncBuffer{}
			a := &spy{}
			h := mcpmw.New(nil, tokenAuthn, a, &mcpmw.Options{
				Methods: []mcpmw.Method{listResources},
				Logger:  newTextLogger(logs),
				Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{func(mcpmw.Dispatcher) mcpmw.Dispatcher {
					return mcpmw.DispatcherFunc(func(context.Context, *mcpmw.Request) *mcpmw.Response { return tt.resp })
				}},
			})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, modern("1", "resources/list", ""))
			assert.Equal(t, 500, w.Code)
			assert.Equal(t, mcpmw.CodeInternalError, decode(t, w).Error.Code)
			assert.Len(t, a.records(), 1)
			assert.Contains(t, logs.String(), "request failed")
		})
	}
}

func TestErrorResponseStatus(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		code           int
		modern, legacy int
	}{
		{mcpmw.CodeMethodNotFound, 404, 200},
		{mcpmw.CodeInvalidParams, 200, 200},
		{mcpmw.CodeInternalError, 500, 500},
		{mcpmw.CodeMissingRequiredClientCapability, 400, 400},
		{-32042, 200, 200},
	} {
		h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{
			Methods: []mcpmw.Method{answering("prompts/list", "prompts", func() *mcpmw.Response { return mcpmw.ErrorResponse(tt.code, "x") })},
		})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, modern("1", "prompts/list", ""))
		assert.Equal(t, tt.modern, w.Code, "code %d on 2026-07-28", tt.code)
		w = httptest.NewRecorder()
		h.ServeHTTP(w, legacy("2025-06-18", "1", "prompts/list", ""))
		assert.Equal(t, tt.legacy, w.Code, "code %d on 2025-06-18", tt.code)
	}
}

func TestRequestAccessors(t *testing.T) {
	t.Parallel()
	var got *mcpmw.Request
	capture := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			got = req
			assert.Equal(t, req.Caller, mcpmw.CallerFrom(ctx))
			return next.Dispatch(ctx, req)
		})
	}
	h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{capture}})
	body := `{"jsonrpc":"2.0","id":"a","method":"server/discover","params":{"cursor":"c","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"inspector","version":"0.9"}}}}`
	h.ServeHTTP(httptest.NewRecorder(), req(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover"))
	require.NotNil(t, got)
	assert.Equal(t, `"a"`, string(got.ID))
	assert.False(t, got.IsNotification())
	assert.False(t, got.Legacy())
	assert.Equal(t, "2026-07-28", got.Version)
	assert.JSONEq(t, `{"sampling":{}}`, string(got.ClientCapabilities))
	assert.Equal(t, "inspector", got.ClientName)
	assert.Equal(t, "0.9", got.ClientVersion)
	s, ok := got.StringParam("cursor")
	assert.True(t, ok)
	assert.Equal(t, "c", s)
	assert.Nil(t, got.Param("missing"))
	assert.Equal(t, reader, got.Caller)
	assert.Nil(t, mcpmw.CallerFrom(context.Background()))
}

// A middleware that rewrites Params takes effect: the core and the tool
// read what the request holds when they read it, not what was parsed
// before the middleware ran.
func TestMiddlewareRewritingParamsTakesEffect(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	forceMessage := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			if req.Method == "tools/call" {
				r := *req
				r.Params = json.RawMessage(`{"name":"echo","arguments":{"message":"sanitised"}}`)
				return next.Dispatch(ctx, &r)
			}
			return next.Dispatch(ctx, req)
		})
	}
	a := &spy{}
	h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{forceMessage}})
	for _, r := range []*http.Request{
		modern("1", "tools/call", `"name":"echo","arguments":{"message":"raw"}`),
		legacy("2025-11-25", "1", "tools/call", `"name":"echo","arguments":{"message":"raw"}`),
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, 200, w.Code, w.Body.String())
		assert.Contains(t, w.Body.String(), `"text":"sanitised"`)
		assert.NotContains(t, w.Body.String(), "raw")
	}

	// A rewrite to another tool is gated like any call.
	toWrite := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			r := *req
			r.Params = json.RawMessage(`{"name":"write_it"}`)
			return next.Dispatch(ctx, &r)
		})
	}
	b := &spy{}
	h = mcpmw.New(&reg, tokenAuthn, b, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{toWrite}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "tools/call", `"name":"echo","arguments":{"message":"raw"}`))
	assert.Equal(t, 403, w.Code)
	require.Len(t, b.records(), 1)
	assert.Equal(t, "write_it", b.records()[0].Tool, "the record names the tool the request was refused for")
	assert.JSONEq(t, `{"message":"raw"}`, string(b.records()[0].Arguments), "and the arguments as sent")

	// A rewrite to params that are not a JSON object reads as no params.
	broken := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			r := *req
			r.Params = json.RawMessage(`{"name":"echo",`)
			return next.Dispatch(ctx, &r)
		})
	}
	h = mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{broken}})
	w = httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "tools/call", `"name":"echo","arguments":{"message":"raw"}`))
	assert.Equal(t, 200, w.Code)
	assert.Contains(t, w.Body.String(), "tools/call needs params.name")
}

// A Request built by hand answers its accessors from its Params, as a
// parsed one does.
func TestHandBuiltRequestReadsItsParams(t *testing.T) {
	t.Parallel()
	params := json.RawMessage(` {"name":"n\u0061me","cursor":"c","n":1,"_meta":{"progressToken":7}}`)
	r := &mcpmw.Request{ID: json.RawMessage(`1`), Method: "tools/call", Params: params, Version: mcpmw.LatestVersion, Caller: reader}
	name, ok := r.StringParam("name")
	assert.True(t, ok)
	assert.Equal(t, "name", name)
	s, ok := r.StringParam("cursor")
	assert.True(t, ok)
	assert.Equal(t, "c", s)
	_, ok = r.StringParam("n")
	assert.False(t, ok)
	assert.Equal(t, `1`, string(r.Param("n")))
	assert.JSONEq(t, `{"progressToken":7}`, string(r.Param("_meta")))
	assert.Nil(t, r.Param("missing"))
	for _, bad := range []string{``, `[1]`, `{"name":`, `"name"`} {
		r.Params = json.RawMessage(bad)
		assert.Nil(t, r.Param("name"), "%q", bad)
		_, ok := r.StringParam("name")
		assert.False(t, ok)
	}
}

// A Request built by hand with the public fields of a parsed one answers
// every public method the same: nothing a method reads was filled in on
// the side by the parser.
func TestHandBuiltAndParsedRequestsAgree(t *testing.T) {
	t.Parallel()
	var got []*mcpmw.Request
	capture := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			got = append(got, req)
			return next.Dispatch(ctx, req)
		})
	}
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{capture}})
	for _, r := range []*http.Request{
		modern("1", "tools/call", `"name":"echo","arguments":{"message":"hi"},"cursor":"c\u0061","n":2`),
		modern(`"x"`, "tools/list", `"cursor":""`),
		legacy("2025-06-18", "7", "tools/call", `"name":"e\u0063ho","arguments":{"message":"hi"}`),
		req(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{"a":1}}`, "MCP-Protocol-Version", "2025-11-25"),
	} {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	require.Len(t, got, 4)
	names := []string{"name", "arguments", "cursor", "n", "_meta", "missing", "a"}
	for _, parsed := range got {
		hand := &mcpmw.Request{ID: parsed.ID, Method: parsed.Method, Params: append(json.RawMessage(nil), parsed.Params...),
			Version: parsed.Version, Caller: parsed.Caller, Header: parsed.Header, ClientCapabilities: parsed.ClientCapabilities,
			ClientName: parsed.ClientName, ClientVersion: parsed.ClientVersion}
		assert.Equal(t, parsed.IsNotification(), hand.IsNotification())
		assert.Equal(t, parsed.Legacy(), hand.Legacy())
		for _, name := range names {
			assert.Equal(t, parsed.Param(name), hand.Param(name), "Param(%q) of %s", name, parsed.Method)
			ps, pok := parsed.StringParam(name)
			hs, hok := hand.StringParam(name)
			assert.Equal(t, pok, hok, "StringParam(%q) of %s", name, parsed.Method)
			assert.Equal(t, ps, hs, "StringParam(%q) of %s", name, parsed.Method)
		}
	}
}

// A notification's answer is 202 unless its method refuses it with an
// error whose status is 400 or more: then the error is sent, without an id.
func TestNotificationErrorsKeepTheirStatus(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		code, status int
	}{
		{mcpmw.CodeInvalidRequest, 400},
		{mcpmw.CodeInternalError, 500},
		{mcpmw.CodeInvalidParams, 202},
		{mcpmw.CodeMethodNotFound, 202}, // 200 on a legacy revision: below 400
	} {
		h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{
			answering("notifications/app", "", func() *mcpmw.Response { return mcpmw.ErrorResponse(tt.code, "no") })}})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req(`{"jsonrpc":"2.0","method":"notifications/app"}`, "MCP-Protocol-Version", "2025-11-25"))
		assert.Equal(t, tt.status, w.Code, "code %d", tt.code)
		if tt.status == 202 {
			assert.Empty(t, w.Body.String())
		} else {
			assert.JSONEq(t, `{"jsonrpc":"2.0","error":{"code":`+fmt.Sprint(tt.code)+`,"message":"no"}}`, w.Body.String())
		}
	}
}

// A request that succeeds leaves no error in the log: only a Response
// with a Cause is logged.
func TestSuccessLogsNothing(t *testing.T) {
	t.Parallel()
	h, _, logs := newTestHandler(t, nil)
	for _, r := range []*http.Request{modern("1", "tools/call", `"name":"echo","arguments":{"message":"hi"}`), modern("2", "tools/list", "")} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, 200, w.Code)
	}
	assert.Empty(t, logs.String())
}

// The tools/call method, dispatched without the handler's admission (a
// middleware handing a request to the next Dispatcher with a fresh
// context), still checks the caller's permission: the call check is the
// gate.
func TestToolsCallWithoutAdmissionIsGated(t *testing.T) {
	t.Parallel()
	var next mcpmw.Dispatcher
	capture := func(n mcpmw.Dispatcher) mcpmw.Dispatcher { next = n; return n }
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{capture}})
	call := func(c mcpmw.Caller, tool string) *mcpmw.Response {
		return next.Dispatch(context.Background(), &mcpmw.Request{ID: json.RawMessage(`1`), Method: "tools/call",
			Params: json.RawMessage(`{"name":"` + tool + `","arguments":{"message":"hi"}}`), Version: mcpmw.LatestVersion, Caller: c})
	}
	resp := call(reader, "write_it")
	require.NotNil(t, resp.Error)
	assert.Equal(t, mcpmw.OutcomeDenied, resp.Outcome)
	resp = call(writer, "write_it")
	assert.Nil(t, resp.Error)
}

// Every method that acts on a target checks the caller's permission again
// when a middleware has pointed the request at another target after the
// gate: tools/call, prompts/get, resources/read and completion/complete
// alike (the list is a courtesy; the check in the method is the gate). A
// caller holding the new target's permission is served it.
func TestEveryTargetIsGatedAgainAfterARewrite(t *testing.T) {
	t.Parallel()
	reg := testResources()
	reg.AddTools(testTools()...)
	reg.AddPrompts(testPrompts()...)
	for _, tc := range []struct {
		method, params, from, to string
		forbidden                string // in the answer only when the forbidden target was served
		reg                      *mcpmw.Registry
	}{
		{"tools/call", `"name":"echo","arguments":{"message":"written"}`, `"echo"`, `"write_it"`, `"text":"written"`, reg},
		{"prompts/get", `"name":"greet","arguments":{"who":"x"}`, `"greet"`, `"audit_log"`, "Summarise the log.", reg},
		{"resources/read", `"uri":"test://static-text"`, `"test://static-text"`, `"test://secret"`, "the secret", reg},
		{"completion/complete", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"x","value":""}`, `"greet"`, `"admin"`, `"secret"`, completionRegistry()},
	} {
		rewrite := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
			return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
				r := *req
				r.Params = json.RawMessage(strings.Replace(string(req.Params), tc.from, tc.to, 1))
				return next.Dispatch(ctx, &r)
			})
		}
		a := &spy{}
		h := mcpmw.New(tc.reg, tokenAuthn, a, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{rewrite}})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, legacy(mcpmw.Version20251125, "1", tc.method, tc.params))
		assert.Equal(t, http.StatusForbidden, w.Code, "%s: %s", tc.method, w.Body.String())
		assert.NotContains(t, w.Body.String(), tc.forbidden, tc.method)
		require.Len(t, a.records(), 1, tc.method)
		assert.Equal(t, mcpmw.OutcomeDenied, a.records()[0].Outcome, tc.method)
		assert.Equal(t, strings.Trim(tc.to, `"`), a.records()[0].Target, tc.method)

		w = httptest.NewRecorder()
		h.ServeHTTP(w, legacy(mcpmw.Version20251125, "1", tc.method, tc.params, "Authorization", "Bearer writer"))
		assert.Equal(t, http.StatusOK, w.Code, "%s: %s", tc.method, w.Body.String())
		assert.Contains(t, w.Body.String(), tc.forbidden, "%s: the writer may use it", tc.method)
	}
}

// The handler routes a request once, before the middleware; a middleware
// that rewrites the method gets the method it names, whose handler finds
// and gates its own target (nothing the gate checked holds for another
// method), and -32601 for a method the table does not have.
func TestMiddlewareRewritingTheMethodIsRoutedToIt(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	toCall := func(method, params string) func(mcpmw.Dispatcher) mcpmw.Dispatcher {
		return func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
			return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
				r := *req
				r.Method, r.Params = method, json.RawMessage(params)
				return next.Dispatch(ctx, &r)
			})
		}
	}
	for _, tc := range []struct {
		method, params string
		status         int
		want           string
		outcome        mcpmw.Outcome
	}{
		{"tools/call", `{"name":"echo","arguments":{"message":"rerouted"}}`, 200, `"text":"rerouted"`, mcpmw.OutcomeOK},
		{"tools/call", `{"name":"write_it","arguments":{"message":"rerouted"}}`, 403, `the caller may not use tool \"write_it\"`, mcpmw.OutcomeDenied},
		{"tools/cal", `{}`, 200, "Method not found: tools/cal", mcpmw.OutcomeError},
	} {
		a := &spy{}
		h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{toCall(tc.method, tc.params)}})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, legacy(mcpmw.Version20251125, "1", "tools/list", ""))
		assert.Equal(t, tc.status, w.Code, "%s %s: %s", tc.method, tc.params, w.Body.String())
		assert.Contains(t, w.Body.String(), tc.want)
		require.Len(t, a.records(), 1)
		assert.Equal(t, tc.outcome, a.records()[0].Outcome)
		assert.Equal(t, "tools/list", a.records()[0].Method, "the record is of the request as sent")
	}
}

// The target of a request is found and gated once: a request no
// middleware rewrote asks its caller's permission exactly once, for
// every method with a target (the handler's gate; the method's handler
// takes the target the gate admitted, and asks again only after a
// rewrite, see TestEveryTargetIsGatedAgainAfterARewrite).
func TestTheTargetIsGatedOnce(t *testing.T) {
	t.Parallel()
	reg := testResources()
	reg.AddTools(testTools()...)
	reg.AddPrompts(testPrompts()...)
	passThrough := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			r := *req // a copy, Params untouched: still the request admitted
			return next.Dispatch(ctx, &r)
		})
	}
	for _, tc := range []struct {
		reg            *mcpmw.Registry
		method, params string
	}{
		{reg, "tools/call", `"name":"echo","arguments":{"message":"hi"}`},
		{reg, "prompts/get", `"name":"greet","arguments":{"who":"x"}`},
		{reg, "resources/read", `"uri":"test://static-text"`},
		{reg, "resources/read", `"uri":"test://notes/3"`},
		{completionRegistry(), "completion/complete", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"lang","value":""}`},
	} {
		caller := &canCounter{}
		authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return caller, nil })
		for _, mw := range [][]func(mcpmw.Dispatcher) mcpmw.Dispatcher{nil, {passThrough}} {
			caller.n.Store(0)
			h := mcpmw.New(tc.reg, authn, &spy{}, &mcpmw.Options{Middleware: mw})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, legacy(mcpmw.Version20251125, "1", tc.method, tc.params))
			require.Equal(t, 200, w.Code, "%s: %s", tc.method, w.Body.String())
			require.NotContains(t, w.Body.String(), `"error"`, tc.method)
			assert.EqualValues(t, 1, caller.n.Load(), "%s %s: Can once", tc.method, tc.params)
		}
	}
}
