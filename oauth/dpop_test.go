package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/oauth"
)

const (
	mcpURL = "https://mcp.example.com/mcp"
	token  = "eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9.e30.c2ln" // any string: the verifier hashes it, never reads it
)

// clock is the time every test verifier runs at.
var clock = time.Unix(1_800_000_000, 0)

func verifier(opts *oauth.DPoPOptions) *oauth.DPoPVerifier {
	var o oauth.DPoPOptions
	if opts != nil {
		o = *opts
	}
	o.Now = func() time.Time { return clock }
	return oauth.NewDPoPVerifier(&o)
}

// refusal asserts that err is a *DPoPError of code and description, and
// returns it.
func refusal(t *testing.T, err error, code, description string) *oauth.DPoPError {
	t.Helper()
	var de *oauth.DPoPError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, code, de.Code, "code; reason: %s", de.Reason)
	assert.Equal(t, description, de.Description, "description; reason: %s", de.Reason)
	return de
}

// TestDPoPConformanceCases runs, one by one, the cases of the DPoP
// conformance scenario (AUTH.md §8.4, PR395 auth/dpop-server-validation)
// that are the proof's, and each check of AUTH.md §8.1 besides: the
// baseline is accepted, and each case breaks one thing of it and is
// refused with 401, a DPoP challenge and its own description. (The
// scenario's bearer-scheme and audience cases are the token verifier's.)
func TestDPoPConformanceCases(t *testing.T) {
	t.Parallel()
	alice, mallory := newClient(t, "ES256"), newClient(t, "ES256")
	type proof struct{ header, claims map[string]any }
	for _, tt := range []struct {
		name, code, description string
		edit                    func(p *proof)
		send                    func(t *testing.T, p proof) *http.Request // default: one proof signed by alice, to mcpURL
		jkt                     string                                    // default alice.jkt
	}{
		{name: "baseline"},
		{name: "baseline with a query and a fragment-free htu", send: func(t *testing.T, p proof) *http.Request {
			return request(mcpURL+"?x=1", alice.sign(t, p.header, p.claims, nil))
		}},
		{name: "baseline with an htu spelt otherwise", edit: func(p *proof) { p.claims["htu"] = "HTTPS://MCP.Example.COM:443/%6Dcp" }},
		{name: "tampered-signature", code: "invalid_dpop_proof", description: "bad signature", send: func(t *testing.T, p proof) *http.Request {
			s := alice.sign(t, p.header, p.claims, nil)
			return request(mcpURL, s[:len(s)-4]+flip(s[len(s)-4:]))
		}},
		{name: "signed by another key than its jwk", code: "invalid_dpop_proof", description: "bad signature", send: func(t *testing.T, p proof) *http.Request {
			return request(mcpURL, mallory.sign(t, p.header, p.claims, nil))
		}},
		{name: "missing-jti", code: "invalid_dpop_proof", description: "missing jti", edit: func(p *proof) { delete(p.claims, "jti") }},
		{name: "wrong-typ", code: "invalid_dpop_proof", description: "wrong typ", edit: func(p *proof) { p.header["typ"] = "jwt" }},
		{name: "typ as a full media type", edit: func(p *proof) { p.header["typ"] = "application/dpop+jwt" }},
		{name: "typ in capitals", edit: func(p *proof) { p.header["typ"] = "DPoP+JWT" }},
		{name: "typ of another type", code: "invalid_dpop_proof", description: "wrong typ", edit: func(p *proof) { p.header["typ"] = "application/jwt" }},
		{name: "typ as a suffix", code: "invalid_dpop_proof", description: "wrong typ", edit: func(p *proof) { p.header["typ"] = "x/dpop+jwt" }},
		{name: "no typ", code: "invalid_dpop_proof", description: "wrong typ", edit: func(p *proof) { delete(p.header, "typ") }},
		{name: "htu-mismatch", code: "invalid_dpop_proof", description: "htu does not match", edit: func(p *proof) { p.claims["htu"] = "https://wrong.example.com/mcp" }},
		{name: "htu with a query", code: "invalid_dpop_proof", description: "htu does not match", edit: func(p *proof) { p.claims["htu"] = mcpURL + "?x=1" }},
		{name: "htu with a fragment", code: "invalid_dpop_proof", description: "htu does not match", edit: func(p *proof) { p.claims["htu"] = mcpURL + "#x" }},
		{name: "htu of another scheme", code: "invalid_dpop_proof", description: "htu does not match", edit: func(p *proof) { p.claims["htu"] = "http://mcp.example.com/mcp" }},
		{name: "htu of another path", code: "invalid_dpop_proof", description: "htu does not match", edit: func(p *proof) { p.claims["htu"] = "https://mcp.example.com/mcp/" }},
		{name: "htm-mismatch", code: "invalid_dpop_proof", description: "htm does not match", edit: func(p *proof) { p.claims["htm"] = "GET" }},
		{name: "htm in lower case", code: "invalid_dpop_proof", description: "htm does not match", edit: func(p *proof) { p.claims["htm"] = "post" }},
		{name: "private-key-in-jwk", code: "invalid_dpop_proof", description: "private key in jwk", edit: func(p *proof) { p.header["jwk"] = alice.priv }},
		{name: "symmetric jwk", code: "invalid_dpop_proof", description: "private key in jwk", edit: func(p *proof) {
			p.header["jwk"] = map[string]any{"kty": "oct", "k": "c2VjcmV0"}
		}},
		{name: "wrong-ath", code: "invalid_dpop_proof", description: "ath does not match", edit: func(p *proof) { p.claims["ath"] = "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo" }},
		{name: "ath-absent", code: "invalid_dpop_proof", description: "missing ath", edit: func(p *proof) { delete(p.claims, "ath") }},
		{name: "duplicate-dpop-header", code: "invalid_dpop_proof", description: "more than one DPoP proof", send: func(t *testing.T, p proof) *http.Request {
			return request(mcpURL, alice.sign(t, p.header, p.claims, nil), alice.sign(t, p.header, p.claims, nil))
		}},
		{name: "no dpop header", code: "invalid_dpop_proof", description: "no DPoP proof", send: func(*testing.T, proof) *http.Request { return request(mcpURL) }},
		{name: "two proofs folded into one header", code: "invalid_dpop_proof", description: "malformed DPoP proof", send: func(t *testing.T, p proof) *http.Request {
			return request(mcpURL, alice.sign(t, p.header, p.claims, nil)+", "+alice.sign(t, p.header, p.claims, nil))
		}},
		{name: "missing-htm", code: "invalid_dpop_proof", description: "missing htm", edit: func(p *proof) { delete(p.claims, "htm") }},
		{name: "missing-htu", code: "invalid_dpop_proof", description: "missing htu", edit: func(p *proof) { delete(p.claims, "htu") }},
		{name: "missing-iat", code: "invalid_dpop_proof", description: "missing iat", edit: func(p *proof) { delete(p.claims, "iat") }},
		{name: "missing-jwk", code: "invalid_dpop_proof", description: "no jwk", edit: func(p *proof) { delete(p.header, "jwk") }},
		{name: "a line break in a signed proof", code: "invalid_dpop_proof", description: "malformed DPoP proof", send: func(t *testing.T, p proof) *http.Request {
			s := alice.sign(t, p.header, p.claims, nil)
			return request(mcpURL, s[:8]+"\r\n"+s[8:]) // Go's base64 skips CR and LF
		}},
		{name: "malformed-not-a-jwt", code: "invalid_dpop_proof", description: "malformed DPoP proof", send: func(*testing.T, proof) *http.Request {
			return request(mcpURL, "this-is-not-a-jwt")
		}},
		{name: "JSON serialisation", code: "invalid_dpop_proof", description: "malformed DPoP proof", send: func(*testing.T, proof) *http.Request {
			return request(mcpURL, `{"payload":"e30","protected":"e30","signature":""}`)
		}},
		{name: "cnf-jkt-mismatch", code: "invalid_token", description: "Invalid DPoP key binding", jkt: mallory.jkt},
		{name: "unbound token", code: "invalid_token", description: "Invalid DPoP key binding", jkt: "-"},
		{name: "iat -303 s", code: "invalid_dpop_proof", description: "iat too old", edit: func(p *proof) { p.claims["iat"] = clock.Unix() - 303 }},
		{name: "iat +303 s", code: "invalid_dpop_proof", description: "iat in the future", edit: func(p *proof) { p.claims["iat"] = clock.Unix() + 303 }},
		{name: "iat -300 s", edit: func(p *proof) { p.claims["iat"] = clock.Unix() - 300 }},
		{name: "iat +300 s", edit: func(p *proof) { p.claims["iat"] = clock.Unix() + 300 }},
		{name: "iat a string", code: "invalid_dpop_proof", description: "malformed claims", edit: func(p *proof) { p.claims["iat"] = "now" }},
		{name: "iat past any year", code: "invalid_dpop_proof", description: "bad iat", edit: func(p *proof) { p.claims["iat"] = 1e300 }},
		{name: "alg none", code: "invalid_dpop_proof", description: "unsupported alg", edit: func(p *proof) { p.header["alg"] = "none" }},
		{name: "HS256 keyed with the public key", code: "invalid_dpop_proof", description: "unsupported alg", send: func(t *testing.T, p proof) *http.Request {
			p.header["alg"] = "HS256"
			return request(mcpURL, alice.sign(t, p.header, p.claims, []byte(alice.jkt)))
		}},
		{name: "alg not allowed", code: "invalid_dpop_proof", description: "unsupported alg", edit: func(p *proof) { p.header["alg"] = "ES512" }},
		{name: "alg unlike the key", code: "invalid_dpop_proof", description: "bad signature", edit: func(p *proof) { p.header["alg"] = "RS256" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := verifier(&oauth.DPoPOptions{Algs: []string{"ES256", "RS256", "EdDSA"}})
			p := proof{header: alice.header(), claims: claims(mcpURL, token, clock)}
			if tt.edit != nil {
				tt.edit(&p)
			}
			var r *http.Request
			if tt.send != nil {
				r = tt.send(t, p)
			} else {
				r = request(mcpURL, alice.sign(t, p.header, p.claims, nil))
			}
			jkt := alice.jkt
			switch tt.jkt {
			case "-":
				jkt = ""
			case "":
			default:
				jkt = tt.jkt
			}
			err := v.Check(r, token, jkt)
			if tt.code == "" {
				require.NoError(t, err)
				return
			}
			de := refusal(t, err, tt.code, tt.description)
			assert.Equal(t, http.StatusUnauthorized, de.HTTPStatus())
			assert.Equal(t, []mcpmw.Challenge{{Scheme: "DPoP", Error: tt.code, Description: tt.description, Params: map[string]string{"algs": "ES256 RS256 EdDSA"}}}, de.Challenges())
			assert.Contains(t, de.Error(), de.Reason)
			assert.NotEmpty(t, de.Reason)
		})
	}
}

