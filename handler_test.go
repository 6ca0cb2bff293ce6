package mcpmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// user is a test Caller holding a fixed set of capabilities.
type user struct {
	name string
	caps []mcpmw.Permission
}

func (u *user) Can(c mcpmw.Permission) bool {
	for _, have := range u.caps {
		if have == c {
			return true
		}
	}
	return false
}

func (u *user) String() string { return u.name }

// CallerID makes a user identifiable across requests (legacy cancellation).
func (u *user) CallerID() string { return u.name }

var (
	reader = &user{name: "reader", caps: []mcpmw.Permission{"read"}}
	writer = &user{name: "writer", caps: []mcpmw.Permission{"read", "write"}}
)

// spy is an Auditor that keeps every record.
type spy struct {
	mu   sync.Mutex
	recs []mcpmw.CallRecord
}

func (s *spy) Audit(_ context.Context, rec mcpmw.CallRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, rec)
}

func (s *spy) records() []mcpmw.CallRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]mcpmw.CallRecord(nil), s.recs...)
}

// tokenAuthn admits "Bearer reader" and "Bearer writer"; "Bearer forbidden"
// and "Bearer slow-down" fail with ErrForbidden and ErrTooManyRequests, and
// "Bearer boom" panics.
var tokenAuthn = mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
	switch r.Header.Get("Authorization") {
	case "Bearer reader":
		return reader, nil
	case "Bearer writer":
		return writer, nil
	case "Bearer forbidden":
		return nil, fmt.Errorf("account suspended: %w", mcpmw.ErrForbidden)
	case "Bearer slow-down":
		return nil, fmt.Errorf("quota: %w", mcpmw.ErrTooManyRequests)
	case "Bearer boom":
		panic("authenticator exploded")
	case "Bearer nil":
		return nil, nil
	}
	return nil, errors.New("no such token")
})

func testTools() []mcpmw.Tool {
	echo := func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
		msg := args.String("message")
		if err := args.Err(); err != nil {
			return mcpmw.ToolResult{}, err
		}
		return mcpmw.TextResult(msg), nil
	}
	return []mcpmw.Tool{
		{Name: "echo", Description: "Echoes.", Permission: "read", ReadOnly: mcpmw.HintYes,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`), Call: echo},
		{Name: "add", Description: "Adds.", Permission: "read",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}}}`),
			Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				a, b := args.Float("a"), args.Float("b")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.StructuredResult(map[string]float64{"sum": a + b}), nil
			}},
		{Name: "write_it", Description: "Writes.", Permission: "write", Destructive: mcpmw.HintNo, Call: echo},
		{Name: "fails", Description: "Fails for the model.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ErrorResult("the upstream is down"), nil
			}},
		{Name: "breaks", Description: "Returns an internal error.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{}, errors.New("db: connection refused to 10.0.0.7")
			}},
		{Name: "rpc_error", Description: "Returns a JSON-RPC error.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{}, &mcpmw.Error{Code: mcpmw.CodeInvalidParams, Message: "no such order"}
			}},
		{Name: "panics", Description: "Panics.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				panic("tool exploded")
			}},
	}
}

