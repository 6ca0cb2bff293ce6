package mcpmw_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// A tool listed only for clients that declare a capability (MCP Apps'
// app-only tools) is absent from tools/list for any other request,
// cached apart, refused with -32021 on call on 2026-07-28, and an unknown
// tool on the legacy revisions, which declare no capabilities.

const uiCaps = `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`

// withCaps is a 2026-07-28 request of method declaring caps.
func withCaps(method, params, caps string, hdr ...string) *http.Request {
	if params != "" {
		params += ","
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
	return req(body, append([]string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method}, hdr...)...)
}

func TestToolListedOnlyForAClientCapability(t *testing.T) {
	t.Parallel()
	renders := mcpmw.ClientCapability{Path: []string{"extensions", "io.modelcontextprotocol/ui", "mimeTypes"}, Contains: "text/html;profile=mcp-app"}
	ok := func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.TextResult("ok"), nil
	}
	var reg mcpmw.Registry
	reg.AddTools(
		mcpmw.Tool{Name: "everyone", Permission: "read", Call: ok},
		mcpmw.Tool{Name: "app_only", Permission: "read", ListedOnlyFor: []mcpmw.ClientCapability{renders}, Call: ok},
	)
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	t.Cleanup(h.Close)
	listed := func(r *http.Request) []string {
		a := decode(t, serve(h, r))
		require.Nil(t, a.Error)
		var out []string
		for _, tl := range a.Result["tools"].([]any) {
			out = append(out, tl.(map[string]any)["name"].(string))
		}
		return out
	}
	for range 2 { // the second time from the cache: each request's capabilities are part of its key
		assert.Equal(t, []string{"everyone", "app_only"}, listed(withCaps("tools/list", "", uiCaps)))
		assert.Equal(t, []string{"everyone"}, listed(withCaps("tools/list", "", `{}`)))
		assert.Equal(t, []string{"everyone"}, listed(withCaps("tools/list", "", `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html"]}}}`)))
		assert.Equal(t, []string{"everyone"}, listed(legacy(mcpmw.Version20251125, "1", "tools/list", "")))
	}

	call := decode(t, serve(h, withCaps("tools/call", `"name":"app_only","arguments":{}`, uiCaps, "Mcp-Name", "app_only")))
	require.Nil(t, call.Error)
	w := serve(h, withCaps("tools/call", `"name":"app_only","arguments":{}`, `{}`, "Mcp-Name", "app_only"))
	refused := decode(t, w)
	require.NotNil(t, refused.Error)
	assert.Equal(t, mcpmw.CodeMissingRequiredClientCapability, refused.Error.Code)
	assert.JSONEq(t, `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}`, string(refused.Error.Data))
	old := decode(t, serve(h, legacy(mcpmw.Version20251125, "1", "tools/call", `"name":"app_only","arguments":{}`)))
	require.NotNil(t, old.Error)
	assert.Equal(t, mcpmw.CodeInvalidParams, old.Error.Code)
	assert.Equal(t, "Unknown tool: app_only", old.Error.Message, "a legacy client never saw it: it does not exist there")
}

// The record of a refused call names what the client lacks: an extension
// as one, with what it must declare of it.
func TestClientLacksTheExtensionRecorded(t *testing.T) {
	t.Parallel()
	ok := func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.TextResult("ok"), nil
	}
	var reg mcpmw.Registry
	reg.AddTools(
		mcpmw.Tool{Name: "app_only", Permission: "read", Call: ok, ListedOnlyFor: []mcpmw.ClientCapability{
			{Path: []string{"extensions", "io.modelcontextprotocol/ui", "mimeTypes"}, Contains: "text/html;profile=mcp-app"}}},
		mcpmw.Tool{Name: "tasks_only", Permission: "read", Call: ok, ListedOnlyFor: []mcpmw.ClientCapability{
			mcpmw.Capability("extensions", "com.example/x")}},
		mcpmw.Tool{Name: "sampler", Permission: "read", Call: ok, RequiredClientCapabilities: []mcpmw.ClientCapability{
			mcpmw.Capability("sampling")}},
		mcpmw.Tool{Name: "one_segment", Permission: "read", Call: ok, RequiredClientCapabilities: []mcpmw.ClientCapability{
			mcpmw.Capability("extensions")}},
	)
	audit := &spy{}
	h := mcpmw.New(&reg, tokenAuthn, audit, nil)
	t.Cleanup(h.Close)
	for tool, want := range map[string]string{
		"app_only":    `client lacks the extension io.modelcontextprotocol/ui with mimeTypes containing "text/html;profile=mcp-app"`,
		"tasks_only":  `client lacks the extension com.example/x`,
		"sampler":     `client lacks capability sampling`,
		"one_segment": `client lacks capability extensions`,
	} {
		w := serve(h, withCaps("tools/call", `"name":"`+tool+`","arguments":{}`, `{}`, "Mcp-Name", tool))
		assert.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
		rs := audit.records()
		assert.Equal(t, want, rs[len(rs)-1].Summary, tool)
	}
}
