package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/internal/redistest"
)

// publicResource is the resource the DPoP tests' instances serve, as a
// proxy in front of them would publish it: tokens are for it, and proofs
// name it as their htu, whatever address each instance listens on.
const publicResource = "https://mcp.example.com/mcp"

// dpopApp runs the program against as, serving publicResource, with env.
func dpopApp(t *testing.T, as *authServer, env ...string) *app {
	t.Helper()
	addr := freeAddr(t)
	a := launch(t, append([]string{"ADDR=" + addr, "ISSUER=" + as.srv.URL, "RESOURCE=" + publicResource}, env...)...)
	a.endpoint, a.metadata = "http://"+addr+"/mcp", "http://"+addr+"/.well-known/oauth-protected-resource/mcp"
	waitFor(t, a)
	return a
}

// holder is a DPoP client: its key, and a token the issuer bound to it.
type holder struct {
	key   *ecdsa.PrivateKey
	token string
}

func newHolder(t *testing.T, as *authServer, sub string) holder {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	thumb, err := (&jose.JSONWebKey{Key: &key.PublicKey}).Thumbprint(crypto.SHA256)
	require.NoError(t, err)
	claims := as.claims(publicResource, sub, "read")
	claims["cnf"] = map[string]string{"jkt": base64.RawURLEncoding.EncodeToString(thumb)}
	return holder{key: key, token: sign(t, jose.ES256, as.key, as.kid, claims)}
}

// proof is a new DPoP proof (RFC 9449 §4.2) of a POST to htu with the
// holder's token.
func (h holder) proof(t *testing.T, htu string) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: h.key},
		(&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	require.NoError(t, err)
	ath := sha256.Sum256([]byte(h.token))
	payload, err := json.Marshal(map[string]any{"jti": rand.Text(), "htm": "POST", "htu": htu,
		"iat": time.Now().Unix(), "ath": base64.RawURLEncoding.EncodeToString(ath[:])})
	require.NoError(t, err)
	jws, err := signer.Sign(payload)
	require.NoError(t, err)
	s, err := jws.CompactSerialize()
	require.NoError(t, err)
	return s
}

// dpop is the headers of a DPoP request: the token and the proof.
func (h holder) dpop(proof string) http.Header {
	return http.Header{"Authorization": {"DPoP " + h.token}, "Dpop": {proof}}
}

// With DPOP=required, a Bearer token gets a DPoP challenge with the
// accepted algorithms; a DPoP-bound token with a proof naming the URL the
// client used (RESOURCE's, not the listener's) is taken, once: the same
// proof again is a replay, refused by the in-memory cache. Each refusal
// has one audit record that names its reason.
func TestDPoPRequired(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t)
	a := dpopApp(t, as, "DPOP=required")
	h := newHolder(t, as, "dee")

	before := a.sent
	plain := a.call(t, "whoami", `{}`, bearer(sign(t, jose.ES256, as.key, as.kid, as.claims(publicResource, "ann", "read"))))
	assert.Equal(t, 401, plain.status)
	assert.True(t, strings.HasPrefix(plain.challenge, "DPoP "), plain.challenge)
	assert.Contains(t, plain.challenge, `algs="ES256 `)
	a.refusedOnce(t, before, "DPoP is required")

	none := a.call(t, "whoami", `{}`)
	assert.Equal(t, 401, none.status)
	assert.True(t, strings.HasPrefix(none.challenge, "DPoP "), none.challenge)
	assert.NotContains(t, none.challenge, "error=")

	proof := h.proof(t, publicResource)
	assert.Equal(t, map[string]any{"sub": "dee", "scopes": []any{"read"}}, structured(t, a.send(t, "whoami", `{}`, h.dpop(proof))))

	before = a.sent
	replayed := a.send(t, "whoami", `{}`, h.dpop(proof))
	assert.Equal(t, 401, replayed.status)
	assert.True(t, strings.HasPrefix(replayed.challenge, "DPoP "), replayed.challenge)
	assert.Contains(t, replayed.challenge, `error="invalid_dpop_proof", error_description="proof replayed"`)
	a.refusedOnce(t, before, "accepted before")

	before = a.sent
	local := a.send(t, "whoami", `{}`, h.dpop(h.proof(t, a.endpoint))) // the listener's URL, not the client's
	assert.Equal(t, 401, local.status)
	assert.Contains(t, local.challenge, `error="invalid_dpop_proof", error_description="htu does not match"`)
	a.refusedOnce(t, before, "htu")

	assert.Equal(t, 200, a.send(t, "whoami", `{}`, h.dpop(h.proof(t, publicResource))).status, "a new proof is taken")

	meta := a.resourceMetadata(t)
	assert.Equal(t, []any{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"},
		meta["dpop_signing_alg_values_supported"])
	assert.Equal(t, true, meta["dpop_bound_access_tokens_required"])
}

// resourceMetadata is the program's protected resource metadata document.
func (a *app) resourceMetadata(t *testing.T) map[string]any {
	t.Helper()
	resp, err := (&http.Client{Timeout: patience}).Get(a.metadata)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	var meta map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&meta))
	return meta
}

// With DPOP=off, Authorization: DPoP is no credentials (a Bearer challenge
// without error), and a DPoP-bound token presented as Bearer is refused:
// whoever holds it without its key must not use it (RFC 9449 §7.2).
func TestDPoPOff(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t)
	a := dpopApp(t, as, "DPOP=off")
	h := newHolder(t, as, "dee")
	challenge := `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`

	before := a.sent
	ans := a.send(t, "whoami", `{}`, h.dpop(h.proof(t, publicResource)))
	assert.Equal(t, 401, ans.status)
	assert.Equal(t, challenge, ans.challenge)
	a.refusedOnce(t, before, `the Authorization scheme is "DPoP", not one this endpoint takes`)

	before = a.sent
	ans = a.call(t, "whoami", `{}`, bearer(h.token))
	assert.Equal(t, 401, ans.status)
	assert.True(t, strings.HasPrefix(ans.challenge, `Bearer error="invalid_token"`), ans.challenge)
	a.refusedOnce(t, before, "cnf.jkt")

	meta := a.resourceMetadata(t)
	assert.NotContains(t, meta, "dpop_signing_alg_values_supported")
	assert.NotContains(t, meta, "dpop_bound_access_tokens_required")
}

// With REDIS_URL, the instances share the replay cache: a proof one took
// is refused as a replay by another, and each instance still takes new
// proofs. Redis is a real redis-server.
func TestDPoPReplayAcrossInstances(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t) // skips without redis-server
	as := newAuthServer(t)
	env := []string{"REDIS_URL=redis://" + srv.Addr + "/0", "REDIS_TIMEOUT=5s"} // generous: the machine may be busy
	one, two := dpopApp(t, as, env...), dpopApp(t, as, env...)
	h := newHolder(t, as, "dee")

	proof := h.proof(t, publicResource)
	assert.Equal(t, 200, one.send(t, "whoami", `{}`, h.dpop(proof)).status)

	before := two.sent
	replayed := two.send(t, "whoami", `{}`, h.dpop(proof))
	assert.Equal(t, 401, replayed.status)
	assert.Contains(t, replayed.challenge, `error="invalid_dpop_proof", error_description="proof replayed"`)
	two.refusedOnce(t, before, "accepted before")

	assert.Equal(t, 200, two.send(t, "whoami", `{}`, h.dpop(h.proof(t, publicResource))).status)
}
