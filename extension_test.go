package mcpmw_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// An Extension is declared under capabilities.extensions on its
// revisions, with or without methods; its methods are served there and
// belong to it.

func declaredExtensions(t *testing.T, h *mcpmw.Handler, version string) map[string]any {
	t.Helper()
	var w *httptest.ResponseRecorder
	if version == mcpmw.LatestVersion {
		w = serve(h, modern("1", "server/discover", ""))
	} else {
		w = serve(h, legacy(version, "1", "initialize", `"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}`))
	}
	a := decode(t, w)
	require.Nil(t, a.Error, w.Body.String())
	caps, _ := a.Result["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	return ext
}

func TestExtensionIsDeclaredWithItsSettingsOnItsRevisions(t *testing.T) {
	t.Parallel()
	h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Extensions: []mcpmw.Extension{
		{ID: "io.modelcontextprotocol/ui"}, // no methods, no settings: declared all the same, as {}
		{ID: "com.example/search", Settings: map[string]any{"maxResults": 50}, Revisions: []string{mcpmw.LatestVersion}},
	}})
	t.Cleanup(h.Close)
	assert.Equal(t, map[string]any{"io.modelcontextprotocol/ui": map[string]any{}, "com.example/search": map[string]any{"maxResults": float64(50)}},
		declaredExtensions(t, h, mcpmw.LatestVersion))
	for _, v := range []string{mcpmw.Version20251125, mcpmw.Version20250618} {
		assert.Equal(t, map[string]any{"io.modelcontextprotocol/ui": map[string]any{}}, declaredExtensions(t, h, v), "a 2026-07-28 extension is not declared on %s", v)
	}
	plain := mcpmw.New(nil, tokenAuthn, &spy{}, nil)
	t.Cleanup(plain.Close)
	assert.Nil(t, declaredExtensions(t, plain, mcpmw.LatestVersion), "no extension, no extensions member")
}

func TestExtensionMethodsAreServedOnTheExtensionsRevisions(t *testing.T) {
	t.Parallel()
	echo := func(_ context.Context, req *mcpmw.Request) *mcpmw.Response {
		id, _ := req.StringParam("id")
		return mcpmw.ResultResponse(map[string]any{"id": id})
	}
	h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Extensions: []mcpmw.Extension{{
		ID: "com.example/things", Revisions: []string{mcpmw.LatestVersion},
		Methods: []mcpmw.Method{{Name: "things/get", NameParam: "id", Handle: echo}},
	}}})
	t.Cleanup(h.Close)

	ok := decode(t, serve(h, modern("1", "things/get", `"id":"t-1"`, "Mcp-Name", "t-1")))
	require.Nil(t, ok.Error)
	assert.Equal(t, "t-1", ok.Result["id"])

	missing := serve(h, modern("2", "things/get", `"id":"t-1"`))
	assert.Equal(t, 400, missing.Code, "NameParam makes Mcp-Name required on 2026-07-28: %s", missing.Body.String())
	assert.Contains(t, missing.Body.String(), "params.id")
	other := serve(h, modern("3", "things/get", `"id":"t-1"`, "Mcp-Name", "t-2"))
	assert.Equal(t, 400, other.Code, "and equal to params.id: %s", other.Body.String())

	old := decode(t, serve(h, legacy(mcpmw.Version20251125, "4", "things/get", `"id":"t-1"`)))
	require.NotNil(t, old.Error)
	assert.Equal(t, mcpmw.CodeMethodNotFound, old.Error.Code, "the extension's method has its revisions")
}

func TestUnservedProtocolMethodsNameWhatTheServerLacks(t *testing.T) {
	t.Parallel()
	h := mcpmw.New(nil, tokenAuthn, &spy{}, nil)
	t.Cleanup(h.Close)
	for method, why := range map[string]string{
		"tools/call":  "(this server does not offer tools)",
		"tasks/get":   "(this server does not serve the extension io.modelcontextprotocol/tasks)",
		"skills/list": "Method not found: skills/list",
	} {
		r := modern("1", method, `"name":"x","taskId":"x"`, "Mcp-Name", "x")
		a := decode(t, serve(h, r))
		require.NotNil(t, a.Error, method)
		assert.Equal(t, mcpmw.CodeMethodNotFound, a.Error.Code, method)
		assert.Contains(t, a.Error.Message, why, method)
	}
	// What the protocol says of a method holds where it is not served: a
	// tasks/get whose Mcp-Name differs from its taskId is a header error.
	w := serve(h, modern("1", "tasks/get", `"taskId":"x"`, "Mcp-Name", "y"))
	assert.Equal(t, 400, w.Code, w.Body.String())
}

