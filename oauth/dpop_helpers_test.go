package oauth_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// A client is a DPoP client's key pair, making proofs by hand so that each
// test can break exactly one thing of one.
type client struct {
	alg  string
	key  crypto.Signer
	jwk  map[string]any // the public key as a JWK
	priv map[string]any // the private key as a JWK, for the private-jwk case
	jkt  string         // the RFC 7638 thumbprint, as the token's cnf.jkt
}

func newClient(t testing.TB, alg string) *client {
	t.Helper()
	var key crypto.Signer
	var err error
	switch alg {
	case "ES256":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ES384":
		key, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "RS256", "PS256":
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case "EdDSA":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("no key for %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	c := &client{alg: alg, key: key, jwk: jwkMap(t, jose.JSONWebKey{Key: key.Public()}), priv: jwkMap(t, jose.JSONWebKey{Key: key})}
	pub := jose.JSONWebKey{Key: key.Public()}
	thumb, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	c.jkt = base64.RawURLEncoding.EncodeToString(thumb)
	return c
}

func jwkMap(t testing.TB, k jose.JSONWebKey) map[string]any {
	t.Helper()
	b, err := k.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// header is a good proof's JOSE header.
func (c *client) header() map[string]any {
	return map[string]any{"typ": "dpop+jwt", "alg": c.alg, "jwk": c.jwk}
}

// claims are a good proof's claims for a POST of url with token at now.
func claims(url, token string, now time.Time) map[string]any {
	sum := sha256.Sum256([]byte(token))
	return map[string]any{
		"jti": base64.RawURLEncoding.EncodeToString(randomBytes(12)),
		"htm": http.MethodPost,
		"htu": url,
		"iat": now.Unix(),
		"ath": base64.RawURLEncoding.EncodeToString(sum[:]),
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// sign makes the compact JWS of header and claims, signed with c's key
// by the header's alg ("none": no signature; "HS256": an HMAC keyed
// with hmacKey).
func (c *client) sign(t testing.TB, header, claims map[string]any, hmacKey []byte) string {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	alg, _ := header["alg"].(string)
	return c.signJSON(t, string(h), claims, alg, hmacKey)
}

// signJSON is sign of a header written out, so that its members may
// come in any order, twice, or in any case.
func (c *client) signJSON(t testing.TB, header string, claims map[string]any, alg string, hmacKey []byte) string {
	t.Helper()
	p, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	input := b64([]byte(header)) + "." + b64(p)
	var sig []byte
	switch alg {
	case "none":
	case "HS256":
		m := hmac.New(sha256.New, hmacKey)
		m.Write([]byte(input))
		sig = m.Sum(nil)
	default:
		sig = c.raw(t, input)
	}
	return input + "." + b64(sig)
}

// raw signs input as c.alg does in a JWS.
func (c *client) raw(t testing.TB, input string) []byte {
	t.Helper()
	switch k := c.key.(type) {
	case ed25519.PrivateKey:
		return ed25519.Sign(k, []byte(input))
	case *rsa.PrivateKey:
		d := sha256.Sum256([]byte(input))
		var sig []byte
		var err error
		if c.alg == "PS256" {
			sig, err = rsa.SignPSS(rand.Reader, k, crypto.SHA256, d[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		} else {
			sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, d[:])
		}
		if err != nil {
			t.Fatal(err)
		}
		return sig
	case *ecdsa.PrivateKey:
		hash := crypto.SHA256
		if k.Curve == elliptic.P384() {
			hash = crypto.SHA384
		}
		h := hash.New()
		h.Write([]byte(input))
		r, s, err := ecdsa.Sign(rand.Reader, k, h.Sum(nil))
		if err != nil {
			t.Fatal(err)
		}
		size := (k.Curve.Params().BitSize + 7) / 8
		sig := make([]byte, 2*size)
		r.FillBytes(sig[:size])
		s.FillBytes(sig[size:])
		return sig
	}
	t.Fatalf("no signer for %T", c.key)
	return nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// request is a POST of url with the given DPoP headers.
func request(url string, proofs ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, url, nil)
	for _, p := range proofs {
		r.Header.Add("DPoP", p)
	}
	return r
}

// thumbprint is the RFC 7638 thumbprint of key's public key.
func thumbprint(key crypto.Signer) string {
	k := jose.JSONWebKey{Key: key.Public()}
	sum, err := k.Thumbprint(crypto.SHA256)
	if err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(sum)
}
