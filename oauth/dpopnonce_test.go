package oauth_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/oauth"
)

// TestDPoPNonce is the nonce round trip of AUTH.md §8.3 and the
// conformance scenario's sep-1932-server-nonce check: a proof without a
// nonce gets use_dpop_nonce and a fresh one; a proof with it is accepted,
// by any instance that shares the key; a nonce not the server's, made with
// another key, expired, or from the future is refused the same way.
func TestDPoPNonce(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	one, other := verifier(&oauth.DPoPOptions{NonceKey: key}), verifier(&oauth.DPoPOptions{NonceKey: key})
	alice := newClient(t, "ES256")
	send := func(v *oauth.DPoPVerifier, nonce string) error {
		c := claims(mcpURL, token, clock)
		if nonce != "" {
			c["nonce"] = nonce
		}
		return v.Check(request(mcpURL, alice.sign(t, alice.header(), c, nil)), token, alice.jkt)
	}
	de := refusal(t, send(one, ""), "use_dpop_nonce", "Resource server requires nonce in DPoP proof")
	assert.Equal(t, http.StatusUnauthorized, de.HTTPStatus())
	require.NotEmpty(t, de.Nonce)
	assert.Equal(t, "DPoP", de.Challenges()[0].Scheme)
	assert.Equal(t, "use_dpop_nonce", de.Challenges()[0].Error)
	assert.Regexp(t, `^[A-Za-z0-9_-]{32}$`, de.Nonce, "NQCHAR only")
	require.NoError(t, send(one, de.Nonce))
	require.NoError(t, send(other, de.Nonce), "another instance with the key")
	require.NoError(t, send(one, one.Nonce()))

	stranger := verifier(&oauth.DPoPOptions{NonceKey: []byte("another key of at least 32 bytes.")})
	at := func(d time.Duration) string {
		return oauth.NewDPoPVerifier(&oauth.DPoPOptions{NonceKey: key, Now: func() time.Time { return clock.Add(d) }}).Nonce()
	}
	for name, nonce := range map[string]string{
		"not the server's": "definitely-not-the-server-nonce",
		"not base64url":    "!!!!",
		"another key's":    stranger.Nonce(),
		"truncated":        de.Nonce[:30],
		"good, then junk":  de.Nonce + "!",
		"a line break in":  de.Nonce[:16] + "\r\n" + de.Nonce[16:],
		"expired":          at(-5*time.Minute - time.Second),
		"from the future":  at(5*time.Minute + time.Second),
	} {
		de := refusal(t, send(one, nonce), "use_dpop_nonce", "Resource server requires nonce in DPoP proof")
		assert.NotEmpty(t, de.Nonce, name)
		assert.NotEqual(t, nonce, de.Nonce, name)
	}
	require.NoError(t, send(one, at(-5*time.Minute)), "a nonce at the end of its lifetime")
	require.NoError(t, send(one, at(5*time.Minute)), "a nonce from a clock ahead by the leeway")

	assert.Empty(t, verifier(nil).Nonce(), "no nonces without a key")
}

// TestDPoPNonceAfterTheProof: a defective proof is refused for its defect,
// not asked for a nonce (the conformance scenario cannot attribute a
// use_dpop_nonce answer to a defect probe).
func TestDPoPNonceAfterTheProof(t *testing.T) {
	t.Parallel()
	v := verifier(&oauth.DPoPOptions{NonceKey: []byte("0123456789abcdef0123456789abcdef")})
	alice := newClient(t, "ES256")
	c := claims(mcpURL, token, clock)
	c["htm"] = "GET"
	refusal(t, v.Check(request(mcpURL, alice.sign(t, alice.header(), c, nil)), token, alice.jkt), "invalid_dpop_proof", "htm does not match")
	refusal(t, v.Check(request(mcpURL, alice.sign(t, alice.header(), claims(mcpURL, token, clock), nil)), token, "other"), "invalid_token", "Invalid DPoP key binding")
}
