package mcpmw_test

import (
	"bytes"
	"context"
	"encoding/base64"
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

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/typed"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The markers the sensitivity test sends as sensitive values, and what it
// looks for in everything that leaves the handler: the marker (also found
// in the spelling "\u0073" + marker[1:], which escapes its first letter)
// and the digits of the numeric one, in either float spelling.
const (
	marker    = "s3cr3t-MARKER-4f1c9e"
	numMarker = "271828182.5"
)

var markerNeedles = []string{"3cr3t-MARKER-4f1c9e", "271828182", "2.71828182"}

// leaks returns the needles found in s.
func leaks(s string) []string {
	var found []string
	for _, n := range markerNeedles {
		if strings.Contains(s, n) {
			found = append(found, n)
		}
	}
	return found
}

// secretTools are the tools of the sensitivity test's endpoint: raw ones
// read with Args, typed ones (a struct tag, and a hand-written schema with
// every kind of constraint), a Func without validation (Decode's own
// errors), and one only writers may call. Each records what it was given
// in got, so the test can check that the tool still gets the value.
func secretTools(got *sync.Map) []mcpmw.Tool {
	type card struct {
		Number string `json:"number" mcpmw:"sensitive"`
		Holder string `json:"holder,omitempty"`
	}
	type payIn struct {
		Amount  int               `json:"amount"`
		Card    card              `json:"card"`
		Cards   []card            `json:"cards,omitempty"`
		APIKey  string            `json:"api_key" mcpmw:"sensitive"`
		Born    time.Time         `json:"born,omitzero" mcpmw:"sensitive"`
		Secrets map[string]string `json:"secrets,omitempty" mcpmw:"sensitive"`
	}
	pay := typed.NewTool("pay", "Pays.", "read", func(_ context.Context, _ mcpmw.Caller, in payIn) (string, error) {
		got.Store("pay", in.APIKey)
		return "paid", nil
	})
	type vaultIn struct {
		Code  string `json:"code"`
		Tier  string `json:"tier"`
		Fixed string `json:"fixed"`
		Email string `json:"email"`
		Short string `json:"short"`
		Long  string `json:"long"`
		Pin   int    `json:"pin"`
	}
	vault := typed.Validate(mcpmw.Tool{Name: "vault", Description: "Opens.", Permission: "read", Sensitive: []string{"/*"},
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"code":{"type":"string","pattern":"^[0-9]{6}$"},"tier":{"enum":["gold","silver"]},"fixed":{"const":"abc"},` +
			`"email":{"type":"string","format":"email"},"short":{"type":"string","minLength":200},` +
			`"long":{"type":"string","maxLength":3},"pin":{"type":"integer"}},"additionalProperties":false}`),
		Call: typed.Func(func(_ context.Context, _ mcpmw.Caller, in vaultIn) (string, error) {
			got.Store("vault", in.Email)
			return "opened", nil
		})})
	type pinIn struct {
		Pin int `json:"pin"`
	}
	login := func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
		user, password := args.String("user"), args.String("password")
		args.OptInt("pin", 0)
		if err := args.Err(); err != nil {
			return mcpmw.ToolResult{}, err
		}
		got.Store("login", password)
		switch user {
		case "panic":
			panic("login exploded")
		case "fail":
			return mcpmw.ToolResult{}, errors.New("the user store is down")
		}
		return mcpmw.TextResult("welcome " + user), nil
	}
	return []mcpmw.Tool{
		{Name: "login", Description: "Logs in.", Permission: "read", Sensitive: []string{"/password", "/pin", "/card/number", "/tokens/*"},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"user":{"type":"string"},` +
				`"password":{"type":"string","x-mcp-header":"Password"},"pin":{"type":"integer"},` +
				`"card":{"type":"object","properties":{"number":{"type":"string"}}},"tokens":{"type":"array","items":{"type":"string"}}},"required":["user","password"]}`),
			Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				mcpmw.Progress(ctx, 1, 2, "checking the password")
				return login(ctx, c, args)
			}},
		{Name: "login_v1", Description: "The old name of login (a middleware sends it there).", Permission: "read",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"user":{"type":"string"}}}`),
			Call:        login},
		pay,
		vault,
		{Name: "pin_check", Description: "Checks a PIN.", Permission: "read", Sensitive: []string{"/pin"},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"pin":{"type":"integer"}}}`),
			Call: typed.Func(func(_ context.Context, _ mcpmw.Caller, in pinIn) (string, error) {
				return "checked", nil
			})},
		{Name: "rotate_key", Description: "Rotates a key.", Permission: "write", Sensitive: []string{"/key"},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}}}`),
			Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				got.Store("rotate_key", args.String("key"))
				return mcpmw.TextResult("rotated"), args.Err()
			}},
	}
}

// secretPrompts are the prompts of the sensitivity test's endpoint, with
// completers on their sensitive arguments.
func secretPrompts(got *sync.Map) []mcpmw.Prompt {
	complete := func(_ context.Context, _ mcpmw.Caller, req mcpmw.CompletionRequest) (mcpmw.Completion, error) {
		got.Store("complete "+req.Argument, req.Value)
		if req.Value == "fail" {
			return mcpmw.Completion{}, errors.New("the dictionary is down")
		}
		return mcpmw.Completion{Values: []string{"correct-horse"}}, nil
	}
	get := func(_ context.Context, _ mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
		got.Store("reset_password", args["new_password"])
		return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("Reset " + args["user"] + "'s password."))}}, nil
	}
	return []mcpmw.Prompt{
		{Name: "reset_password", Permission: "read", Get: get,
			Arguments: []mcpmw.PromptArgument{{Name: "user", Required: true}, {Name: "new_password", Required: true, Sensitive: true}},
			Complete:  map[string]mcpmw.Completer{"user": complete, "new_password": complete}},
		{Name: "admin_reset", Permission: "write", Get: get,
			Arguments: []mcpmw.PromptArgument{{Name: "new_password", Sensitive: true}},
			Complete:  map[string]mcpmw.Completer{"new_password": complete}},
	}
}

// capture is everything that leaves a handler but the answer: the records
// as the Auditor got them, the same records through JSONAuditor and
// through LogAuditor (JSON and text), and the handler's own log, all at
// debug level. The auditor panics for a request whose id is "audit-panic",
// and JSONAuditor's writer fails for "write-fails", so that the library's
// own error logs, which carry the lost record, are exercised too.
type capture struct {
	mu   sync.Mutex
	recs []mcpmw.CallRecord
	out  syncBuffer // JSONAuditor's lines, LogAuditor's lines, the handler's log
}

// Write makes capture the sink of every logger and JSONAuditor; a line
// of a request whose id is "write-fails" fails.
func (c *capture) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`write-fails`)) && bytes.HasPrefix(p, []byte(`{"time"`)) && !bytes.Contains(p, []byte(`"level"`)) {
		return 0, errors.New("disk full")
	}
	return c.out.Write(p)
}

func (c *capture) auditor(log *slog.Logger) mcpmw.Auditor {
	jsonLines := mcpmw.JSONAuditor(c, log)
	asJSON := mcpmw.LogAuditor(slog.New(slog.NewJSONHandler(c, &slog.HandlerOptions{Level: slog.LevelDebug})))
	asText := mcpmw.LogAuditor(slog.New(slog.NewTextHandler(c, &slog.HandlerOptions{Level: slog.LevelDebug})))
	return mcpmw.AuditFunc(func(ctx context.Context, rec mcpmw.CallRecord) {
		c.mu.Lock()
		c.recs = append(c.recs, rec)
		c.mu.Unlock()
		jsonLines.Audit(ctx, rec)
		asJSON.Audit(ctx, rec)
		asText.Audit(ctx, rec)
		if rec.RequestID == `"audit-panic"` {
			panic("auditor exploded")
		}
	})
}

func (c *capture) records() []mcpmw.CallRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]mcpmw.CallRecord(nil), c.recs...)
}

// recordText is every field of rec that holds text.
func recordText(rec mcpmw.CallRecord) string {
	auth := ""
	if rec.AuthError != nil {
		auth = rec.AuthError.Error()
	}
	return strings.Join([]string{rec.Method, rec.RequestID, rec.Target, rec.Tool, string(rec.Arguments), rec.ProtocolVersion,
		rec.ClientName, rec.ClientVersion, string(rec.Outcome), rec.Summary, auth, fmt.Sprint(rec.Caller)}, "\n")
}

// newSecretEndpoint returns the sensitivity test's handler, with a
// middleware that sends calls of login_v1 to login, and what it captures.
func newSecretEndpoint(got *sync.Map) (*mcpmw.Handler, *capture) {
	var reg mcpmw.Registry
	reg.AddTools(secretTools(got)...)
	reg.AddPrompts(secretPrompts(got)...)
	c := &capture{}
	log := slog.New(slog.NewJSONHandler(c, &slog.HandlerOptions{Level: slog.LevelDebug, AddSource: true}))
	rename := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			if name, _ := req.StringParam("name"); name == "login_v1" {
				req.Params = bytes.Replace(req.Params, []byte(`"login_v1"`), []byte(`"login"`), 1)
			}
			return next.Dispatch(ctx, req)
		})
	}
	h := mcpmw.New(&reg, tokenAuthn, c.auditor(log), &mcpmw.Options{Logger: log, ClientLogLevel: mcpmw.LogDebug, MaxBodyBytes: 64 << 10,
		Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{rename}})
	return h, c
}

// secretRequest is one request of the sensitivity test.
type secretRequest struct {
	name   string
	r      *http.Request
	status int // the HTTP status it must get
	// redacted is a member the record's arguments must show as
	// "[redacted]" (`"password":"[redacted]"`), when the record has them.
	redacted string
	streamed bool // answered on an event stream
}

// secretCall is a 2026-07-28 tools/call of tool with arguments args (raw
// JSON) and the id id.
func secretCall(id, tool, args string, hdr ...string) *http.Request {
	return modern(`"`+id+`"`, "tools/call", `"name":"`+tool+`","arguments":`+args, hdr...)
}

// legacyCall is the same on 2025-11-25, which has no Mcp-Param-* headers.
func legacyCall(tool, args string, hdr ...string) *http.Request {
	return legacy(mcpmw.Version20251125, "1", "tools/call", `"name":"`+tool+`","arguments":`+args, hdr...)
}

func secretRequests() []secretRequest {
	m := marker
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	long := m + strings.Repeat("x", 5000)
	escaped := `"\u0073` + m[1:] + `"`
	login := func(password string) string { return `{"user":"ann","password":` + password + `}` }
	pwd := func(v string) []string { return []string{"Mcp-Param-Password", v} }
	promptGet := func(id, name, args string, hdr ...string) *http.Request {
		return modern(`"`+id+`"`, "prompts/get", `"name":"`+name+`","arguments":`+args, append([]string{"Mcp-Name", name}, hdr...)...)
	}
	complete := func(prompt, arg, value, context string, hdr ...string) *http.Request {
		params := `"ref":{"type":"ref/prompt","name":"` + prompt + `"},"argument":{"name":"` + arg + `","value":` + value + `}`
		if context != "" {
			params += `,"context":{"arguments":` + context + `}`
		}
		return modern(`"c"`, "completion/complete", params, hdr...)
	}
	const pw = `"password":"[redacted]"`
	return []secretRequest{
		// login: raw, read with Args; password mirrored in Mcp-Param-Password.
		{"valid", secretCall("1", "login", `{"user":"ann","password":`+q(m)+`,"pin":1234,"card":{"number":`+q(m)+`},"tokens":[`+q(m)+`,`+q(m)+`]}`, pwd(m)...), 200, pw, false},
		{name: "valid, streamed", status: 200, redacted: pw, streamed: true, r: req(`{"jsonrpc":"2.0","id":"2","method":"tools/call","params":{"name":"login","arguments":`+login(q(m))+
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"}}}`,
			append(pwd(m), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "login")...)},
		{name: "pin with a fraction, streamed", status: 200, redacted: `"pin":"[redacted]"`, streamed: true, r: req(`{"jsonrpc":"2.0","id":"2","method":"tools/call","params":{"name":"login","arguments":{"user":"ann","password":`+q(m)+`,"pin":`+numMarker+`}`+
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"}}}`,
			append(pwd(m), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "login")...)},
		{"valid, legacy", legacyCall("login", login(q(m))), 200, pw, false},
		{"pin with a fraction (Args quotes it)", secretCall("3", "login", `{"user":"ann","password":`+q(m)+`,"pin":`+numMarker+`}`, pwd(m)...), 200, `"pin":"[redacted]"`, false},
		{"password not a string", legacyCall("login", login(`[`+q(m)+`]`)), 200, pw, false},
		{"password over-long", secretCall("4", "login", login(q(long)), pwd(long)...), 200, pw, false},
		{"header differs from the body", secretCall("5", "login", login(q(m)), pwd("other")...), 400, pw, false},
		{"body differs from the header", secretCall("6", "login", login(`"other"`), pwd(m)...), 400, pw, false},
		{"base64 header differs from the body", secretCall("7", "login", login(`"other"`), pwd("=?base64?"+base64.StdEncoding.EncodeToString([]byte(m))+"?=")...), 400, pw, false},
		{"header over-long and different", secretCall("8", "login", login(`"other"`), pwd(long)...), 400, pw, false},
		{"duplicate member", legacyCall("login", `{"user":"ann","password":"x","password":`+q(m)+`}`), 400, pw, false},
		{"duplicate nested member", legacyCall("login", `{"user":"ann","password":"x","card":{"number":`+q(m)+`,"number":`+q(m)+`}}`), 400, `"number":"[redacted]"`, false},
		{"escaped name", legacyCall("login", `{"user":"ann","\u0070assword":`+q(m)+`}`), 200, `{"user":"ann","password":"[redacted]"}`, false},
		{"name in another case", legacyCall("login", `{"user":"ann","password":"x","PASSWORD":`+q(m)+`}`), 200, `"PASSWORD":"[redacted]"`, false},
		{"escaped value", legacyCall("login", login(escaped)), 200, pw, false},
		{"misspelt password", legacyCall("login", `{"user":"ann","passwrod":`+q(m)+`}`), 200, `"passwrod":"[redacted]"`, false},
		{"misspelt password, modern", secretCall("14", "login", `{"user":"ann","password":"x","pasword":`+q(m)+`}`, pwd("x")...), 200, `"pasword":"[redacted]"`, false},
		{"misspelt tool name", secretCall("15", "logn", `{"user":"ann","password":`+q(m)+`}`), 200, `"password":"[redacted]"`, false},
		{"misspelt tool name, legacy", legacyCall("logn", `{"user":"ann","password":`+q(m)+`,"list":[`+q(m)+`]}`), 200, `"list":"[redacted]"`, false},
		{"card not an object", legacyCall("login", `{"user":"ann","password":"x","card":`+q(m)+`}`), 200, `"card":"[redacted]"`, false},
		{"arguments a string", legacyCall("login", q(m)), 200, "", false},
		{"arguments an array", legacyCall("login", `[`+q(m)+`]`), 200, "", false},
		{"unsupported version", secretCall("9", "login", login(q(m)), append(pwd(m), "MCP-Protocol-Version", "2099-01-01")...), 400, pw, false},
		{"Mcp-Name differs", secretCall("10", "login", login(q(m)), append(pwd(m), "Mcp-Name", "pay")...), 400, pw, false},
		{"Mcp-Method differs", secretCall("11", "login", login(q(m)), append(pwd(m), "Mcp-Method", "tools/list")...), 400, pw, false},
		{"tool panics", secretCall("12", "login", `{"user":"panic","password":`+q(m)+`}`, pwd(m)...), 500, pw, false},
		{"tool fails", secretCall("13", "login", `{"user":"fail","password":`+q(m)+`}`, pwd(m)...), 500, pw, false},
		{"auditor panics", secretCall("audit-panic", "login", login(q(m)), pwd(m)...), 200, pw, false},
		{"audit line lost", secretCall("write-fails", "login", login(q(m)), pwd(m)...), 200, pw, false},
		{"middleware sends login_v1 to login", legacyCall("login_v1", login(q(m))), 200, pw, false},
		{"malformed JSON after the arguments", req(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":`+login(q(m))+`}`, "MCP-Protocol-Version", mcpmw.Version20251125), 400, "", false},
		{"body over MaxBodyBytes", req(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":`+login(q(m+strings.Repeat("y", 70<<10)))+`}}`, "MCP-Protocol-Version", mcpmw.Version20251125), 413, "", false},

		// pay: typed.NewTool, sensitive by struct tag.
		{"typed valid", secretCall("20", "pay", `{"amount":5,"card":{"number":`+q(m)+`},"cards":[{"number":`+q(m)+`}],"api_key":`+q(m)+`,"secrets":{"a":`+q(m)+`}}`), 200, `"api_key":"[redacted]"`, false},
		{"typed wrong type", secretCall("21", "pay", `{"amount":5,"card":{"number":[`+q(m)+`]},"api_key":`+q(m)+`}`), 200, `"number":"[redacted]"`, false},
		{"typed unparsable time", secretCall("22", "pay", `{"amount":5,"card":{"number":"1"},"api_key":"k","born":`+q(m)+`}`), 200, `"born":"[redacted]"`, false},
		{"typed missing member", secretCall("23", "pay", `{"card":{"number":`+q(m)+`},"api_key":`+q(long)+`}`), 200, `"api_key":"[redacted]"`, false},
		{"typed duplicate", secretCall("24", "pay", `{"amount":5,"card":{"number":"1"},"api_key":"k","api_key":`+q(m)+`}`), 400, `"api_key":"[redacted]"`, false},
		{"typed misspelt secret", secretCall("26", "pay", `{"amount":5,"card":{"number":"1"},"apiKey":`+q(m)+`}`), 200, `"apiKey":"[redacted]"`, false},
		{"typed misspelt nested secret", secretCall("27", "pay", `{"amount":5,"card":{"nubmer":`+q(m)+`},"api_key":"k"}`), 200, `"nubmer":"[redacted]"`, false},
		{"typed misspelt parent", secretCall("28", "pay", `{"amount":5,"crad":{"number":`+q(m)+`},"api_key":"k"}`), 200, `"crad":"[redacted]"`, false},
		{"typed secret in a list element's unknown member", secretCall("29", "pay", `{"amount":5,"card":{"number":"1"},"cards":[{"number":"1","cvc":`+q(m)+`}],"api_key":"k"}`), 200, `"cvc":"[redacted]"`, false},
		{"typed map value wrong type", secretCall("25", "pay", `{"amount":5,"card":{"number":"1"},"api_key":"k","secrets":{"a":[`+q(m)+`]}}`), 200, `"secrets":"[redacted]"`, false},

		// vault: typed.Validate over a schema with every constraint, all sensitive ("/*").
		{"pattern", secretCall("30", "vault", `{"code":`+q(m)+`}`), 200, `"code":"[redacted]"`, false},
		{"enum", secretCall("31", "vault", `{"tier":`+q(m)+`}`), 200, `"tier":"[redacted]"`, false},
		{"const", secretCall("32", "vault", `{"fixed":`+q(m)+`}`), 200, `"fixed":"[redacted]"`, false},
		{"format (not checked)", secretCall("33", "vault", `{"email":`+q(m)+`}`), 200, `"email":"[redacted]"`, false},
		{"minLength", secretCall("34", "vault", `{"short":`+q(m)+`}`), 200, `"short":"[redacted]"`, false},
		{"maxLength", secretCall("35", "vault", `{"long":`+q(long)+`}`), 200, `"long":"[redacted]"`, false},
		{"integer expected", secretCall("36", "vault", `{"pin":`+q(m)+`}`), 200, `"pin":"[redacted]"`, false},
		{"number with a fraction", secretCall("37", "vault", `{"pin":`+numMarker+`}`), 200, `"pin":"[redacted]"`, false},

		// pin_check: typed.Func without validation: Decode's own errors.
		{"Decode type error", secretCall("40", "pin_check", `{"pin":`+numMarker+`}`), 200, `"pin":"[redacted]"`, false},
		{"Decode type error, string", secretCall("41", "pin_check", `{"pin":`+q(m)+`}`), 200, `"pin":"[redacted]"`, false},

		// rotate_key: writers only.
		{"denied", secretCall("50", "rotate_key", `{"key":`+q(m)+`}`), 403, `"key":"[redacted]"`, false},
		{"permitted", secretCall("51", "rotate_key", `{"key":`+q(m)+`}`, "Authorization", "Bearer writer"), 200, `"key":"[redacted]"`, false},

		// prompts
		{"prompt valid", promptGet("60", "reset_password", `{"user":"ann","new_password":`+q(m)+`}`), 200, "", false},
		{"prompt valid, legacy", legacy(mcpmw.Version20251125, "61", "prompts/get", `"name":"reset_password","arguments":{"user":"ann","new_password":`+q(m)+`}`), 200, "", false},
		{"prompt argument a number", promptGet("62", "reset_password", `{"user":"ann","new_password":`+numMarker+`}`), 200, "", false},
		{"prompt argument an array", promptGet("63", "reset_password", `{"user":"ann","new_password":[`+q(m)+`]}`), 200, "", false},
		{"prompt argument twice", promptGet("64", "reset_password", `{"user":"ann","new_password":"x","new_password":`+q(m)+`}`), 400, "", false},
		{"prompt argument twice, escaped", promptGet("65", "reset_password", `{"user":"ann","new_password":"x","new\u005fpassword":`+q(m)+`}`), 400, "", false},
		{"prompt argument over-long, required one missing", promptGet("66", "reset_password", `{"new_password":`+q(long)+`}`), 200, "", false},
		{"prompt denied", promptGet("67", "admin_reset", `{"new_password":`+q(m)+`}`), 403, "", false},
		{"prompt arguments a string", promptGet("68", "reset_password", q(m)), 200, "", false},

		// completion of a sensitive prompt argument
		{"completion", complete("reset_password", "new_password", q(m), ""), 200, "", false},
		{"completion, over-long", complete("reset_password", "new_password", q(long), ""), 200, "", false},
		{"completion context", complete("reset_password", "user", `"a"`, `{"new_password":`+q(m)+`}`), 200, "", false},
		{"completion context not a string", complete("reset_password", "user", `"a"`, `{"new_password":`+numMarker+`}`), 200, "", false},
		{"completion value not a string", complete("reset_password", "new_password", `[`+q(m)+`]`, ""), 200, "", false},
		{"completion denied", complete("admin_reset", "new_password", q(m), ""), 403, "", false},
		{"completion duplicate", complete("reset_password", "new_password", `"x","value":`+q(m), ""), 400, "", false},
	}
}

// newTLSServer starts h on 127.0.0.1 over HTTP/2 with TLS.
func newTLSServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// TestSensitiveArgumentsNeverLeave sends a marker as each sensitive
// argument of every tool, prompt and completion of an endpoint (valid,
// of the wrong type, over-long, escaped, repeated, and in requests refused
// before and after dispatch), over HTTP/1.1 and HTTP/2, and checks that the
// marker is in no audit record, no line JSONAuditor or LogAuditor writes,
// no line the handler logs at any level, and no answer; and that the tools
// and prompts still got it.
func TestSensitiveArgumentsNeverLeave(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/2"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			var got sync.Map
			h, c := newSecretEndpoint(&got)
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			if proto == "HTTP/2" {
				srv = newTLSServer(t, h)
			}
			reqs := secretRequests()
			for i, sr := range reqs {
				r, err := http.NewRequest(http.MethodPost, srv.URL+"/mcp", sr.r.Body)
				require.NoError(t, err)
				r.Header = sr.r.Header
				resp, err := srv.Client().Do(r)
				require.NoError(t, err, sr.name)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				assert.Equal(t, proto, resp.Proto[:len(proto)], sr.name)
				assert.Equal(t, sr.status, resp.StatusCode, "%s: %s", sr.name, body)
				if sr.streamed {
					assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"), "%s: %s", sr.name, body)
				}
				assert.Empty(t, leaks(string(body)), "%s: the answer: %s", sr.name, body)
				for k, vs := range resp.Header {
					assert.Empty(t, leaks(strings.Join(vs, " ")), "%s: header %s", sr.name, k)
				}
				recs := c.records()
				require.Len(t, recs, i+1, "%s: one record per request", sr.name)
				rec := recs[i]
				assert.Empty(t, leaks(recordText(rec)), "%s: the record: %s", sr.name, recordText(rec))
				if sr.redacted != "" {
					assert.Contains(t, string(rec.Arguments), sr.redacted, "%s: the member stays, its value redacted", sr.name)
				}
			}
			assert.Empty(t, leaks(c.out.String()), "audit lines and logs:\n%s", c.out.String())
			// Not vacuous: the library's error logs ran, with the records.
			assert.Contains(t, c.out.String(), "auditor panicked")
			assert.Contains(t, c.out.String(), "writing an audit record failed")
			assert.Contains(t, c.out.String(), "login exploded")
			assert.Contains(t, c.out.String(), `"arguments":{"user":"ann","password":"[redacted]"}`, "JSONAuditor keeps the arguments JSON")
			// Nothing the tools and prompts receive changes.
			for _, k := range []string{"login", "pay", "vault", "rotate_key", "reset_password", "complete new_password"} {
				v, _ := got.Load(k)
				assert.Contains(t, fmt.Sprint(v), marker, "%s got the value as sent", k)
			}
		})
	}
}