// flip changes the first character of a base64url string.
func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

// TestDPoPAlgorithms: a proof of each kind of key verifies, by default.
func TestDPoPAlgorithms(t *testing.T) {
	t.Parallel()
	v := verifier(nil)
	assert.Equal(t, strings.Join(oauth.DefaultDPoPAlgs, " "), v.Algs())
	for _, alg := range []string{"ES256", "ES384", "RS256", "PS256", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			t.Parallel()
			c := newClient(t, alg)
			r := request(mcpURL, c.sign(t, c.header(), claims(mcpURL, token, clock), nil))
			require.NoError(t, v.Check(r, token, c.jkt))
		})
	}
}

// TestDPoPReplay: a proof is accepted once; the same jti with another key
// is another proof; a replay is told apart in the description.
func TestDPoPReplay(t *testing.T) {
	t.Parallel()
	v := verifier(nil)
	alice, bob := newClient(t, "ES256"), newClient(t, "ES256")
	c := claims(mcpURL, token, clock)
	proof := alice.sign(t, alice.header(), c, nil)
	require.NoError(t, v.Check(request(mcpURL, proof), token, alice.jkt))
	refusal(t, v.Check(request(mcpURL, proof), token, alice.jkt), "invalid_dpop_proof", "proof replayed")
	again := alice.sign(t, alice.header(), c, nil) // a new signature of the same claims: ECDSA is randomised
	refusal(t, v.Check(request(mcpURL, again), token, alice.jkt), "invalid_dpop_proof", "proof replayed")
	require.NoError(t, v.Check(request(mcpURL, bob.sign(t, bob.header(), c, nil)), token, bob.jkt), "bob's jti is his own")
}

