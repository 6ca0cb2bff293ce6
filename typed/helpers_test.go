package typed_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpmw/mcpmw"
)

// allowAll may use every tool.
type allowAll struct{}

func (allowAll) Can(mcpmw.Permission) bool { return true }

// newHandler serves tools to an allow-all caller, with no audit.
func newHandler(tools ...mcpmw.Tool) http.Handler {
	return newAuditedHandler(func(mcpmw.CallRecord) {}, tools...)
}

// newAuditedHandler serves tools to an allow-all caller, handing each
// record to audit.
func newAuditedHandler(audit func(mcpmw.CallRecord), tools ...mcpmw.Tool) http.Handler {
	var reg mcpmw.Registry
	reg.AddTools(tools...)
	authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return allowAll{}, nil })
	auditor := mcpmw.AuditFunc(func(_ context.Context, rec mcpmw.CallRecord) { audit(rec) })
	return mcpmw.New(&reg, authn, auditor, &mcpmw.Options{Logger: slog.New(slog.DiscardHandler)})
}

// callBody is a 2026-07-28 tools/call of tool with args.
func callBody(tool, args string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
}

// call sends a tools/call to h and returns the HTTP status and the decoded
// JSON-RPC response.
func call(h http.Handler, tool, args string) (int, rpcResponse) {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(callBody(tool, args)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", tool)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var resp rpcResponse
	_ = json.Unmarshal(w.Body.Bytes(), &resp)
	return w.Code, resp
}

type rpcResponse struct {
	Result *struct {
		Content []struct {
			Type, Text string
		}
		StructuredContent json.RawMessage
		IsError           bool
	}
	Error *struct {
		Code    int
		Message string
	}
}

// text returns the first text block of a result, or "".
func (r rpcResponse) text() string {
	if r.Result == nil || len(r.Result.Content) == 0 {
		return ""
	}
	return r.Result.Content[0].Text
}