func TestRegistryAddToolsRefusesBadSensitivePointers(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","properties":{"password":{"type":"string"},"card":{"type":"object","properties":{"number":{"type":"string"}}}}}`)
	call := func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.TextResult("ok"), nil
	}
	for _, tc := range []struct {
		name      string
		schema    json.RawMessage
		sensitive []string
		panics    string // "" when AddTools accepts it
	}{
		{"declared", schema, []string{"/password", "/card", "/card/number", "/*", "/*/number"}, ""},
		{"empty", schema, []string{""}, `tool "t": Sensitive pointer "" is empty`},
		{"no slash", schema, []string{"password"}, `tool "t": Sensitive pointer "password" must start with "/"`},
		{"bad escape", schema, []string{"/pass~word"}, `tool "t": Sensitive pointer "/pass~word" has a "~" not followed by 0 or 1`},
		{"misspelt", schema, []string{"/password", "/pasword"}, `tool "t": Sensitive pointer "/pasword" names nothing its InputSchema declares`},
		{"other case", schema, []string{"/Password"}, `tool "t": Sensitive pointer "/Password" names nothing`},
		{"too deep", schema, []string{"/card/number/x"}, `tool "t": Sensitive pointer "/card/number/x" names nothing`},
		{"no arguments", nil, []string{"/password"}, `tool "t": Sensitive pointer "/password" names nothing`},
		{"undeclared under a loose schema", json.RawMessage(`{"type":"object"}`), []string{"/password"}, `tool "t": Sensitive pointer "/password" names nothing`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var reg mcpmw.Registry
			add := func() {
				reg.AddTools(mcpmw.Tool{Name: "t", Permission: "read", InputSchema: tc.schema, Sensitive: tc.sensitive, Call: call})
			}
			if tc.panics == "" {
				require.NotPanics(t, add)
				return
			}
			defer func() {
				v := recover()
				require.NotNil(t, v, "Add must panic")
				assert.Contains(t, fmt.Sprint(v), "mcpmw: "+tc.panics)
				assert.Equal(t, 0, reg.NumTools(), "nothing registered")
			}()
			add()
		})
	}
}