// failing is a ReplayCache that cannot answer, as a shared cache whose
// server is down; it counts its calls.
type failing struct{ calls atomic.Int64 }

var errDown = errors.New("the cache is down")

func (f *failing) Once(context.Context, string, time.Duration) (bool, error) {
	f.calls.Add(1)
	return false, errDown
}

// TestDPoPReplayCacheDown: when the replay cache cannot answer, a good
// proof is refused with 503 and no challenge, the cache's error kept; a
// bad one never reaches the cache.
func TestDPoPReplayCacheDown(t *testing.T) {
	t.Parallel()
	cache := &failing{}
	v := verifier(&oauth.DPoPOptions{Replay: cache})
	alice := newClient(t, "ES256")
	err := v.Check(request(mcpURL, alice.sign(t, alice.header(), claims(mcpURL, token, clock), nil)), token, alice.jkt)
	de := refusal(t, err, "", "replay check unavailable")
	assert.Equal(t, http.StatusServiceUnavailable, de.HTTPStatus())
	assert.Empty(t, de.Challenges())
	assert.ErrorIs(t, err, errDown)
	assert.Contains(t, de.Reason, errDown.Error())

	bad := claims(mcpURL, token, clock)
	bad["htm"] = "GET"
	refusal(t, v.Check(request(mcpURL, alice.sign(t, alice.header(), bad, nil)), token, alice.jkt), "invalid_dpop_proof", "htm does not match")
	assert.Equal(t, int64(1), cache.calls.Load(), "only a proof that passed every other check is looked up")
}

