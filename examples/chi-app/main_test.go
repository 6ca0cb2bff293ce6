package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/examples/internal/redisenv"
	"github.com/mcpmw/mcpmw/internal/redistest"
	"github.com/mcpmw/mcpmw/internal/testproc"
)

// The bearer tokens of the example app, and the revisions it speaks.
const (
	readerToken = "reader-token"
	writerToken = "writer-token"

	v26   = "2026-07-28"
	v1125 = "2025-11-25"
	v0618 = "2025-06-18"
)

// supported is what the app lists in server/discover and -32022 errors.
var supported = []string{v26, v1125, v0618}

// meta26 is the params._meta of a well-formed 2026-07-28 request.
const meta26 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"chi-app-test","version":"0.1.0"}}`

// lockedBuffer is an io.Writer that the handler's goroutines and the test
// may use at the same time.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testConfig is the configuration the in-process tests run the app with:
// the defaults of configFromEnv.
func testConfig() config {
	return config{addr: "127.0.0.1:0", allowedHosts: []string{"localhost", "127.0.0.1"}, ratePerMin: 600, exportDelay: defaultExportDelay}
}

// testApp is one instance of the example app's router, with its own audit
// and log output.
type testApp struct {
	h     http.Handler
	audit *lockedBuffer
	log   *lockedBuffer
}

func newTestApp(c config, extra ...mcpmw.Tool) *testApp {
	a := &testApp{audit: &lockedBuffer{}, log: &lockedBuffer{}}
	a.h = newRouter(c, a.audit, a.log, extra...)
	return a
}

// faultTools are tools the app does not have, for rows 29 and 30: one
// returns a plain error (whose text must not reach the client), one panics.
func faultTools() []mcpmw.Tool {
	schema := json.RawMessage(`{"type":"object"}`)
	return []mcpmw.Tool{
		{
			Name: "fail", Description: "Always fails with an internal error.", Permission: "read", InputSchema: schema,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{}, errors.New("connecting to db: password hunter2 rejected")
			},
		},
		{
			Name: "explode", Description: "Always panics.", Permission: "read", InputSchema: schema,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				panic("explode: nil map in the tool")
			},
		},
	}
}

// --- requests ---------------------------------------------------------------

// request is one HTTP request to /mcp, described so that it can be sent both
// in-process and over the network.
type request struct {
	verb    string      // HTTP method; "" means POST
	header  http.Header // sent as is
	body    string
	id      string // the raw JSON-RPC id in body, for the echo check; "" when none
	chunked bool   // send the body without a Content-Length
}

// set returns a copy of r whose header k holds exactly vs (none: removed).
func (r request) set(k string, vs ...string) request {
	r.header = r.header.Clone()
	r.header.Del(k)
	for _, v := range vs {
		r.header.Add(k, v)
	}
	return r
}

// serverRequest builds r for a handler called in-process (RemoteAddr
// 192.0.2.1:1234, the same client for every request).
func (r request) serverRequest() *http.Request {
	var body io.Reader = strings.NewReader(r.body)
	if r.chunked {
		body = io.MultiReader(body) // not a known length: ContentLength -1
	}
	req := httptest.NewRequest(cmp.Or(r.verb, http.MethodPost), "http://127.0.0.1:8080/mcp", body)
	req.Header = r.header.Clone()
	return req
}

// clientRequest builds r for an http.Client.
func (r request) clientRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), cmp.Or(r.verb, http.MethodPost), url, strings.NewReader(r.body))
	require.NoError(t, err)
	req.Header = r.header.Clone()
	return req
}

// baseHeader holds what every well-behaved client sends.
func baseHeader(token string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return h
}

// jsonrpc returns a JSON-RPC message; id "" makes a notification, params ""
// leaves params out, otherwise params holds the members of the params object.
func jsonrpc(id, method, params string) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0"`)
	if id != "" {
		b.WriteString(`,"id":` + id)
	}
	b.WriteString(`,"method":` + strconv.Quote(method))
	if params != "" {
		b.WriteString(`,"params":{` + params + `}`)
	}
	b.WriteString(`}`)
	return b.String()
}

// modern is a well-formed 2026-07-28 request: MCP-Protocol-Version and
// Mcp-Method headers, and params._meta after the given params members.
func modern(token, id, method, params string) request {
	h := baseHeader(token)
	h.Set("MCP-Protocol-Version", v26)
	h.Set("Mcp-Method", method)
	p := meta26
	if params != "" {
		p = params + "," + meta26
	}
	return request{header: h, body: jsonrpc(id, method, p), id: id}
}

// modernCall is a well-formed 2026-07-28 tools/call, Mcp-Name included.
func modernCall(token, id, tool, args string) request {
	r := modern(token, id, "tools/call", `"name":`+strconv.Quote(tool)+`,"arguments":`+args)
	r.header.Set("Mcp-Name", tool)
	return r
}

// legacy is a request of a revision negotiated through initialize: version
// goes into MCP-Protocol-Version ("" sends no header), and there is no _meta.
func legacy(token, version, id, method, params string) request {
	h := baseHeader(token)
	if version != "" {
		h.Set("MCP-Protocol-Version", version)
	}
	return request{header: h, body: jsonrpc(id, method, params), id: id}
}

// legacyCall is a legacy tools/call.
func legacyCall(token, version, id, tool, args string) request {
	return legacy(token, version, id, "tools/call", `"name":`+strconv.Quote(tool)+`,"arguments":`+args)
}

// initialize is a legacy initialize without MCP-Protocol-Version, the way
// a 2025 client opens.
func initialize(token, id, version string) request {
	return legacy(token, "", id, "initialize",
		`"protocolVersion":`+strconv.Quote(version)+`,"capabilities":{},"clientInfo":{"name":"chi-app-test","version":"0.1.0"}`)
}

// raw is a POST of body with the usual headers and no protocol header.
func raw(token, id, body string) request {
	return request{header: baseHeader(token), body: body, id: id}
}

// --- answers ----------------------------------------------------------------

// reply is a decoded JSON-RPC response.
type reply struct {
	members map[string]json.RawMessage
	result  map[string]json.RawMessage
	err     *rpcError
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// auditWant is what the request's one audit record must say; its status and
// error_code are those of the answer.
type auditWant struct {
	outcome, caller, method, tool string
	target                        string // "" means the same as tool
}

func audited(outcome, caller, method, tool string) *auditWant {
	return &auditWant{outcome: outcome, caller: caller, method: method, tool: tool}
}

// targeted is the audit record of a request acting on target (a prompt, a
// resource URI, a completed template) that is not a tool.
func targeted(outcome, caller, method, target string) *auditWant {
	return &auditWant{outcome: outcome, caller: caller, method: method, target: target}
}

// expect is the whole answer to one request.
type expect struct {
	status int
	code   int               // JSON-RPC error code; 0: a result (or, for 202, nothing)
	noID   bool              // the id could not be read, so none is echoed
	header map[string]string // exact values of response headers
	audit  *auditWant        // nil: not audited
	check  func(t *testing.T, rep reply)
}

// checkAnswer asserts an answer against w. r is the request it answers.
func checkAnswer(t *testing.T, r request, w expect, status int, header http.Header, body []byte) reply {
	t.Helper()
	require.Equal(t, w.status, status, "HTTP status; body: %s", body)
	for k, v := range w.header {
		assert.Equal(t, v, header.Get(k), "response header %s", k)
	}
	if status == http.StatusAccepted {
		assert.Empty(t, body, "a 202 has no body")
		assert.Zero(t, w.code, "test bug: a 202 carries no error code")
		return reply{}
	}
	assert.Equal(t, "application/json", header.Get("Content-Type"))
	var rep reply
	require.NoError(t, json.Unmarshal(body, &rep.members), "body: %s", body)
	assert.JSONEq(t, `"2.0"`, string(rep.members["jsonrpc"]))

	id, hasID := rep.members["id"]
	switch {
	case w.noID || r.id == "":
		assert.True(t, !hasID || string(id) == "null", "no id was readable, yet the answer has id %s", id)
	default:
		assert.Equal(t, r.id, string(id), "the id must come back byte for byte")
	}

	if w.code != 0 {
		require.Contains(t, rep.members, "error", "body: %s", body)
		assert.NotContains(t, rep.members, "result")
		require.NoError(t, json.Unmarshal(rep.members["error"], &rep.err))
		assert.Equal(t, w.code, rep.err.Code, "JSON-RPC error code; message %q", rep.err.Message)
		assert.NotEmpty(t, rep.err.Message)
	} else {
		require.Contains(t, rep.members, "result", "body: %s", body)
		assert.NotContains(t, rep.members, "error")
		require.NoError(t, json.Unmarshal(rep.members["result"], &rep.result), "result: %s", rep.members["result"])
	}
	if w.check != nil {
		w.check(t, rep)
	}
	return rep
}

// checkAudit asserts the audit records a request added: none, or exactly
// one saying what w says.
func checkAudit(t *testing.T, w expect, recs []map[string]any) {
	t.Helper()
	if w.audit == nil {
		assert.Empty(t, recs, "the request must not be audited")
		return
	}
	require.Len(t, recs, 1, "exactly one audit record per request")
	rec := recs[0]
	for _, k := range []string{"outcome", "method", "tool", "status", "caller"} {
		assert.Contains(t, rec, k, "audit record key")
	}
	assert.Equal(t, w.audit.outcome, rec["outcome"], "audit outcome")
	assert.Equal(t, json.Number(strconv.Itoa(w.status)), rec["status"], "audit status")
	assert.Equal(t, w.audit.caller, rec["caller"], "audit caller")
	assert.Equal(t, w.audit.method, rec["method"], "audit method")
	assert.Equal(t, w.audit.tool, rec["tool"], "audit tool")
	assert.Equal(t, cmp.Or(w.audit.target, w.audit.tool), rec["target"], "audit target")
	if w.code == 0 {
		assert.Nil(t, rec["error_code"], "audit error_code must be absent or null")
	} else {
		assert.Equal(t, json.Number(strconv.Itoa(w.code)), rec["error_code"], "audit error_code")
	}
}

// auditRecords returns the records (lines with an "outcome" key) of the
// JSON-lines audit output out; every line must be a JSON object.
func auditRecords(t *testing.T, out string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var m map[string]any
		require.NoError(t, dec.Decode(&m), "audit line %q", line)
		if _, ok := m["outcome"]; ok {
			recs = append(recs, m)
		}
	}
	return recs
}