func TestLookupToolReturnsTheSensitiveListAdded(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	sensitive := []string{"/password"}
	reg.AddTools(mcpmw.Tool{Name: "login", Permission: "read", Sensitive: sensitive,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"password":{"type":"string"},"user":{"type":"string"}}}`),
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("ok"), nil
		}})
	sensitive[0] = "/user" // the caller's slice changes after AddTools
	tool, _ := reg.LookupTool("login")
	assert.Equal(t, []string{"/password"}, tool.Sensitive)

	var recs spy
	h := mcpmw.New(&reg, tokenAuthn, &recs, &mcpmw.Options{Logger: newTextLogger(io.Discard)})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, legacyCall("login", `{"user":"ann","password":"hunter2"}`))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Equal(t, `{"user":"ann","password":"[redacted]"}`, string(recs.records()[0].Arguments))
}

// TestSensitiveArgumentMessages checks the texts the handler builds about
// a sensitive argument: an argument error that quotes a value says
// "[redacted]" in the isError text and the summary, and a mismatching
// Mcp-Param-* header is not quoted; the same errors about an argument of a
// tool without Sensitive ones still quote the value, which helps the model.
func TestSensitiveArgumentMessages(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	pinTool := func(name string, sensitive ...string) mcpmw.Tool {
		return mcpmw.Tool{Name: name, Permission: "read", Sensitive: sensitive,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"pin":{"type":"string","x-mcp-header":"Pin"},"n":{"type":"integer"}}}`),
			Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				args.OptInt("n", 0)
				return mcpmw.TextResult("ok"), args.Err()
			}}
	}
	reg.AddTools(pinTool("open", "/pin", "/n"), pinTool("plain"))
	var recs spy
	h := mcpmw.New(&reg, tokenAuthn, &recs, &mcpmw.Options{Logger: newTextLogger(io.Discard)})
	for _, tc := range []struct {
		name, tool, args, header string
		text, summary            string
	}{
		{"argument error, sensitive", "open", `{"n":1.5}`, "",
			`Invalid arguments: argument "n" must be an integer, not [redacted]. Check the tool's input schema and call it again.`,
			`argument "n" must be an integer, not [redacted]`},
		{"argument error, not sensitive", "plain", `{"n":1.5}`, "",
			`Invalid arguments: argument "n" must be an integer, not 1.5. Check the tool's input schema and call it again.`,
			`argument "n" must be an integer, not 1.5`},
		{"header mismatch, sensitive", "open", `{"pin":"1234"}`, "9999",
			`Header mismatch: Mcp-Param-Pin header value does not match arguments.pin`, ""},
		{"header mismatch, not sensitive", "plain", `{"pin":"1234"}`, "9999",
			`Header mismatch: Mcp-Param-Pin header value '9999' does not match arguments.pin`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, secretCall("1", tc.tool, tc.args, "Mcp-Param-Pin", tc.header))
			a := decode(t, w)
			rs := recs.records()
			rec := rs[len(rs)-1]
			if a.Error != nil {
				assert.Equal(t, tc.text, a.Error.Message)
				assert.Equal(t, tc.text, rec.Summary)
				return
			}
			require.Equal(t, true, a.Result["isError"], w.Body.String())
			assert.Equal(t, tc.text, a.Result["content"].([]any)[0].(map[string]any)["text"])
			assert.Equal(t, tc.summary, rec.Summary)
		})
	}
}