// recording is a ReplayCache that records the ttl it is asked for.
type recording struct{ ttl time.Duration }

func (c *recording) Once(_ context.Context, _ string, ttl time.Duration) (bool, error) {
	c.ttl = ttl
	return true, nil
}

// TestDPoPReplayTTL: a proof is remembered as long as it could be
// accepted, plus a minute for clocks that differ.
func TestDPoPReplayTTL(t *testing.T) {
	t.Parallel()
	alice := newClient(t, "ES256")
	for _, tt := range []struct {
		age  time.Duration
		want time.Duration
	}{
		{0, 6 * time.Minute},
		{2 * time.Minute, 4 * time.Minute},
		{-time.Minute, 7 * time.Minute},
	} {
		cache := &recording{}
		v := verifier(&oauth.DPoPOptions{Replay: cache})
		require.NoError(t, v.Check(request(mcpURL, alice.sign(t, alice.header(), claims(mcpURL, token, clock.Add(-tt.age)), nil)), token, alice.jkt))
		assert.Equal(t, tt.want, cache.ttl, "a proof %v old", tt.age)
	}
}

// TestDPoPWindowOptions: MaxAge and Leeway bound iat.
func TestDPoPWindowOptions(t *testing.T) {
	t.Parallel()
	alice := newClient(t, "ES256")
	v := verifier(&oauth.DPoPOptions{MaxAge: time.Minute, Leeway: 10 * time.Second})
	for _, tt := range []struct {
		iat  time.Time
		want string
	}{
		{clock.Add(-time.Minute), ""},
		{clock.Add(-time.Minute - time.Second), "iat too old"},
		{clock.Add(10 * time.Second), ""},
		{clock.Add(11 * time.Second), "iat in the future"},
	} {
		err := v.Check(request(mcpURL, alice.sign(t, alice.header(), claims(mcpURL, token, tt.iat), nil)), token, alice.jkt)
		if tt.want == "" {
			assert.NoError(t, err, "iat %v", tt.iat.Sub(clock))
			continue
		}
		refusal(t, err, "invalid_dpop_proof", tt.want)
	}
}

// TestDPoPHeaderReadTwoWays: a header that go-jose reads otherwise than
// the checks before it did (encoding/json matches names case-blind, a
// JOSE header does not) is refused, whichever member differs.
func TestDPoPHeaderReadTwoWays(t *testing.T) {
	t.Parallel()
	alice, es384 := newClient(t, "ES256"), newClient(t, "ES384")
	v := verifier(&oauth.DPoPOptions{Algs: []string{"ES256", "ES384"}})
	jwk := func(c *client) string {
		b, err := json.Marshal(c.jwk)
		require.NoError(t, err)
		return string(b)
	}
	for name, tt := range map[string]struct {
		c           *client
		header, alg string
	}{
		"typ": {alice, `{"typ":"jwt","Typ":"dpop+jwt","alg":"ES256","jwk":` + jwk(alice) + `}`, "ES256"},
		"alg": {es384, `{"typ":"dpop+jwt","alg":"ES384","Alg":"ES256","jwk":` + jwk(es384) + `}`, "ES384"},
		"jwk": {alice, `{"typ":"dpop+jwt","alg":"ES256","JWK":` + jwk(alice) + `}`, "ES256"},
	} {
		err := v.Check(request(mcpURL, tt.c.signJSON(t, tt.header, claims(mcpURL, token, clock), tt.alg, nil)), token, tt.c.jkt)
		de := refusal(t, err, "invalid_dpop_proof", "bad signature")
		assert.Contains(t, de.Reason, "reads two ways", name)
	}
}

