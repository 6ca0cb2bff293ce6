package oauthmeta_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/oauthmeta"
)

var issuer = []string{"https://auth.example.com"}

func TestPathAndURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, resource, path, url string }{
		{"nested path", "https://api.example.com/mcp", "/.well-known/oauth-protected-resource/mcp",
			"https://api.example.com/.well-known/oauth-protected-resource/mcp"},
		{"deeper path", "https://api.example.com/tenants/acme/mcp", "/.well-known/oauth-protected-resource/tenants/acme/mcp",
			"https://api.example.com/.well-known/oauth-protected-resource/tenants/acme/mcp"},
		{"root without slash", "https://api.example.com", "/.well-known/oauth-protected-resource",
			"https://api.example.com/.well-known/oauth-protected-resource"},
		{"root with slash", "https://api.example.com/", "/.well-known/oauth-protected-resource",
			"https://api.example.com/.well-known/oauth-protected-resource"},
		{"trailing slash dropped", "https://api.example.com/mcp/", "/.well-known/oauth-protected-resource/mcp",
			"https://api.example.com/.well-known/oauth-protected-resource/mcp"},
		{"port kept", "https://api.example.com:8443/mcp", "/.well-known/oauth-protected-resource/mcp",
			"https://api.example.com:8443/.well-known/oauth-protected-resource/mcp"},
		{"http on localhost", "http://localhost:8080/mcp", "/.well-known/oauth-protected-resource/mcp",
			"http://localhost:8080/.well-known/oauth-protected-resource/mcp"},
		{"http on 127.0.0.1", "http://127.0.0.1:8080/mcp", "/.well-known/oauth-protected-resource/mcp",
			"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"},
		{"http on ::1", "http://[::1]:8080/", "/.well-known/oauth-protected-resource",
			"http://[::1]:8080/.well-known/oauth-protected-resource"},
		{"escaped path", "https://api.example.com/a%20b/mcp", "/.well-known/oauth-protected-resource/a b/mcp",
			"https://api.example.com/.well-known/oauth-protected-resource/a%20b/mcp"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := oauthmeta.New(oauthmeta.Config{Resource: tt.resource, AuthorizationServers: issuer})
			assert.Equal(t, tt.path, h.Path())
			assert.Equal(t, tt.url, h.URL())
			assert.Equal(t, tt.resource, h.Resource(), "published exactly as written")
		})
	}
}