// TestSensitivePromptArgumentError checks that an argument error a
// prompt's Get returns, built by the library's Args (which quote a value),
// is answered with the value redacted when the prompt has a sensitive
// argument, and as written otherwise.
func TestSensitivePromptArgumentError(t *testing.T) {
	t.Parallel()
	get := func(_ context.Context, _ mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
		a := mcpmw.NewArgs([]byte(`{"n":` + args["n"] + `}`))
		a.Int("n")
		return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("hi"))}}, a.Err()
	}
	var reg mcpmw.Registry
	reg.AddPrompts(
		mcpmw.Prompt{Name: "secret", Permission: "read", Get: get, Arguments: []mcpmw.PromptArgument{{Name: "n", Sensitive: true}}},
		mcpmw.Prompt{Name: "plain", Permission: "read", Get: get, Arguments: []mcpmw.PromptArgument{{Name: "n"}}})
	var recs spy
	h := mcpmw.New(&reg, tokenAuthn, &recs, &mcpmw.Options{Logger: newTextLogger(io.Discard)})
	for name, want := range map[string]string{
		"secret": `Invalid params: argument "n" must be an integer, not [redacted]`,
		"plain":  `Invalid params: argument "n" must be an integer, not 2.5`,
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, legacy(mcpmw.Version20251125, "1", "prompts/get", `"name":"`+name+`","arguments":{"n":"2.5"}`))
		a := decode(t, w)
		require.NotNil(t, a.Error, name)
		assert.Equal(t, want, a.Error.Message, name)
	}
	rs := recs.records()
	require.Len(t, rs, 2)
	summaries := rs[0].Summary + "\n" + rs[1].Summary
	assert.Contains(t, summaries, `argument "n" must be an integer, not [redacted]`)
	assert.Contains(t, summaries, `argument "n" must be an integer, not 2.5`)
}
