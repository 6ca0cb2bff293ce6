package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testIssuer = "https://auth.example.com"

// lockedBuffer is an io.Writer the handler and the test may use at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// records returns the audit records written so far.
func (l *lockedBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(l.b.Bytes()))
	for sc.Scan() {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
		out = append(out, rec)
	}
	return out
}

// app is the example running on a real listener, with the issuer's key.
type app struct {
	endpoint string // the MCP endpoint's URL, which is the resource identifier
	metadata string // the metadata document's URL
	issuer   *demoIssuer
	audit    *lockedBuffer
}

func startApp(t *testing.T) *app {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	c := config{addr: srv.Listener.Addr().String(), issuer: testIssuer}
	c.resource = "http://" + c.addr + "/mcp"
	demo, err := newDemoIssuer()
	require.NoError(t, err)
	a := &app{endpoint: c.resource, metadata: "http://" + c.addr + "/.well-known/oauth-protected-resource/mcp",
		issuer: demo, audit: &lockedBuffer{}}
	srv.Config.Handler = newHandler(c, demo.keys(), a.audit)
	srv.Start()
	t.Cleanup(srv.Close)
	return a
}

// claims are an access token's claims for the app, valid unless edited.
func (a *app) claims(sub, scope string) *accessClaims {
	now := time.Now()
	return &accessClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: testIssuer, Subject: sub, Audience: jwt.ClaimStrings{a.endpoint},
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)),
		},
		Scope: scope, ClientID: "test-client",
	}
}

// sign signs claims with method and key, under the app's kid and typ at+jwt
// unless header overrides them (a nil value deletes).
func sign(t *testing.T, method jwt.SigningMethod, key any, claims jwt.Claims, header map[string]any) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["typ"] = "at+jwt"
	for k, v := range header {
		if v == nil {
			delete(tok.Header, k)
		} else {
			tok.Header[k] = v
		}
	}
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// good is a valid token for sub with scope.
func (a *app) good(t *testing.T, sub, scope string) string {
	return sign(t, jwt.SigningMethodES256, a.issuer.priv, a.claims(sub, scope), map[string]any{"kid": a.issuer.kid})
}

