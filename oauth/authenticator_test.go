package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/oauth"
)

const resource = "https://mcp.example.com/mcp"

func newAuth(t *testing.T, is *testIssuer, edit func(*oauth.Config)) *oauth.Authenticator {
	t.Helper()
	c := oauth.Config{Issuer: is.srv.URL, Resource: resource, Implies: map[string][]string{"write": {"read"}},
		Logger: slog.New(slog.DiscardHandler)}
	if edit != nil {
		edit(&c)
	}
	a, err := oauth.New(c)
	require.NoError(t, err)
	return a
}

// oauthError is what an Authenticator's refusal says.
func oauthError(t *testing.T, err error) *oauth.Error {
	t.Helper()
	var e *oauth.Error
	require.ErrorAs(t, err, &e)
	return e
}

func authRequest(authorization ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	for _, a := range authorization {
		r.Header.Add("Authorization", a)
	}
	return r
}

func TestAValidToken(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	a := newAuth(t, is, nil)
	c := is.claims(resource)
	c["scope"] = "write other"
	c["cnf"] = map[string]string{"jkt": "thumb"}
	tok, err := a.Verify(t.Context(), is.sign(t, c, nil)) // Authenticate refuses a bound token as Bearer: TestDPoPModes
	require.NoError(t, err)
	assert.Equal(t, is.srv.URL, tok.Issuer)
	assert.Equal(t, "alice", tok.Subject)
	assert.Equal(t, "app", tok.ClientID)
	assert.Equal(t, []string{"write", "other"}, tok.Scopes)
	assert.Equal(t, "thumb", tok.JKT)
	assert.WithinDuration(t, time.Now().Add(time.Hour), tok.Expiry, time.Minute)
	assert.True(t, tok.Can("write"))
	assert.True(t, tok.Can("read"), "write implies read")
	assert.True(t, tok.Can("other"))
	assert.False(t, tok.Can("admin"))
	assert.Equal(t, is.srv.URL+" alice", tok.CallerID())
	assert.Equal(t, "alice", tok.String())
	assert.Equal(t, "Bearer", tok.TokenScheme())
	assert.Equal(t, []string{"admin"}, tok.ScopesFor("admin"))
	assert.Equal(t, int64(1), is.metaHits.Load())
	assert.Equal(t, int64(1), is.jwksHits.Load())
}

// Each way a JWT can be wrong is refused with 401 invalid_token and a few
// words that say which, the whole reason kept for the audit record.
func TestRefusedJWTs(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	a := newAuth(t, is, nil)
	is.mu.Lock()
	kid, pub := is.kids[0], &is.keys[0].PublicKey
	is.mu.Unlock()
	der, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	edit := func(f func(map[string]any)) map[string]any {
		c := is.claims(resource)
		f(c)
		return c
	}
	good := is.sign(t, is.claims(resource), nil)
	parts := strings.Split(good, ".")
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"at+jwt","kid":"`+kid+`"}`)) + "." + parts[1] + "."
	for _, tt := range []struct {
		name, token, desc string
	}{
		{"another audience", is.sign(t, edit(func(c map[string]any) { c["aud"] = "https://other.example.com/mcp" }), nil), "The access token is not for this resource"},
		{"no audience", is.sign(t, edit(func(c map[string]any) { delete(c, "aud") }), nil), "The access token is not for this resource"},
		{"expired", is.sign(t, edit(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() }), nil), "The access token expired"},
		{"no exp", is.sign(t, edit(func(c map[string]any) { delete(c, "exp") }), nil), "The access token lacks a required claim"},
		{"not yet valid", is.sign(t, edit(func(c map[string]any) { c["nbf"] = time.Now().Add(time.Hour).Unix() }), nil), "The access token is not yet valid"},
		{"issued in the future", is.sign(t, edit(func(c map[string]any) { c["iat"] = time.Now().Add(time.Hour).Unix() }), nil), "The access token is not yet valid"},
		{"another issuer", is.sign(t, edit(func(c map[string]any) { c["iss"] = "https://evil.example.com" }), nil), "The access token is from another issuer"},
		{"no sub", is.sign(t, edit(func(c map[string]any) { delete(c, "sub") }), nil), "The access token lacks a required claim"},
		{"aud of the wrong type", is.sign(t, edit(func(c map[string]any) { c["aud"] = 5 }), nil), "The access token is malformed"},
		{"typ JWT", is.sign(t, is.claims(resource), map[string]any{"typ": "JWT"}), "The access token's typ is not accepted"},
		{"alg none", none, "The access token is malformed or signed with an algorithm not accepted"},
		{"HS256 keyed with the public key", signWith(t, jose.HS256, der, kid, is.claims(resource), nil), "The access token is malformed or signed with an algorithm not accepted"},
		{"signed by another key under the issuer's kid", signWith(t, jose.ES256, other, kid, is.claims(resource), nil), "The access token's signature is invalid"},
		{"a tampered payload", parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"mallory"}`)) + "." + parts[2], "The access token's signature is invalid"},
		{"not a JWS", "a.b.c", "The access token is malformed or signed with an algorithm not accepted"},
		{"opaque, and no introspection", "opaque-token", "The access token is not a JWT and cannot be introspected here"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := a.Authenticate(authRequest("Bearer " + tt.token))
			e := oauthError(t, err)
			assert.Equal(t, 401, e.Status)
			assert.Equal(t, "invalid_token", e.Code)
			assert.Equal(t, tt.desc, e.Description)
			assert.NotEmpty(t, e.Reason)
			assert.ErrorIs(t, err, mcpmw.ErrInvalidToken)
		})
	}
}

