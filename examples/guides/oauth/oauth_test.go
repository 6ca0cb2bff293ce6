// Package oauth_test is the tested source of the snippet of docs/oauth.md.
package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
	"github.com/mcpmw/mcpmw/oauthmeta"
)

// router returns the guide's router: the metadata document and the
// endpoint whose challenges point at it.
func router(authn mcpmw.Authenticator, audit mcpmw.Auditor, tools ...mcpmw.Tool) http.Handler {
	var reg mcpmw.Registry
	reg.AddTools(tools...)
	r := chi.NewRouter()
	// !+meta
	meta := oauthmeta.New(oauthmeta.Config{ // panics on a bad config: https (http on loopback only), no query or fragment
		Resource:             "https://api.example.com/mcp", // the endpoint's URL: what tokens' aud must contain
		AuthorizationServers: []string{"https://auth.example.com"},
		ScopesSupported:      []string{"read", "write"},
	})
	r.Handle(meta.Path(), meta) // GET /.well-known/oauth-protected-resource/mcp (RFC 9728 §3.1), CORS-readable
	r.Handle("/mcp", mcpmw.New(&reg, authn, audit, &mcpmw.Options{ResourceMetadata: meta.URL()}))
	// !-meta
	return r
}

func TestProtectedResourceMetadata(t *testing.T) {
	purge := mcpmw.Tool{Name: "purge", Permission: "write",
		Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("purged"), nil
		}}
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		if r.Header.Get("Authorization") != "Bearer reader-token" {
			return nil, errors.New("no such token") // audited, never sent: 401 with the challenge
		}
		return &mcpmwtest.User{Name: "reader", Permissions: []mcpmw.Permission{"read"}}, nil
	})
	srv := httptest.NewServer(router(authn, mcpmwtest.NewRecorder(), purge))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/.well-known/oauth-protected-resource/mcp")
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	var doc struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
	assert.Equal(t, "https://api.example.com/mcp", doc.Resource)
	assert.Equal(t, []string{"https://auth.example.com"}, doc.AuthorizationServers)

	const metaURL = `resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"`
	_, err = mcpmwtest.NewClient(srv.URL+"/mcp", mcpmwtest.Bearer("stolen")).ListTools(t.Context())
	var e *mcpmwtest.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusUnauthorized, e.Status)
	assert.Contains(t, e.Header.Get("WWW-Authenticate"), metaURL)

	_, err = mcpmwtest.NewClient(srv.URL+"/mcp", mcpmwtest.Bearer("reader-token")).CallTool(t.Context(), "purge", nil)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusForbidden, e.Status)
	assert.Contains(t, e.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`)
	assert.Contains(t, e.Header.Get("WWW-Authenticate"), `scope="write"`)
	assert.Contains(t, e.Header.Get("WWW-Authenticate"), metaURL)
}