// send serves r in-process and returns the recorder and the audit records
// the request added.
func (a *testApp) send(t *testing.T, r request) (*httptest.ResponseRecorder, []map[string]any) {
	t.Helper()
	before := len(auditRecords(t, a.audit.String()))
	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, r.serverRequest())
	return rec, auditRecords(t, a.audit.String())[before:]
}

// exchange sends r and checks the answer and its audit record against w.
func (a *testApp) exchange(t *testing.T, r request, w expect) reply {
	t.Helper()
	rec, recs := a.send(t, r)
	rep := checkAnswer(t, r, w, rec.Code, rec.Header(), rec.Body.Bytes())
	checkAudit(t, w, recs)
	return rep
}

// --- result checks ----------------------------------------------------------

// str decodes a JSON string member.
func str(t *testing.T, m map[string]json.RawMessage, key string) string {
	t.Helper()
	var s string
	require.Contains(t, m, key)
	require.NoError(t, json.Unmarshal(m[key], &s), "%s: %s", key, m[key])
	return s
}

// isModern asserts the 2026-07-28 envelope fields of a result.
func isModern(t *testing.T, res map[string]json.RawMessage) {
	t.Helper()
	assert.Equal(t, "complete", str(t, res, "resultType"))
	var meta struct {
		Info struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"io.modelcontextprotocol/serverInfo"`
	}
	require.Contains(t, res, "_meta")
	require.NoError(t, json.Unmarshal(res["_meta"], &meta))
	assert.Equal(t, "chi-app", meta.Info.Name)
	assert.Equal(t, "1.0.0", meta.Info.Version)
}

// isLegacy asserts that a result carries none of the 2026-07-28 fields.
func isLegacy(t *testing.T, res map[string]json.RawMessage) {
	t.Helper()
	for _, k := range []string{"resultType", "ttlMs", "cacheScope"} {
		assert.NotContains(t, res, k, "legacy results have no %s", k)
	}
}

func shape(t *testing.T, rep reply, modernRev bool) {
	t.Helper()
	if modernRev {
		isModern(t, rep.result)
	} else {
		isLegacy(t, rep.result)
	}
}

// listed checks a tools/list result: exactly these tools, in order.
func listed(modernRev bool, names ...string) func(t *testing.T, rep reply) {
	return func(t *testing.T, rep reply) {
		shape(t, rep, modernRev)
		var tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		require.NoError(t, json.Unmarshal(rep.result["tools"], &tools))
		got := make([]string, 0, len(tools))
		for _, tl := range tools {
			got = append(got, tl.Name)
			assert.NotEmpty(t, tl.InputSchema, "tool %s has an inputSchema", tl.Name)
		}
		assert.Equal(t, names, got, "tools listed")
		assert.NotContains(t, rep.result, "nextCursor")
		if modernRev {
			assert.Equal(t, "private", str(t, rep.result, "cacheScope"), "a filtered list is private")
			assert.JSONEq(t, `60000`, string(rep.result["ttlMs"]))
		}
	}
}

// toolResult is a decoded CallToolResult.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (r toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func decodeTool(t *testing.T, rep reply) toolResult {
	t.Helper()
	var tr toolResult
	require.NoError(t, json.Unmarshal(rep.members["result"], &tr))
	return tr
}

// toolOK checks a successful tools/call result with this text and, when
// structured is not "", this structuredContent.
func toolOK(modernRev bool, text, structured string) func(t *testing.T, rep reply) {
	return func(t *testing.T, rep reply) {
		shape(t, rep, modernRev)
		tr := decodeTool(t, rep)
		assert.False(t, tr.IsError, "isError")
		assert.Equal(t, text, tr.text())
		if structured != "" {
			assert.JSONEq(t, structured, string(tr.StructuredContent))
		}
	}
}

// toolFailed checks an isError tools/call result whose text holds each of
// the fragments.
func toolFailed(modernRev bool, fragments ...string) func(t *testing.T, rep reply) {
	return func(t *testing.T, rep reply) {
		shape(t, rep, modernRev)
		tr := decodeTool(t, rep)
		assert.True(t, tr.IsError, "isError")
		for _, f := range fragments {
			assert.Contains(t, tr.text(), f)
		}
	}
}

// initialized checks an initialize result negotiating version.
func initialized(version string) func(t *testing.T, rep reply) {
	return func(t *testing.T, rep reply) {
		isLegacy(t, rep.result)
		assert.Equal(t, version, str(t, rep.result, "protocolVersion"))
		var info struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		}
		require.NoError(t, json.Unmarshal(rep.result["serverInfo"], &info))
		assert.Equal(t, "chi-app", info.Name)
		assert.Equal(t, "1.0.0", info.Version)
		assert.Contains(t, string(rep.result["capabilities"]), `"tools"`)
		assert.NotEmpty(t, str(t, rep.result, "instructions"))
	}
}

// discovered checks a server/discover result.
func discovered(t *testing.T, rep reply) {
	isModern(t, rep.result)
	var vs []string
	require.NoError(t, json.Unmarshal(rep.result["supportedVersions"], &vs))
	assert.Equal(t, supported, vs)
	assert.Contains(t, string(rep.result["capabilities"]), `"tools"`)
	assert.Equal(t, "public", str(t, rep.result, "cacheScope"))
	assert.JSONEq(t, `60000`, string(rep.result["ttlMs"]))
}

// unsupported checks the data of a -32022 error.
func unsupported(requested string) func(t *testing.T, rep reply) {
	return func(t *testing.T, rep reply) {
		var data struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}
		require.NoError(t, json.Unmarshal(rep.err.Data, &data), "data: %s", rep.err.Data)
		assert.Equal(t, supported, data.Supported)
		assert.Equal(t, requested, data.Requested)
	}
}

// emptyResult checks a ping result: an object with nothing in it (but the
// envelope fields on 2026-07-28, which has no ping).
func emptyResult(t *testing.T, rep reply) {
	isLegacy(t, rep.result)
	assert.Empty(t, rep.result)
}

// messageLacks checks that the error message does not leak text.
func messageLacks(text string) func(t *testing.T, rep reply) {
	return func(t *testing.T, rep reply) {
		assert.NotContains(t, rep.err.Message, text)
		assert.NotContains(t, string(rep.err.Data), text)
	}
}

// --- the status table -------------------------------------------------------

// rowCase is one request of one row of the status table (docs/status.md).
type rowCase struct {
	row    int
	name   string
	cfg    *config   // nil: testConfig()
	faults bool      // serve faultTools too
	before []request // sent first, unchecked but for not being rate limited
	req    request
	want   expect
}

func statusTableCases() []rowCase {
	const (
		ok, errored, denied, accepted = "ok", "error", "denied", "accepted"
		reader, writer                = "reader", "writer"
	)
	rate2 := config{allowedHosts: []string{"localhost", "127.0.0.1"}, ratePerMin: 2}
	ping := legacy(readerToken, v1125, "1", "ping", "")
	list26 := modern(readerToken, "7", "tools/list", "")
	bigMessage := strings.Repeat("x", 4<<20)
	big := modernCall(readerToken, "1", "echo", `{"message":"`+bigMessage+`"}`)
	bigChunked := big
	bigChunked.chunked = true
	retryAfter := map[string]string{"Retry-After": "30", "X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0"} // 2 a minute: one more every 30 s
	allowPost := map[string]string{"Allow": "POST"}
	challenge := map[string]string{"WWW-Authenticate": "Bearer"}
	insufficient := map[string]string{"WWW-Authenticate": `Bearer error="insufficient_scope", scope="write"`}
	// bad26 is a 2026-07-28 tools/list whose params are exactly params.
	bad26 := func(id, params string) request {
		r := modern(readerToken, id, "tools/list", "")
		r.body = `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"` + params + `}`
		return r
	}
	// metaOf is a 2026-07-28 tools/list whose _meta holds exactly members.
	metaOf := func(id, members string) request {
		return bad26(id, `,"params":{"_meta":{`+members+`}}`)
	}
	const pv, caps = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`, `"io.modelcontextprotocol/clientCapabilities":{}`
	// nestedEcho is an echo whose arguments carry n nested arrays: the body
	// is level 1, params 2, arguments 3, so the body is 3+n levels deep. The
	// empty "w" object puts more brackets in the body than levels, so the
	// depth is measured, not inferred from the bracket count.
	nestedEcho := func(id string, n int) request {
		return legacyCall(readerToken, v1125, id, "echo", `{"message":"deep","w":{},"v":`+strings.Repeat("[", n)+strings.Repeat("]", n)+`}`)
	}
	versioned := func(header, meta string) request {
		r := metaOf(`"v"`, `"io.modelcontextprotocol/protocolVersion":`+strconv.Quote(meta)+`,`+caps)
		return r.set("MCP-Protocol-Version", header)
	}

	return []rowCase{
		// 1: rate limited, before anything else (even the method and authentication checks).
		{row: 1, name: "third POST in a minute", cfg: &rate2, before: []request{ping, ping}, req: ping,
			want: expect{status: 429, code: -32600, noID: true, header: retryAfter}},
		{row: 1, name: "rate limit runs before authentication", cfg: &rate2, before: []request{ping, ping},
			req:  legacy("", v1125, "1", "ping", ""),
			want: expect{status: 429, code: -32600, noID: true, header: retryAfter}},
		{row: 1, name: "rate limit runs before the method check", cfg: &rate2, before: []request{ping, ping},
			req:  request{verb: http.MethodGet, header: baseHeader(readerToken)},
			want: expect{status: 429, code: -32600, noID: true, header: retryAfter}},

		// 2: anything but POST.
		{row: 2, name: "GET", req: request{verb: http.MethodGet, header: baseHeader(readerToken)},
			want: expect{status: 405, code: -32600, noID: true, header: allowPost}},
		{row: 2, name: "GET without credentials", req: request{verb: http.MethodGet, header: http.Header{"Accept": {"text/event-stream"}}},
			want: expect{status: 405, code: -32600, noID: true, header: allowPost}},
		{row: 2, name: "DELETE", req: request{verb: http.MethodDelete, header: baseHeader(readerToken)},
			want: expect{status: 405, code: -32600, noID: true, header: allowPost}},
		{row: 2, name: "PUT with a body", req: ping.setVerb(http.MethodPut),
			want: expect{status: 405, code: -32600, noID: true, header: allowPost}},

		// 3: Origin, checked before authentication (so there is no caller).
		{row: 3, name: "foreign Origin", req: list26.set("Origin", "http://evil.example"),
			want: expect{status: 403, code: -32600, noID: true, audit: audited(denied, "", "", "")}},
		{row: 3, name: "look-alike Origin", req: list26.set("Origin", "http://localhost.evil.example"),
			want: expect{status: 403, code: -32600, noID: true, audit: audited(denied, "", "", "")}},
		{row: 3, name: "Origin null", req: list26.set("Origin", "null"),
			want: expect{status: 403, code: -32600, noID: true, audit: audited(denied, "", "", "")}},
		{row: 3, name: "malformed Origin", req: list26.set("Origin", "localhost"),
			want: expect{status: 403, code: -32600, noID: true, audit: audited(denied, "", "", "")}},
		{row: 3, name: "Origin with a path", req: list26.set("Origin", "http://localhost/app"),
			want: expect{status: 403, code: -32600, noID: true, audit: audited(denied, "", "", "")}},
		{row: 3, name: "Origin with an empty query", req: list26.set("Origin", "http://localhost?"),
			want: expect{status: 403, code: -32600, noID: true, audit: audited(denied, "", "", "")}},
		{row: 3, name: "Origin repeated", req: list26.set("Origin", "http://localhost", "http://localhost"),
			want: expect{status: 403, code: -32600, noID: true, audit: audited(denied, "", "", "")}},
		{row: 3, name: "foreign Origin without credentials", req: legacy("", v1125, "1", "ping", "").set("Origin", "https://evil.example"),
			want: expect{status: 403, code: -32600, noID: true, audit: audited(denied, "", "", "")}},

		// 4: authentication.
		{row: 4, name: "no Authorization", req: modern("", "1", "tools/list", ""),
			want: expect{status: 401, code: -32600, noID: true, header: challenge, audit: audited(denied, "", "", "")}},
		{row: 4, name: "unknown token", req: modern("wrong-token", "1", "tools/list", ""),
			want: expect{status: 401, code: -32600, noID: true, header: challenge, audit: audited(denied, "", "", "")}},
		{row: 4, name: "Basic scheme", req: list26.set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("reader:reader-token"))),
			want: expect{status: 401, code: -32600, noID: true, header: challenge, audit: audited(denied, "", "", "")}},
		{row: 4, name: "empty bearer", req: list26.set("Authorization", "Bearer "),
			want: expect{status: 401, code: -32600, noID: true, header: challenge, audit: audited(denied, "", "", "")}},
		{row: 4, name: "legacy initialize without credentials", req: initialize("", "1", v1125),
			want: expect{status: 401, code: -32600, noID: true, header: challenge, audit: audited(denied, "", "", "")}},

		// 6: Content-Type.
		{row: 6, name: "text/plain", req: list26.set("Content-Type", "text/plain"),
			want: expect{status: 415, code: -32600, noID: true, audit: audited(errored, reader, "", "")}},
		{row: 6, name: "missing", req: list26.set("Content-Type"),
			want: expect{status: 415, code: -32600, noID: true, audit: audited(errored, reader, "", "")}},
		{row: 6, name: "form", req: list26.set("Content-Type", "application/x-www-form-urlencoded"),
			want: expect{status: 415, code: -32600, noID: true, audit: audited(errored, reader, "", "")}},

		// 7: Accept.
		{row: 7, name: "text/html", req: list26.set("Accept", "text/html"),
			want: expect{status: 406, code: -32600, noID: true, audit: audited(errored, reader, "", "")}},
		{row: 7, name: "image/png and text/plain", req: list26.set("Accept", "image/png, text/plain"),
			want: expect{status: 406, code: -32600, noID: true, audit: audited(errored, reader, "", "")}},

		// 8: body over 4 MiB.
		{row: 8, name: "with Content-Length", req: big,
			want: expect{status: 413, code: -32600, noID: true, audit: audited(errored, reader, "", "")}},
		{row: 8, name: "chunked", req: bigChunked,
			want: expect{status: 413, code: -32600, noID: true, audit: audited(errored, reader, "", "")}},

		// 9: not JSON.
		{row: 9, name: "garbage", req: raw(readerToken, "", `{not json`),
			want: expect{status: 400, code: -32700, noID: true, audit: audited(errored, reader, "", "")}},
		{row: 9, name: "truncated", req: raw(readerToken, "", `{"jsonrpc":"2.0","id":1,"method":"ping"`),
			want: expect{status: 400, code: -32700, noID: true, audit: audited(errored, reader, "", "")}},
		{row: 9, name: "empty body", req: raw(readerToken, "", ``),
			want: expect{status: 400, code: -32700, noID: true, audit: audited(errored, reader, "", "")}},

		// 10: not one JSON-RPC request.
		{row: 10, name: "batch array", req: raw(readerToken, "", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`),
			want: expect{status: 400, code: -32600, noID: true, audit: audited(errored, reader, "", "")}},
		{row: 10, name: "a string", req: raw(readerToken, "", `"ping"`),
			want: expect{status: 400, code: -32600, noID: true, audit: audited(errored, reader, "", "")}},
		{row: 10, name: "jsonrpc 1.0", req: raw(readerToken, `7`, `{"jsonrpc":"1.0","id":7,"method":"ping"}`),
			want: expect{status: 400, code: -32600, audit: audited(errored, reader, "", "")}},
		{row: 10, name: "jsonrpc missing", req: raw(readerToken, `"a\u00e9"`, `{"id":"a\u00e9","method":"ping"}`),
			want: expect{status: 400, code: -32600, audit: audited(errored, reader, "", "")}},
		{row: 10, name: "id null", req: raw(readerToken, "", `{"jsonrpc":"2.0","id":null,"method":"ping"}`),
			want: expect{status: 400, code: -32600, noID: true, audit: audited(errored, reader, "", "")}},
		{row: 10, name: "id an object", req: raw(readerToken, "", `{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`),
			want: expect{status: 400, code: -32600, noID: true, audit: audited(errored, reader, "", "")}},
		{row: 10, name: "no method", req: raw(readerToken, `"x"`, `{"jsonrpc":"2.0","id":"x"}`),
			want: expect{status: 400, code: -32600, audit: audited(errored, reader, "", "")}},
		{row: 10, name: "method empty", req: raw(readerToken, `3`, `{"jsonrpc":"2.0","id":3,"method":""}`),
			want: expect{status: 400, code: -32600, audit: audited(errored, reader, "", "")}},
		{row: 10, name: "duplicate id", req: raw(readerToken, "", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`),
			want: expect{status: 400, code: -32600, noID: true, audit: audited(errored, reader, "", "")}},
		{row: 10, name: "duplicate method", req: raw(readerToken, `9`, `{"jsonrpc":"2.0","id":9,"method":"ping","method":"tools/list"}`),
			want: expect{status: 400, code: -32600, audit: audited(errored, reader, "", "")}},
		{row: 10, name: "params an array", req: raw(readerToken, `"abc"`, `{"jsonrpc":"2.0","id":"abc","method":"tools/list","params":[]}`),
			want: expect{status: 400, code: -32600, audit: audited(errored, reader, "tools/list", "")}},
		{row: 10, name: "params a string", req: raw(readerToken, `12`, `{"jsonrpc":"2.0","id":12,"method":"tools/list","params":"x"}`),
			want: expect{status: 400, code: -32600, audit: audited(errored, reader, "tools/list", "")}},
		{row: 10, name: "result and method", req: raw(readerToken, `4`, `{"jsonrpc":"2.0","id":4,"method":"ping","result":{}}`),
			want: expect{status: 400, code: -32600, audit: audited(errored, reader, "", "")}},
		{row: 10, name: "nesting 129 levels deep", req: nestedEcho(`"n129"`, 126),
			want: expect{status: 400, code: -32600, audit: audited(errored, reader, "", "")}},

		// 11: notifications.
		{row: 11, name: "legacy, no header", req: legacy(readerToken, "", "", "notifications/initialized", ""),
			want: expect{status: 202, audit: audited(accepted, reader, "notifications/initialized", "")}},
		{row: 11, name: "legacy, with header", req: legacy(readerToken, v0618, "", "notifications/initialized", ""),
			want: expect{status: 202, audit: audited(accepted, reader, "notifications/initialized", "")}},
		{row: 11, name: "2026-07-28", req: modern(readerToken, "", "notifications/cancelled", `"requestId":1`),
			want: expect{status: 202, audit: audited(accepted, reader, "notifications/cancelled", "")}},

		// 12: a client's JSON-RPC response on a legacy revision.
		{row: 12, name: "result, no header", req: raw(readerToken, `5`, `{"jsonrpc":"2.0","id":5,"result":{}}`),
			want: expect{status: 202, audit: audited(accepted, reader, "", "")}},
		{row: 12, name: "result, 2025-06-18", req: raw(readerToken, `5`, `{"jsonrpc":"2.0","id":5,"result":{}}`).set("MCP-Protocol-Version", v0618),
			want: expect{status: 202, audit: audited(accepted, reader, "", "")}},
		{row: 12, name: "error, 2025-11-25", req: raw(readerToken, `"s1"`, `{"jsonrpc":"2.0","id":"s1","error":{"code":-1,"message":"declined"}}`).set("MCP-Protocol-Version", v1125),
			want: expect{status: 202, audit: audited(accepted, reader, "", "")}},

		// 13: ... and on 2026-07-28 (a response's id names no request of the client's: nothing is echoed).
		{row: 13, name: "result", req: raw(readerToken, `5`, `{"jsonrpc":"2.0","id":5,"result":{}}`).set("MCP-Protocol-Version", v26),
			want: expect{status: 400, code: -32600, noID: true, audit: audited(errored, reader, "", "")}},

		// 14: 2026-07-28 without MCP-Protocol-Version.
		{row: 14, name: "tools/list", req: list26.set("MCP-Protocol-Version"),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/list", "")}},
		{row: 14, name: "tools/call", req: modernCall(readerToken, `"c"`, "echo", `{"message":"hi"}`).set("MCP-Protocol-Version"),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/call", "echo")}},

		// 15: params, _meta and their fields.
		{row: 15, name: "params missing", req: bad26(`1`, ``),
			want: expect{status: 400, code: -32602, audit: audited(errored, reader, "tools/list", "")}},
		{row: 15, name: "_meta missing", req: bad26(`2`, `,"params":{}`),
			want: expect{status: 400, code: -32602, audit: audited(errored, reader, "tools/list", "")}},
		{row: 15, name: "_meta a string", req: bad26(`3`, `,"params":{"_meta":"2026-07-28"}`),
			want: expect{status: 400, code: -32602, audit: audited(errored, reader, "tools/list", "")}},
		{row: 15, name: "_meta null", req: bad26(`4`, `,"params":{"_meta":null}`),
			want: expect{status: 400, code: -32602, audit: audited(errored, reader, "tools/list", "")}},
		{row: 15, name: "protocolVersion missing", req: metaOf(`5`, caps),
			want: expect{status: 400, code: -32602, audit: audited(errored, reader, "tools/list", "")}},
		{row: 15, name: "protocolVersion a number", req: metaOf(`6`, `"io.modelcontextprotocol/protocolVersion":20260728,`+caps),
			want: expect{status: 400, code: -32602, audit: audited(errored, reader, "tools/list", "")}},
		{row: 15, name: "clientCapabilities missing", req: metaOf(`7`, pv),
			want: expect{status: 400, code: -32602, audit: audited(errored, reader, "tools/list", "")}},
		{row: 15, name: "clientCapabilities an array", req: metaOf(`8`, pv+`,"io.modelcontextprotocol/clientCapabilities":[]`),
			want: expect{status: 400, code: -32602, audit: audited(errored, reader, "tools/list", "")}},
		{row: 15, name: "clientCapabilities null", req: metaOf(`9`, pv+`,"io.modelcontextprotocol/clientCapabilities":null`),
			want: expect{status: 400, code: -32602, audit: audited(errored, reader, "tools/list", "")}},
		{row: 15, name: "logLevel unknown", req: metaOf(`10`, pv+`,`+caps+`,"io.modelcontextprotocol/logLevel":"verbose"`),
			want: expect{status: 400, code: -32602, audit: audited(errored, reader, "tools/list", "")}},
		{row: 15, name: "logLevel a number", req: metaOf(`11`, pv+`,`+caps+`,"io.modelcontextprotocol/logLevel":3`),
			want: expect{status: 400, code: -32602, audit: audited(errored, reader, "tools/list", "")}},

		// 16: header and _meta disagree.
		{row: 16, name: "_meta v999.0.0", req: versioned(v26, "v999.0.0"),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/list", "")}},
		{row: 16, name: "header 2099-01-01", req: versioned("2099-01-01", v26),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/list", "")}},

		// 17: an unserved revision in both.
		{row: 17, name: "2099-01-01", req: versioned("2099-01-01", "2099-01-01"),
			want: expect{status: 400, code: -32022, audit: audited(errored, reader, "tools/list", ""), check: unsupported("2099-01-01")}},
		{row: 17, name: "legacy revision in _meta", req: versioned(v1125, v1125),
			want: expect{status: 400, code: -32022, audit: audited(errored, reader, "tools/list", ""), check: unsupported(v1125)}},

		// 18: Mcp-Method and Mcp-Name.
		{row: 18, name: "Mcp-Method missing", req: list26.set("Mcp-Method"),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/list", "")}},
		{row: 18, name: "Mcp-Method mismatched", req: list26.set("Mcp-Method", "tools/call"),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/list", "")}},
		{row: 18, name: "Mcp-Method TOOLS/LIST", req: list26.set("Mcp-Method", "TOOLS/LIST"),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/list", "")}},
		{row: 18, name: "Mcp-Method repeated", req: list26.set("Mcp-Method", "tools/list", "tools/list"),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/list", "")}},
		{row: 18, name: "Mcp-Name missing", req: modernCall(readerToken, `21`, "echo", `{"message":"hi"}`).set("Mcp-Name"),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/call", "echo")}},
		{row: 18, name: "Mcp-Name mismatched", req: modernCall(readerToken, `22`, "echo", `{"message":"hi"}`).set("Mcp-Name", "add"),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/call", "echo")}},
		{row: 18, name: "Mcp-Name malformed base64 sentinel", req: modernCall(readerToken, `23`, "echo", `{"message":"hi"}`).set("Mcp-Name", "=?base64?!!!!?="),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/call", "echo")}},
		{row: 18, name: "Mcp-Name base64 of another name", req: modernCall(readerToken, `24`, "echo", `{"message":"hi"}`).set("Mcp-Name", "=?base64?"+base64.StdEncoding.EncodeToString([]byte("add"))+"?="),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/call", "echo")}},

		// 19: methods 2026-07-28 does not have, or this server does not offer.
		{row: 19, name: "initialize", req: modern(readerToken, `1`, "initialize", `"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"x","version":"1"}`),
			want: expect{status: 404, code: -32601, audit: audited(errored, reader, "initialize", "")}},
		{row: 19, name: "ping", req: modern(readerToken, `2`, "ping", ""),
			want: expect{status: 404, code: -32601, audit: audited(errored, reader, "ping", "")}},
		{row: 19, name: "logging/setLevel", req: modern(readerToken, `3`, "logging/setLevel", `"level":"info"`),
			want: expect{status: 404, code: -32601, audit: audited(errored, reader, "logging/setLevel", "")}},
		{row: 19, name: "resources/subscribe", req: modern(readerToken, `4`, "resources/subscribe", `"uri":"app://readme"`),
			want: expect{status: 404, code: -32601, audit: audited(errored, reader, "resources/subscribe", "")}},
		{row: 19, name: "tasks/list (the tasks extension has none)", req: modern(readerToken, `5`, "tasks/list", ""),
			want: expect{status: 404, code: -32601, audit: audited(errored, reader, "tasks/list", "")}},
		{row: 19, name: "unknown/method", req: modern(readerToken, `6`, "unknown/method", ""),
			want: expect{status: 404, code: -32601, audit: audited(errored, reader, "unknown/method", "")}},

		// 20: legacy without MCP-Protocol-Version.
		{row: 20, name: "tools/list", req: legacy(readerToken, "", `1`, "tools/list", ""),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/list", "")}},
		{row: 20, name: "tools/call", req: legacyCall(readerToken, "", `2`, "echo", `{"message":"hi"}`),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "tools/call", "echo")}},
		{row: 20, name: "ping", req: legacy(readerToken, "", `3`, "ping", ""),
			want: expect{status: 400, code: -32020, audit: audited(errored, reader, "ping", "")}},

		// 21: legacy revisions not served.
		{row: 21, name: "2024-11-05", req: legacy(readerToken, "2024-11-05", `1`, "tools/list", ""),
			want: expect{status: 400, code: -32022, audit: audited(errored, reader, "tools/list", ""), check: unsupported("2024-11-05")}},
		{row: 21, name: "2025-03-26", req: legacy(readerToken, "2025-03-26", `2`, "ping", ""),
			want: expect{status: 400, code: -32022, audit: audited(errored, reader, "ping", ""), check: unsupported("2025-03-26")}},

		// 22: legacy unknown method: 200, not 404.
		{row: 22, name: "unknown/method", req: legacy(readerToken, v1125, `1`, "unknown/method", ""),
			want: expect{status: 200, code: -32601, audit: audited(errored, reader, "unknown/method", "")}},
		{row: 22, name: "server/discover is 2026 only", req: legacy(readerToken, v0618, `2`, "server/discover", ""),
			want: expect{status: 200, code: -32601, audit: audited(errored, reader, "server/discover", "")}},
		{row: 22, name: "subscriptions/listen is 2026 only", req: legacy(readerToken, v1125, `3`, "subscriptions/listen", `"notifications":{}`),
			want: expect{status: 200, code: -32601, audit: audited(errored, reader, "subscriptions/listen", "")}},

		// 42: a caller without the permission of a resource, prompt or template.
		{row: 42, name: "resources/read app://stats", req: resourceRead(readerToken, v26, `1`, "app://stats"),
			want: expect{status: 403, code: -32602, header: map[string]string{"WWW-Authenticate": `Bearer error="insufficient_scope", scope="write"`},
				audit: targeted("denied", reader, "resources/read", "app://stats")}},
		{row: 42, name: "prompts/get draft_note", req: promptGet(readerToken, `2`, "draft_note", `{"topic":"x"}`),
			want: expect{status: 403, code: -32602, audit: targeted("denied", reader, "prompts/get", "draft_note")}},
		{row: 42, name: "completion/complete draft_note", req: complete(readerToken, `3`, `{"type":"ref/prompt","name":"draft_note"}`, "topic", "", ""),
			want: expect{status: 403, code: -32602, audit: targeted("denied", reader, "completion/complete", "draft_note")}},

		// 43: resource not found, per revision.
		{row: 43, name: "2026", req: resourceRead(readerToken, v26, `1`, "notes://42"),
			want: expect{status: 200, code: -32602, audit: targeted(errored, reader, "resources/read", "notes://42")}},
		{row: 43, name: "2025-11-25", req: resourceRead(readerToken, v1125, `2`, "app://nothing"),
			want: expect{status: 200, code: -32002, audit: targeted(errored, reader, "resources/read", "app://nothing")}},

		// 44: prompts/get and completion/complete refusals.
		{row: 44, name: "unknown prompt", req: promptGet(readerToken, `1`, "nope", ""),
			want: expect{status: 200, code: -32602, audit: targeted(errored, reader, "prompts/get", "nope")}},
		{row: 44, name: "required argument missing", req: promptGet(writerToken, `2`, "draft_note", `{}`),
			want: expect{status: 200, code: -32602, audit: targeted(errored, "writer", "prompts/get", "draft_note")}},
		{row: 44, name: "argument not a string", req: promptGet(readerToken, `3`, "summarize_notes", `{"style":1}`),
			want: expect{status: 200, code: -32602, audit: targeted(errored, reader, "prompts/get", "summarize_notes")}},
		{row: 44, name: "completion of an unknown template", req: complete(readerToken, `4`, `{"type":"ref/resource","uri":"x://{y}"}`, "y", "", ""),
			want: expect{status: 200, code: -32602, audit: targeted(errored, reader, "completion/complete", "x://{y}")}},

		// 45: the resource, prompt and completion methods.
		{row: 45, name: "resources/list", req: modern(readerToken, `1`, "resources/list", ""),
			want: expect{status: 200, audit: audited("ok", reader, "resources/list", "")}},
		{row: 45, name: "resources/templates/list", req: legacy(readerToken, v0618, `2`, "resources/templates/list", ""),
			want: expect{status: 200, audit: audited("ok", reader, "resources/templates/list", "")}},
		{row: 45, name: "resources/read", req: resourceRead(readerToken, v1125, `3`, "app://readme"),
			want: expect{status: 200, audit: targeted("ok", reader, "resources/read", "app://readme")}},
		{row: 45, name: "prompts/list", req: modern(readerToken, `4`, "prompts/list", ""),
			want: expect{status: 200, audit: audited("ok", reader, "prompts/list", "")}},
		{row: 45, name: "prompts/get", req: promptGet(readerToken, `5`, "summarize_notes", ""),
			want: expect{status: 200, audit: targeted("ok", reader, "prompts/get", "summarize_notes")}},
		{row: 45, name: "completion/complete", req: complete(readerToken, `6`, `{"type":"ref/prompt","name":"summarize_notes"}`, "style", "b", ""),
			want: expect{status: 200, audit: targeted("ok", reader, "completion/complete", "summarize_notes")}},

		// 46: legacy subscriptions, answered statelessly.
		{row: 46, name: "resources/subscribe", req: legacy(readerToken, v1125, `1`, "resources/subscribe", `"uri":"app://readme"`),
			want: expect{status: 200, audit: targeted("ok", reader, "resources/subscribe", "app://readme"), check: emptyResult}},
		{row: 46, name: "resources/unsubscribe", req: legacy(readerToken, v0618, `2`, "resources/unsubscribe", `"uri":"app://readme"`),
			want: expect{status: 200, audit: targeted("ok", reader, "resources/unsubscribe", "app://readme"), check: emptyResult}},

		// 23: the protocol methods.
		{row: 23, name: "server/discover", req: modern(readerToken, `1`, "server/discover", ""),
			want: expect{status: 200, audit: audited(ok, reader, "server/discover", ""), check: discovered}},
		{row: 23, name: "initialize 2025-06-18 is echoed", req: initialize(readerToken, `"init"`, v0618),
			want: expect{status: 200, audit: audited(ok, reader, "initialize", ""), check: initialized(v0618)}},
		{row: 23, name: "initialize 2025-11-25", req: initialize(writerToken, `2`, v1125),
			want: expect{status: 200, audit: audited(ok, writer, "initialize", ""), check: initialized(v1125)}},
		{row: 23, name: "initialize 2024-11-05 gets 2025-11-25", req: initialize(readerToken, `3`, "2024-11-05"),
			want: expect{status: 200, audit: audited(ok, reader, "initialize", ""), check: initialized(v1125)}},
		{row: 23, name: "initialize 2099-01-01 gets 2025-11-25", req: initialize(readerToken, `4`, "2099-01-01"),
			want: expect{status: 200, audit: audited(ok, reader, "initialize", ""), check: initialized(v1125)}},
		{row: 23, name: "initialize with the header", req: initialize(readerToken, `5`, v1125).set("MCP-Protocol-Version", v1125),
			want: expect{status: 200, audit: audited(ok, reader, "initialize", ""), check: initialized(v1125)}},
		{row: 23, name: "ping", req: legacy(readerToken, v1125, `6`, "ping", ""),
			want: expect{status: 200, audit: audited(ok, reader, "ping", ""), check: emptyResult}},
		{row: 23, name: "tools/list 2026 reader", req: list26,
			want: expect{status: 200, audit: audited(ok, reader, "tools/list", ""), check: listed(true, "echo", "add", "notes_list", "notes_export")}},
		{row: 23, name: "tools/list 2026 writer", req: modern(writerToken, `8`, "tools/list", ""),
			want: expect{status: 200, audit: audited(ok, writer, "tools/list", ""), check: listed(true, "echo", "add", "note_create", "note_delete", "notes_list", "notes_export")}},
		{row: 23, name: "tools/list 2025-06-18 reader", req: legacy(readerToken, v0618, `9`, "tools/list", ""),
			want: expect{status: 200, audit: audited(ok, reader, "tools/list", ""), check: listed(false, "echo", "add", "notes_list", "notes_export")}},
		{row: 23, name: "tools/list 2025-11-25 writer", req: legacy(writerToken, v1125, `10`, "tools/list", `"cursor":null`),
			want: expect{status: 200, audit: audited(ok, writer, "tools/list", ""), check: listed(false, "echo", "add", "note_create", "note_delete", "notes_list", "notes_export")}},
		{row: 23, name: "allowed Origin with a port", req: list26.set("Origin", "http://localhost:3000"),
			want: expect{status: 200, audit: audited(ok, reader, "tools/list", ""), check: listed(true, "echo", "add", "notes_list", "notes_export")}},
		{row: 23, name: "Content-Type with charset, Accept */*, logLevel", req: metaOf(`11`, pv+`,`+caps+`,"io.modelcontextprotocol/logLevel":"info"`).
			set("Content-Type", "application/json; charset=utf-8").set("Accept", "*/*"),
			want: expect{status: 200, audit: audited(ok, reader, "tools/list", ""), check: listed(true, "echo", "add", "notes_list", "notes_export")}},

		// 24: a cursor this server did not issue.
		{row: 24, name: "2026", req: modern(readerToken, `1`, "tools/list", `"cursor":"bogus"`),
			want: expect{status: 200, code: -32602, audit: audited(errored, reader, "tools/list", "")}},
		{row: 24, name: "legacy", req: legacy(readerToken, v1125, `2`, "tools/list", `"cursor":"bogus"`),
			want: expect{status: 200, code: -32602, audit: audited(errored, reader, "tools/list", "")}},
		{row: 24, name: "a number", req: modern(readerToken, `3`, "tools/list", `"cursor":5`),
			want: expect{status: 200, code: -32602, audit: audited(errored, reader, "tools/list", "")}},

		// 25: tools/call params.
		{row: 25, name: "unknown tool", req: modernCall(readerToken, `1`, "nope", `{}`),
			want: expect{status: 200, code: -32602, audit: audited(errored, reader, "tools/call", "nope")}},
		{row: 25, name: "unknown tool, legacy", req: legacyCall(readerToken, v0618, `2`, "nope", `{}`),
			want: expect{status: 200, code: -32602, audit: audited(errored, reader, "tools/call", "nope")}},
		{row: 25, name: "name missing", req: modern(readerToken, `3`, "tools/call", `"arguments":{}`),
			want: expect{status: 200, code: -32602, audit: audited(errored, reader, "tools/call", "")}},
		{row: 25, name: "name missing, legacy", req: legacy(readerToken, v1125, `4`, "tools/call", `"arguments":{}`),
			want: expect{status: 200, code: -32602, audit: audited(errored, reader, "tools/call", "")}},
		{row: 25, name: "arguments an array", req: modernCall(readerToken, `5`, "echo", `["hi"]`),
			want: expect{status: 200, code: -32602, audit: audited(errored, reader, "tools/call", "echo")}},
		{row: 25, name: "arguments a string, legacy", req: legacyCall(readerToken, v1125, `6`, "echo", `"hi"`),
			want: expect{status: 200, code: -32602, audit: audited(errored, reader, "tools/call", "echo")}},

		// 26: the caller lacks the capability.
		{row: 26, name: "reader calls note_create", req: modernCall(readerToken, `1`, "note_create", `{"text":"hi"}`),
			want: expect{status: 403, code: -32602, header: insufficient, audit: audited(denied, reader, "tools/call", "note_create")}},
		{row: 26, name: "reader calls note_create, legacy", req: legacyCall(readerToken, v0618, `2`, "note_create", `{"text":"hi"}`),
			want: expect{status: 403, code: -32602, header: insufficient, audit: audited(denied, reader, "tools/call", "note_create")}},
		{row: 26, name: "reader calls note_delete", req: elicitingCall(readerToken, `3`, "note_delete", `{"id":1}`, ""),
			want: expect{status: 403, code: -32602, header: insufficient, audit: audited(denied, reader, "tools/call", "note_delete")}},

		// 27: argument errors become isError results naming the field.
		{row: 27, name: "message missing", req: modernCall(readerToken, `1`, "echo", `{}`),
			want: expect{status: 200, audit: audited(errored, reader, "tools/call", "echo"), check: toolFailed(true, "message")}},
		{row: 27, name: "a a string", req: modernCall(readerToken, `2`, "add", `{"a":"2","b":3}`),
			want: expect{status: 200, audit: audited(errored, reader, "tools/call", "add"), check: toolFailed(true, `"a"`)}},
		{row: 27, name: "b missing, legacy", req: legacyCall(readerToken, v1125, `3`, "add", `{"a":2}`),
			want: expect{status: 200, audit: audited(errored, reader, "tools/call", "add"), check: toolFailed(false, `"b"`)}},
		{row: 27, name: "limit a string", req: modernCall(readerToken, `4`, "notes_list", `{"limit":"ten"}`),
			want: expect{status: 200, audit: audited(errored, reader, "tools/call", "notes_list"), check: toolFailed(true, "limit")}},
		{row: 27, name: "text missing", req: modernCall(writerToken, `5`, "note_create", `{}`),
			want: expect{status: 200, audit: audited(errored, writer, "tools/call", "note_create"), check: toolFailed(true, "text")}},

		// 28: the tool reports a failure.
		{row: 28, name: "empty note", req: modernCall(writerToken, `1`, "note_create", `{"text":""}`),
			want: expect{status: 200, audit: audited(errored, writer, "tools/call", "note_create"), check: toolFailed(true, "1 to 2000 bytes")}},
		{row: 28, name: "note too long, legacy", req: legacyCall(writerToken, v0618, `2`, "note_create", `{"text":"`+strings.Repeat("n", 2001)+`"}`),
			want: expect{status: 200, audit: audited(errored, writer, "tools/call", "note_create"), check: toolFailed(false, "2001")}},

		// 29: the tool returns a plain error: its text is not sent.
		{row: 29, name: "plain error", faults: true, req: modernCall(readerToken, `1`, "fail", `{}`),
			want: expect{status: 500, code: -32603, audit: audited(errored, reader, "tools/call", "fail"), check: messageLacks("hunter2")}},
		{row: 29, name: "plain error, legacy", faults: true, req: legacyCall(readerToken, v1125, `2`, "fail", `{}`),
			want: expect{status: 500, code: -32603, audit: audited(errored, reader, "tools/call", "fail"), check: messageLacks("hunter2")}},

		// 30: the tool panics.
		{row: 30, name: "tool panics", faults: true, req: modernCall(readerToken, `1`, "explode", `{}`),
			want: expect{status: 500, code: -32603, audit: audited(errored, reader, "tools/call", "explode"), check: messageLacks("nil map")}},
		{row: 30, name: "tool panics, legacy", faults: true, req: legacyCall(readerToken, v0618, `"p"`, "explode", `{}`),
			want: expect{status: 500, code: -32603, audit: audited(errored, reader, "tools/call", "explode"), check: messageLacks("nil map")}},

		// 31: success.
		{row: 31, name: "echo", req: modernCall(readerToken, `1`, "echo", `{"message":"hi"}`),
			want: expect{status: 200, audit: audited(ok, reader, "tools/call", "echo"), check: toolOK(true, "hi", "")}},
		{row: 31, name: "echo, 2025-11-25", req: legacyCall(readerToken, v1125, `2`, "echo", `{"message":"hi"}`),
			want: expect{status: 200, audit: audited(ok, reader, "tools/call", "echo"), check: toolOK(false, "hi", "")}},
		{row: 31, name: "echo, Mcp-Name as base64", req: modernCall(readerToken, `3`, "echo", `{"message":"hi"}`).set("Mcp-Name", "=?base64?"+base64.StdEncoding.EncodeToString([]byte("echo"))+"?="),
			want: expect{status: 200, audit: audited(ok, reader, "tools/call", "echo"), check: toolOK(true, "hi", "")}},
		{row: 31, name: "add", req: modernCall(readerToken, `4`, "add", `{"a":2,"b":3}`),
			want: expect{status: 200, audit: audited(ok, reader, "tools/call", "add"), check: toolOK(true, "5", `{"sum":5}`)}},
		{row: 31, name: "add, 2025-06-18", req: legacyCall(writerToken, v0618, `5`, "add", `{"a":2.5,"b":-0.5}`),
			want: expect{status: 200, audit: audited(ok, writer, "tools/call", "add"), check: toolOK(false, "2", `{"sum":2}`)}},
		{row: 31, name: "note_create", req: modernCall(writerToken, `6`, "note_create", `{"text":"hello"}`),
			want: expect{status: 200, audit: audited(ok, writer, "tools/call", "note_create"), check: toolOK(true, "created note 1", `{"id":1}`)}},
		{row: 31, name: "notes_list, empty", req: modernCall(readerToken, `7`, "notes_list", `{}`),
			want: expect{status: 200, audit: audited(ok, reader, "tools/call", "notes_list"), check: toolOK(true, "0 notes", `{"notes":[]}`)}},
		{row: 31, name: "arguments omitted", req: modern(readerToken, `8`, "tools/call", `"name":"notes_list"`).set("Mcp-Name", "notes_list"),
			want: expect{status: 200, audit: audited(ok, reader, "tools/call", "notes_list"), check: toolOK(true, "0 notes", `{"notes":[]}`)}},
		{row: 31, name: "arguments nesting to 128 levels", req: nestedEcho(`"n128"`, 125),
			want: expect{status: 200, audit: audited(ok, reader, "tools/call", "echo"), check: toolOK(false, "deep", "")}},
		{row: 31, name: "a fault tool beside them leaves them alone", faults: true, req: modernCall(readerToken, `9`, "echo", `{"message":"é"}`),
			want: expect{status: 200, audit: audited(ok, reader, "tools/call", "echo"), check: toolOK(true, "é", "")}},

		// 32: a tool the client cannot serve (note_delete asks the user to confirm).
		{row: 32, name: "note_delete without elicitation", req: modernCall(writerToken, `1`, "note_delete", `{"id":1}`),
			want: expect{status: 400, code: -32021, audit: audited(errored, writer, "tools/call", "note_delete"), check: requiresElicitation}},
	}
}