func TestExtensionSetupMistakesPanic(t *testing.T) {
	t.Parallel()
	noop := func(context.Context, *mcpmw.Request) *mcpmw.Response { return nil }
	for _, tt := range []struct {
		name string
		opts mcpmw.Options
		want string
	}{
		{"no ID", mcpmw.Options{Extensions: []mcpmw.Extension{{}}}, "an Extension's ID is \"\""},
		{"an ID with a space", mcpmw.Options{Extensions: []mcpmw.Extension{{ID: "com.example/my ext"}}}, `an Extension's ID is "com.example/my ext"`},
		{"twice", mcpmw.Options{Extensions: []mcpmw.Extension{{ID: "a/b"}, {ID: "a/b"}}}, `extension "a/b" is given twice`},
		{"a method with a capability", mcpmw.Options{Extensions: []mcpmw.Extension{{ID: "a/b", Methods: []mcpmw.Method{{Name: "b/x", Capability: "tools", Handle: noop}}}}}, `method "b/x" of extension "a/b" has Capability "tools"`},
		{"an unserved revision", mcpmw.Options{Extensions: []mcpmw.Extension{{ID: "a/b", Revisions: []string{"2024-11-05"}}}}, `extension "a/b" lists revision "2024-11-05"`},
		{"a method declaring extensions by hand", mcpmw.Options{Methods: []mcpmw.Method{{Name: "b/x", Capability: "extensions", Handle: noop}}}, "declare an extension, and its methods, in Options.Extensions"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				v := recover()
				require.NotNil(t, v)
				assert.True(t, strings.Contains(v.(string), tt.want), "%v", v)
			}()
			mcpmw.New(nil, tokenAuthn, &spy{}, &tt.opts)
		})
	}
}

func TestDeniedAnswersAsTheGateDoes(t *testing.T) {
	t.Parallel()
	target := &mcpmw.Target{Kind: "thing", Name: "vault", Permission: "things:admin"}
	h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{ResourceMetadata: "https://api.example.com/.well-known/oauth-protected-resource",
		Extensions: []mcpmw.Extension{{ID: "com.example/things", Methods: []mcpmw.Method{{Name: "things/open",
			Handle: func(context.Context, *mcpmw.Request) *mcpmw.Response { return mcpmw.Denied(target) }}}}}})
	t.Cleanup(h.Close)
	w := serve(h, modern("1", "things/open", ""))
	assert.Equal(t, 403, w.Code, w.Body.String())
	assert.Equal(t, `Bearer error="insufficient_scope", scope="things:admin", resource_metadata="https://api.example.com/.well-known/oauth-protected-resource"`, w.Header().Get("WWW-Authenticate"))
	a := decode(t, w)
	require.NotNil(t, a.Error)
	assert.Equal(t, `Forbidden: the caller may not use thing "vault"`, a.Error.Message)
}

// A resource that belongs to an extension (an MCP Apps ui:// resource)
// has its extension declared, once, unless the application declares it
// itself, with settings of its own.
func TestResourceExtensionIsDeclared(t *testing.T) {
	t.Parallel()
	read := func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) { return nil, nil }
	var reg mcpmw.Registry
	reg.AddResources(
		mcpmw.Resource{URI: "ui://a", Name: "a", Permission: "read", Extension: "io.modelcontextprotocol/ui", Read: read},
		mcpmw.Resource{URI: "app://plain", Name: "plain", Permission: "read", Read: read},
		mcpmw.Resource{URI: "ui://b", Name: "b", Permission: "read", Extension: "io.modelcontextprotocol/ui", Read: read},
		mcpmw.Resource{URI: "x://c", Name: "c", Permission: "read", Extension: "com.example/x", Read: read},
	)
	got, ok := reg.LookupResource("ui://b")
	require.True(t, ok)
	assert.Equal(t, "io.modelcontextprotocol/ui", got.Extension)

	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	t.Cleanup(h.Close)
	for _, v := range []string{mcpmw.LatestVersion, mcpmw.Version20251125, mcpmw.Version20250618} {
		assert.Equal(t, map[string]any{"io.modelcontextprotocol/ui": map[string]any{}, "com.example/x": map[string]any{}}, declaredExtensions(t, h, v), v)
	}

	own := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{Extensions: []mcpmw.Extension{
		{ID: "com.example/x", Settings: map[string]any{"v": 2}, Revisions: []string{mcpmw.LatestVersion}},
	}})
	t.Cleanup(own.Close)
	assert.Equal(t, map[string]any{"io.modelcontextprotocol/ui": map[string]any{}, "com.example/x": map[string]any{"v": float64(2)}},
		declaredExtensions(t, own, mcpmw.LatestVersion), "the application's declaration wins")
	assert.Equal(t, map[string]any{"io.modelcontextprotocol/ui": map[string]any{}}, declaredExtensions(t, own, mcpmw.Version20251125),
		"on the revisions the application's declaration names")

	var plain mcpmw.Registry
	plain.AddResources(mcpmw.Resource{URI: "app://plain", Name: "plain", Permission: "read", Read: read})
	none := mcpmw.New(&plain, tokenAuthn, &spy{}, nil)
	t.Cleanup(none.Close)
	assert.Nil(t, declaredExtensions(t, none, mcpmw.LatestVersion))
}