// TestDPoPEdges: the bounds of each check, where a value is just inside
// or just outside.
func TestDPoPEdges(t *testing.T) {
	t.Parallel()
	alice := newClient(t, "ES256")
	v := verifier(nil)
	check := func(h, c map[string]any) error {
		return v.Check(request(mcpURL, alice.sign(t, h, c, nil)), token, alice.jkt)
	}

	// A proof of exactly 8 KiB is read; one byte more is not.
	for _, size := range []int{8 << 10, 8<<10 + 1} {
		c, proof := sized(t, alice, size)
		require.Len(t, proof, size)
		err := v.Check(request(mcpURL, proof), token, alice.jkt)
		if size == 8<<10 {
			require.NoError(t, err, "jti of %d bytes", len(c["jti"].(string)))
			continue
		}
		de := refusal(t, err, "invalid_dpop_proof", "malformed DPoP proof")
		assert.Contains(t, de.Reason, "more than 8192")
	}

	// A fraction of a second counts.
	c := claims(mcpURL, token, clock)
	c["iat"] = float64(clock.Unix()) - 300.5
	refusal(t, check(alice.header(), c), "invalid_dpop_proof", "iat too old")
	c = claims(mcpURL, token, clock)
	c["iat"] = float64(clock.Unix()) - 299.5
	require.NoError(t, check(alice.header(), c))
	c = claims(mcpURL, token, clock)
	c["iat"] = float64(clock.Unix()) + 300.5
	refusal(t, check(alice.header(), c), "invalid_dpop_proof", "iat in the future")

	// 2^40 s is a time (far in the future); beyond it is none.
	c = claims(mcpURL, token, clock)
	c["iat"] = 1 << 40
	refusal(t, check(alice.header(), c), "invalid_dpop_proof", "iat in the future")

	// A client's value is quoted whole up to 64 bytes, and clipped past.
	h := alice.header()
	h["typ"] = strings.Repeat("t", 64)
	de := refusal(t, check(h, claims(mcpURL, token, clock)), "invalid_dpop_proof", "wrong typ")
	assert.Contains(t, de.Reason, `"`+strings.Repeat("t", 64)+`"`)
	h["typ"] = strings.Repeat("t", 65)
	de = refusal(t, check(h, claims(mcpURL, token, clock)), "invalid_dpop_proof", "wrong typ")
	assert.Contains(t, de.Reason, `"`+strings.Repeat("t", 64)+`…"`)

	// An unbound token's refusal says so.
	de = refusal(t, v.Check(request(mcpURL, alice.sign(t, alice.header(), claims(mcpURL, token, clock), nil)), token, ""), "invalid_token", "Invalid DPoP key binding")
	assert.Contains(t, de.Reason, "bound to no key")
	de = refusal(t, v.Check(request(mcpURL, alice.sign(t, alice.header(), claims(mcpURL, token, clock), nil)), token, "other"), "invalid_token", "Invalid DPoP key binding")
	assert.Contains(t, de.Reason, "bound to key other")

	// A request whose own URL is no URL matches no htu.
	r := request(mcpURL, alice.sign(t, alice.header(), claims(mcpURL, token, clock), nil))
	r.Host = "a b"
	de = refusal(t, v.Check(r, token, alice.jkt), "invalid_dpop_proof", "htu does not match")
	assert.Contains(t, de.Reason, "cannot be compared")
}

// sized returns the claims and the proof, signed by c with ES256, whose
// jti and padding (in the claims and the header) make it exactly size
// bytes long, or as near above as base64 allows.
func sized(t *testing.T, c *client, size int) (map[string]any, string) {
	t.Helper()
	const sig = 86 // an ES256 signature, in base64url
	for jti := 0; jti < size; jti++ {
		for pad := range 4 {
			cl := claims(mcpURL, token, clock)
			cl["jti"] = strings.Repeat("j", jti)
			h := c.header()
			h["pad"] = strings.Repeat("p", pad)
			hj, err := json.Marshal(h)
			require.NoError(t, err)
			pj, err := json.Marshal(cl)
			require.NoError(t, err)
			if n := len(b64(hj)) + 1 + len(b64(pj)) + 1 + sig; n == size {
				return cl, c.sign(t, h, cl, nil)
			}
		}
	}
	t.Fatalf("no proof of %d bytes", size)
	return nil, ""
}