// The Authorization header: none is a 401 without error; two, a token in
// the query, or credentials that are no b64token a 400 invalid_request;
// another scheme is no credentials.
func TestAuthorizationHeader(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	a := newAuth(t, is, nil)
	tok := is.sign(t, is.claims(resource), nil)
	inQuery := authRequest("Bearer " + tok)
	inQuery.URL.RawQuery = "access_token=" + tok
	for _, tt := range []struct {
		name   string
		r      *http.Request
		status int
		code   string
	}{
		{"none", authRequest(), 401, ""},
		{"Basic", authRequest("Basic YTpi"), 401, ""},
		{"two", authRequest("Bearer "+tok, "Bearer "+tok), 400, "invalid_request"},
		{"in the query too", inQuery, 400, "invalid_request"},
		{"a space in the token", authRequest("Bearer a b"), 400, "invalid_request"},
		{"empty", authRequest("Bearer "), 400, "invalid_request"},
		{"no token", authRequest("Bearer"), 400, "invalid_request"},
		{"only =", authRequest("Bearer =="), 400, "invalid_request"},
		{"a quote", authRequest(`Bearer a"b`), 400, "invalid_request"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := a.Authenticate(tt.r)
			e := oauthError(t, err)
			assert.Equal(t, tt.status, e.Status)
			assert.Equal(t, tt.code, e.Code)
			if tt.code == "" {
				assert.ErrorIs(t, err, mcpmw.ErrUnauthorized)
				assert.Equal(t, []mcpmw.Challenge{{Scheme: "Bearer"}}, e.Challenges())
			}
		})
	}
	_, err := a.Authenticate(authRequest("bearer " + tok))
	assert.NoError(t, err, "the scheme's case does not matter")
	_, err = a.Authenticate(authRequest("Bearer " + strings.TrimRight(tok, "=") + "=="))
	assert.Error(t, err, "padding is part of the token")
}

// A verified token is kept: the second request fetches nothing, and when
// its key leaves the key set the token is verified again, and refused.
func TestVerifiedTokensAreKeptWhileTheirKeyIs(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	a := newAuth(t, is, func(c *oauth.Config) { c.MinKeyRefresh = time.Nanosecond })
	old := is.sign(t, is.claims(resource), nil)
	first, err := a.Verify(t.Context(), old)
	require.NoError(t, err)
	again, err := a.Verify(t.Context(), old)
	require.NoError(t, err)
	assert.Same(t, first, again, "the cached Token")
	assert.Equal(t, int64(1), is.jwksHits.Load())

	is.rotate(t)
	is.retire() // the old key is gone
	fresh := is.sign(t, is.claims(resource), nil)
	_, err = a.Verify(t.Context(), fresh) // its kid is unknown: the keys are fetched again
	require.NoError(t, err)
	assert.Equal(t, int64(2), is.jwksHits.Load())
	_, err = a.Verify(t.Context(), old)
	assert.Equal(t, "The access token is signed with an unknown key", oauthError(t, err).Description)
}