// newTestHandler returns a handler over testTools, its audit spy and a
// buffer collecting its log.
func newTestHandler(t *testing.T, opts *mcpmw.Options) (http.Handler, *spy, *syncBuffer) {
	t.Helper()
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	logs := &syncBuffer{}
	if opts == nil {
		opts = &mcpmw.Options{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	a := &spy{}
	return mcpmw.New(&reg, tokenAuthn, a, opts), a, logs
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

const meta26 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// req builds a POST with JSON content type, the reader's token, and hdr
// given as alternating names and values.
func req(body string, hdr ...string) *http.Request {
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

// modern builds a 2026-07-28 request for method with extra params members.
func modern(id, method, params string, hdr ...string) *http.Request {
	if params != "" {
		params += ","
	}
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params + meta26 + `}}`
	h := []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method}
	if method == "tools/call" {
		var p struct{ Name string }
		_ = json.Unmarshal([]byte("{"+strings.TrimSuffix(params, ",")+"}"), &p)
		h = append(h, "Mcp-Name", p.Name)
	}
	return req(body, append(h, hdr...)...)
}

// legacy builds a request on a legacy revision.
func legacy(version, id, method, params string, hdr ...string) *http.Request {
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		body += `,"params":{` + params + `}`
	}
	return req(body+"}", append([]string{"MCP-Protocol-Version", version}, hdr...)...)
}

// answer is a decoded response.
type answer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  map[string]any  `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decode(t *testing.T, w *httptest.ResponseRecorder) answer {
	t.Helper()
	var a answer
	if w.Code == http.StatusAccepted {
		assert.Empty(t, w.Body.String(), "202 has no body")
		return a
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &a), "body: %s", w.Body)
	assert.Equal(t, "2.0", a.JSONRPC)
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	return a
}

func TestHandlerStatusTable(t *testing.T) {
	t.Parallel()
	longName := strings.Repeat("x", 300)
	for _, tt := range []struct {
		row     int
		name    string
		req     *http.Request
		status  int
		code    int // 0: a result (or 202)
		outcome mcpmw.Outcome
		id      string // expected raw id; "" means none
		header  [2]string
		check   func(t *testing.T, a answer, rec mcpmw.CallRecord)
	}{
		{row: 3, name: "origin not allowed", req: modern("1", "server/discover", "", "Origin", "https://evil.example"), status: 403, code: -32600, outcome: mcpmw.OutcomeDenied},
		{row: 3, name: "origin look-alike", req: modern("1", "server/discover", "", "Origin", "http://localhost.evil.example"), status: 403, code: -32600, outcome: mcpmw.OutcomeDenied},
		{row: 3, name: "origin null", req: modern("1", "server/discover", "", "Origin", "null"), status: 403, code: -32600, outcome: mcpmw.OutcomeDenied},
		{row: 3, name: "origin allowed with port", req: modern("1", "server/discover", "", "Origin", "http://localhost:5173"), status: 200, outcome: mcpmw.OutcomeOK, id: "1"},
		{row: 4, name: "no token", req: modern("1", "server/discover", "", "Authorization", ""), status: 401, code: -32600, outcome: mcpmw.OutcomeDenied, header: [2]string{"WWW-Authenticate", "Bearer"},
			check: func(t *testing.T, a answer, rec mcpmw.CallRecord) {
				assert.Nil(t, rec.Caller)
				assert.EqualError(t, rec.AuthError, "no such token")
				assert.NotContains(t, a.Error.Message, "no such token", "authentication detail is not sent")
				assert.Empty(t, rec.Method, "the body was never read")
			}},
		{row: 4, name: "nil caller and nil error fails closed", req: modern("1", "server/discover", "", "Authorization", "Bearer nil"), status: 401, code: -32600, outcome: mcpmw.OutcomeDenied},
		{row: 5, name: "authenticator forbids", req: modern("1", "server/discover", "", "Authorization", "Bearer forbidden"), status: 403, code: -32600, outcome: mcpmw.OutcomeDenied,
			check: func(t *testing.T, a answer, rec mcpmw.CallRecord) {
				assert.ErrorIs(t, rec.AuthError, mcpmw.ErrForbidden)
			}},
		{row: 5, name: "authenticator throttles", req: modern("1", "server/discover", "", "Authorization", "Bearer slow-down"), status: 429, code: -32600, outcome: mcpmw.OutcomeDenied},
		{row: 6, name: "form content type", req: modern("1", "server/discover", "", "Content-Type", "application/x-www-form-urlencoded"), status: 415, code: -32600, outcome: mcpmw.OutcomeError},
		{row: 6, name: "no content type", req: modern("1", "server/discover", "", "Content-Type", ""), status: 415, code: -32600, outcome: mcpmw.OutcomeError},
		{row: 6, name: "json with charset", req: modern("1", "server/discover", "", "Content-Type", "application/json; charset=utf-8"), status: 200, outcome: mcpmw.OutcomeOK, id: "1"},
		{row: 7, name: "accept html only", req: modern("1", "server/discover", "", "Accept", "text/html"), status: 406, code: -32600, outcome: mcpmw.OutcomeError},
		{row: 7, name: "accept any", req: modern("1", "server/discover", "", "Accept", "*/*"), status: 200, outcome: mcpmw.OutcomeOK, id: "1"},
		{row: 7, name: "no accept", req: modern("1", "server/discover", "", "Accept", ""), status: 200, outcome: mcpmw.OutcomeOK, id: "1"},
		{row: 9, name: "not json", req: req(`{"jsonrpc":`), status: 400, code: -32700, outcome: mcpmw.OutcomeError},
		{row: 10, name: "batch", req: req(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`), status: 400, code: -32600, outcome: mcpmw.OutcomeError},
		{row: 10, name: "id null", req: req(`{"jsonrpc":"2.0","id":null,"method":"ping"}`), status: 400, code: -32600, outcome: mcpmw.OutcomeError},
		{row: 10, name: "wrong jsonrpc", req: req(`{"jsonrpc":"1.0","id":4,"method":"ping"}`), status: 400, code: -32600, outcome: mcpmw.OutcomeError, id: "4"},
		{row: 10, name: "no method", req: req(`{"jsonrpc":"2.0","id":"x"}`), status: 400, code: -32600, outcome: mcpmw.OutcomeError, id: `"x"`},
		{row: 10, name: "duplicate method", req: req(`{"jsonrpc":"2.0","id":5,"method":"ping","method":"tools/list"}`), status: 400, code: -32600, outcome: mcpmw.OutcomeError, id: "5"},
		{row: 11, name: "legacy notification", req: req(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "MCP-Protocol-Version", "2025-11-25"), status: 202, outcome: mcpmw.OutcomeAccepted},
		{row: 11, name: "notification without header", req: req(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`), status: 202, outcome: mcpmw.OutcomeAccepted},
		{row: 12, name: "legacy client response", req: req(`{"jsonrpc":"2.0","id":9,"result":{}}`, "MCP-Protocol-Version", "2025-11-25"), status: 202, outcome: mcpmw.OutcomeAccepted},
		{row: 13, name: "2026 client response", req: req(`{"jsonrpc":"2.0","id":9,"result":{}}`, "MCP-Protocol-Version", "2026-07-28"), status: 400, code: -32600, outcome: mcpmw.OutcomeError},
		{row: 14, name: "2026 header missing", req: modern("7", "server/discover", "", "MCP-Protocol-Version", ""), status: 400, code: -32020, outcome: mcpmw.OutcomeError, id: "7"},
		{row: 15, name: "params empty", req: req(`{"jsonrpc":"2.0","id":101,"method":"server/discover","params":{}}`, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover"), status: 400, code: -32602, outcome: mcpmw.OutcomeError, id: "101"},
		{row: 15, name: "caps missing", req: req(`{"jsonrpc":"2.0","id":104,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover"), status: 400, code: -32602, outcome: mcpmw.OutcomeError, id: "104"},
		{row: 15, name: "bad log level", req: req(`{"jsonrpc":"2.0","id":105,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}}`, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover"), status: 400, code: -32602, outcome: mcpmw.OutcomeError, id: "105"},
		{row: 16, name: "header differs from meta", req: req(`{"jsonrpc":"2.0","id":302,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}}`, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover"), status: 400, code: -32020, outcome: mcpmw.OutcomeError, id: "302"},
		{row: 17, name: "version not served", req: req(`{"jsonrpc":"2.0","id":301,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}}`, "MCP-Protocol-Version", "v999.0.0", "Mcp-Method", "server/discover"), status: 400, code: -32022, outcome: mcpmw.OutcomeError, id: "301",
			check: func(t *testing.T, a answer, _ mcpmw.CallRecord) {
				assert.JSONEq(t, `{"supported":["2026-07-28","2025-11-25","2025-06-18"],"requested":"v999.0.0"}`, string(a.Error.Data))
			}},
		{row: 18, name: "Mcp-Method mismatch", req: modern("8", "tools/list", "", "Mcp-Method", "TOOLS/LIST"), status: 400, code: -32020, outcome: mcpmw.OutcomeError, id: "8"},
		{row: 18, name: "Mcp-Name mismatch", req: modern("8", "tools/call", `"name":"echo","arguments":{"message":"x"}`, "Mcp-Name", "add"), status: 400, code: -32020, outcome: mcpmw.OutcomeError, id: "8"},
		{row: 18, name: "Mcp-Name missing", req: modern("8", "tools/call", `"name":"echo","arguments":{"message":"x"}`, "Mcp-Name", ""), status: 400, code: -32020, outcome: mcpmw.OutcomeError, id: "8"},
		{row: 18, name: "Mcp-Name base64 sentinel", req: modern("8", "tools/call", `"name":"echo","arguments":{"message":"x"}`, "Mcp-Name", "=?base64?ZWNobw==?="), status: 200, outcome: mcpmw.OutcomeOK, id: "8"},
		{row: 18, name: "Mcp-Name malformed sentinel", req: modern("8", "tools/call", `"name":"echo","arguments":{"message":"x"}`, "Mcp-Name", "=?base64?ZWNobw?="), status: 400, code: -32020, outcome: mcpmw.OutcomeError, id: "8"},
		{row: 19, name: "ping removed", req: modern("500", "ping", ""), status: 404, code: -32601, outcome: mcpmw.OutcomeError, id: "500"},
		{row: 19, name: "initialize removed", req: modern("501", "initialize", ""), status: 404, code: -32601, outcome: mcpmw.OutcomeError, id: "501"},
		{row: 19, name: "capability not advertised", req: modern("502", "resources/list", ""), status: 404, code: -32601, outcome: mcpmw.OutcomeError, id: "502"},
		{row: 19, name: "unknown method", req: modern("503", "unknown/method", ""), status: 404, code: -32601, outcome: mcpmw.OutcomeError, id: "503"},
		{row: 20, name: "legacy header missing", req: req(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), status: 400, code: -32020, outcome: mcpmw.OutcomeError, id: "1"},
		{row: 21, name: "legacy unserved", req: legacy("2025-03-26", "1", "tools/list", ""), status: 400, code: -32022, outcome: mcpmw.OutcomeError, id: "1"},
		{row: 22, name: "legacy unknown method", req: legacy("2025-11-25", "1", "unknown/method", ""), status: 200, code: -32601, outcome: mcpmw.OutcomeError, id: "1"},
		{row: 22, name: "legacy discover", req: legacy("2025-11-25", "1", "server/discover", ""), status: 200, code: -32601, outcome: mcpmw.OutcomeError, id: "1"},
		{row: 23, name: "discover", req: modern(`"d-1"`, "server/discover", ""), status: 200, outcome: mcpmw.OutcomeOK, id: `"d-1"`,
			check: func(t *testing.T, a answer, _ mcpmw.CallRecord) {
				assert.Equal(t, "complete", a.Result["resultType"])
				assert.Equal(t, "public", a.Result["cacheScope"])
				assert.EqualValues(t, 60000, a.Result["ttlMs"])
				assert.Equal(t, map[string]any{"tools": map[string]any{"listChanged": true}}, a.Result["capabilities"])
				assert.NotContains(t, a.Result, "instructions", "empty instructions are left out")
			}},
		{row: 23, name: "initialize without header", req: req(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`), status: 200, outcome: mcpmw.OutcomeOK, id: "0",
			check: func(t *testing.T, a answer, rec mcpmw.CallRecord) {
				assert.Equal(t, "2025-06-18", a.Result["protocolVersion"])
				assert.Equal(t, "c", rec.ClientName)
			}},
		{row: 23, name: "legacy ping", req: legacy("2025-11-25", "2", "ping", ""), status: 200, outcome: mcpmw.OutcomeOK, id: "2",
			check: func(t *testing.T, a answer, _ mcpmw.CallRecord) { assert.Empty(t, a.Result) }},
		{row: 24, name: "bad cursor", req: modern("3", "tools/list", `"cursor":"bm9wZQ"`), status: 200, code: -32602, outcome: mcpmw.OutcomeError, id: "3"},
		{row: 25, name: "unknown tool", req: modern("4", "tools/call", `"name":"drop_tables"`), status: 200, code: -32602, outcome: mcpmw.OutcomeError, id: "4",
			check: func(t *testing.T, a answer, rec mcpmw.CallRecord) { assert.Equal(t, "drop_tables", rec.Tool) }},
		{row: 25, name: "long unknown tool name capped", req: legacy("2025-11-25", "4", "tools/call", `"name":"`+longName+`"`), status: 200, code: -32602, outcome: mcpmw.OutcomeError, id: "4",
			check: func(t *testing.T, a answer, rec mcpmw.CallRecord) {
				assert.Less(t, len(a.Error.Message), 150)
				assert.True(t, strings.HasSuffix(a.Error.Message, "…"))
				assert.Equal(t, strings.Repeat("x", 100)+"…", rec.Tool)
			}},
		{row: 25, name: "arguments not an object", req: modern("4", "tools/call", `"name":"echo","arguments":[1]`), status: 200, code: -32602, outcome: mcpmw.OutcomeError, id: "4"},
		{row: 26, name: "denied", req: modern("5", "tools/call", `"name":"write_it","arguments":{"message":"x"}`), status: 403, code: -32602, outcome: mcpmw.OutcomeDenied, id: "5",
			header: [2]string{"WWW-Authenticate", `Bearer error="insufficient_scope", scope="write"`}},
		{row: 27, name: "bad argument", req: modern(`"7"`, "tools/call", `"name":"echo","arguments":{"message":5}`), status: 200, outcome: mcpmw.OutcomeError, id: `"7"`,
			check: func(t *testing.T, a answer, _ mcpmw.CallRecord) {
				assert.Equal(t, true, a.Result["isError"])
				assert.Contains(t, fmt.Sprint(a.Result["content"]), `"message" must be a string, not a number`)
			}},
		{row: 28, name: "tool isError", req: modern("6", "tools/call", `"name":"fails"`), status: 200, outcome: mcpmw.OutcomeError, id: "6"},
		{row: 29, name: "tool error", req: modern("6", "tools/call", `"name":"breaks"`), status: 500, code: -32603, outcome: mcpmw.OutcomeError, id: "6",
			check: func(t *testing.T, a answer, _ mcpmw.CallRecord) { assert.NotContains(t, a.Error.Message, "10.0.0.7") }},
		{row: 29, name: "tool JSON-RPC error", req: modern("6", "tools/call", `"name":"rpc_error"`), status: 200, code: -32602, outcome: mcpmw.OutcomeError, id: "6"},
		{row: 30, name: "tool panic", req: modern("6", "tools/call", `"name":"panics"`), status: 500, code: -32603, outcome: mcpmw.OutcomeError, id: "6",
			check: func(t *testing.T, _ answer, rec mcpmw.CallRecord) { assert.Equal(t, "panics", rec.Tool) }},
		{row: 30, name: "authenticator panic", req: modern("6", "server/discover", "", "Authorization", "Bearer boom"), status: 500, code: -32603, outcome: mcpmw.OutcomeError},
		{row: 31, name: "call", req: modern("9007199254740993", "tools/call", `"name":"echo","arguments":{"message":"hi"}`), status: 200, outcome: mcpmw.OutcomeOK, id: "9007199254740993",
			check: func(t *testing.T, a answer, rec mcpmw.CallRecord) {
				assert.Equal(t, []any{map[string]any{"type": "text", "text": "hi"}}, a.Result["content"])
				assert.Equal(t, "complete", a.Result["resultType"])
				assert.JSONEq(t, `{"message":"hi"}`, string(rec.Arguments))
				assert.Equal(t, reader, rec.Caller)
				assert.Equal(t, "2026-07-28", rec.ProtocolVersion)
				assert.Equal(t, "9007199254740993", rec.RequestID)
			}},
	} {
		t.Run(fmt.Sprintf("row%02d/%s", tt.row, tt.name), func(t *testing.T) {
			t.Parallel()
			h, audit, _ := newTestHandler(t, nil)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, tt.req)
			assert.Equal(t, tt.status, w.Code, "body: %s", w.Body)
			a := decode(t, w)
			if tt.code != 0 && assert.NotNil(t, a.Error, "want error %d", tt.code) {
				assert.Equal(t, tt.code, a.Error.Code)
				assert.NotEmpty(t, a.Error.Message)
			}
			if tt.code == 0 && tt.status != 202 {
				assert.Nil(t, a.Error)
				assert.NotNil(t, a.Result)
			}
			assert.Equal(t, tt.id, string(a.ID), "id echoed byte for byte")
			if tt.header[0] != "" {
				assert.Equal(t, tt.header[1], w.Header().Get(tt.header[0]))
			}
			assert.Empty(t, w.Header().Get("Mcp-Session-Id"), "never a session")
			recs := audit.records()
			require.Len(t, recs, 1, "exactly one audit record")
			rec := recs[0]
			assert.Equal(t, tt.outcome, rec.Outcome)
			assert.Equal(t, tt.status, rec.Status)
			assert.Equal(t, tt.code, rec.ErrorCode)
			assert.Equal(t, "192.0.2.1", rec.ClientIP)
			if tt.check != nil {
				tt.check(t, a, rec)
			}
		})
	}
}

func TestHandlerNotAudited(t *testing.T) {
	t.Parallel()
	limited := mcpmw.RateLimiterFunc(func(w http.ResponseWriter, r *http.Request, ip string) bool {
		w.Header().Set("Retry-After", "60")
		return ip == "192.0.2.1"
	})
	for _, tt := range []struct {
		name   string
		opts   *mcpmw.Options
		method string
		status int
		header [2]string
	}{
		{"rate limited", &mcpmw.Options{RateLimit: limited}, http.MethodPost, 429, [2]string{"Retry-After", "60"}},
		{"GET", nil, http.MethodGet, 405, [2]string{"Allow", "POST"}},
		{"DELETE", nil, http.MethodDelete, 405, [2]string{"Allow", "POST"}},
		{"OPTIONS", nil, http.MethodOptions, 405, [2]string{"Allow", "POST"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, audit, _ := newTestHandler(t, tt.opts)
			r := modern("1", "server/discover", "")
			r.Method = tt.method
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			assert.Equal(t, tt.status, w.Code)
			assert.Equal(t, tt.header[1], w.Header().Get(tt.header[0]))
			a := decode(t, w)
			require.NotNil(t, a.Error)
			assert.Equal(t, mcpmw.CodeInvalidRequest, a.Error.Code)
			assert.Empty(t, audit.records(), "never audited")
		})
	}
}

func TestHandlerAuditorFailures(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	logs := &syncBuffer{}
	calls := 0
	h := mcpmw.New(&reg, tokenAuthn, mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {
		calls++
		panic("audit store down")
	}), &mcpmw.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "tools/call", `"name":"echo","arguments":{"message":"hi"}`))
	assert.Equal(t, 200, w.Code, "the client still gets its answer")
	assert.Equal(t, 1, calls, "never called twice")
	assert.Contains(t, logs.String(), "auditor panicked")
	assert.Contains(t, logs.String(), "audit store down")

	// A tool that panics, then an auditor that panics too: one call, one answer.
	calls = 0
	w = httptest.NewRecorder()
	h.ServeHTTP(w, modern("2", "tools/call", `"name":"panics"`))
	assert.Equal(t, 500, w.Code)
	assert.Equal(t, 1, calls)
}

func TestHandlerAuditContextOutlivesClient(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	var auditErrs []error
	h := mcpmw.New(&reg, tokenAuthn, mcpmw.AuditFunc(func(ctx context.Context, rec mcpmw.CallRecord) {
		auditErrs = append(auditErrs, ctx.Err())
	}), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the client is already gone
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "server/discover", "").WithContext(ctx))
	require.Len(t, auditErrs, 1, "a client that is gone is still audited, once")
	assert.NoError(t, auditErrs[0], "the audit context is not the client's")
}

func TestHandlerLogsToolErrors(t *testing.T) {
	t.Parallel()
	h, _, logs := newTestHandler(t, nil)
	h.ServeHTTP(httptest.NewRecorder(), modern("1", "tools/call", `"name":"breaks"`))
	h.ServeHTTP(httptest.NewRecorder(), modern("2", "tools/call", `"name":"panics"`))
	assert.Contains(t, logs.String(), "10.0.0.7", "the tool's error is logged")
	assert.Contains(t, logs.String(), "tool exploded", "the panic is logged")
}

func TestNewPanicsWithoutHooks(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	assert.PanicsWithValue(t, "mcpmw: New needs an Authenticator (use one that admits every request if the endpoint is public)", func() {
		mcpmw.New(&reg, nil, &spy{}, nil)
	})
	assert.PanicsWithValue(t, "mcpmw: New needs an Auditor", func() { mcpmw.New(&reg, tokenAuthn, nil, nil) })
	assert.Panics(t, func() {
		mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{AllowedHosts: []string{"https://app.example.com"}})
	})
}

// A typed nil (a nil func in its Func adapter, a nil pointer) passes an
// == nil check and then panics on every request: New refuses it as it
// refuses nil, with the same message for the required hooks.
func TestNewPanicsOnTypedNilHooks(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	var nilAuthn mcpmw.AuthenticatorFunc
	var nilAudit mcpmw.AuditFunc
	var nilSpy *spy
	assert.PanicsWithValue(t, "mcpmw: New needs an Authenticator (use one that admits every request if the endpoint is public)", func() {
		mcpmw.New(&reg, nilAuthn, &spy{}, nil)
	})
	assert.PanicsWithValue(t, "mcpmw: New needs an Auditor", func() { mcpmw.New(&reg, tokenAuthn, nilAudit, nil) })
	assert.PanicsWithValue(t, "mcpmw: New needs an Auditor", func() { mcpmw.New(&reg, tokenAuthn, nilSpy, nil) })

	var nilLimiter mcpmw.RateLimiterFunc
	var nilNotifier *mcpmw.LocalNotifier
	for _, tt := range []struct {
		name string
		opts mcpmw.Options
		want string
	}{
		{"rate limiter", mcpmw.Options{RateLimit: nilLimiter}, "mcpmw: Options.RateLimit holds a nil mcpmw.RateLimiterFunc; leave the field nil to go without one"},
		{"notifier", mcpmw.Options{Notifier: nilNotifier}, "mcpmw: Options.Notifier holds a nil *mcpmw.LocalNotifier; leave the field nil to go without one"},
		{"observer", mcpmw.Options{Observer: (*nopObserver)(nil)}, "mcpmw: Options.Observer holds a nil *mcpmw_test.nopObserver; leave the field nil to go without one"},
		{"nil middleware", mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{nil}}, "mcpmw: Options.Middleware[0] is nil"},
		{"middleware returning nil", mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{
			func(next mcpmw.Dispatcher) mcpmw.Dispatcher { return next },
			func(mcpmw.Dispatcher) mcpmw.Dispatcher { return nil },
		}}, "mcpmw: Options.Middleware[1] returned no Dispatcher (<nil>); return next to pass requests on"},
		{"middleware returning a nil DispatcherFunc", mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{
			func(mcpmw.Dispatcher) mcpmw.Dispatcher { return mcpmw.DispatcherFunc(nil) },
		}}, "mcpmw: Options.Middleware[0] returned no Dispatcher (mcpmw.DispatcherFunc); return next to pass requests on"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.PanicsWithValue(t, tt.want, func() { mcpmw.New(&reg, tokenAuthn, &spy{}, &tt.opts) })
		})
	}
	assert.NotPanics(t, func() {
		mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{RateLimit: nil, Observer: nil, Notifier: nil, Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{
			func(next mcpmw.Dispatcher) mcpmw.Dispatcher { return next }}})
	}, "unset optional hooks are fine")
}

// nopObserver observes nothing.
type nopObserver struct{}

func (*nopObserver) Serve(ctx context.Context, _ *mcpmw.Request, _ time.Time) context.Context {
	return ctx
}
func (*nopObserver) Done(context.Context, *http.Request, *mcpmw.Request, mcpmw.CallRecord) {}

func TestTwoEndpointsInOneProcess(t *testing.T) {
	t.Parallel()
	tools := testTools()
	var public, admin mcpmw.Registry
	public.AddTools(tools[0])
	admin.AddTools(tools[0], tools[1])
	a := &spy{}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpmw.New(&public, tokenAuthn, a, &mcpmw.Options{Server: mcpmw.Implementation{Name: "public"}}))
	mux.Handle("/admin/mcp", mcpmw.New(&admin, tokenAuthn, a, &mcpmw.Options{Server: mcpmw.Implementation{Name: "admin"}}))
	names := func(path string) []string {
		r := modern("1", "tools/list", "")
		r.URL.Path = path
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		var out []string
		for _, tool := range decode(t, w).Result["tools"].([]any) {
			out = append(out, tool.(map[string]any)["name"].(string))
		}
		return out
	}
	assert.Equal(t, []string{"echo"}, names("/mcp"))
	assert.Equal(t, []string{"echo", "add"}, names("/admin/mcp"))
	assert.Len(t, a.records(), 2)
}

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

func TestHandlerCheckHost(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		check bool
		host  string
		want  int
	}{
		{"off: any host", false, "evil.example.com", 200},
		{"on: loopback", true, "127.0.0.1:3001", 200},
		{"on: rebinding name", true, "evil.example.com:3001", 403},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, audit, _ := newTestHandler(t, &mcpmw.Options{CheckHost: tt.check})
			r := modern("1", "server/discover", "")
			r.Host = tt.host
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			assert.Equal(t, tt.want, w.Code)
			require.Len(t, audit.records(), 1)
			if tt.want == 403 {
				assert.Equal(t, mcpmw.OutcomeDenied, audit.records()[0].Outcome)
				assert.Contains(t, decode(t, w).Error.Message, "Host")
			}
		})
	}
}
