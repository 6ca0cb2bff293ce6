package oauth_test

import (
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/oauth"
)

const algs = "ES256 ES384 ES512 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA"

// dpopRequest is a POST of resource with Authorization and DPoP headers.
func dpopRequest(authorization string, proofs ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, resource, nil)
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	for _, p := range proofs {
		r.Header.Add("DPoP", p)
	}
	return r
}

// How each mode takes each presentation: Bearer, DPoP with its proof, a
// DPoP-bound token as Bearer, none.
func TestDPoPModes(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	alice := newClient(t, "ES256")
	boundClaims := is.claims(resource)
	boundClaims["cnf"] = map[string]string{"jkt": alice.jkt}
	bound := is.sign(t, boundClaims, nil)
	plain := is.sign(t, is.claims(resource), nil)
	proof := func(token string) string {
		return alice.sign(t, alice.header(), claims(resource, token, time.Now()), nil)
	}
	auth := func(mode oauth.DPoPMode) *oauth.Authenticator {
		return newAuth(t, is, func(c *oauth.Config) { c.DPoP = mode })
	}
	type want struct {
		status     int
		challenges []mcpmw.Challenge
		scheme     string // of the caller, when accepted
	}
	dpopAlgs := map[string]string{"algs": algs}
	for _, tt := range []struct {
		name string
		mode oauth.DPoPMode
		r    func() *http.Request
		want want
	}{
		{"off: none", oauth.DPoPOff, func() *http.Request { return dpopRequest("") },
			want{401, []mcpmw.Challenge{{Scheme: "Bearer"}}, ""}},
		{"off: Bearer", oauth.DPoPOff, func() *http.Request { return dpopRequest("Bearer " + plain) }, want{scheme: "Bearer"}},
		{"off: DPoP is no credentials", oauth.DPoPOff, func() *http.Request { return dpopRequest("DPoP "+bound, proof(bound)) },
			want{401, []mcpmw.Challenge{{Scheme: "Bearer"}}, ""}},
		{"off: a bound token as Bearer", oauth.DPoPOff, func() *http.Request { return dpopRequest("Bearer " + bound) },
			want{401, []mcpmw.Challenge{{Scheme: "Bearer", Error: "invalid_token", Description: "The access token is DPoP-bound: present it with a DPoP proof"}}, ""}},

		{"allowed: none", oauth.DPoPAllowed, func() *http.Request { return dpopRequest("") },
			want{401, []mcpmw.Challenge{{Scheme: "Bearer"}, {Scheme: "DPoP", Params: dpopAlgs}}, ""}},
		{"allowed: Bearer", oauth.DPoPAllowed, func() *http.Request { return dpopRequest("Bearer " + plain) }, want{scheme: "Bearer"}},
		{"allowed: DPoP", oauth.DPoPAllowed, func() *http.Request { return dpopRequest("DPoP "+bound, proof(bound)) }, want{scheme: "DPoP"}},
		{"allowed: dpop, in any case", oauth.DPoPAllowed, func() *http.Request { return dpopRequest("dpop "+bound, proof(bound)) }, want{scheme: "DPoP"}},
		{"allowed: a bound token as Bearer", oauth.DPoPAllowed, func() *http.Request { return dpopRequest("Bearer " + bound) },
			want{401, []mcpmw.Challenge{{Scheme: "Bearer", Error: "invalid_token", Description: "The access token is DPoP-bound: present it with a DPoP proof"}}, ""}},
		{"allowed: an unbound token as DPoP", oauth.DPoPAllowed, func() *http.Request { return dpopRequest("DPoP "+plain, proof(plain)) },
			want{401, []mcpmw.Challenge{{Scheme: "DPoP", Error: "invalid_token", Description: "Invalid DPoP key binding", Params: dpopAlgs}}, ""}},
		{"allowed: DPoP without a proof", oauth.DPoPAllowed, func() *http.Request { return dpopRequest("DPoP " + bound) },
			want{401, []mcpmw.Challenge{{Scheme: "DPoP", Error: "invalid_dpop_proof", Description: "no DPoP proof", Params: dpopAlgs}}, ""}},
		{"allowed: DPoP with a malformed token", oauth.DPoPAllowed, func() *http.Request { return dpopRequest("DPoP a b", proof(bound)) },
			want{400, []mcpmw.Challenge{{Scheme: "DPoP", Error: "invalid_request", Description: "The Authorization header is malformed", Params: dpopAlgs}}, ""}},

		{"required: none", oauth.DPoPRequired, func() *http.Request { return dpopRequest("") },
			want{401, []mcpmw.Challenge{{Scheme: "DPoP", Params: dpopAlgs}}, ""}},
		{"required: Bearer", oauth.DPoPRequired, func() *http.Request { return dpopRequest("Bearer " + plain) },
			want{401, []mcpmw.Challenge{{Scheme: "DPoP", Error: "invalid_token", Description: "This resource takes DPoP-bound access tokens only", Params: dpopAlgs}}, ""}},
		{"required: DPoP", oauth.DPoPRequired, func() *http.Request { return dpopRequest("DPoP "+bound, proof(bound)) }, want{scheme: "DPoP"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			caller, err := auth(tt.mode).Authenticate(tt.r())
			if tt.want.scheme != "" {
				require.NoError(t, err)
				tok := caller.(*oauth.Token)
				assert.Equal(t, tt.want.scheme, tok.TokenScheme())
				assert.Equal(t, "alice", tok.Subject)
				assert.True(t, tok.Can("read"))
				return
			}
			require.Error(t, err)
			var ch interface {
				Challenges() []mcpmw.Challenge
				HTTPStatus() int
			}
			require.ErrorAs(t, err, &ch)
			assert.Equal(t, tt.want.status, ch.HTTPStatus())
			assert.Equal(t, tt.want.challenges, ch.Challenges())
		})
	}
}