// Tokens with made-up kids cost the issuer one fetch per MinKeyRefresh,
// however many come at once.
func TestUnknownKidsInABurstFetchOnce(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	a := newAuth(t, is, func(c *oauth.Config) { c.MinKeyRefresh = time.Hour })
	require.NoError(t, a.Refresh(t.Context()))
	is.mu.Lock()
	key := is.keys[0]
	is.mu.Unlock()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := a.Verify(context.Background(), signWith(t, jose.ES256, key, fmt.Sprint("made-up-", i), is.claims(resource), nil))
			assert.Equal(t, "The access token is signed with an unknown key", oauthError(t, err).Description)
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(1), is.jwksHits.Load(), "Refresh, then none within MinKeyRefresh")

	b := newAuth(t, is, func(c *oauth.Config) { c.MinKeyRefresh = time.Hour })
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.Verify(context.Background(), signWith(t, jose.ES256, key, fmt.Sprint("made-up-", i), is.claims(resource), nil))
			assert.Equal(t, "The access token is signed with an unknown key", oauthError(t, err).Description)
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(2), is.jwksHits.Load(), "one fetch for the first unknown kid, the others wait for it")
}

// While the issuer is down the last good keys serve; before any were
// fetched, a token can be neither accepted nor refused: 503.
func TestTheLastGoodKeysServeWhileTheIssuerIsDown(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	a := newAuth(t, is, func(c *oauth.Config) { c.KeyRefresh = time.Nanosecond; c.MinKeyRefresh = time.Nanosecond })
	tok := is.sign(t, is.claims(resource), nil)
	is.setDown(true)
	_, err := a.Verify(t.Context(), tok)
	e := oauthError(t, err)
	assert.Equal(t, 503, e.Status)
	assert.Empty(t, e.Challenges())
	assert.NotErrorIs(t, err, mcpmw.ErrInvalidToken)

	is.setDown(false)
	_, err = a.Verify(t.Context(), tok)
	require.NoError(t, err)
	is.setDown(true)
	before := is.jwksHits.Load()
	for i := 0; i < 100 && is.jwksHits.Load() == before; i++ { // a background refresh is started, and fails
		_, err = a.Verify(t.Context(), is.sign(t, is.claims(resource), nil))
		require.NoError(t, err)
		time.Sleep(10 * time.Millisecond)
	}
	assert.Greater(t, is.jwksHits.Load(), before, "a refresh was tried")
	_, err = a.Verify(t.Context(), is.sign(t, is.claims(resource), nil))
	assert.NoError(t, err, "the last good keys still serve")
}