func TestNewPanics(t *testing.T) {
	t.Parallel()
	ok := oauthmeta.Config{Resource: "https://api.example.com/mcp", AuthorizationServers: issuer}
	for _, tt := range []struct {
		name string
		edit func(*oauthmeta.Config)
		want string // in the panic message
	}{
		{"empty resource", func(c *oauthmeta.Config) { c.Resource = "" }, "Config.Resource"},
		{"relative resource", func(c *oauthmeta.Config) { c.Resource = "/mcp" }, "absolute"},
		{"no host", func(c *oauthmeta.Config) { c.Resource = "https:///mcp" }, "absolute"},
		{"port without host", func(c *oauthmeta.Config) { c.Resource = "https://:443/mcp" }, "no host"},
		{"other scheme", func(c *oauthmeta.Config) { c.Resource = "wss://api.example.com/mcp" }, "absolute"},
		{"http on a public host", func(c *oauthmeta.Config) { c.Resource = "http://api.example.com/mcp" }, "not loopback"},
		{"http on a private address", func(c *oauthmeta.Config) { c.Resource = "http://10.0.0.1/mcp" }, "not loopback"},
		{"fragment", func(c *oauthmeta.Config) { c.Resource = "https://api.example.com/mcp#x" }, "fragment"},
		{"empty fragment", func(c *oauthmeta.Config) { c.Resource = "https://api.example.com/mcp#" }, "fragment"},
		{"query", func(c *oauthmeta.Config) { c.Resource = "https://api.example.com/mcp?tenant=1" }, "query"},
		{"empty query", func(c *oauthmeta.Config) { c.Resource = "https://api.example.com/mcp?" }, "query"},
		{"user information", func(c *oauthmeta.Config) { c.Resource = "https://bob:pw@api.example.com/mcp" }, "user information"},
		{"empty segment", func(c *oauthmeta.Config) { c.Resource = "https://api.example.com//mcp" }, "segment"},
		{"dot segment", func(c *oauthmeta.Config) { c.Resource = "https://api.example.com/a/../mcp" }, "segment"},
		{"no authorization server", func(c *oauthmeta.Config) { c.AuthorizationServers = nil }, "at least one"},
		{"http authorization server", func(c *oauthmeta.Config) {
			c.AuthorizationServers = []string{"http://auth.example.com"}
		}, "AuthorizationServers"},
		{"authorization server with query", func(c *oauthmeta.Config) {
			c.AuthorizationServers = []string{"https://auth.example.com?x=1"}
		}, "query"},
		{"scope with a space", func(c *oauthmeta.Config) { c.ScopesSupported = []string{"read write"} }, "scope token"},
		{"empty scope", func(c *oauthmeta.Config) { c.ScopesSupported = []string{""} }, "scope token"},
		{"scope with a quote", func(c *oauthmeta.Config) { c.ScopesSupported = []string{`a"b`} }, "scope token"},
		{"unknown bearer method", func(c *oauthmeta.Config) { c.BearerMethodsSupported = []string{"cookie"} }, "cookie"},
		{"relative documentation", func(c *oauthmeta.Config) { c.ResourceDocumentation = "/docs" }, "ResourceDocumentation"},
		{"tos with fragment", func(c *oauthmeta.Config) { c.ResourceTOSURI = "https://example.com/tos#x" }, "fragment"},
		{"DPoP alg none", func(c *oauthmeta.Config) { c.DPoPSigningAlgValuesSupported = []string{"ES256", "none"} }, `"none"`},
		{"DPoP alg HMAC", func(c *oauthmeta.Config) { c.DPoPSigningAlgValuesSupported = []string{"HS256"} }, "asymmetric"},
		{"DPoP alg empty", func(c *oauthmeta.Config) { c.DPoPSigningAlgValuesSupported = []string{""} }, "DPoPSigningAlgValuesSupported"},
		{"DPoP alg with a space", func(c *oauthmeta.Config) { c.DPoPSigningAlgValuesSupported = []string{"ES256 PS256"} }, "DPoPSigningAlgValuesSupported"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := ok
			tt.edit(&c)
			defer func() {
				msg := fmt.Sprint(recover())
				assert.True(t, strings.HasPrefix(msg, "oauthmeta: "), "panic %q", msg)
				assert.Contains(t, msg, tt.want)
			}()
			oauthmeta.New(c)
			t.Error("New did not panic")
		})
	}
}

