// Package oauth_test is the tested source of the snippet of docs/oauth.md.
package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
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

// !+challenges
// tokenError is the Authenticator's refusal of a token it read: its reason
// goes to the audit record only; its challenge tells the client why, in
// the scheme the token came with.
type tokenError struct {
	reason string // audited, never sent
	scheme string // "Bearer" or "DPoP"
	about  string // error_description: sent, so nothing secret
}

func (e *tokenError) Error() string { return e.reason }

// Challenges makes the 401 an invalid_token (RFC 6750 §3.1); an
// invalid_request would make it a 400.
func (e *tokenError) Challenges() []mcpmw.Challenge {
	return []mcpmw.Challenge{{Scheme: e.scheme, Error: "invalid_token", Description: e.about}}
}

// session is the Caller. TokenScheme makes the 403 of a caller with a
// DPoP-bound token a DPoP challenge, so that it steps up with one.
type session struct {
	scopes []mcpmw.Permission
	scheme string
}

func (s *session) Can(p mcpmw.Permission) bool { return slices.Contains(s.scopes, p) }
func (s *session) TokenScheme() string         { return s.scheme }

// !-challenges

func TestChallenges(t *testing.T) {
	purge := mcpmw.Tool{Name: "purge", Permission: "write",
		Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("purged"), nil
		}}
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if token != "reader-token" {
			return nil, &tokenError{reason: "token " + token + " expired an hour ago", scheme: scheme, about: "The access token expired"}
		}
		return &session{scopes: []mcpmw.Permission{"read"}, scheme: scheme}, nil
	})
	srv := httptest.NewServer(router(authn, mcpmwtest.NewRecorder(), purge))
	defer srv.Close()
	const metaURL = `resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"`

	var e *mcpmwtest.Error
	_, err := mcpmwtest.NewClient(srv.URL+"/mcp", mcpmwtest.Bearer("old-token")).ListTools(t.Context())
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusUnauthorized, e.Status)
	assert.Equal(t, `Bearer error="invalid_token", error_description="The access token expired", `+metaURL, e.Header.Get("WWW-Authenticate"))

	_, err = mcpmwtest.NewClient(srv.URL+"/mcp", mcpmwtest.Header("Authorization", "DPoP reader-token")).CallTool(t.Context(), "purge", nil)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusForbidden, e.Status)
	assert.Equal(t, `DPoP error="insufficient_scope", scope="write", `+metaURL, e.Header.Get("WWW-Authenticate"))
}
