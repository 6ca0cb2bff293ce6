package oauth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"
)

// testIssuer is an issuer the test controls: its metadata and JWKS served
// on 127.0.0.1, its keys rotated or its endpoints failed on demand, and
// every fetch counted. (The provider tests in internal/astest run a real
// authorization server; these check each rule alone.)
type testIssuer struct {
	srv        *httptest.Server
	mu         sync.Mutex
	keys       []*ecdsa.PrivateKey
	kids       []string
	down       bool
	jwksHits   atomic.Int64
	metaHits   atomic.Int64
	introspect http.HandlerFunc
}

func newTestIssuer(t testing.TB) *testIssuer {
	t.Helper()
	is := &testIssuer{}
	is.rotate(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		is.metaHits.Add(1)
		if is.isDown() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks",
			"introspection_endpoint": is.srv.URL + "/introspect"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		is.jwksHits.Add(1)
		if is.isDown() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Write(is.jwks())
	})
	mux.HandleFunc("POST /introspect", func(w http.ResponseWriter, r *http.Request) {
		is.introspect(w, r)
	})
	is.srv = httptest.NewUnstartedServer(mux) // is.srv is set before any handler reads it
	is.srv.Start()
	t.Cleanup(is.srv.Close)
	return is
}

func (is *testIssuer) isDown() bool {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.down
}

func (is *testIssuer) setDown(down bool) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.down = down
}

// rotate adds a new signing key and drops all but the newest two.
func (is *testIssuer) rotate(t testing.TB) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = append([]*ecdsa.PrivateKey{k}, is.keys...)
	is.kids = append([]string{rand.Text()[:10]}, is.kids...)
	if len(is.keys) > 2 {
		is.keys, is.kids = is.keys[:2], is.kids[:2]
	}
}

// retire drops every key but the newest.
func (is *testIssuer) retire() {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys, is.kids = is.keys[:1], is.kids[:1]
}

func (is *testIssuer) jwks() []byte {
	is.mu.Lock()
	defer is.mu.Unlock()
	var set jose.JSONWebKeySet
	for i, k := range is.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: is.kids[i], Algorithm: "ES256", Use: "sig"})
	}
	b, _ := json.Marshal(set)
	return b
}

// claims are a token's claims, valid for resource unless edited.
func (is *testIssuer) claims(resource string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": is.srv.URL, "sub": "alice", "aud": resource, "client_id": "app",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": rand.Text(), "scope": "read"}
}

// sign signs claims with the newest key (or key i of opts), with typ
// at+jwt unless header says otherwise.
func (is *testIssuer) sign(t testing.TB, claims map[string]any, header map[string]any) string {
	t.Helper()
	is.mu.Lock()
	key, kid := is.keys[0], is.kids[0]
	is.mu.Unlock()
	return signWith(t, jose.ES256, key, kid, claims, header)
}

func signWith(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any, header map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("at+jwt")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	for k, v := range header {
		opts = opts.WithHeader(jose.HeaderKey(k), v)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	require.NoError(t, err)
	payload, err := json.Marshal(claims)
	require.NoError(t, err)
	jws, err := signer.Sign(payload)
	require.NoError(t, err)
	s, err := jws.CompactSerialize()
	require.NoError(t, err)
	return s
}