func TestOptions(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	t.Run("TokenTypes JWT", func(t *testing.T) {
		a := newAuth(t, is, func(c *oauth.Config) { c.TokenTypes = []string{"at+jwt", "JWT"} })
		_, err := a.Verify(t.Context(), is.sign(t, is.claims(resource), map[string]any{"typ": "JWT"}))
		assert.NoError(t, err)
		_, err = a.Verify(t.Context(), is.sign(t, is.claims(resource), map[string]any{"typ": "application/AT+JWT"}))
		assert.NoError(t, err)
	})
	t.Run("RequiredClaims", func(t *testing.T) {
		a := newAuth(t, is, func(c *oauth.Config) { c.RequiredClaims = []string{"client_id", "jti", "iat", "nbf", "scope"} })
		c := is.claims(resource)
		c["nbf"] = time.Now().Unix()
		_, err := a.Verify(t.Context(), is.sign(t, c, nil))
		require.NoError(t, err)
		for _, claim := range []string{"client_id", "jti", "iat", "nbf", "scope"} {
			c := is.claims(resource)
			c["nbf"] = time.Now().Unix()
			delete(c, claim)
			_, err := a.Verify(t.Context(), is.sign(t, c, nil))
			assert.Contains(t, oauthError(t, err).Reason, "no "+claim)
		}
		_, err = oauth.New(oauth.Config{Issuer: is.srv.URL, Resource: resource, RequiredClaims: []string{"acr"}})
		assert.ErrorContains(t, err, `"acr"`)
	})
	t.Run("Audiences and the canonical forms", func(t *testing.T) {
		a := newAuth(t, is, func(c *oauth.Config) { c.Audiences = []string{"https://internal:8443/mcp"} })
		for _, aud := range []any{"https://internal:8443/mcp", "HTTPS://MCP.Example.com/mcp/", []string{"x", resource}} {
			c := is.claims(resource)
			c["aud"] = aud
			_, err := a.Verify(t.Context(), is.sign(t, c, nil))
			assert.NoError(t, err, "%v", aud)
		}
		for _, aud := range []any{"https://mcp.example.com/MCP", "https://mcp.example.com/mcp/x", "https://mcp.example.com", "mcp.example.com/mcp", []string{}} {
			c := is.claims(resource)
			c["aud"] = aud
			_, err := a.Verify(t.Context(), is.sign(t, c, nil))
			assert.Error(t, err, "%v", aud)
		}
	})
	t.Run("Leeway", func(t *testing.T) {
		a := newAuth(t, is, nil)
		c := is.claims(resource)
		c["exp"] = time.Now().Add(-10 * time.Second).Unix()
		_, err := a.Verify(t.Context(), is.sign(t, c, nil))
		assert.NoError(t, err, "30 seconds by default")
		a = newAuth(t, is, func(c *oauth.Config) { c.Leeway = -1 })
		_, err = a.Verify(t.Context(), is.sign(t, c, nil))
		assert.Error(t, err)
	})
	t.Run("Algorithms", func(t *testing.T) {
		a := newAuth(t, is, func(c *oauth.Config) { c.Algorithms = []string{"RS256"} })
		_, err := a.Verify(t.Context(), is.sign(t, is.claims(resource), nil))
		assert.Equal(t, "The access token is malformed or signed with an algorithm not accepted", oauthError(t, err).Description)
		for _, alg := range []string{"HS256", "none", "HS512", "es256"} {
			_, err := oauth.New(oauth.Config{Issuer: is.srv.URL, Resource: resource, Algorithms: []string{alg}})
			assert.Error(t, err, alg)
		}
		_, err = oauth.New(oauth.Config{Issuer: is.srv.URL, Resource: resource, Algorithms: []string{}})
		assert.Error(t, err)
	})
	t.Run("fixed JWKS", func(t *testing.T) {
		a := newAuth(t, is, func(c *oauth.Config) { c.JWKS = is.jwks() })
		hits := is.jwksHits.Load()
		_, err := a.Verify(t.Context(), is.sign(t, is.claims(resource), nil))
		assert.NoError(t, err)
		_, err = a.Verify(t.Context(), is.sign(t, is.claims(resource), map[string]any{"kid": "nope"}))
		assert.Equal(t, "The access token is signed with an unknown key", oauthError(t, err).Description)
		assert.NoError(t, a.Refresh(t.Context()))
		assert.Equal(t, hits, is.jwksHits.Load(), "never fetched")
	})
	t.Run("JWKSURI", func(t *testing.T) {
		a := newAuth(t, is, func(c *oauth.Config) { c.JWKSURI = is.srv.URL + "/jwks"; c.Issuer = is.srv.URL })
		metas := is.metaHits.Load()
		_, err := a.Verify(t.Context(), is.sign(t, is.claims(resource), nil))
		assert.NoError(t, err)
		assert.Equal(t, metas, is.metaHits.Load(), "no discovery")
	})
	t.Run("Permissions", func(t *testing.T) {
		a := newAuth(t, is, func(c *oauth.Config) {
			c.Permissions = map[mcpmw.Permission][]string{"admin": {"notes:read", "notes:write"}}
			c.Implies = map[string][]string{"notes:admin": {"notes:write"}, "notes:write": {"notes:read"}}
		})
		for scope, want := range map[string]bool{"notes:read notes:write": true, "notes:admin": true, "notes:write": true, "notes:read": false} {
			c := is.claims(resource)
			c["scope"] = scope
			tok, err := a.Verify(t.Context(), is.sign(t, c, nil))
			require.NoError(t, err)
			assert.Equal(t, want, tok.Can("admin"), scope)
			assert.Equal(t, []string{"notes:read", "notes:write"}, tok.ScopesFor("admin"))
		}
	})
}