// setVerb returns a copy of r sent with the HTTP method verb.
func (r request) setVerb(verb string) request {
	r.verb = verb
	return r
}

// writerIf names the caller of a request made with the writer's token when
// w is true, and the reader's otherwise.
func writerIf(w bool) string {
	if w {
		return "writer"
	}
	return "reader"
}

// appRows returns the rows of the status table (docs/status.md) marked
// "app": read from the page itself, so that the table and the tests cannot
// drift.
func appRows(t *testing.T) []int {
	t.Helper()
	page, err := os.ReadFile("../../docs/status.md")
	require.NoError(t, err)
	var rows []int
	for _, line := range strings.Split(string(page), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.TrimSpace(cells[len(cells)-2]) != "app" {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(cells[1])); err == nil {
			rows = append(rows, n)
		}
	}
	require.GreaterOrEqual(t, len(rows), 30, "docs/status.md's status table was not found")
	return rows
}

func TestStatusTable(t *testing.T) {
	t.Parallel()
	cases := statusTableCases()
	covered := map[int]bool{}
	for _, tc := range cases {
		covered[tc.row] = true
	}
	for _, row := range appRows(t) {
		assert.True(t, covered[row], "status table row %d is marked app but has no case", row)
	}

	for _, tc := range cases {
		t.Run(fmt.Sprintf("row%02d/%s", tc.row, tc.name), func(t *testing.T) {
			t.Parallel()
			c := testConfig()
			if tc.cfg != nil {
				c = *tc.cfg
			}
			var extra []mcpmw.Tool
			if tc.faults {
				extra = faultTools()
			}
			app := newTestApp(c, extra...)
			for i, r := range tc.before {
				rec, _ := app.send(t, r)
				require.NotEqual(t, http.StatusTooManyRequests, rec.Code, "request %d before the one under test", i)
			}
			app.exchange(t, tc.req, tc.want)
		})
	}
}

