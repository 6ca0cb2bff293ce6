package mcpmw

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Pieces of 2026-07-28 request bodies.
const (
	pvKey   = `"io.modelcontextprotocol/protocolVersion"`
	v26     = pvKey + `:"2026-07-28"`
	noCaps  = `"io.modelcontextprotocol/clientCapabilities":{}`
	goodMD  = `"_meta":{` + v26 + `,` + noCaps + `}`
	allVers = `["2026-07-28","2025-11-25","2025-06-18"]`
)

// meta returns a params._meta member holding fields.
func meta(fields ...string) string { return `"_meta":{` + strings.Join(fields, ",") + `}` }

// rpc returns a request body; params is the inside of the params object, or
// "-" for no params at all.
func rpc(method, params string) string {
	if params == "-" {
		return `{"jsonrpc":"2.0","id":1,"method":"` + method + `"}`
	}
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `}}`
}

// note returns a notification body with the given params inside.
func note(method, params string) string {
	return `{"jsonrpc":"2.0","method":"` + method + `","params":{` + params + `}}`
}

// hdr builds headers with Add, so names are canonicalised and repeats kept.
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// std is the headers a well-behaved 2026-07-28 client sends for method.
func std(method string, extra ...string) http.Header {
	return hdr(append([]string{"MCP-Protocol-Version", LatestVersion, "Mcp-Method", method}, extra...)...)
}

func b64(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }

// verdict is what the classification tests look at in a refusal: its HTTP
// status and JSON-RPC error.
type verdict struct {
	Status int
	Error  *Error
}

// classify runs the handler's stages from parsing to the revision's rules
// on req (parseRequest's keys and revision reading, then checkRevision),
// and returns the refusal, or nil.
func classify(req *Request, h http.Header) *verdict {
	req.parsed.read(req.Params)
	a := checkKeys(req)
	if a == nil {
		readRevision(req, h)
		a = checkRevision(req, h, protocolTable.known[req.Method].nameParamOrNone())
	}
	if a == nil {
		return nil
	}
	st := a.status
	if st == 0 {
		st = errorStatus(a.resp.Error.Code, req.revision())
	}
	return &verdict{Status: st, Error: a.resp.Error}
}

// classifyBody parses body as the handler does and classifies it.
func classifyBody(t *testing.T, body string, h http.Header) (*Request, *verdict) {
	t.Helper()
	env, perr := parseEnvelope([]byte(body))
	require.Nil(t, perr, "test body must parse: %s", body)
	req := &Request{ID: env.id, Method: env.method, Params: env.params, Header: h}
	return req, classify(req, h)
}

type classifyCase struct {
	name    string
	body    string
	h       http.Header
	code    int    // 0: accepted
	msg     string // exact error message, when set
	data    string // JSON of error data, when set
	version string // req.Version afterwards
}

func runClassify(t *testing.T, cases []classifyCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, resp := classifyBody(t, tt.body, tt.h)
			assert.Equal(t, tt.version, req.Version)
			if tt.code == 0 {
				assert.Nil(t, resp)
				return
			}
			require.NotNil(t, resp)
			require.NotNil(t, resp.Error)
			assert.Equal(t, tt.code, resp.Error.Code)
			assert.Equal(t, http.StatusBadRequest, resp.Status)
			if tt.msg != "" {
				assert.Equal(t, tt.msg, resp.Error.Message)
			}
			if tt.data != "" {
				raw, err := json.Marshal(resp.Error.Data)
				require.NoError(t, err)
				assert.JSONEq(t, tt.data, string(raw))
			} else {
				assert.Nil(t, resp.Error.Data)
			}
		})
	}
}

