package oauth_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/mcpmw/mcpmw/oauth"
)

// descriptions are every error_description a DPoPVerifier sends: fixed
// words, so that no client's value is ever repeated to it.
var descriptions = map[string]bool{
	"no DPoP proof": true, "more than one DPoP proof": true, "malformed DPoP proof": true,
	"wrong typ": true, "unsupported alg": true, "no jwk": true, "private key in jwk": true,
	"bad signature": true, "malformed claims": true, "missing jti": true, "missing htm": true,
	"missing htu": true, "missing iat": true, "missing ath": true, "htm does not match": true,
	"htu does not match": true, "bad iat": true, "iat too old": true, "iat in the future": true,
	"ath does not match": true, "bad jwk": true, "Invalid DPoP key binding": true, "proof replayed": true,
	"Resource server requires nonce in DPoP proof": true,
}

// FuzzDPoPProof: whatever a client sends as its DPoP header, Check
// neither panics nor accepts it unless it is a good proof, and refuses
// with 401, a known code and a fixed description.
func FuzzDPoPProof(f *testing.F) {
	alice := newClient(f, "ES256")
	good := alice.sign(f, alice.header(), claims(mcpURL, token, clock), nil)
	f.Add(good)
	h := alice.header()
	h["jwk"] = alice.priv
	f.Add(alice.sign(f, h, claims(mcpURL, token, clock), nil))
	h = alice.header()
	h["alg"] = "none"
	f.Add(alice.sign(f, h, claims(mcpURL, token, clock), nil))
	f.Add("this-is-not-a-jwt")
	f.Add("e30.e30.")
	f.Add("eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjpudWxsfQ.e30.AA")
	f.Fuzz(func(t *testing.T, proof string) {
		v := verifier(&oauth.DPoPOptions{NonceKey: []byte("0123456789abcdef0123456789abcdef")})
		r := request(mcpURL)
		r.Header["Dpop"] = []string{proof}
		err := v.Check(r, token, alice.jkt)
		var de *oauth.DPoPError
		if !errors.As(err, &de) {
			t.Fatalf("Check(%q) = %v, want a *DPoPError", proof, err)
		}
		if de.HTTPStatus() != http.StatusUnauthorized || !descriptions[de.Description] {
			t.Fatalf("Check(%q): %d %q %q", proof, de.HTTPStatus(), de.Code, de.Description)
		}
		switch de.Code {
		case "invalid_dpop_proof", "invalid_token":
		case "use_dpop_nonce": // only a good proof of alice's gets this far
			if de.Nonce == "" {
				t.Fatalf("Check(%q): use_dpop_nonce without a nonce", proof)
			}
		default:
			t.Fatalf("Check(%q): code %q", proof, de.Code)
		}
	})
}