// A DPoP request's token is verified before its proof; a token refused is
// answered in the DPoP scheme; the cached Token keeps its own scheme.
func TestDPoPTokenFirst(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	alice := newClient(t, "ES256")
	a := newAuth(t, is, func(c *oauth.Config) { c.DPoP = oauth.DPoPAllowed })
	c := is.claims("https://other.example.com/mcp")
	c["cnf"] = map[string]string{"jkt": alice.jkt}
	other := is.sign(t, c, nil)
	_, err := a.Authenticate(dpopRequest("DPoP "+other, alice.sign(t, alice.header(), claims(resource, other, time.Now()), nil)))
	e := oauthError(t, err)
	assert.Equal(t, "DPoP", e.Scheme)
	assert.Equal(t, []mcpmw.Challenge{{Scheme: "DPoP", Error: "invalid_token", Description: "The access token is not for this resource",
		Params: map[string]string{"algs": algs}}}, e.Challenges())

	boundClaims := is.claims(resource)
	boundClaims["cnf"] = map[string]string{"jkt": alice.jkt}
	bound := is.sign(t, boundClaims, nil)
	first, err := a.Authenticate(dpopRequest("DPoP "+bound, alice.sign(t, alice.header(), claims(resource, bound, time.Now()), nil)))
	require.NoError(t, err)
	cached, err := a.Verify(t.Context(), bound)
	require.NoError(t, err)
	assert.Equal(t, "DPoP", first.(*oauth.Token).TokenScheme())
	assert.Equal(t, "Bearer", cached.TokenScheme(), "the cached Token is not the request's")

	p := alice.sign(t, alice.header(), claims(resource, bound, time.Now()), nil)
	_, err = a.Authenticate(dpopRequest("DPoP "+bound, p))
	require.NoError(t, err)
	_, err = a.Authenticate(dpopRequest("DPoP "+bound, p))
	var de *oauth.DPoPError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "proof replayed", de.Description)
}

// With server nonces, the use_dpop_nonce refusal carries the nonce in the
// DPoP-Nonce header, through an mcpmw handler; the proof that carries it
// gets in.
func TestDPoPNonceOnTheWire(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	alice := newClient(t, "ES256")
	key := make([]byte, 32)
	rand.Read(key)
	a := newAuth(t, is, func(c *oauth.Config) {
		c.DPoP = oauth.DPoPRequired
		c.DPoPVerifier = oauth.NewDPoPVerifier(&oauth.DPoPOptions{NonceKey: key})
	})
	var reg mcpmw.Registry
	reg.AddTools(tools()...)
	audit := &records{}
	h := mcpmw.New(&reg, a, audit, &mcpmw.Options{ResourceMetadata: metadataURL})
	c := is.claims(resource)
	c["cnf"] = map[string]string{"jkt": alice.jkt}
	bound := is.sign(t, c, nil)
	call := func(nonce string) *httptest.ResponseRecorder {
		pc := claims(resource, bound, time.Now())
		if nonce != "" {
			pc["nonce"] = nonce
		}
		r := toolCall("whoami", "DPoP "+bound)
		r.Header.Set("DPoP", alice.sign(t, alice.header(), pc, nil))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := call("")
	assert.Equal(t, 401, w.Code)
	assert.Equal(t, `DPoP error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof", algs="`+algs+
		`", resource_metadata="`+metadataURL+`"`, w.Header().Get("WWW-Authenticate"))
	nonce := w.Header().Get("DPoP-Nonce")
	require.NotEmpty(t, nonce)
	var de *oauth.DPoPError
	require.ErrorAs(t, audit.all()[0].AuthError, &de)
	assert.Equal(t, nonce, de.Nonce)

	w = call(nonce)
	assert.Equal(t, 200, w.Code, w.Body.String())

	// A DPoP caller without the permission gets a DPoP insufficient_scope.
	w = httptest.NewRecorder()
	r := toolCall("shout", "DPoP "+bound)
	pc := claims(resource, bound, time.Now())
	pc["nonce"] = nonce
	r.Header.Set("DPoP", alice.sign(t, alice.header(), pc, nil))
	h.ServeHTTP(w, r)
	assert.Equal(t, 403, w.Code)
	assert.Equal(t, `DPoP error="insufficient_scope", scope="write", resource_metadata="`+metadataURL+`"`, w.Header().Get("WWW-Authenticate"))
}

func TestDPoPModeChecked(t *testing.T) {
	t.Parallel()
	for _, mode := range []oauth.DPoPMode{-1, 3} {
		_, err := oauth.New(oauth.Config{Issuer: "https://as.example.com", Resource: resource, DPoP: mode})
		assert.ErrorContains(t, err, "DPoP", "%d", mode)
	}
}