func TestClassifyModernOrder(t *testing.T) {
	t.Parallel()
	const L = LatestVersion
	runClassify(t, []classifyCase{
		{name: "valid", body: rpc("tools/list", goodMD), h: std("tools/list"), version: L},
		{name: "header missing", body: rpc("tools/list", goodMD), h: hdr("Mcp-Method", "tools/list"), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: the MCP-Protocol-Version header is required"},
		{name: "header missing beats bad _meta", body: rpc("tools/list", meta(pvKey+`:5`)), h: hdr(), code: CodeHeaderMismatch, version: L},
		{name: "header repeated", body: rpc("tools/list", goodMD), h: std("tools/list", "Mcp-Protocol-Version", L), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: MCP-Protocol-Version appears more than once"},
		{name: "params missing", body: rpc("tools/list", "-"), h: std("tools/list"), code: CodeInvalidParams, version: L,
			msg: "Invalid params: params with _meta is required on 2026-07-28 requests"},
		{name: "_meta missing", body: rpc("tools/list", ""), h: std("tools/list"), code: CodeInvalidParams, version: L,
			msg: "Invalid params: params._meta must be an object carrying io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities"},
		{name: "_meta null", body: rpc("tools/list", `"_meta":null`), h: std("tools/list"), code: CodeInvalidParams, version: L},
		{name: "_meta array", body: rpc("tools/list", `"_meta":[]`), h: std("tools/list"), code: CodeInvalidParams, version: L},
		{name: "_meta string", body: rpc("tools/list", `"_meta":"x"`), h: std("tools/list"), code: CodeInvalidParams, version: L},
		{name: "protocolVersion missing", body: rpc("tools/list", meta(noCaps)), h: std("tools/list"), code: CodeInvalidParams, version: L,
			msg: "Invalid params: _meta is missing io.modelcontextprotocol/protocolVersion (a string)"},
		{name: "protocolVersion number", body: rpc("tools/list", meta(pvKey+`:20260728`, noCaps)), h: std("tools/list"), code: CodeInvalidParams, version: L},
		{name: "protocolVersion null", body: rpc("tools/list", meta(pvKey+`:null`, noCaps)), h: std("tools/list"), code: CodeInvalidParams, version: L},
		{name: "capabilities missing", body: rpc("tools/list", meta(v26)), h: std("tools/list"), code: CodeInvalidParams, version: L,
			msg: "Invalid params: _meta is missing io.modelcontextprotocol/clientCapabilities (an object; {} declares none)"},
		{name: "capabilities string", body: rpc("tools/list", meta(v26, `"io.modelcontextprotocol/clientCapabilities":"all"`)), h: std("tools/list"), code: CodeInvalidParams, version: L},
		{name: "capabilities null", body: rpc("tools/list", meta(v26, `"io.modelcontextprotocol/clientCapabilities":null`)), h: std("tools/list"), code: CodeInvalidParams, version: L},
		{name: "capabilities array", body: rpc("tools/list", meta(v26, `"io.modelcontextprotocol/clientCapabilities":[]`)), h: std("tools/list"), code: CodeInvalidParams, version: L},
		{name: "bad capabilities beat version mismatch", body: rpc("tools/list", meta(pvKey+`:"v999.0.0"`)), h: std("tools/list"), code: CodeInvalidParams, version: L},
		{name: "header differs from _meta", body: rpc("tools/list", meta(pvKey+`:"v999.0.0"`, noCaps)), h: std("tools/list"), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: MCP-Protocol-Version '2026-07-28' does not match _meta protocolVersion 'v999.0.0'"},
		{name: "header differs by case", body: rpc("tools/list", meta(pvKey+`:"2026-07-28"`, noCaps)), h: hdr("MCP-Protocol-Version", "2026-07-28T", "Mcp-Method", "tools/list"), code: CodeHeaderMismatch, version: L},
		{name: "_meta version padded", body: rpc("tools/list", meta(pvKey+`:" 2026-07-28"`, noCaps)), h: std("tools/list"), code: CodeHeaderMismatch, version: L},
		{name: "header value trimmed", body: rpc("tools/list", goodMD), h: hdr("MCP-Protocol-Version", " \t2026-07-28 ", "Mcp-Method", "tools/list"), version: L},
		{name: "unsupported version", body: rpc("tools/list", meta(pvKey+`:"v999.0.0"`, noCaps)), h: hdr("MCP-Protocol-Version", "v999.0.0", "Mcp-Method", "tools/list"),
			code: CodeUnsupportedProtocolVersion, version: L, msg: "Unsupported protocol version 'v999.0.0'",
			data: `{"supported":` + allVers + `,"requested":"v999.0.0"}`},
		{name: "legacy version in _meta", body: rpc("tools/list", meta(pvKey+`:"2025-11-25"`, noCaps)), h: hdr("MCP-Protocol-Version", "2025-11-25"),
			code: CodeUnsupportedProtocolVersion, version: L, data: `{"supported":` + allVers + `,"requested":"2025-11-25"}`,
			msg: "Unsupported protocol version '2025-11-25': per-request _meta versions are 2026-07-28 only; older revisions negotiate through initialize"},
		{name: "unsupported version beats routing", body: rpc("tools/list", meta(pvKey+`:"2027-01-01"`, noCaps)), h: hdr("MCP-Protocol-Version", "2027-01-01"),
			code: CodeUnsupportedProtocolVersion, version: L, data: `{"supported":` + allVers + `,"requested":"2027-01-01"}`},
		{name: "modern header, no _meta", body: rpc("tools/list", "-"), h: hdr("MCP-Protocol-Version", "2099-01-01"), code: CodeInvalidParams, version: L},
		{name: "modern header on initialize", body: rpc("initialize", `"protocolVersion":"2025-11-25"`), h: hdr("MCP-Protocol-Version", L), code: CodeInvalidParams, version: L},
		{name: "log level valid", body: rpc("tools/list", meta(v26, noCaps, `"io.modelcontextprotocol/logLevel":"debug"`)), h: std("tools/list"), version: L},
		{name: "log level unknown", body: rpc("tools/list", meta(v26, noCaps, `"io.modelcontextprotocol/logLevel":"verbose"`)), h: std("tools/list"), code: CodeInvalidParams, version: L,
			msg: "Invalid params: io.modelcontextprotocol/logLevel must be one of debug, info, notice, warning, error, critical, alert, emergency"},
		{name: "log level upper case", body: rpc("tools/list", meta(v26, noCaps, `"io.modelcontextprotocol/logLevel":"DEBUG"`)), h: std("tools/list"), code: CodeInvalidParams, version: L},
		{name: "log level number", body: rpc("tools/list", meta(v26, noCaps, `"io.modelcontextprotocol/logLevel":7`)), h: std("tools/list"), code: CodeInvalidParams, version: L},
		{name: "log level null", body: rpc("tools/list", meta(v26, noCaps, `"io.modelcontextprotocol/logLevel":null`)), h: std("tools/list"), code: CodeInvalidParams, version: L},
		{name: "notification skips every check", body: note("notifications/cancelled", meta(v26)), h: hdr(), version: L},
		{name: "notification with modern header only", body: `{"jsonrpc":"2.0","method":"notifications/x"}`, h: hdr("MCP-Protocol-Version", L), version: L},
	})
}

func TestClassifyRouting(t *testing.T) {
	t.Parallel()
	const L = LatestVersion
	callEcho := rpc("tools/call", goodMD+`,"name":"echo","arguments":{}`)
	named := func(name string) string {
		b, _ := json.Marshal(name)
		return rpc("tools/call", goodMD+`,"name":`+string(b))
	}
	runClassify(t, []classifyCase{
		{name: "method missing", body: rpc("tools/list", goodMD), h: hdr("MCP-Protocol-Version", L), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: the Mcp-Method header is required and must equal the body's method 'tools/list'"},
		{name: "method mismatched", body: rpc("tools/list", goodMD), h: std("tools/call"), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: Mcp-Method header value 'tools/call' does not match body method 'tools/list'"},
		{name: "method case differs", body: rpc("tools/list", goodMD), h: std("TOOLS/LIST"), code: CodeHeaderMismatch, version: L},
		{name: "method case differs slightly", body: rpc("tools/list", goodMD), h: std("Tools/list"), code: CodeHeaderMismatch, version: L},
		{name: "method repeated", body: rpc("tools/list", goodMD), h: std("tools/list", "Mcp-Method", "tools/list"), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: Mcp-Method appears more than once"},
		{name: "method empty", body: rpc("tools/list", goodMD), h: std(""), code: CodeHeaderMismatch, version: L},
		{name: "method padded", body: rpc("tools/list", goodMD), h: std("  tools/list\t"), version: L},
		{name: "method base64 is not decoded", body: rpc("tools/list", goodMD), h: std(b64("tools/list")), code: CodeHeaderMismatch, version: L},
		{name: "lower-case header names", body: rpc("tools/list", goodMD), h: hdr("mcp-protocol-version", L, "mcp-method", "tools/list"), version: L},
		{name: "upper-case header names", body: rpc("tools/list", goodMD), h: hdr("MCP-PROTOCOL-VERSION", L, "MCP-METHOD", "tools/list"), version: L},

		{name: "tools/call name matches", body: callEcho, h: std("tools/call", "Mcp-Name", "echo"), version: L},
		{name: "tools/call name missing", body: callEcho, h: std("tools/call"), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: the Mcp-Name header is required and must equal params.name 'echo'"},
		{name: "tools/call name mismatched", body: callEcho, h: std("tools/call", "Mcp-Name", "other"), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: Mcp-Name header value 'other' does not match params.name 'echo'"},
		{name: "tools/call name case differs", body: callEcho, h: std("tools/call", "Mcp-Name", "Echo"), code: CodeHeaderMismatch, version: L},
		{name: "tools/call name padded", body: callEcho, h: std("tools/call", "mcp-name", " \techo  "), version: L},
		{name: "tools/call name repeated", body: callEcho, h: std("tools/call", "Mcp-Name", "echo", "Mcp-Name", "echo"), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: Mcp-Name appears more than once"},
		{name: "tools/call inner spaces", body: named("my tool"), h: std("tools/call", "Mcp-Name", "my tool"), version: L},
		{name: "tools/call name absent on both sides", body: rpc("tools/call", goodMD), h: std("tools/call"), version: L},
		{name: "tools/call header without body name", body: rpc("tools/call", goodMD), h: std("tools/call", "Mcp-Name", "echo"), code: CodeHeaderMismatch, version: L},
		{name: "tools/call body name not a string", body: rpc("tools/call", goodMD+`,"name":5`), h: std("tools/call", "Mcp-Name", "5"), code: CodeHeaderMismatch, version: L},
		{name: "base64 ascii", body: callEcho, h: std("tools/call", "Mcp-Name", b64("echo")), version: L},
		{name: "base64 unicode", body: named("héllo 😀"), h: std("tools/call", "Mcp-Name", b64("héllo 😀")), version: L},
		{name: "base64 padded whitespace", body: named("  x  "), h: std("tools/call", "Mcp-Name", " "+b64("  x  ")+" "), version: L},
		{name: "base64 empty", body: named(""), h: std("tools/call", "Mcp-Name", "=?base64??="), version: L},
		{name: "base64 mismatched", body: callEcho, h: std("tools/call", "Mcp-Name", b64("echO")), code: CodeHeaderMismatch, version: L},
		{name: "raw utf-8 refused", body: named("héllo"), h: std("tools/call", "Mcp-Name", "héllo"), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: Mcp-Name holds characters that are not visible ASCII; encode it as =?base64?…?="},
		{name: "control character refused", body: named("a\u0001b"), h: std("tools/call", "Mcp-Name", "a\x01b"), code: CodeHeaderMismatch, version: L},
		{name: "DEL refused", body: named("a\u007fb"), h: std("tools/call", "Mcp-Name", "a\x7fb"), code: CodeHeaderMismatch, version: L},
		{name: "malformed base64", body: callEcho, h: std("tools/call", "Mcp-Name", "=?base64?!!!!?="), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: Mcp-Name has a malformed =?base64?…?= value"},
		{name: "base64 with a line break", body: callEcho, h: std("tools/call", "Mcp-Name", "=?base64?ZWN\r\nobw==?="), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: Mcp-Name has a malformed =?base64?…?= value"},
		{name: "base64 missing padding", body: callEcho, h: std("tools/call", "Mcp-Name", "=?base64?ZWNobw?="), code: CodeHeaderMismatch, version: L},
		{name: "base64 short padding", body: callEcho, h: std("tools/call", "Mcp-Name", "=?base64?ZWNobw=?="), code: CodeHeaderMismatch, version: L},
		{name: "base64 non-zero trailing bits", body: callEcho, h: std("tools/call", "Mcp-Name", "=?base64?ZWNobx==?="), code: CodeHeaderMismatch, version: L},
		{name: "base64 url alphabet", body: named("\xfb\xff"), h: std("tools/call", "Mcp-Name", "=?base64?-_8=?="), code: CodeHeaderMismatch, version: L},
		{name: "base64 invalid utf-8", body: named("\uFFFD"), h: std("tools/call", "Mcp-Name", "=?base64?/w==?="), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: Mcp-Name decodes to invalid UTF-8"},
		{name: "upper-case sentinel is literal", body: named("=?BASE64?ZWNobw==?="), h: std("tools/call", "Mcp-Name", "=?BASE64?ZWNobw==?="), version: L},
		{name: "upper-case sentinel not decoded", body: callEcho, h: std("tools/call", "Mcp-Name", "=?BASE64?ZWNobw==?="), code: CodeHeaderMismatch, version: L},
		{name: "missing suffix is literal", body: named("=?base64?ZWNobw=="), h: std("tools/call", "Mcp-Name", "=?base64?ZWNobw=="), version: L},
		{name: "missing suffix not decoded", body: callEcho, h: std("tools/call", "Mcp-Name", "=?base64?ZWNobw=="), code: CodeHeaderMismatch, version: L},
		{name: "missing prefix is literal", body: named("ZWNobw==?="), h: std("tools/call", "Mcp-Name", "ZWNobw==?="), version: L},
		{name: "overlapping sentinel is literal", body: named("=?base64?="), h: std("tools/call", "Mcp-Name", "=?base64?="), version: L},

		{name: "prompts/get name", body: rpc("prompts/get", goodMD+`,"name":"greet"`), h: std("prompts/get", "Mcp-Name", "greet"), version: L},
		{name: "prompts/get name missing", body: rpc("prompts/get", goodMD+`,"name":"greet"`), h: std("prompts/get"), code: CodeHeaderMismatch, version: L},
		{name: "prompts/get name mismatched", body: rpc("prompts/get", goodMD+`,"name":"greet"`), h: std("prompts/get", "Mcp-Name", "greet2"), code: CodeHeaderMismatch, version: L},
		{name: "resources/read uri", body: rpc("resources/read", goodMD+`,"uri":"file:///a b.txt"`), h: std("resources/read", "Mcp-Name", "file:///a b.txt"), version: L},
		{name: "resources/read uri missing", body: rpc("resources/read", goodMD+`,"uri":"file:///a"`), h: std("resources/read"), code: CodeHeaderMismatch, version: L,
			msg: "Header mismatch: the Mcp-Name header is required and must equal params.uri 'file:///a'"},
		{name: "resources/read compares uri, not name", body: rpc("resources/read", goodMD+`,"uri":"file:///a","name":"a"`), h: std("resources/read", "Mcp-Name", "a"), code: CodeHeaderMismatch, version: L},
		{name: "resources/read uri base64", body: rpc("resources/read", goodMD+`,"uri":"file:///ü"`), h: std("resources/read", "Mcp-Name", b64("file:///ü")), version: L},
		{name: "Mcp-Name ignored on other methods", body: rpc("tools/list", goodMD), h: std("tools/list", "Mcp-Name", "whatever"), version: L},
	})
}

func TestClassifyLegacy(t *testing.T) {
	t.Parallel()
	const (
		v1125 = Version20251125
		v0618 = Version20250618
	)
	unsupported := func(v string) string { return `{"supported":` + allVers + `,"requested":"` + v + `"}` }
	runClassify(t, []classifyCase{
		{name: "initialize without header", body: rpc("initialize", `"protocolVersion":"2025-06-18"`), h: hdr(), version: v0618},
		{name: "initialize with header", body: rpc("initialize", `"protocolVersion":"2025-06-18"`), h: hdr("MCP-Protocol-Version", v1125), version: v0618},
		{name: "initialize with 2025-03-26 header", body: rpc("initialize", `"protocolVersion":"2025-11-25"`), h: hdr("MCP-Protocol-Version", "2025-03-26"), version: v1125},
		{name: "initialize unknown version", body: rpc("initialize", `"protocolVersion":"2024-11-05"`), h: hdr(), version: v1125},
		{name: "initialize future version", body: rpc("initialize", `"protocolVersion":"2026-07-28"`), h: hdr(), version: v1125},
		{name: "initialize no params", body: rpc("initialize", "-"), h: hdr(), version: v1125},
		{name: "initialize version not a string", body: rpc("initialize", `"protocolVersion":20250618`), h: hdr(), version: v1125},
		{name: "initialize with unrelated _meta", body: rpc("initialize", `"_meta":{"progressToken":1},"protocolVersion":"2025-06-18"`), h: hdr(), version: v0618},
		{name: "served header", body: rpc("tools/list", "-"), h: hdr("MCP-Protocol-Version", v0618), version: v0618},
		{name: "served header, no Mcp-Method needed", body: rpc("tools/call", `"name":"echo"`), h: hdr("mcp-protocol-version", " 2025-11-25 "), version: v1125},
		{name: "header missing", body: rpc("tools/list", "-"), h: hdr(), code: CodeHeaderMismatch, version: "",
			msg: "Header mismatch: the MCP-Protocol-Version header is required: send the version initialize negotiated, or speak 2026-07-28 with params._meta"},
		{name: "header repeated", body: rpc("tools/list", "-"), h: hdr("MCP-Protocol-Version", v1125, "MCP-Protocol-Version", v1125), code: CodeHeaderMismatch, version: ""},
		{name: "Mcp-Method optional", body: rpc("tools/list", "-"), h: hdr("MCP-Protocol-Version", v1125), version: v1125},
		{name: "Mcp-Method sent and matching", body: rpc("tools/list", "-"), h: hdr("MCP-Protocol-Version", v1125, "Mcp-Method", "tools/list"), version: v1125},
		{name: "Mcp-Method sent and mismatched", body: rpc("tools/list", "-"), h: hdr("MCP-Protocol-Version", v1125, "Mcp-Method", "tools/call"), code: CodeHeaderMismatch, version: v1125,
			msg: "Header mismatch: Mcp-Method header value 'tools/call' does not match body method 'tools/list'"},
		{name: "Mcp-Method repeated", body: rpc("tools/list", "-"), h: hdr("MCP-Protocol-Version", v1125, "Mcp-Method", "tools/list", "Mcp-Method", "tools/list"), code: CodeHeaderMismatch, version: v1125,
			msg: "Header mismatch: Mcp-Method appears more than once"},
		{name: "Mcp-Name optional", body: rpc("tools/call", `"name":"echo"`), h: hdr("MCP-Protocol-Version", v1125), version: v1125},
		{name: "Mcp-Name sent and mismatched", body: rpc("tools/call", `"name":"echo"`), h: hdr("MCP-Protocol-Version", v1125, "Mcp-Name", "other"), code: CodeHeaderMismatch, version: v1125},
		{name: "2025-03-26 header", body: rpc("tools/list", "-"), h: hdr("MCP-Protocol-Version", "2025-03-26"), code: CodeUnsupportedProtocolVersion, version: "",
			msg: "Unsupported protocol version '2025-03-26'", data: unsupported("2025-03-26")},
		{name: "2024-11-05 header", body: rpc("ping", "-"), h: hdr("MCP-Protocol-Version", "2024-11-05"), code: CodeUnsupportedProtocolVersion, version: "",
			data: unsupported("2024-11-05")},
		{name: "notification without header", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h: hdr(), version: v1125},
		{name: "notification with served header", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h: hdr("MCP-Protocol-Version", v0618), version: v0618},
		{name: "notification with unserved header", body: `{"jsonrpc":"2.0","method":"notifications/cancelled"}`, h: hdr("MCP-Protocol-Version", "2025-03-26"), version: v1125},
	})
}

func TestClassifyFillsRequest(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("n", 150)
	for _, tt := range []struct {
		name, body                  string
		h                           http.Header
		caps, clientName, clientVer string
	}{
		{name: "modern with clientInfo",
			body: rpc("tools/list", meta(v26, `"io.modelcontextprotocol/clientCapabilities":{"sampling":{}, "roots":{}}`,
				`"io.modelcontextprotocol/clientInfo":{"name":"inspector","version":"0.9.1","title":"MCP Inspector"}`)),
			h: std("tools/list"), caps: `{"sampling":{}, "roots":{}}`, clientName: "inspector", clientVer: "0.9.1"},
		{name: "modern without clientInfo", body: rpc("tools/list", goodMD), h: std("tools/list"), caps: `{}`},
		{name: "modern malformed clientInfo", body: rpc("tools/list", meta(v26, noCaps, `"io.modelcontextprotocol/clientInfo":"me"`)), h: std("tools/list"), caps: `{}`},
		{name: "modern clientInfo wrong types", body: rpc("tools/list", meta(v26, noCaps, `"io.modelcontextprotocol/clientInfo":{"name":1,"version":true}`)), h: std("tools/list"), caps: `{}`},
		{name: "modern clientInfo capped", body: rpc("tools/list", meta(v26, noCaps, `"io.modelcontextprotocol/clientInfo":{"name":"`+long+`","version":"1"}`)),
			h: std("tools/list"), caps: `{}`, clientName: strings.Repeat("n", 100) + "…", clientVer: "1"},
		{name: "initialize", body: rpc("initialize", `"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"cli","version":"2"}`),
			h: hdr(), caps: `{"elicitation":{}}`, clientName: "cli", clientVer: "2"},
		{name: "initialize without capabilities", body: rpc("initialize", `"protocolVersion":"2025-11-25"`), h: hdr()},
		{name: "legacy request keeps nothing", body: rpc("tools/list", "-"), h: hdr("MCP-Protocol-Version", Version20251125)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, resp := classifyBody(t, tt.body, tt.h)
			require.Nil(t, resp)
			if tt.caps == "" {
				assert.Nil(t, req.ClientCapabilities)
			} else {
				assert.Equal(t, tt.caps, string(req.ClientCapabilities))
			}
			assert.Equal(t, tt.clientName, req.ClientName)
			assert.Equal(t, tt.clientVer, req.ClientVersion)
		})
	}
}

// TestClassifyWireHeaders reads headers off the wire, so lower-case and odd-case
// names go through net/textproto's canonicalisation as they do in a server.
func TestClassifyWireHeaders(t *testing.T) {
	t.Parallel()
	body := rpc("tools/call", goodMD+`,"name":"échec"`)
	raw := "POST /mcp HTTP/1.1\r\nHost: localhost\r\n" +
		"mcp-protocol-version: 2026-07-28\r\nMCP-METHOD:tools/call\r\nmCP-nAME:   " + b64("échec") + "  \r\n" +
		"content-type: application/json\r\n\r\n"
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	require.NoError(t, err)
	req, resp := classifyBody(t, body, r.Header)
	assert.Nil(t, resp)
	assert.Equal(t, LatestVersion, req.Version)

	r.Header.Set("mcp-method", "TOOLS/CALL")
	_, resp = classifyBody(t, body, r.Header)
	require.NotNil(t, resp)
	assert.Equal(t, CodeHeaderMismatch, resp.Error.Code)
	assert.Equal(t, http.StatusBadRequest, resp.Status)
}

func TestDecodeHeaderValue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want, err string }{
		{in: "plain", want: "plain"},
		{in: "with inner\tspace", want: "with inner\tspace"},
		{in: "", want: ""},
		{in: b64("ü"), want: "ü"},
		{in: "=?base64?AA==?=", want: "\x00"},
		{in: "=?base64?*?=", err: "has a malformed =?base64?…?= value"},
		{in: "=?base64?ZW Nobw==?=", err: "has a malformed =?base64?…?= value"},
		{in: "=?base64?ZWN\robw==?=", err: "has a malformed =?base64?…?= value"}, // Go's base64 skips CR and LF, even Strict
		{in: "=?base64?ZWNo\nbw==?=", err: "has a malformed =?base64?…?= value"},
		{in: "=?base64?gA==?=", err: "decodes to invalid UTF-8"},
		{in: "ü", err: "holds characters that are not visible ASCII; encode it as =?base64?…?="},
		{in: "a\nb", err: "holds characters that are not visible ASCII; encode it as =?base64?…?="},
	} {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := decodeHeaderValue(tt.in)
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestClassifyRefusesDuplicateParams(t *testing.T) {
	t.Parallel()
	for _, params := range []string{
		`{"name":"a","name":"b",` + `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}`,
	} {
		h := http.Header{}
		h.Set("MCP-Protocol-Version", "2026-07-28")
		h.Set("Mcp-Method", "tools/list")
		resp := classify(&Request{ID: json.RawMessage("1"), Method: "tools/list", Params: json.RawMessage(params)}, h)
		require.NotNil(t, resp, params)
		assert.Equal(t, 400, resp.Status)
		assert.Equal(t, CodeInvalidParams, resp.Error.Code)
		assert.Contains(t, resp.Error.Message, "appears more than once")
	}
}

func TestClassifyEmptyVersionHeaderIsMissing(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("MCP-Protocol-Version", "  ")
	resp := classify(&Request{ID: json.RawMessage("1"), Method: "tools/list"}, h)
	require.NotNil(t, resp)
	assert.Equal(t, CodeHeaderMismatch, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "MCP-Protocol-Version header is required")
}

// protocolTable knows every method of the protocol, served by none.
var protocolTable = newMethodTable(nil, nil, protocolMethods())

// nameParamOrNone is m's NameParam, "" for a nil m.
func (m *Method) nameParamOrNone() string {
	if m == nil {
		return ""
	}
	return m.NameParam
}