func TestConfigChecks(t *testing.T) {
	t.Parallel()
	ok := oauth.Config{Issuer: "https://auth.example.com", Resource: resource}
	for name, edit := range map[string]func(*oauth.Config){
		"no issuer":              func(c *oauth.Config) { c.Issuer = "" },
		"issuer not a URL":       func(c *oauth.Config) { c.Issuer = "auth.example.com" },
		"issuer with a fragment": func(c *oauth.Config) { c.Issuer = "https://auth.example.com/#x" },
		"issuer over http":       func(c *oauth.Config) { c.Issuer = "http://auth.example.com" },
		"JWKSURI over http":      func(c *oauth.Config) { c.JWKSURI = "http://10.0.0.1/jwks" },
		"introspection over http": func(c *oauth.Config) {
			c.Introspection = &oauth.Introspection{ClientID: "rs", Endpoint: "http://auth.example.com/i"}
		},
		"no resource":              func(c *oauth.Config) { c.Resource = "" },
		"resource ftp":             func(c *oauth.Config) { c.Resource = "ftp://x/mcp" },
		"empty audience":           func(c *oauth.Config) { c.Audiences = []string{""} },
		"introspection, no client": func(c *oauth.Config) { c.Introspection = &oauth.Introspection{} },
		"introspection endpoint":   func(c *oauth.Config) { c.Introspection = &oauth.Introspection{ClientID: "rs", Endpoint: "/x"} },
		"JWKSURI":                  func(c *oauth.Config) { c.JWKSURI = "jwks" },
		"bad JWKS":                 func(c *oauth.Config) { c.JWKS = []byte(`{"keys":[]}`) },
		"Implies a space":          func(c *oauth.Config) { c.Implies = map[string][]string{"a": {"b c"}} },
		"Permissions none":         func(c *oauth.Config) { c.Permissions = map[mcpmw.Permission][]string{"a": nil} },
		"Permissions a quote":      func(c *oauth.Config) { c.Permissions = map[mcpmw.Permission][]string{"a": {`"`}} },
	} {
		c := ok
		edit(&c)
		_, err := oauth.New(c)
		assert.Error(t, err, name)
	}
	_, err := oauth.New(ok)
	assert.NoError(t, err)
	for _, loopback := range []string{"http://localhost:8080", "http://127.0.0.2", "http://[::1]:9000"} {
		c := ok
		c.Issuer, c.JWKSURI = loopback, loopback+"/jwks"
		c.Introspection = &oauth.Introspection{ClientID: "rs", Endpoint: loopback + "/introspect"}
		_, err := oauth.New(c)
		assert.NoError(t, err, loopback)
	}
}

// The JWKS keeps the keys it can use: public signing keys, the first of a
// kid.
func TestKeySetSkipsWhatItCannotUse(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	enc, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	is.mu.Lock()
	good, kid := is.keys[0], is.kids[0]
	is.mu.Unlock()
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: priv, KeyID: "private", Algorithm: "ES256"},
		{Key: &enc.PublicKey, KeyID: "enc", Use: "enc"},
		{Key: []byte("secret"), KeyID: "hmac", Algorithm: "HS256"},
		{Key: &good.PublicKey, KeyID: kid, Algorithm: "ES256"},
		{Key: &enc.PublicKey, KeyID: kid, Algorithm: "ES256"}, // a second key of kid
	}}
	data, err := json.Marshal(set)
	require.NoError(t, err)
	var doc map[string][]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &doc))
	doc["keys"] = append(doc["keys"], json.RawMessage(`{"kty":"nope"}`))
	data, _ = json.Marshal(doc)
	a := newAuth(t, is, func(c *oauth.Config) { c.JWKS = data })
	_, err = a.Verify(t.Context(), is.sign(t, is.claims(resource), nil))
	assert.NoError(t, err)
	for _, k := range []any{priv, enc} {
		_, err = a.Verify(t.Context(), signWith(t, jose.ES256, k, "private", is.claims(resource), nil))
		assert.Error(t, err)
	}
	_, err = a.Verify(t.Context(), signWith(t, jose.ES256, enc, "enc", is.claims(resource), nil))
	assert.Error(t, err)
}

// A token without kid is verified by the set's only key.
func TestNoKidAndOneKey(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	is.mu.Lock()
	key := is.keys[0]
	is.mu.Unlock()
	a := newAuth(t, is, nil)
	_, err := a.Verify(t.Context(), signWith(t, jose.ES256, key, "", is.claims(resource), nil))
	assert.NoError(t, err)
	is.rotate(t) // two keys: which one is meant?
	b := newAuth(t, is, nil)
	_, err = b.Verify(t.Context(), signWith(t, jose.ES256, key, "", is.claims(resource), nil))
	assert.Error(t, err)
}

var _ = errors.New

// A token of 16 KiB is read; one byte more is refused unread.
func TestTokenSizeBound(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	a := newAuth(t, is, nil)
	_, err := a.Verify(t.Context(), strings.Repeat("a", 16<<10))
	assert.Equal(t, "The access token is not a JWT and cannot be introspected here", oauthError(t, err).Description)
	_, err = a.Verify(t.Context(), strings.Repeat("a", 16<<10+1))
	e := oauthError(t, err)
	assert.Equal(t, "The access token is malformed", e.Description)
	assert.Equal(t, "a token of 16385 bytes", e.Reason)
	_, err = a.Authenticate(authRequest("Bearer -._~+/AZaz09=="))
	assert.Equal(t, "The access token is not a JWT and cannot be introspected here", oauthError(t, err).Description, "every b64token character")
}