// TestFaultsAreLogged checks that what rows 29 and 30 keep from the client
// reaches the app's log.
func TestFaultsAreLogged(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig(), faultTools()...)
	app.exchange(t, modernCall(readerToken, `1`, "fail", `{}`),
		expect{status: 500, code: -32603, audit: audited("error", "reader", "tools/call", "fail")})
	app.exchange(t, modernCall(readerToken, `2`, "explode", `{}`),
		expect{status: 500, code: -32603, audit: audited("error", "reader", "tools/call", "explode")})
	logged := app.log.String()
	assert.Contains(t, logged, "hunter2", "the tool error is logged")
	assert.Contains(t, logged, "nil map in the tool", "the panic is logged")
	assert.NotContains(t, app.audit.String(), readerToken, "credentials never reach the audit log")
	// The server goes on serving after a panic.
	app.exchange(t, modernCall(readerToken, `3`, "echo", `{"message":"still here"}`),
		expect{status: 200, audit: audited("ok", "reader", "tools/call", "echo"), check: toolOK(true, "still here", "")})
}

// noteList is the structured content of notes_list.
type noteList struct {
	Notes []struct {
		ID     int    `json:"id"`
		Text   string `json:"text"`
		Author string `json:"author"`
	} `json:"notes"`
}

// TestNotes drives the note tools through one app: a writer's note is seen
// by a reader of the same tenant, and notes_list clamps its limit.
func TestNotes(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	list := func(t *testing.T, token, args string) noteList {
		t.Helper()
		rep := app.exchange(t, modernCall(token, `"list"`, "notes_list", args),
			expect{status: 200, audit: audited("ok", writerIf(token == writerToken), "tools/call", "notes_list")})
		tr := decodeTool(t, rep)
		require.False(t, tr.IsError)
		var nl noteList
		require.NoError(t, json.Unmarshal(tr.StructuredContent, &nl))
		assert.True(t, strings.HasPrefix(tr.text(), fmt.Sprintf("%d notes", len(nl.Notes))), "text %q", tr.text())
		return nl
	}
	create := func(t *testing.T, id int, text string) {
		t.Helper()
		app.exchange(t, modernCall(writerToken, strconv.Itoa(id), "note_create", `{"text":`+strconv.Quote(text)+`}`),
			expect{status: 200, audit: audited("ok", "writer", "tools/call", "note_create"),
				check: toolOK(true, fmt.Sprintf("created note %d", id), fmt.Sprintf(`{"id":%d}`, id))})
	}

	assert.Empty(t, list(t, readerToken, `{}`).Notes)
	create(t, 1, "buy milk")
	nl := list(t, readerToken, `{}`)
	require.Len(t, nl.Notes, 1, "the writer's note is visible to the reader")
	assert.Equal(t, 1, nl.Notes[0].ID)
	assert.Equal(t, "buy milk", nl.Notes[0].Text)
	assert.Equal(t, "writer", nl.Notes[0].Author)

	// The reader still cannot write, and its refused call stores nothing.
	app.exchange(t, modernCall(readerToken, `"deny"`, "note_create", `{"text":"sneaky"}`),
		expect{status: 403, code: -32602, header: map[string]string{"WWW-Authenticate": `Bearer error="insufficient_scope", scope="write"`},
			audit: audited("denied", "reader", "tools/call", "note_create")})
	assert.Len(t, list(t, writerToken, `{}`).Notes, 1)

	for id := 2; id <= 60; id++ {
		create(t, id, fmt.Sprintf("note %d", id))
	}
	for _, tc := range []struct {
		args  string
		count int
	}{
		{`{}`, 20}, // the default
		{`{"limit":null}`, 20},
		{`{"limit":5}`, 5},
		{`{"limit":50}`, 50},
		{`{"limit":1000}`, 50}, // clamped to the maximum
		{`{"limit":0}`, 1},     // clamped to the minimum
		{`{"limit":-7}`, 1},
	} {
		t.Run("limit "+tc.args, func(t *testing.T) {
			nl := list(t, readerToken, tc.args)
			require.Len(t, nl.Notes, tc.count)
			for i, n := range nl.Notes {
				assert.Equal(t, 60-i, n.ID, "newest first")
			}
		})
	}
	// Legacy clients see the same notes.
	rep := app.exchange(t, legacyCall(readerToken, v1125, `"old"`, "notes_list", `{"limit":2}`),
		expect{status: 200, audit: audited("ok", "reader", "tools/call", "notes_list")})
	isLegacy(t, rep.result)
	tr := decodeTool(t, rep)
	assert.Equal(t, "2 notes\n#60 by writer: note 60\n#59 by writer: note 59", tr.text())
}

