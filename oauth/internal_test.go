package oauth

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDiscoveryURLs(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{
		"https://as.example.com/.well-known/oauth-authorization-server",
		"https://as.example.com/.well-known/openid-configuration",
	}, discoveryURLs("https://as.example.com"))
	assert.Equal(t, []string{
		"https://as.example.com/.well-known/oauth-authorization-server",
		"https://as.example.com/.well-known/openid-configuration",
	}, discoveryURLs("https://as.example.com/"))
	assert.Equal(t, []string{
		"https://as.example.com/.well-known/oauth-authorization-server/tenant/1",
		"https://as.example.com/.well-known/openid-configuration/tenant/1",
		"https://as.example.com/tenant/1/.well-known/openid-configuration",
	}, discoveryURLs("https://as.example.com/tenant/1"))
	assert.Nil(t, discoveryURLs("%"))
}

// Discovery falls back from RFC 8414 to OpenID Connect, and refuses
// metadata that names another issuer.
func TestDiscover(t *testing.T) {
	t.Parallel()
	var issuer string
	mux := http.NewServeMux()
	mux.HandleFunc("/tenant/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": issuer, "jwks_uri": "x"})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server/evil", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": "https://evil.example.com"})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server/garbled", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("{"))
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat(" ", maxDocumentBytes+1)))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	issuer = srv.URL + "/tenant"
	m, err := discover(t.Context(), srv.Client(), issuer)
	require.NoError(t, err)
	assert.Equal(t, "x", m.JWKSURI)
	_, err = discover(t.Context(), srv.Client(), srv.URL+"/evil")
	assert.ErrorContains(t, err, "RFC 8414 §3.3")
	_, err = discover(t.Context(), srv.Client(), srv.URL+"/garbled")
	assert.ErrorContains(t, err, "unexpected end")
	_, err = discover(t.Context(), srv.Client(), srv.URL+"/huge")
	assert.ErrorContains(t, err, "more than")
	_, err = getDocument(t.Context(), srv.Client(), "%")
	assert.Error(t, err)

	// a metadata document without jwks_uri
	mux.HandleFunc("/.well-known/oauth-authorization-server/nokeys", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": srv.URL + "/nokeys"})
	})
	s, err := (&Config{Issuer: srv.URL + "/nokeys", Resource: "https://r.example.com", Logger: slog.New(slog.DiscardHandler)}).check()
	require.NoError(t, err)
	ks, _ := newKeySource(s)
	_, err = ks.load(t.Context())
	assert.ErrorContains(t, err, "no jwks_uri")
}

// A full cache drops the expired entries first, else one in eight.
func TestCacheEviction(t *testing.T) {
	t.Parallel()
	now := time.Now()
	c := newTokenCache(16)
	for i := range 16 {
		until := now.Add(time.Hour)
		if i < 4 {
			until = now.Add(-time.Second)
		}
		c.put(keyOf(string(rune('a'+i))), cached{until: until}, now)
	}
	assert.Len(t, c.entries, 16)
	c.put(keyOf("new"), cached{until: now.Add(time.Hour)}, now)
	assert.Len(t, c.entries, 13, "the 4 expired dropped, one added")
	for i := range 3 {
		c.put(keyOf(string(rune('A'+i))), cached{until: now.Add(time.Hour)}, now)
	}
	assert.Len(t, c.entries, 16)
	c.put(keyOf("A"), cached{until: now.Add(time.Hour)}, now)
	assert.Len(t, c.entries, 16, "a key already kept replaces itself")
	c.put(keyOf("more"), cached{until: now.Add(time.Hour)}, now)
	assert.Len(t, c.entries, 15, "two of 16 dropped, one added")
	small := newTokenCache(1)
	small.put(keyOf("a"), cached{until: now.Add(time.Hour)}, now)
	small.put(keyOf("b"), cached{until: now.Add(time.Hour)}, now)
	assert.Len(t, small.entries, 1)
	_, ok := small.get(keyOf("b"), now)
	assert.True(t, ok)
	_, ok = small.get(keyOf("b"), now.Add(time.Hour))
	assert.False(t, ok, "not at its until")
}

func TestNumericDateAndAudience(t *testing.T) {
	t.Parallel()
	var c claims
	require.NoError(t, json.Unmarshal([]byte(`{"exp":1700000000.5,"aud":"a"}`), &c))
	assert.Equal(t, time.Unix(1700000000, 5e8), c.Expiry.Time)
	assert.Equal(t, audience{"a"}, c.Audience)
	for _, bad := range []string{`{"exp":"1"}`, `{"exp":-1}`, `{"exp":1e300}`, `{"aud":[1]}`, `{"aud":{}}`} {
		assert.Error(t, json.Unmarshal([]byte(bad), &claims{}), bad)
	}
}

func TestTokenLogValueAndScheme(t *testing.T) {
	t.Parallel()
	p, err := newScopePolicy(nil, nil)
	require.NoError(t, err)
	tok := &Token{Issuer: "https://as", Subject: "alice", ClientID: "app", Scopes: []string{"a", "b"}, JKT: "jkt", policy: p}
	assert.Equal(t, "[iss=https://as sub=alice client_id=app scope=a b jkt=jkt]", tok.LogValue().String())
	bare := &Token{Issuer: "https://as", Subject: "bob", policy: p}
	assert.Equal(t, "[iss=https://as sub=bob scope=]", bare.LogValue().String())
	assert.Equal(t, "Bearer", bare.TokenScheme())
	bare.scheme = "DPoP"
	assert.Equal(t, "DPoP", bare.TokenScheme())
}

func TestNormalAudience(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"HTTPS://Mcp.Example.COM/Path/": "https://mcp.example.com/Path",
		"https://mcp.example.com/":      "https://mcp.example.com",
		"https://mcp.example.com":       "https://mcp.example.com",
		"urn:example:api":               "urn:example:api",
		"https://h/a//":                 "https://h/a/",
	} {
		assert.Equal(t, want, normalAudience(in), in)
	}
}