// call sends a 2026-07-28 tools/call with the given Authorization values.
func (a *app) call(t *testing.T, tool, args string, authorization ...string) (*http.Response, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, a.endpoint, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	for _, v := range authorization {
		req.Header.Add("Authorization", v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// The flow a client follows: a 401 names the metadata, the metadata names
// the issuer and scopes, a token from it gets in, and a token without the
// scope a tool needs gets a 403 naming that scope.
func TestClientFlow(t *testing.T) {
	t.Parallel()
	a := startApp(t)

	resp, _ := a.call(t, "whoami", `{}`)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	challenge := resp.Header.Get("WWW-Authenticate")
	assert.Equal(t, `Bearer resource_metadata="`+a.metadata+`"`, challenge)

	metaURL := strings.TrimSuffix(strings.TrimPrefix(challenge, `Bearer resource_metadata="`), `"`)
	mresp, err := http.Get(metaURL)
	require.NoError(t, err)
	defer mresp.Body.Close()
	require.Equal(t, http.StatusOK, mresp.StatusCode)
	assert.Equal(t, "application/json", mresp.Header.Get("Content-Type"))
	assert.Equal(t, "*", mresp.Header.Get("Access-Control-Allow-Origin"))
	var doc map[string]any
	require.NoError(t, json.NewDecoder(mresp.Body).Decode(&doc))
	assert.Equal(t, map[string]any{
		"resource":                 a.endpoint, // RFC 9728 §3.3: the URL the client called
		"authorization_servers":    []any{testIssuer},
		"scopes_supported":         []any{"read", "write"},
		"bearer_methods_supported": []any{"header"},
		"resource_name":            "mcpmw OAuth example",
	}, doc)

	reader := a.good(t, "reader", "read")
	resp, body := a.call(t, "whoami", `{}`, "Bearer "+reader)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `sub=\"reader\" client=\"test-client\" scope=\"read\"`)

	resp, body = a.call(t, "shout", `{"message":"hi"}`, "Bearer "+reader)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, body)
	assert.Equal(t, `Bearer error="insufficient_scope", scope="write", resource_metadata="`+a.metadata+`"`,
		resp.Header.Get("WWW-Authenticate"))

	resp, body = a.call(t, "shout", `{"message":"hi"}`, "bearer "+a.good(t, "writer", "read write"))
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"HI"`)

	recs := a.audit.records(t)
	require.Len(t, recs, 4, "one audit record per MCP request; the metadata GET is not one")
	assert.Equal(t, `sub="writer" client="test-client" scope="read write"`, recs[3]["caller"])
	assert.NotContains(t, fmt.Sprint(recs), reader, "the token never reaches the audit trail")
}

func TestAudienceAmongOthers(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	c := a.claims("svc", "read")
	c.Audience = jwt.ClaimStrings{"https://other.example.com", a.endpoint}
	resp, body := a.call(t, "whoami", `{}`, "Bearer "+sign(t, jwt.SigningMethodES256, a.issuer.priv, c, map[string]any{"kid": a.issuer.kid}))
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
}

// Every token that must not get in gets 401 with the challenge, and the
// reason reaches the audit record only.
func TestRefusedTokens(t *testing.T) {
	t.Parallel()
	otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)

	for _, tt := range []struct {
		name   string
		auth   func(a *app) []string // Authorization values
		reason string                // in the audit record's auth_error
	}{
		{"no Authorization", func(*app) []string { return nil }, "want one Authorization header, got 0"},
		{"two Authorization headers", func(a *app) []string {
			tok := "Bearer " + a.good(t, "u", "read")
			return []string{tok, tok}
		}, "got 2"},
		{"not bearer", func(*app) []string { return []string{"Basic dTpw"} }, "no bearer token"},
		{"empty bearer", func(*app) []string { return []string{"Bearer "} }, "no bearer token"},
		{"not a JWT", func(*app) []string { return []string{"Bearer reader-token"} }, "malformed"},
		{"too long", func(*app) []string { return []string{"Bearer " + strings.Repeat("a", maxTokenBytes+1)} }, "bytes"},
		{"expired", func(a *app) []string {
			c := a.claims("u", "read")
			c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Hour))
			c.IssuedAt = jwt.NewNumericDate(time.Now().Add(-2 * time.Hour))
			return bearer(sign(t, jwt.SigningMethodES256, a.issuer.priv, c, map[string]any{"kid": a.issuer.kid}))
		}, "token is expired"},
		{"no expiry", func(a *app) []string {
			c := a.claims("u", "read")
			c.ExpiresAt = nil
			return bearer(sign(t, jwt.SigningMethodES256, a.issuer.priv, c, map[string]any{"kid": a.issuer.kid}))
		}, "exp claim is required"},
		{"issued in the future", func(a *app) []string {
			c := a.claims("u", "read")
			c.IssuedAt = jwt.NewNumericDate(time.Now().Add(time.Hour))
			return bearer(sign(t, jwt.SigningMethodES256, a.issuer.priv, c, map[string]any{"kid": a.issuer.kid}))
		}, "used before issued"},
		{"another audience", func(a *app) []string {
			c := a.claims("u", "read")
			c.Audience = jwt.ClaimStrings{"https://other.example.com/mcp"}
			return bearer(sign(t, jwt.SigningMethodES256, a.issuer.priv, c, map[string]any{"kid": a.issuer.kid}))
		}, "invalid audience"},
		{"audience a prefix of the resource", func(a *app) []string {
			c := a.claims("u", "read")
			c.Audience = jwt.ClaimStrings{strings.TrimSuffix(a.endpoint, "/mcp")}
			return bearer(sign(t, jwt.SigningMethodES256, a.issuer.priv, c, map[string]any{"kid": a.issuer.kid}))
		}, "invalid audience"},
		{"no audience", func(a *app) []string {
			c := a.claims("u", "read")
			c.Audience = nil
			return bearer(sign(t, jwt.SigningMethodES256, a.issuer.priv, c, map[string]any{"kid": a.issuer.kid}))
		}, "aud claim is required"},
		{"another issuer", func(a *app) []string {
			c := a.claims("u", "read")
			c.Issuer = "https://evil.example.com"
			return bearer(sign(t, jwt.SigningMethodES256, a.issuer.priv, c, map[string]any{"kid": a.issuer.kid}))
		}, "invalid issuer"},
		{"signed by another key under the same kid", func(a *app) []string {
			return bearer(sign(t, jwt.SigningMethodES256, otherKey, a.claims("u", "read"), map[string]any{"kid": a.issuer.kid}))
		}, "signature is invalid"},
		{"unknown kid", func(a *app) []string {
			return bearer(sign(t, jwt.SigningMethodES256, a.issuer.priv, a.claims("u", "read"), map[string]any{"kid": "nope"}))
		}, `no key with kid "nope"`},
		{"no kid", func(a *app) []string {
			return bearer(sign(t, jwt.SigningMethodES256, a.issuer.priv, a.claims("u", "read"), nil))
		}, `no key with kid ""`},
		{"alg none", func(a *app) []string {
			return bearer(sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, a.claims("u", "read write"), map[string]any{"kid": a.issuer.kid}))
		}, "signing method none is invalid"},
		{"HS256 keyed with the public key", func(a *app) []string {
			pub, err := x509.MarshalPKIXPublicKey(&a.issuer.priv.PublicKey)
			require.NoError(t, err)
			return bearer(sign(t, jwt.SigningMethodHS256, pub, a.claims("u", "read write"), map[string]any{"kid": a.issuer.kid}))
		}, "signing method HS256 is invalid"},
		{"ES384", func(a *app) []string {
			return bearer(sign(t, jwt.SigningMethodES384, p384, a.claims("u", "read"), map[string]any{"kid": a.issuer.kid}))
		}, "signing method ES384 is invalid"},
		{"typ JWT (an ID token, say)", func(a *app) []string {
			return bearer(sign(t, jwt.SigningMethodES256, a.issuer.priv, a.claims("u", "read"), map[string]any{"kid": a.issuer.kid, "typ": "JWT"}))
		}, `typ "JWT"`},
		{"no sub", func(a *app) []string {
			return bearer(sign(t, jwt.SigningMethodES256, a.issuer.priv, a.claims("", "read"), map[string]any{"kid": a.issuer.kid}))
		}, "no sub"},
		{"payload swapped under a valid signature", func(a *app) []string {
			good := strings.Split(a.good(t, "u", "read"), ".")
			evil := strings.Split(a.good(t, "admin", "read write"), ".")
			return bearer(good[0] + "." + evil[1] + "." + good[2])
		}, "signature is invalid"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := startApp(t)
			resp, body := a.call(t, "whoami", `{}`, tt.auth(a)...)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
			assert.NotContains(t, body, tt.reason, "the reason is not told to the client")
			recs := a.audit.records(t)
			require.Len(t, recs, 1)
			assert.Contains(t, recs[0]["auth_error"], tt.reason)
			want := `Bearer resource_metadata="` + a.metadata + `"`
			if authErr, _ := recs[0]["auth_error"].(string); strings.HasPrefix(authErr, "access token refused") {
				want = `Bearer error="invalid_token", resource_metadata="` + a.metadata + `"` // a token was read and refused: get a new one
			}
			assert.Equal(t, want, resp.Header.Get("WWW-Authenticate"))
			if strings.HasPrefix(recs[0]["auth_error"].(string), "access token refused") {
				assert.Contains(t, recs[0]["auth_error"], "mcpmw: invalid token")
			} else {
				assert.Contains(t, recs[0]["auth_error"], "mcpmw: unauthorized")
			}
		})
	}
}

func bearer(tok string) []string { return []string{"Bearer " + tok} }

// jwks is the JWKS of the public keys given, kid i for keys[i].
func jwks(keys ...*ecdsa.PublicKey) string {
	var set []string
	for i, k := range keys {
		b, _ := k.Bytes() // 0x04 || x || y
		set = append(set, fmt.Sprintf(`{"kty":"EC","crv":"P-256","use":"sig","alg":"ES256","kid":"k%d","x":%q,"y":%q}`, i,
			base64.RawURLEncoding.EncodeToString(b[1:33]), base64.RawURLEncoding.EncodeToString(b[33:])))
	}
	return `{"keys":[` + strings.Join(set, ",") + `]}`
}

func TestParseJWKS(t *testing.T) {
	t.Parallel()
	k0, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	k1, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)

	keys, err := parseJWKS([]byte(jwks(&k0.PublicKey, &k1.PublicKey)))
	require.NoError(t, err)
	require.Len(t, keys, 2)
	assert.True(t, keys["k0"].Equal(&k0.PublicKey))
	assert.True(t, keys["k1"].Equal(&k1.PublicKey))

	mixed := `{"keys":[{"kty":"RSA","kid":"r","n":"AQAB","e":"AQAB"},{"kty":"EC","crv":"P-384","kid":"p384","x":"","y":""},` +
		strings.TrimSuffix(strings.TrimPrefix(jwks(&k0.PublicKey), `{"keys":[`), `]}`) + `]}`
	keys, err = parseJWKS([]byte(mixed))
	require.NoError(t, err)
	assert.Len(t, keys, 1, "keys of other types and curves are skipped")

	for _, tt := range []struct{ name, jwks, want string }{
		{"not JSON", `{`, "JWKS"},
		{"empty", `{"keys":[]}`, "no P-256"},
		{"only RSA", `{"keys":[{"kty":"RSA","kid":"r"}]}`, "no P-256"},
		{"encryption key only", strings.Replace(jwks(&k0.PublicKey), `"use":"sig"`, `"use":"enc"`, 1), "no P-256"},
		{"no kid", strings.Replace(jwks(&k0.PublicKey), `"kid":"k0"`, `"kid":""`, 1), "no kid"},
		{"duplicate kid", strings.Replace(jwks(&k0.PublicKey, &k1.PublicKey), `"kid":"k1"`, `"kid":"k0"`, 1), "twice"},
		{"short x", strings.Replace(jwks(&k0.PublicKey), `"x":"`, `"x":"AA`, 1), "32 bytes"},
		{"point off the curve", `{"keys":[{"kty":"EC","crv":"P-256","kid":"k","x":"` + strings.Repeat("A", 43) + `","y":"` + strings.Repeat("A", 43) + `"}]}`, "k"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseJWKS([]byte(tt.jwks))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// A key set read from a file verifies the tokens its keys sign, by kid.
func TestJWKSFileVerifies(t *testing.T) {
	t.Parallel()
	k0, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	k1, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "jwks.json")
	require.NoError(t, os.WriteFile(path, []byte(jwks(&k0.PublicKey, &k1.PublicKey)), 0o600))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	keys, err := parseJWKS(data)
	require.NoError(t, err)

	c := config{addr: "127.0.0.1:8080", resource: "http://127.0.0.1:8080/mcp", issuer: testIssuer}
	h := newHandler(c, keys, io.Discard)
	a := &app{endpoint: c.resource}
	for _, tt := range []struct {
		key    *ecdsa.PrivateKey
		kid    string
		status int
	}{{k1, "k1", http.StatusOK}, {k0, "k0", http.StatusOK}, {k0, "k1", http.StatusUnauthorized}} {
		tok := sign(t, jwt.SigningMethodES256, tt.key, a.claims("u", "read"), map[string]any{"kid": tt.kid})
		r := httptest.NewRequest(http.MethodPost, c.resource, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("MCP-Protocol-Version", "2025-06-18")
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, tt.status, w.Code, "kid %s: %s", tt.kid, w.Body)
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	assert.Equal(t, config{addr: "127.0.0.1:8080", resource: "http://127.0.0.1:8080/mcp", issuer: "https://auth.example.com"},
		configFromEnv(env(nil)))
	assert.Equal(t, config{addr: ":9000", resource: "https://mcp.example.com/mcp", issuer: "https://login.example.com", jwksFile: "/etc/jwks.json"},
		configFromEnv(env(map[string]string{"ADDR": ":9000", "RESOURCE": "https://mcp.example.com/mcp",
			"ISSUER": "https://login.example.com", "JWKS_FILE": "/etc/jwks.json"})))
}

func TestResourcePath(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "/mcp", resourcePath("https://api.example.com/mcp"))
	assert.Equal(t, "/", resourcePath("https://api.example.com"))
	assert.Equal(t, "/a/mcp/", resourcePath("https://api.example.com:8443/a/mcp/"))
}