// TestConfigFromEnv checks how the environment configures the app.
func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	defaults := config{addr: "127.0.0.1:8080", allowedHosts: []string{"localhost", "127.0.0.1"}, ratePerMin: 600, exportDelay: 3 * time.Second}
	// withDelay is the defaults with notes_export taking d.
	withDelay := func(d time.Duration) config {
		c := defaults
		c.exportDelay = d
		return c
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    config
		wantErr string
	}{
		{name: "defaults", env: nil, want: defaults},
		{name: "empty values are defaults", env: map[string]string{"ADDR": "", "ALLOWED_HOSTS": "", "RATE_LIMIT": "", "AUDIT_LOG": "", "EXPORT_DELAY": ""}, want: defaults},
		{name: "everything set",
			env:  map[string]string{"ADDR": ":9090", "ALLOWED_HOSTS": "app.example.com", "RATE_LIMIT": "60", "AUDIT_LOG": "/var/log/mcp-audit.jsonl", "EXPORT_DELAY": "10"},
			want: config{addr: ":9090", allowedHosts: []string{"app.example.com"}, ratePerMin: 60, auditPath: "/var/log/mcp-audit.jsonl", exportDelay: 10 * time.Second}},
		{name: "ALLOWED_HOSTS list with spaces and empty entries",
			env:  map[string]string{"ALLOWED_HOSTS": " app.example.com , ,localhost,"},
			want: config{addr: defaults.addr, allowedHosts: []string{"app.example.com", "localhost"}, ratePerMin: 600, exportDelay: defaults.exportDelay}},
		{name: "RATE_LIMIT=0 disables", env: map[string]string{"RATE_LIMIT": "0"},
			want: config{addr: defaults.addr, allowedHosts: defaults.allowedHosts, ratePerMin: 0, exportDelay: defaults.exportDelay}},
		{name: "RATE_LIMIT=abc", env: map[string]string{"RATE_LIMIT": "abc"}, wantErr: `RATE_LIMIT="abc"`},
		{name: "RATE_LIMIT negative", env: map[string]string{"RATE_LIMIT": "-1"}, wantErr: `RATE_LIMIT="-1"`},
		{name: "RATE_LIMIT fractional", env: map[string]string{"RATE_LIMIT": "1.5"}, wantErr: `RATE_LIMIT="1.5"`},
		{name: "RATE_LIMIT_LEASE unset or 0: no lease", env: map[string]string{"RATE_LIMIT_LEASE": "0"}, want: defaults},
		{name: "RATE_LIMIT_LEASE", env: map[string]string{"RATE_LIMIT": "60", "RATE_LIMIT_LEASE": "10"},
			want: config{addr: defaults.addr, allowedHosts: defaults.allowedHosts, ratePerMin: 60, rateLease: 10, exportDelay: defaults.exportDelay}},
		{name: "RATE_LIMIT_LEASE the whole budget", env: map[string]string{"RATE_LIMIT": "60", "RATE_LIMIT_LEASE": "60"},
			want: config{addr: defaults.addr, allowedHosts: defaults.allowedHosts, ratePerMin: 60, rateLease: 60, exportDelay: defaults.exportDelay}},
		{name: "RATE_LIMIT_LEASE past the budget", env: map[string]string{"RATE_LIMIT": "60", "RATE_LIMIT_LEASE": "61"},
			wantErr: `RATE_LIMIT_LEASE="61": want how many requests of a client's budget an instance takes per Redis call, from 0 (no lease) to RATE_LIMIT (60)`},
		{name: "RATE_LIMIT_LEASE with no limit", env: map[string]string{"RATE_LIMIT": "0", "RATE_LIMIT_LEASE": "1"}, wantErr: `RATE_LIMIT_LEASE="1"`},
		{name: "RATE_LIMIT_LEASE=abc", env: map[string]string{"RATE_LIMIT_LEASE": "abc"}, wantErr: `RATE_LIMIT_LEASE="abc"`},
		{name: "RATE_LIMIT_LEASE negative", env: map[string]string{"RATE_LIMIT_LEASE": "-1"}, wantErr: `RATE_LIMIT_LEASE="-1"`},
		{name: "RATE_LIMIT_LEASE fractional", env: map[string]string{"RATE_LIMIT_LEASE": "2.5"}, wantErr: `RATE_LIMIT_LEASE="2.5"`},
		{name: "EXPORT_DELAY=0: at once", env: map[string]string{"EXPORT_DELAY": "0"}, want: withDelay(0)},
		{name: "EXPORT_DELAY a fraction", env: map[string]string{"EXPORT_DELAY": "0.2"}, want: withDelay(200 * time.Millisecond)},
		{name: "EXPORT_DELAY in exponent form", env: map[string]string{"EXPORT_DELAY": "1.5e1"}, want: withDelay(15 * time.Second)},
		{name: "EXPORT_DELAY the maximum", env: map[string]string{"EXPORT_DELAY": "600"}, want: withDelay(10 * time.Minute)},
		{name: "EXPORT_DELAY=abc", env: map[string]string{"EXPORT_DELAY": "abc"}, wantErr: `EXPORT_DELAY="abc": want how long notes_export takes, in seconds from 0 to 600`},
		{name: "EXPORT_DELAY negative", env: map[string]string{"EXPORT_DELAY": "-1"}, wantErr: `EXPORT_DELAY="-1"`},
		{name: "EXPORT_DELAY a little negative", env: map[string]string{"EXPORT_DELAY": "-0.001"}, wantErr: `EXPORT_DELAY="-0.001"`},
		{name: "EXPORT_DELAY past the maximum", env: map[string]string{"EXPORT_DELAY": "600.5"}, wantErr: `EXPORT_DELAY="600.5"`},
		{name: "EXPORT_DELAY NaN", env: map[string]string{"EXPORT_DELAY": "NaN"}, wantErr: `EXPORT_DELAY="NaN"`},
		{name: "EXPORT_DELAY Inf", env: map[string]string{"EXPORT_DELAY": "Inf"}, wantErr: `EXPORT_DELAY="Inf"`},
		{name: "EXPORT_DELAY with a unit", env: map[string]string{"EXPORT_DELAY": "3s"}, wantErr: `EXPORT_DELAY="3s"`},
		{name: "EXPORT_DELAY with a space", env: map[string]string{"EXPORT_DELAY": " 3"}, wantErr: `EXPORT_DELAY=" 3"`},
		{name: "MCP_STATE_KEY not hex", env: map[string]string{"MCP_STATE_KEY": strings.Repeat("zz", 32)}, wantErr: "MCP_STATE_KEY"},
		{name: "MCP_STATE_KEY too short", env: map[string]string{"MCP_STATE_KEY": "abcd"}, wantErr: "MCP_STATE_KEY"},
		{name: "REDIS_FAIL neither open nor closed", env: map[string]string{"REDIS_FAIL": "half"}, wantErr: `REDIS_FAIL="half": want open`},
		{name: "REDIS_URL not a Redis URL", env: map[string]string{"REDIS_URL": "https://u:hunter2@h/"}, wantErr: "REDIS_URL: redis: invalid URL scheme: https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := configFromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}

	t.Run("REDIS_URL and REDIS_FAIL", func(t *testing.T) {
		t.Parallel()
		c, err := configFromEnv(func(k string) string {
			return map[string]string{"REDIS_URL": "redis://:hunter2@127.0.0.1:6390/4", "REDIS_FAIL": "closed"}[k]
		})
		require.NoError(t, err)
		assert.True(t, c.redis.Enabled())
		assert.Equal(t, "127.0.0.1:6390", c.redis.Addr())
		assert.Equal(t, "closed", c.redis.Failure.String())
	})
	t.Run("RATE_LIMIT=0 serves without a limit", func(t *testing.T) {
		t.Parallel()
		c, err := configFromEnv(func(k string) string { return map[string]string{"RATE_LIMIT": "0"}[k] })
		require.NoError(t, err)
		app := newTestApp(c)
		for i := range 20 {
			rec, _ := app.send(t, legacy(readerToken, v1125, strconv.Itoa(i+1), "ping", ""))
			require.Equal(t, http.StatusOK, rec.Code, "request %d", i+1)
		}
	})
	t.Run("RATE_LIMIT=3 limits the fourth", func(t *testing.T) {
		t.Parallel()
		c, err := configFromEnv(func(k string) string { return map[string]string{"RATE_LIMIT": "3"}[k] })
		require.NoError(t, err)
		app := newTestApp(c)
		for i := range 3 {
			rec, _ := app.send(t, legacy(readerToken, v1125, strconv.Itoa(i+1), "ping", ""))
			require.Equal(t, http.StatusOK, rec.Code, "request %d", i+1)
		}
		rec, recs := app.send(t, legacy(readerToken, v1125, "4", "ping", ""))
		assert.Equal(t, http.StatusTooManyRequests, rec.Code)
		assert.Empty(t, recs)
	})
}

// TestEndToEnd builds the app the way README.md runs it, starts it on a
// free loopback port and checks the rate limit, the Origin check and the
// audit file over real HTTP.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example binary")
	}
	t.Parallel()
	dir := t.TempDir()
	bin := buildApp(t, dir)
	addr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit.jsonl")
	app := startApp(t, bin, "ADDR="+addr, "AUDIT_LOG="+auditPath, "RATE_LIMIT=5", "ALLOWED_HOSTS=localhost,127.0.0.1")
	base := "http://" + addr
	app.waitReady(t, base)
	client := &http.Client{Timeout: patience}

	// 5 a minute: one more every 12 s, so Retry-After is 12 or, on a slow
	// run, 11; the rows of the status table check its exact value.
	limited := expect{status: 429, code: -32600, noID: true, header: map[string]string{"X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "0"}}
	steps := []struct {
		name string
		req  request
		want expect
	}{
		{"server/discover", modern(readerToken, `1`, "server/discover", ""),
			expect{status: 200, audit: audited("ok", "reader", "server/discover", ""), check: discovered}},
		{"tools/list from an allowed Origin", legacy(readerToken, v1125, `2`, "tools/list", "").set("Origin", "http://127.0.0.1:"+portOf(addr)),
			expect{status: 200, audit: audited("ok", "reader", "tools/list", ""), check: listed(false, "echo", "add", "notes_list", "notes_export")}},
		{"foreign Origin", modern(readerToken, `3`, "tools/list", "").set("Origin", "http://evil.example"),
			expect{status: 403, code: -32600, noID: true, audit: audited("denied", "", "", "")}},
		{"echo", modernCall(writerToken, `4`, "echo", `{"message":"over the wire"}`),
			expect{status: 200, audit: audited("ok", "writer", "tools/call", "echo"), check: toolOK(true, "over the wire", "")}},
		{"initialize", initialize(readerToken, `5`, v0618),
			expect{status: 200, audit: audited("ok", "reader", "initialize", ""), check: initialized(v0618)}},
		{"sixth: rate limited", modern(readerToken, `6`, "tools/list", ""), limited},
		{"seventh: rate limited", modernCall(writerToken, `7`, "echo", `{"message":"too many"}`), limited},
	}
	for _, s := range steps {
		resp, err := client.Do(s.req.clientRequest(t, base+"/mcp"))
		require.NoError(t, err, s.name)
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(t, err, s.name)
		checkAnswer(t, s.req, s.want, resp.StatusCode, resp.Header, body)
	}

	app.interrupt(t)

	data, err := os.ReadFile(auditPath)
	require.NoError(t, err)
	assert.NotContains(t, string(data), readerToken, "credentials never reach the audit log")
	assert.NotContains(t, string(data), writerToken, "credentials never reach the audit log")
	recs := auditRecords(t, string(data))
	var want []expect
	for _, s := range steps {
		if s.want.audit != nil {
			want = append(want, s.want)
		}
	}
	require.Len(t, recs, len(want), "one audit line per request that was not rate limited:\n%s", data)
	for i, w := range want {
		checkAudit(t, w, recs[i:i+1])
		assert.Equal(t, "127.0.0.1", recs[i]["client_ip"], "audit client_ip")
	}
}

// buildApp builds the example binary into dir the way README.md runs it
// (go -C examples run ./chi-app) and returns its path.
func buildApp(t *testing.T, dir string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	bin := filepath.Join(dir, "chi-app")
	buildCtx, cancelBuild := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancelBuild()
	build := exec.CommandContext(buildCtx, "go", "-C", "examples", "build", "-o", bin, "./chi-app")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// appProcess is the example binary, running.
type appProcess struct {
	cmd     *exec.Cmd
	logs    lockedBuffer // its stdout and stderr
	exited  chan struct{}
	exitErr error // once exited is closed
}

// startApp starts bin with env added to the test's environment; it is
// killed when the test ends, if it is still running.
func startApp(t *testing.T, bin string, env ...string) *appProcess {
	t.Helper()
	p := &appProcess{cmd: exec.Command(bin), exited: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.logs, &p.logs
	p.cmd.SysProcAttr = testproc.SysProcAttr() // it dies with the test, even one killed before its cleanup
	require.NoError(t, p.cmd.Start())
	go func() {
		p.exitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// waitReady waits, for at most patience, until the app answers
// base/healthz.
func (p *appProcess) waitReady(t *testing.T, base string) {
	t.Helper()
	p.waitReadyWith(t, &http.Client{Timeout: patience}, base)
}

// waitReadyWith is waitReady asking through client (one that trusts the
// app's certificate, for TLS).
func (p *appProcess) waitReadyWith(t *testing.T, client *http.Client, base string) {
	t.Helper()
	ready := false
	for deadline := time.Now().Add(patience); !ready && time.Now().Before(deadline); {
		select {
		case <-p.exited:
			require.FailNow(t, "the app exited before answering", "error %v; output:\n%s", p.exitErr, p.logs.String())
		default:
		}
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			ready = resp.StatusCode == http.StatusOK
			_ = resp.Body.Close()
		}
		if !ready {
			time.Sleep(50 * time.Millisecond)
		}
	}
	require.True(t, ready, "the app did not answer within %v; output:\n%s", patience, p.logs.String())
}

// refused waits, for at most patience, for the app to stop of itself, as it
// must at start when its environment is bad, and returns its output after
// checking that it failed and never served.
func (p *appProcess) refused(t *testing.T) string {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(patience):
		require.FailNow(t, "the app did not stop within patience")
	}
	out := p.logs.String()
	require.Error(t, p.exitErr, "the app refuses to start; output:\n%s", out)
	assert.NotContains(t, out, "MCP endpoint at", "it never served")
	return out
}

// interrupt sends the app SIGINT and waits, for at most patience, for it
// to stop cleanly.
func (p *appProcess) interrupt(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	select {
	case <-p.exited:
		require.NoError(t, p.exitErr, "the app stops cleanly on SIGINT; output:\n%s", p.logs.String())
	case <-time.After(patience):
		require.FailNow(t, "the app did not stop within patience of SIGINT")
	}
}

// portOf returns the port of a host:port address.
func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

// MCP_STATE_KEY becomes the app's key ring (a list is a ring whose first
// key seals); unset, each process has a random key. That two handlers
// holding one ring resume each other's rounds is TestAskRoundTrip's.
func TestStateKeyFromEnv(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("ab", 32)
	a, err := configFromEnv(func(k string) string { return map[string]string{"MCP_STATE_KEY": key}[k] })
	require.NoError(t, err)
	b, err := configFromEnv(func(k string) string {
		return map[string]string{"MCP_STATE_KEY": strings.Repeat("cd", 32) + "," + key}[k]
	})
	require.NoError(t, err)
	require.NotNil(t, a.stateKeys)
	require.NotNil(t, b.stateKeys)
	assert.NotContains(t, a.stateKeys.String(), key, "the ring never shows its keys")
	defaults, err := configFromEnv(func(string) string { return "" })
	require.NoError(t, err)
	assert.Nil(t, defaults.stateKeys, "unset: a random key per process")
}

// TestBackendsRateLimit: RATE_LIMIT=0 leaves the app without a limiter,
// in memory and with REDIS_URL alike, and any other value gives it one.
func TestBackendsRateLimit(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t) // skips without redis-server
	withRedis, err := redisenv.FromEnv(func(k string) string {
		return map[string]string{"REDIS_URL": "redis://" + srv.Addr + "/0", "REDIS_TIMEOUT": busyRedisTimeout}[k]
	})
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		redis redisenv.Settings
	}{{"memory", redisenv.Settings{}}, {"redis", withRedis}} {
		for _, perMin := range []int{0, 1, 600} {
			t.Run(fmt.Sprintf("%s/RATE_LIMIT=%d", tc.name, perMin), func(t *testing.T) {
				t.Parallel()
				c := testConfig()
				c.redis, c.ratePerMin = tc.redis, perMin
				b := newBackends(c, slog.New(slog.NewTextHandler(io.Discard, nil)))
				defer b.close()
				if perMin == 0 {
					assert.Nil(t, b.limit)
				} else {
					assert.NotNil(t, b.limit)
				}
			})
		}
	}
}
