package mcpmw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpmw/mcpmw"
)

// fuzzSecret is the reader's bearer token in the handler fuzz target; no
// audit record or answer may contain it unless the request put it
// somewhere else too.
const fuzzSecret = "s3cr3t-fuzz-token"

// fuzzHandler is the handler FuzzHandler drives: every kind of tool the
// status table has a row for, a middleware, a small body limit (so 413 is
// reachable) and a rate limiter that refuses requests carrying X-Flood.
func fuzzHandler(auditor mcpmw.Auditor) http.Handler {
	var reg mcpmw.Registry
	text := func(s string) func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult(s), nil
		}
	}
	reg.AddTools(
		mcpmw.Tool{Name: "echo", Description: "Echoes.", Permission: "read",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
			Call: func(_ context.Context, _ mcpmw.Caller, a *mcpmw.Args) (mcpmw.ToolResult, error) {
				msg := a.String("message")
				if err := a.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult(msg), nil
			}},
		mcpmw.Tool{Name: "args", Description: "Reads every kind of argument.", Permission: "read",
			Call: func(_ context.Context, _ mcpmw.Caller, a *mcpmw.Args) (mcpmw.ToolResult, error) {
				s, b, fl := a.OptString("s", ""), a.OptBool("b", false), a.OptFloat("f", 0)
				n, c := a.OptInt("n", 0), a.IntClamp("c", 5, 1, 10)
				if err := a.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.ToolResult{StructuredContent: map[string]any{"s": s, "b": b, "f": fl, "n": n, "c": c}}, nil
			}},
		mcpmw.Tool{Name: "raw", Description: "Returns its arguments as structured content.", Permission: "read",
			Call: func(_ context.Context, _ mcpmw.Caller, a *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{StructuredContent: a.Raw()}, nil
			}},
		mcpmw.Tool{Name: "decode", Description: "Decodes its arguments into a struct.", Permission: "read",
			Call: func(_ context.Context, _ mcpmw.Caller, a *mcpmw.Args) (mcpmw.ToolResult, error) {
				var v struct {
					N  int               `json:"n"`
					S  []string          `json:"s"`
					KV map[string]string `json:"kv"`
				}
				if err := a.Decode(&v); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult(fmt.Sprint(v.N, len(v.S), len(v.KV))), nil
			}},
		mcpmw.Tool{Name: "write_it", Description: "Needs write.", Permission: "write", Call: text("written")},
		mcpmw.Tool{Name: "fails", Description: "isError.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ErrorResult("upstream down"), nil
			}},
		mcpmw.Tool{Name: "breaks", Description: "Internal error.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{}, fmt.Errorf("db down")
			}},
		mcpmw.Tool{Name: "rpc_error", Description: "JSON-RPC error.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{}, &mcpmw.Error{Code: mcpmw.CodeInvalidParams, Message: "no such order"}
			}},
		mcpmw.Tool{Name: "panics", Description: "Panics.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) { panic("tool exploded") }},
		mcpmw.Tool{Name: "region", Description: "Mirrors arguments in Mcp-Param headers.", Permission: "read",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},` +
				`"n":{"type":"integer","x-mcp-header":"N"},"b":{"type":"boolean","x-mcp-header":"B"}}}`),
			Call: text("routed")},
		mcpmw.Tool{Name: "needs_sampling", Description: "Requires sampling.", Permission: "read", RequiredClientCapabilities: []mcpmw.ClientCapability{mcpmw.Capability("sampling")},
			Call: text("sampled")},
		mcpmw.Tool{Name: "slow", Description: "Outlives its timeout.", Permission: "read", Timeout: 2 * time.Millisecond,
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				return mcpmw.TextResult("finished"), nil
			}},
		mcpmw.Tool{Name: "progress", Description: "Reports progress and logs, then answers or fails.", Permission: "read",
			Call: func(ctx context.Context, _ mcpmw.Caller, a *mcpmw.Args) (mcpmw.ToolResult, error) {
				for i := 1; i <= 3; i++ {
					_ = mcpmw.Progress(ctx, float64(i), 3, a.OptString("message", ""))
				}
				_ = mcpmw.Log(ctx, mcpmw.LogInfo, "fuzz", map[string]any{"args": a.Raw()})
				if a.OptBool("fail", false) {
					return mcpmw.ToolResult{}, fmt.Errorf("failed after progress")
				}
				return mcpmw.TextResult("done"), nil
			}},
	)
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		switch r.Header.Get("Authorization") {
		case "Bearer " + fuzzSecret:
			return fuzzCaller("reader"), nil
		case "Bearer writer":
			return fuzzCaller("writer"), nil
		case "Bearer forbidden":
			return nil, fmt.Errorf("suspended: %w", mcpmw.ErrForbidden)
		case "Bearer slow-down":
			return nil, fmt.Errorf("quota: %w", mcpmw.ErrTooManyRequests)
		case "Bearer boom":
			panic("authenticator exploded")
		}
		return nil, fmt.Errorf("unknown token")
	})
	resources := []mcpmw.Method{
		{Name: "resources/list", Capability: "resources", Handle: func(context.Context, *mcpmw.Request) *mcpmw.Response {
			return mcpmw.ResultResponse(map[string]any{"resources": []any{}})
		}},
		{Name: "resources/read", Capability: "resources", Handle: func(context.Context, *mcpmw.Request) *mcpmw.Response {
			return mcpmw.ResultResponse("not an object") // the handler must turn this into -32603
		}},
	}
	return mcpmw.New(&reg, authn, auditor, &mcpmw.Options{
		CheckHost:    true, // the request's Host is localhost unless the input names another
		MaxBodyBytes: 4096,
		PageSize:     3,
		Methods:      resources,
		RateLimit: mcpmw.RateLimiterFunc(func(w http.ResponseWriter, r *http.Request, _ string) bool {
			if r.Header.Get("X-Flood") == "" {
				return false
			}
			w.Header().Set("Retry-After", "1")
			return true
		}),
		ClientLogLevel: mcpmw.LogDebug,
		Logger:         slog.New(slog.DiscardHandler),
	})
}

// fuzzCaller can read; "writer" can also write.
type fuzzCaller string

func (c fuzzCaller) Can(cap mcpmw.Permission) bool { return cap == "read" || string(c) == "writer" }

// parseFuzzHeaders reads "Name: value" lines. Lines a server could not
// have received (a name that is not a token, a control character in the
// value) are dropped, as net/http's server would refuse the request.
func parseFuzzHeaders(block string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(block, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || !isToken(name) {
			continue
		}
		value = strings.Trim(strings.TrimSuffix(value, "\r"), " \t")
		if strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
			continue
		}
		h.Add(textproto.CanonicalMIMEHeaderKey(name), value)
	}
	return h
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// outcomeRow is one (HTTP status, JSON-RPC code, audit outcome) docs/status.md
// status table allows; code 0 is a result or an empty 202.
type outcomeRow struct {
	status, code int
	outcome      mcpmw.Outcome
}

// statusTable lists, for each combination the status table of docs/status.md
// allows, its rows.
var statusTable = map[outcomeRow]string{
	{403, -32600, mcpmw.OutcomeDenied}: "3, 5",
	{401, -32600, mcpmw.OutcomeDenied}: "4",
	{429, -32600, mcpmw.OutcomeDenied}: "5",
	{415, -32600, mcpmw.OutcomeError}:  "6",
	{406, -32600, mcpmw.OutcomeError}:  "7",
	{413, -32600, mcpmw.OutcomeError}:  "8",
	{400, -32700, mcpmw.OutcomeError}:  "9",
	{400, -32600, mcpmw.OutcomeError}:  "10, 13",
	{202, 0, mcpmw.OutcomeAccepted}:    "11, 12",
	{400, -32020, mcpmw.OutcomeError}:  "14, 16, 18, 20",
	{400, -32602, mcpmw.OutcomeError}:  "15",
	{400, -32022, mcpmw.OutcomeError}:  "17, 21",
	{404, -32601, mcpmw.OutcomeError}:  "19",
	{200, -32601, mcpmw.OutcomeError}:  "22",
	{200, 0, mcpmw.OutcomeOK}:          "23, 31",
	{200, -32602, mcpmw.OutcomeError}:  "24, 25, 29 (tool's own -32602)",
	{403, -32602, mcpmw.OutcomeDenied}: "26",
	{200, 0, mcpmw.OutcomeError}:       "27, 28",
	{500, -32603, mcpmw.OutcomeError}:  "29, 30, 34",
	{400, -32021, mcpmw.OutcomeError}:  "32",
}

// FuzzHandler sends arbitrary requests through ServeHTTP and checks the
// handler's promises: no panic escapes; the answer is one JSON-RPC message
// (or an empty 202); status, code and audit outcome form a row of the
// status table (docs/status.md); the audit hook ran exactly once (never for a 405
// or a rate-limited request) and agrees with the answer; echoes are capped;
// and the bearer token appears in neither.
func FuzzHandler(f *testing.F) {
	const h26 = "Content-Type: application/json\nAccept: application/json, text/event-stream\nAuthorization: Bearer " + fuzzSecret + "\nMCP-Protocol-Version: 2026-07-28\n"
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, s := range [][3]string{
		{"POST", h26 + "Mcp-Method: tools/call\nMcp-Name: echo", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},` + meta + `}}`},
		{"POST", h26 + "Mcp-Method: tools/call\nMcp-Name: args", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"args","arguments":{"s":"x","b":true,"f":1.5,"n":3,"c":99},` + meta + `}}`},
		{"POST", h26 + "Mcp-Method: tools/call\nMcp-Name: write_it", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_it",` + meta + `}}`},
		{"POST", h26 + "Mcp-Method: tools/list", `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"dG9vbHM6Mw",` + meta + `}}`},
		{"POST", h26 + "Mcp-Method: resources/read", `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"x",` + meta + `}}`},
		{"POST", h26 + "Mcp-Method: server/discover\nOrigin: https://evil.example", `{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{` + meta + `}}`},
		{"POST", h26 + "X-Flood: 1", `{}`},
		{"GET", "Accept: text/event-stream", ``},
		{"POST", "Content-Type: application/json\nAuthorization: Bearer " + fuzzSecret + "\nMCP-Protocol-Version: 2025-11-25", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"panics"}}`},
		{"POST", "Content-Type: application/json\nAuthorization: Bearer boom", `{"jsonrpc":"2.0","id":7,"method":"initialize"}`},
		{"POST", "Content-Type: application/json\nAuthorization: Bearer " + fuzzSecret, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"POST", "Content-Type: application/json\nAuthorization: Bearer " + fuzzSecret, `{"jsonrpc":"2.0","id":8,"method":"a","params":` + strings.Repeat(`{"a":`, 130) + "1" + strings.Repeat("}", 130) + `}`},
		{"POST", h26 + "Mcp-Method: tools/call\nMcp-Name: region\nMcp-Param-Region: eu\nMcp-Param-N: 1e1\nMcp-Param-B: true", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"region","arguments":{"region":"eu","n":10,"b":true},` + meta + `}}`},
		{"POST", h26 + "Mcp-Method: tools/call\nMcp-Name: needs_sampling", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"needs_sampling",` + meta + `}}`},
		{"POST", h26 + "Mcp-Method: tools/call\nMcp-Name: slow", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"slow",` + meta + `}}`},
		{"POST", h26 + "Mcp-Method: tools/call\nMcp-Name: progress", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"progress","arguments":{"fail":true},"_meta":{"progressToken":"t","io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`},
		{"POST", "Content-Type: application/json\nAccept: text/event-stream, application/json\nAuthorization: Bearer " + fuzzSecret + "\nMCP-Protocol-Version: 2025-06-18", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"progress","arguments":{"message":"x"},"_meta":{"progressToken":5}}}`},
	} {
		f.Add(s[0], s[1], []byte(s[2]))
	}
	f.Fuzz(func(t *testing.T, method, headerBlock string, body []byte) {
		if !isToken(method) {
			method = http.MethodPost
		}
		var mu sync.Mutex
		var recs []mcpmw.CallRecord
		h := fuzzHandler(mcpmw.AuditFunc(func(_ context.Context, rec mcpmw.CallRecord) {
			mu.Lock()
			defer mu.Unlock()
			recs = append(recs, rec)
		}))
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		r.Method = method
		r.Header = parseFuzzHeaders(headerBlock)
		r.Host = "localhost"
		if host := r.Header.Get("Host"); host != "" { // net/http moves Host out of the header map
			r.Host = host
			r.Header.Del("Host")
		}
		w := httptest.NewRecorder()
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Fatalf("a panic escaped ServeHTTP: %v", v)
				}
			}()
			h.ServeHTTP(w, r)
		}()
		checkAnswer(t, r, body, w, recs)
	})
}

// checkAnswer holds FuzzHandler's oracle.
func checkAnswer(t *testing.T, r *http.Request, body []byte, w *httptest.ResponseRecorder, recs []mcpmw.CallRecord) {
	t.Helper()
	st := w.Code
	if w.Header().Get("Mcp-Session-Id") != "" {
		t.Fatal("a session id was sent")
	}
	// The two answers that are never audited.
	switch {
	case r.Header.Get("X-Flood") != "":
		if st != 429 || len(recs) != 0 || w.Header().Get("Retry-After") == "" {
			t.Fatalf("rate limited: status %d, %d audit records", st, len(recs))
		}
	case r.Method != http.MethodPost:
		if st != 405 || len(recs) != 0 || w.Header().Get("Allow") != "POST" {
			t.Fatalf("method %q: status %d, Allow %q, %d audit records", r.Method, st, w.Header().Get("Allow"), len(recs))
		}
	case len(recs) != 1:
		t.Fatalf("status %d with %d audit records, want exactly one; body %s", st, len(recs), w.Body)
	}

	// The answer: an empty 202, one JSON-RPC message, or (row 35) an event
	// stream of notifications ending with the JSON-RPC message.
	code := 0
	var msg map[string]json.RawMessage
	final := w.Body.Bytes()
	streamed := w.Header().Get("Content-Type") == "text/event-stream"
	if st == http.StatusAccepted {
		if w.Body.Len() != 0 {
			t.Fatalf("202 with a body: %s", w.Body)
		}
	} else {
		if streamed {
			final = checkEventStream(t, r, st, w.Body.String())
		} else if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("status %d with Content-Type %q", st, ct)
		} else if cl := w.Header().Get("Content-Length"); cl != "" && cl != strconv.Itoa(w.Body.Len()) {
			t.Fatalf("Content-Length %q for a %d-byte body", cl, w.Body.Len())
		}
		if !utf8.Valid(final) {
			t.Fatalf("the answer is not UTF-8: %q", final)
		}
		if err := json.Unmarshal(final, &msg); err != nil {
			t.Fatalf("the answer is not a JSON object: %v: %s", err, final)
		}
		for k := range msg {
			if k != "jsonrpc" && k != "id" && k != "result" && k != "error" {
				t.Fatalf("the answer has member %q: %s", k, w.Body)
			}
		}
		if string(msg["jsonrpc"]) != `"2.0"` || (msg["result"] == nil) == (msg["error"] == nil) {
			t.Fatalf("not a JSON-RPC response: %s", w.Body)
		}
		if id := msg["id"]; id != nil && (!bytes.Contains(body, id) || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9'))) {
			t.Fatalf("id %s was not in the request body", id)
		}
		if e := msg["error"]; e != nil {
			var eo struct {
				Code    *int    `json:"code"`
				Message *string `json:"message"`
			}
			if err := json.Unmarshal(e, &eo); err != nil || eo.Code == nil || eo.Message == nil || *eo.Message == "" {
				t.Fatalf("malformed error object: %s", e)
			}
			if len(*eo.Message) > 1024 {
				t.Fatalf("an error message of %d bytes: echoes are not capped", len(*eo.Message))
			}
			code = *eo.Code
		} else if msg["result"][0] != '{' {
			t.Fatalf("a result that is not an object: %s", msg["result"])
		}
	}
	if len(recs) == 0 {
		if code != mcpmw.CodeInvalidRequest {
			t.Fatalf("unaudited answer %d with code %d", st, code)
		}
		return
	}

	// The audit record agrees with the answer, and the combination is a
	// row of the status table.
	rec := recs[0]
	if rec.Status != st || rec.ErrorCode != code {
		t.Fatalf("audited status %d code %d; sent %d code %d", rec.Status, rec.ErrorCode, st, code)
	}
	row := outcomeRow{st, code, rec.Outcome}
	if streamed {
		// Row 35: 200, with the code and outcome of the answer at the end.
		found := false
		for r := range statusTable {
			found = found || (r.code == code && r.outcome == rec.Outcome && r.status != 202)
		}
		if !found {
			t.Fatalf("an event stream ending with code %d, outcome %q: no row of the status table", code, rec.Outcome)
		}
		return
	}
	if _, ok := statusTable[row]; !ok {
		t.Fatalf("status %d, code %d, outcome %q is no row of the status table (docs/status.md); body %s", st, code, rec.Outcome, w.Body)
	}
	modern := rec.ProtocolVersion == mcpmw.LatestVersion
	switch row {
	case outcomeRow{404, -32601, mcpmw.OutcomeError}:
		if !modern {
			t.Fatalf("404 -32601 on revision %q", rec.ProtocolVersion)
		}
	case outcomeRow{200, -32601, mcpmw.OutcomeError}:
		if modern {
			t.Fatal("200 -32601 on 2026-07-28")
		}
	case outcomeRow{401, -32600, mcpmw.OutcomeDenied}:
		if w.Header().Get("WWW-Authenticate") == "" {
			t.Fatal("401 without a challenge")
		}
	case outcomeRow{403, -32602, mcpmw.OutcomeDenied}:
		if !strings.Contains(w.Header().Get("WWW-Authenticate"), `error="insufficient_scope"`) || rec.Tool != "write_it" {
			t.Fatalf("denied call: challenge %q, tool %q", w.Header().Get("WWW-Authenticate"), rec.Tool)
		}
	case outcomeRow{400, -32700, mcpmw.OutcomeError}:
		if json.Valid(body) && utf8.Valid(body) {
			t.Fatalf("-32700 for valid JSON %q", body)
		}
	case outcomeRow{200, 0, mcpmw.OutcomeOK}:
		if modern {
			var res map[string]json.RawMessage
			_ = json.Unmarshal(msg["result"], &res)
			if string(res["resultType"]) != `"complete"` || !bytes.Contains(res["_meta"], []byte("io.modelcontextprotocol/serverInfo")) {
				t.Fatalf("a 2026-07-28 result without resultType or serverInfo: %s", msg["result"])
			}
		}
	}
	// Who was refused before authentication, and who after.
	switch {
	case rec.AuthError != nil: // rows 4 and 5
		if rec.Caller != nil || rec.Outcome != mcpmw.OutcomeDenied || code != -32600 || (st != 401 && st != 403 && st != 429) {
			t.Fatalf("authentication failed (%v), answered %d %d %q", rec.AuthError, st, code, rec.Outcome)
		}
	case rec.Caller == nil: // row 3 (Origin, Host) or 30 (the authenticator panicked)
		origin := row == outcomeRow{403, -32600, mcpmw.OutcomeDenied} && (len(r.Header.Values("Origin")) > 0 || r.Host != "localhost")
		boom := row == outcomeRow{500, -32603, mcpmw.OutcomeError} && r.Header.Get("Authorization") == "Bearer boom"
		if !origin && !boom {
			t.Fatalf("no caller and no authentication error, answered %d %d %q", st, code, rec.Outcome)
		}
	case row == outcomeRow{403, -32600, mcpmw.OutcomeDenied} || row == outcomeRow{401, -32600, mcpmw.OutcomeDenied}:
		t.Fatalf("an authenticated caller refused with %d", st)
	}
	// Capped echoes, and no credentials.
	for name, v := range map[string]string{"method": rec.Method, "tool": rec.Tool, "request id": rec.RequestID,
		"protocol version": rec.ProtocolVersion, "client name": rec.ClientName, "client version": rec.ClientVersion} {
		if n := utf8.RuneCountInString(v); n > 101 || !utf8.ValidString(v) {
			t.Fatalf("audited %s has %d runes: %q", name, n, v)
		}
	}
	if len(rec.Summary) > 1024 {
		t.Fatalf("audit summary of %d bytes", len(rec.Summary))
	}
	if !bytes.Contains(body, []byte(fuzzSecret)) && !headerHasSecretOutsideAuth(r.Header) {
		var logged bytes.Buffer
		slog.New(slog.NewJSONHandler(&logged, nil)).Info("rec", slog.Any("", rec))
		if strings.Contains(logged.String(), fuzzSecret) || strings.Contains(w.Body.String(), fuzzSecret) {
			t.Fatalf("the bearer token leaked: %s / %s", logged.String(), w.Body)
		}
	}
}

// checkEventStream checks an event-stream answer (row 35) and returns its
// final message: 200, every event a "message" with one line of JSON, every
// one but the last a notification for this request, the last the response.
func checkEventStream(t *testing.T, r *http.Request, st int, body string) []byte {
	t.Helper()
	if st != http.StatusOK {
		t.Fatalf("an event stream with status %d", st)
	}
	if !strings.Contains(strings.Join(r.Header.Values("Accept"), ","), "event-stream") && !strings.Contains(strings.Join(r.Header.Values("Accept"), ","), "*") {
		t.Fatalf("an event stream for Accept %q", r.Header.Values("Accept"))
	}
	events := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	var last []byte
	for i, ev := range events {
		data, ok := strings.CutPrefix(ev, "event: message\ndata: ")
		if !ok || strings.Contains(data, "\n") || !json.Valid([]byte(data)) {
			t.Fatalf("malformed event %d: %q", i, ev)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal([]byte(data), &m)
		isLast := i == len(events)-1
		if !isLast && (m.ID != nil || (m.Method != "notifications/progress" && m.Method != "notifications/message")) {
			t.Fatalf("event %d is not a notification: %s", i, data)
		}
		if isLast && m.Method != "" {
			t.Fatalf("the stream does not end with the response: %s", data)
		}
		last = []byte(data)
	}
	return last
}

func headerHasSecretOutsideAuth(h http.Header) bool {
	for k, vs := range h {
		for _, v := range vs {
			if k != "Authorization" && strings.Contains(v, fuzzSecret) {
				return true
			}
		}
	}
	return false
}
