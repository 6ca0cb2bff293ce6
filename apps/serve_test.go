package apps_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/apps"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// rendersApps is the capabilities of a client that renders apps.
var rendersApps = map[string]any{"extensions": map[string]any{apps.ExtensionID: map[string]any{"mimeTypes": []string{apps.MIMEType}}}}

// names returns the names of tools.
func names(tools []mcpmwtest.Tool) []string {
	out := make([]string, len(tools))
	for i, tl := range tools {
		out[i] = tl.Name
	}
	return out
}

// An app served through a handler: declared, its app-only tool offered
// only to clients that render apps, gated as every tool.
func TestServedApp(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddResources(apps.Resource("ui://x/board", "board", "read", "<!DOCTYPE html><title>b</title>", apps.ResourceMeta{CSP: &apps.CSP{}}))
	apps.AddTools(&reg,
		apps.Tool(mcpmw.Tool{Name: "show", Permission: "read", Call: ok}, apps.ToolMeta{ResourceURI: "ui://x/board"}),
		apps.Tool(mcpmw.Tool{Name: "refresh", Permission: "read", Call: ok}, apps.ToolMeta{ResourceURI: "ui://x/board", Visibility: []apps.Visibility{apps.VisibilityApp}}),
		apps.Tool(mcpmw.Tool{Name: "reset", Permission: "admin", Call: ok}, apps.ToolMeta{ResourceURI: "ui://x/board", Visibility: []apps.Visibility{apps.VisibilityApp}}),
	)
	authn := mcpmwtest.Tokens{"t": &mcpmwtest.User{Name: "reader", Permissions: []mcpmw.Permission{"read"}}}
	srv := mcpmwtest.NewServer(t, mcpmw.New(&reg, authn, mcpmwtest.NewRecorder(), nil))
	ui := srv.Client(mcpmwtest.Bearer("t"), mcpmwtest.Capabilities(rendersApps))
	plain := srv.Client(mcpmwtest.Bearer("t"))
	old := srv.Client(mcpmwtest.Bearer("t"), mcpmwtest.Revision(mcpmw.Version20251125), mcpmwtest.Capabilities(rendersApps))

	for _, c := range []*mcpmwtest.Client{ui, plain, old} {
		d, err := c.Discover(t.Context())
		require.NoError(t, err)
		var exts map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(d.Capabilities["extensions"], &exts))
		assert.JSONEq(t, `{}`, string(exts[apps.ExtensionID]), "declared on %s", c.Version())
	}

	listed := func(c *mcpmwtest.Client) []string {
		tools, err := c.ListTools(t.Context())
		require.NoError(t, err)
		return names(tools)
	}
	assert.Equal(t, []string{"show", "refresh"}, listed(ui), "app-only tools for a client that renders apps, within the caller's permissions")
	assert.Equal(t, []string{"show"}, listed(plain))
	assert.Equal(t, []string{"show"}, listed(old), "a legacy request declares nothing")

	res, err := ui.CallTool(t.Context(), "refresh", nil)
	require.NoError(t, err)
	assert.Equal(t, "ok", res.Text)
	var rpc *mcpmwtest.Error
	_, err = plain.CallTool(t.Context(), "refresh", nil)
	require.True(t, errors.As(err, &rpc), "%v", err)
	assert.Equal(t, mcpmw.CodeMissingRequiredClientCapability, rpc.Code)
	assert.JSONEq(t, `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}`, string(rpc.Data))
	_, err = old.CallTool(t.Context(), "refresh", nil)
	require.True(t, errors.As(err, &rpc), "%v", err)
	assert.Equal(t, mcpmw.CodeInvalidParams, rpc.Code)
	assert.Equal(t, "Unknown tool: refresh", rpc.Message)
	for _, c := range []*mcpmwtest.Client{ui, plain} {
		_, err = c.CallTool(t.Context(), "reset", nil)
		require.True(t, errors.As(err, &rpc), "%v", err)
		assert.Equal(t, 403, rpc.Status, "the permission first, whatever the client renders")
	}

	read, err := ui.ReadResource(t.Context(), "ui://x/board")
	require.NoError(t, err)
	assert.Equal(t, "<!DOCTYPE html><title>b</title>", read.Text())
	assert.Contains(t, string(read.Result), `"_meta":{"ui":{"csp":{"connectDomains":[],"resourceDomains":[]}}}`)
}
