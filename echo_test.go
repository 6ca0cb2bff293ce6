package mcpmw_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// Every place a client-supplied value reaches an answer or an audit record
// caps it at 100 characters: a client must not be able to make the server
// repeat a large value back (into a response, a log line, an audit store).
// The one exception is the JSON-RPC id, which every answer must carry
// byte for byte; the record caps it too.
func TestClientValuesAreEchoedCapped(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Z", 200_000)
	tooLong := long[:101] // any echo longer than the cap contains this
	b64 := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(long+"é")) + "?="
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	reg.AddTools(mcpmw.Tool{Name: "route", Description: "d", Permission: "read", Call: noop,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)})
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	metaWith := func(members string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}` + members + `}`
	}
	body26 := func(id, method, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":` + q(method) + `,"params":{` + params + `}}`
	}
	h26 := func(method string, extra ...string) []string {
		return append([]string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method}, extra...)
	}
	type row struct {
		name   string
		req    *http.Request
		opts   *mcpmw.Options
		inBody bool // the value must be in the answer (the id, a result)
	}
	rows := []row{
		{name: "unknown method", req: req(body26("1", long, metaWith("")), h26(long)...)},
		{name: "unknown legacy method", req: legacy("2025-11-25", "1", long, "")},
		{name: "notification method", req: req(`{"jsonrpc":"2.0","method":`+q(long)+`}`, "MCP-Protocol-Version", "2025-11-25")},
		{name: "unknown tool", req: req(body26("1", "tools/call", `"name":`+q(long)+`,`+metaWith("")), h26("tools/call", "Mcp-Name", long)...)},
		{name: "unknown legacy tool", req: legacy("2025-11-25", "1", "tools/call", `"name":`+q(long))},
		{name: "version header and _meta (-32022 data.requested)", req: req(body26("1", "tools/list", `"_meta":{"io.modelcontextprotocol/protocolVersion":`+q(long)+`,"io.modelcontextprotocol/clientCapabilities":{}}`),
			"MCP-Protocol-Version", long, "Mcp-Method", "tools/list")},
		{name: "_meta version unlike the header", req: req(body26("1", "tools/list", `"_meta":{"io.modelcontextprotocol/protocolVersion":`+q(long)+`,"io.modelcontextprotocol/clientCapabilities":{}}`), h26("tools/list")...)},
		{name: "version header alone", req: req(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "MCP-Protocol-Version", long)},
		{name: "Mcp-Method", req: req(body26("1", "tools/list", metaWith("")), h26(long)...)},
		{name: "Mcp-Name", req: req(body26("1", "tools/call", `"name":"echo",`+metaWith("")), h26("tools/call", "Mcp-Name", long)...)},
		{name: "Mcp-Name base64", req: req(body26("1", "tools/call", `"name":"echo",`+metaWith("")), h26("tools/call", "Mcp-Name", b64)...)},
		{name: "legacy Mcp-Name", req: legacy("2025-11-25", "1", "tools/call", `"name":"echo"`, "Mcp-Name", long)},
		{name: "Mcp-Param value", req: req(body26("1", "tools/call", `"name":"route","arguments":{"region":"eu"},`+metaWith("")), h26("tools/call", "Mcp-Name", "route", "Mcp-Param-Region", long)...)},
		{name: "Mcp-Param base64 value", req: req(body26("1", "tools/call", `"name":"route","arguments":{"region":"eu"},`+metaWith("")), h26("tools/call", "Mcp-Name", "route", "Mcp-Param-Region", b64)...)},
		{name: "cursor", req: req(body26("1", "tools/list", `"cursor":`+q(long)+`,`+metaWith("")), h26("tools/list")...)},
		{name: "Content-Type", req: req(`{}`, "Content-Type", "application/"+long)},
		{name: "Content-Encoding", req: req(`{}`, "Content-Encoding", long)},
		{name: "Origin", req: req(`{}`, "Origin", "http://"+long+".example")},
		{name: "Host", req: func() *http.Request { r := req(`{}`); r.Host = long + ".example"; return r }(), opts: &mcpmw.Options{CheckHost: true}},
		{name: "clientInfo", req: req(body26("1", "tools/list", metaWith(`,"io.modelcontextprotocol/clientInfo":{"name":`+q(long)+`,"version":`+q(long)+`}`)), h26("tools/list")...)},
		{name: "legacy clientInfo", req: req(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":` + q(long) + `,"capabilities":{},"clientInfo":{"name":` + q(long) + `,"version":` + q(long) + `}}}`)},
		{name: "repeated member", req: req(body26("1", "tools/list", q(long)+`:1,`+q(long)+`:2,`+metaWith("")), h26("tools/list")...)},
		{name: "repeated nested member", req: req(body26("1", "tools/call", `"name":"echo","arguments":{`+q(long)+`:{"a":1,"a":2}},`+metaWith("")), h26("tools/call", "Mcp-Name", "echo")...)},
		{name: "members differing in case", req: req(body26("1", "tools/list", q(long)+`:1,`+q(strings.ToLower(long))+`:2,`+metaWith("")), h26("tools/list")...)},
		{name: "cancelled requestId", req: req(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+q(long)+`}}`, "MCP-Protocol-Version", "2025-11-25")},
		{name: "wrong argument type", req: legacy("2025-11-25", "1", "tools/call", `"name":"add","arguments":{"a":`+q(long)+`,"b":1}`)},
		{name: "request id", req: req(body26(q(long), "tools/list", metaWith("")), h26("tools/list")...), inBody: true},
		{name: "tool result", req: legacy("2025-11-25", "1", "tools/call", `"name":"echo","arguments":{"message":`+q(long)+`}`), inBody: true},
	}
	// Every target name of every method, on every revision: what the
	// client names (a tool, a prompt, a resource URI, a template, a
	// completion's ref) reaches the answer, the record and the log line
	// capped, whichever way the request ends. (Task ids will be rows
	// here too when tasks come.)
	reg.AddPrompts(mcpmw.Prompt{Name: "greet", Description: "d", Permission: "read", Arguments: []mcpmw.PromptArgument{{Name: "lang"}},
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("hi"))}}, nil
		}})
	longDirect, longSecret := "test://direct/"+long, "test://secret/"+long
	readDirect := func(_ context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
		return []mcpmw.ResourceContents{mcpmw.TextContents("", "text/plain", "direct")}, nil
	}
	reg.AddResources(mcpmw.Resource{URI: longDirect, Name: "long", Permission: "read", Read: readDirect},
		mcpmw.Resource{URI: longSecret, Name: "secret", Permission: "write", Read: readDirect})
	reg.AddResourceTemplates(
		mcpmw.ResourceTemplate{URITemplate: "test://notes/{id}", Name: "note", Permission: "read",
			Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
				return nil, mcpmw.ErrResourceNotFound
			},
			Complete: map[string]mcpmw.Completer{"id": func(context.Context, mcpmw.Caller, mcpmw.CompletionRequest) (mcpmw.Completion, error) {
				return mcpmw.Completion{}, nil
			}}},
		mcpmw.ResourceTemplate{URITemplate: "test://echo/{+v}", Name: "echo", Permission: "read",
			Read: func(_ context.Context, _ mcpmw.Caller, uri string, _ map[string]string) ([]mcpmw.ResourceContents, error) {
				return []mcpmw.ResourceContents{mcpmw.TextContents("", "text/plain", "echo")}, nil
			}},
		mcpmw.ResourceTemplate{URITemplate: "test://empty/{+v}", Name: "empty", Permission: "read",
			Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
				return nil, nil // the application's mistake: logged
			}},
		mcpmw.ResourceTemplate{URITemplate: "test://lazy/{+v}", Name: "lazy", Permission: "read",
			Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
				return nil, mcpmw.ErrInputRequired // the application's mistake: it asked nothing
			}},
		mcpmw.ResourceTemplate{URITemplate: "test://admin/{+path}", Name: "admin", Permission: "write",
			Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
				panic("never read: the reader is no admin")
			}},
	)
	// An application's Method whose Target names what the client sent.
	appTarget := func(perm mcpmw.Permission, needs ...mcpmw.ClientCapability) func(*mcpmw.Request) (*mcpmw.Target, *mcpmw.Response) {
		return func(r *mcpmw.Request) (*mcpmw.Target, *mcpmw.Response) {
			name, _ := r.StringParam("name")
			return &mcpmw.Target{Kind: "thing", Name: name, Permission: perm, RequiredClientCapabilities: needs}, nil
		}
	}
	handle := func(context.Context, *mcpmw.Request) *mcpmw.Response { return mcpmw.ResultResponse(map[string]any{}) }
	appMethods := &mcpmw.Options{Methods: []mcpmw.Method{
		{Name: "x/act", Target: appTarget("write"), Handle: handle},
		{Name: "x/sample", Target: appTarget("read", mcpmw.Capability("sampling")), Handle: handle},
	}}
	for _, v := range []string{mcpmw.LatestVersion, mcpmw.Version20251125, mcpmw.Version20250618} {
		call := func(method, params, name string) *http.Request {
			if v != mcpmw.LatestVersion {
				return legacy(v, "1", method, params)
			}
			hdr := h26(method)
			if name != "" {
				hdr = append(hdr, "Mcp-Name", name)
			}
			return req(body26("1", method, params+`,`+metaWith("")), hdr...)
		}
		read := func(uri string, extra ...string) *http.Request {
			return call("resources/read", `"uri":`+q(uri)+strings.Join(extra, ""), uri)
		}
		complete := func(ref, arg string) *http.Request {
			return call("completion/complete", `"ref":`+ref+`,"argument":{"name":`+q(arg)+`,"value":""}`, "")
		}
		rows = append(rows,
			row{name: v + " unknown tool", req: call("tools/call", `"name":`+q(long), long)},
			row{name: v + " unknown prompt", req: call("prompts/get", `"name":`+q(long), long)},
			row{name: v + " direct resource", req: read(longDirect), inBody: true}, // the contents' URI is the resource's
			row{name: v + " direct resource, percent-encoded", req: read(strings.Replace(longDirect, "direct", "%64irect", 1)), inBody: true},
			row{name: v + " direct resource denied", req: read(longSecret)},
			row{name: v + " template read", req: read("test://echo/" + long), inBody: true},
			row{name: v + " template read not found", req: read("test://notes/" + long)},
			row{name: v + " template read failed", req: read("test://empty/" + long)},
			row{name: v + " template read input required without asking", req: read("test://lazy/" + long)},
			row{name: v + " template read denied", req: read("test://admin/" + long)},
			row{name: v + " template value refused", req: read("test://notes/" + long + "%2F")},
			row{name: v + " URI without a normal form", req: read("test://notes/" + long + "%")},
			row{name: v + " resource not found", req: read("test://nothing/" + long)},
			row{name: v + " completion of an unknown prompt", req: complete(`{"type":"ref/prompt","name":`+q(long)+`}`, "lang")},
			row{name: v + " completion of a prompt's unknown argument", req: complete(`{"type":"ref/prompt","name":"greet"}`, long)},
			row{name: v + " completion of an unknown template", req: complete(`{"type":"ref/resource","uri":`+q("test://"+long+"/{id}")+`}`, "id")},
			row{name: v + " completion of a template's unknown variable", req: complete(`{"type":"ref/resource","uri":"test://notes/{id}"}`, long)},
		)
		rows = append(rows, row{name: v + " an application's target denied", req: call("x/act", `"name":`+q(long), ""), opts: appMethods})
		if v == mcpmw.LatestVersion {
			rows = append(rows, row{name: v + " template read with a bad requestState", req: read("test://notes/"+long, `,"requestState":"x"`)},
				row{name: v + " an application's target needs a client capability", req: call("x/sample", `"name":`+q(long), ""), opts: appMethods})
		} else {
			rows = append(rows, row{name: v + " subscribe", req: call("resources/subscribe", `"uri":`+q("test://nothing/"+long), "")})
		}
	}
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := &spy{}
			var opts mcpmw.Options
			if tt.opts != nil {
				opts = *tt.opts
			}
			logs := &syncBuffer{}
			opts.Logger = newTextLogger(logs)
			h := mcpmw.New(&reg, tokenAuthn, a, &opts)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, tt.req)
			// The value is too long to print in a failure: say where it is.
			echoed := func(where, s string) {
				if i := strings.Index(s, tooLong); i >= 0 {
					t.Errorf("%s echoes the client value uncapped: …%.80s…", where, s[max(0, i-60):])
				}
			}
			if tt.inBody {
				assert.True(t, strings.Contains(w.Body.String(), long), "the value must come back whole here")
			} else {
				echoed("the answer", w.Body.String())
			}
			for k, vs := range w.Header() {
				for _, v := range vs {
					echoed("header "+k, v)
				}
			}
			recs := a.records()
			require.Len(t, recs, 1)
			rec := recs[0]
			for field, v := range map[string]string{
				"Method": rec.Method, "RequestID": rec.RequestID, "Tool": rec.Tool, "Target": rec.Target, "ProtocolVersion": rec.ProtocolVersion,
				"ClientName": rec.ClientName, "ClientVersion": rec.ClientVersion, "Summary": rec.Summary,
			} {
				echoed("CallRecord."+field, v)
				assert.LessOrEqual(t, len([]rune(v)), 200, "CallRecord.%s", field)
			}
			var logged strings.Builder
			for _, a := range rec.LogValue().Group() {
				if a.Key != "arguments" { // the arguments are logged capped at 1 KiB
					logged.WriteString(a.Value.String())
				}
			}
			echoed("the record's log form", logged.String())
			echoed("the handler's log", logs.String())
		})
	}
}