func TestDocument(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		c    oauthmeta.Config
		want string
	}{
		{"minimal: bearer method header by default",
			oauthmeta.Config{Resource: "https://api.example.com/mcp", AuthorizationServers: issuer},
			`{"resource":"https://api.example.com/mcp","authorization_servers":["https://auth.example.com"],"bearer_methods_supported":["header"]}`},
		{"every member",
			oauthmeta.Config{
				Resource:               "https://api.example.com/mcp/",
				AuthorizationServers:   []string{"https://auth.example.com", "https://login.example.org/tenant"},
				ScopesSupported:        []string{"read", "orders:write"},
				BearerMethodsSupported: []string{"header", "body"},
				ResourceName:           `Orders & "Invoices" <MCP>`,
				ResourceDocumentation:  "https://docs.example.com/mcp",
				ResourcePolicyURI:      "https://example.com/privacy",
				ResourceTOSURI:         "http://example.com/tos",

				DPoPSigningAlgValuesSupported: []string{"ES256"},
				DPoPBoundAccessTokensRequired: true,
			},
			`{"resource":"https://api.example.com/mcp/",` +
				`"authorization_servers":["https://auth.example.com","https://login.example.org/tenant"],` +
				`"scopes_supported":["read","orders:write"],"bearer_methods_supported":["header","body"],` +
				`"resource_name":"Orders & \"Invoices\" <MCP>","resource_documentation":"https://docs.example.com/mcp",` +
				`"resource_policy_uri":"https://example.com/privacy","resource_tos_uri":"http://example.com/tos",` +
				`"dpop_signing_alg_values_supported":["ES256"],"dpop_bound_access_tokens_required":true}`},
		{"DPoP accepted",
			oauthmeta.Config{Resource: "https://api.example.com/mcp", AuthorizationServers: issuer,
				DPoPSigningAlgValuesSupported: []string{"ES256", "PS256", "EdDSA"}},
			`{"resource":"https://api.example.com/mcp","authorization_servers":["https://auth.example.com"],"bearer_methods_supported":["header"],` +
				`"dpop_signing_alg_values_supported":["ES256","PS256","EdDSA"]}`},
		{"DPoP required",
			oauthmeta.Config{Resource: "https://api.example.com/mcp", AuthorizationServers: issuer,
				DPoPSigningAlgValuesSupported: []string{"ES256"}, DPoPBoundAccessTokensRequired: true},
			`{"resource":"https://api.example.com/mcp","authorization_servers":["https://auth.example.com"],"bearer_methods_supported":["header"],` +
				`"dpop_signing_alg_values_supported":["ES256"],"dpop_bound_access_tokens_required":true}`},
		{"empty scopes left out",
			oauthmeta.Config{Resource: "https://api.example.com", AuthorizationServers: issuer, ScopesSupported: []string{}},
			`{"resource":"https://api.example.com","authorization_servers":["https://auth.example.com"],"bearer_methods_supported":["header"]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := oauthmeta.New(tt.c)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, h.Path(), nil))
			require.Equal(t, http.StatusOK, w.Code)
			assert.Equal(t, tt.want, w.Body.String(), "exact bytes: member names, order, no HTML escaping")
		})
	}
}

func TestConfigSlicesCopiedAtNew(t *testing.T) {
	t.Parallel()
	scopes := []string{"read"}
	h := oauthmeta.New(oauthmeta.Config{Resource: "https://api.example.com/mcp", AuthorizationServers: issuer, ScopesSupported: scopes})
	scopes[0] = "admin"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, h.Path(), nil))
	assert.Contains(t, w.Body.String(), `"scopes_supported":["read"]`)
}

func TestMethodsAndHeaders(t *testing.T) {
	t.Parallel()
	h := oauthmeta.New(oauthmeta.Config{Resource: "https://api.example.com/mcp", AuthorizationServers: issuer})
	get := httptest.NewRecorder()
	h.ServeHTTP(get, httptest.NewRequest(http.MethodGet, h.Path(), nil))
	doc := get.Body.String()
	for _, tt := range []struct {
		method string
		header http.Header
		status int
		body   string
		want   map[string]string // headers; "" means absent
	}{
		{http.MethodGet, nil, http.StatusOK, doc, map[string]string{
			"Content-Type": "application/json", "Content-Length": fmt.Sprint(len(doc)),
			"Access-Control-Allow-Origin": "*", "X-Content-Type-Options": "nosniff", "Allow": "",
		}},
		{http.MethodHead, nil, http.StatusOK, "", map[string]string{
			"Content-Type": "application/json", "Content-Length": fmt.Sprint(len(doc)), "Access-Control-Allow-Origin": "*",
		}},
		{http.MethodOptions, http.Header{"Origin": {"https://inspector.example"}, "Access-Control-Request-Method": {"GET"},
			"Access-Control-Request-Headers": {"mcp-protocol-version"}}, http.StatusNoContent, "", map[string]string{
			"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, HEAD",
			"Access-Control-Allow-Headers": "*", "Allow": "GET, HEAD, OPTIONS", "Content-Type": "",
		}},
		{http.MethodPost, nil, http.StatusMethodNotAllowed, "", map[string]string{
			"Allow": "GET, HEAD, OPTIONS", "Access-Control-Allow-Origin": "*",
		}},
		{http.MethodPut, nil, http.StatusMethodNotAllowed, "", map[string]string{"Allow": "GET, HEAD, OPTIONS"}},
		{http.MethodDelete, nil, http.StatusMethodNotAllowed, "", map[string]string{"Allow": "GET, HEAD, OPTIONS"}},
	} {
		t.Run(tt.method, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(tt.method, h.Path(), nil)
			for k, vs := range tt.header {
				r.Header[k] = vs
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			assert.Equal(t, tt.status, w.Code)
			if tt.status != http.StatusMethodNotAllowed {
				assert.Equal(t, tt.body, w.Body.String())
			} else {
				assert.NotContains(t, w.Body.String(), `"resource":`, "a refusal does not carry the document")
			}
			for k, v := range tt.want {
				assert.Equal(t, v, w.Header().Get(k), k)
			}
		})
	}
}

// The Handler is an ordinary http.Handler: mounted at Path on a ServeMux,
// beside the endpoint, over a real connection.
func TestMountedOnServeMux(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(nil)
	resource := "http://" + srv.Listener.Addr().String() + "/mcp"
	h := oauthmeta.New(oauthmeta.Config{Resource: resource, AuthorizationServers: issuer})
	mux := http.NewServeMux()
	mux.Handle(h.Path(), h)
	srv.Config.Handler = mux
	srv.Start()
	defer srv.Close()

	resp, err := http.Get(h.URL())
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))

	resp2, err := http.Get(srv.URL + "/.well-known/oauth-protected-resource")
	require.NoError(t, err)
	defer resp2.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp2.StatusCode, "the path-aware location only")
}
