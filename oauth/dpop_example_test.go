package oauth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcpmw/mcpmw/oauth"
)

// An Authenticator that takes DPoP-bound tokens verifies the token first
// (its signature, issuer, audience, expiry), reads its cnf.jkt, then
// checks the proof. Here a client makes a proof with go-jose, as any
// DPoP client library does, and sends it twice: the second is a replay.
func ExampleDPoPVerifier_Check() {
	dpop := oauth.NewDPoPVerifier(&oauth.DPoPOptions{BaseURL: "https://mcp.example.com"})

	// The client's key, and the proof it sends with its token.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		&jose.SignerOptions{EmbedJWK: true, ExtraHeaders: map[jose.HeaderKey]any{"typ": "dpop+jwt"}})
	const accessToken = "the-access-token"
	ath := sha256.Sum256([]byte(accessToken))
	claims := fmt.Sprintf(`{"jti":"e1j3V_bKic8-LAEB","htm":"POST","htu":"https://mcp.example.com/mcp","iat":%d,"ath":"%s"}`,
		time.Now().Unix(), base64.RawURLEncoding.EncodeToString(ath[:]))
	jws, _ := signer.Sign([]byte(claims))
	proof, _ := jws.CompactSerialize()

	// The token's cnf.jkt, which the token verifier reads from its claims.
	jkt := thumbprint(key)

	for range 2 {
		r := httptest.NewRequest(http.MethodPost, "http://10.0.0.5:8080/mcp", nil) // as received behind the proxy
		r.Header.Set("Authorization", "DPoP "+accessToken)
		r.Header.Set("DPoP", proof)
		err := dpop.Check(r, accessToken, jkt)
		var de *oauth.DPoPError
		if errors.As(err, &de) {
			fmt.Printf("%d %s: %s\n", de.HTTPStatus(), de.Code, de.Description)
			continue
		}
		fmt.Println("accepted")
	}
	// Output:
	// accepted
	// 401 invalid_dpop_proof: proof replayed
}
