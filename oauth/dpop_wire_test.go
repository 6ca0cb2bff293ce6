package oauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/oauth"
)

// audits keeps an endpoint's audit records.
type audits struct {
	mu   sync.Mutex
	recs []mcpmw.CallRecord
}

func (a *audits) Audit(_ context.Context, rec mcpmw.CallRecord) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, rec)
}

type bound struct{}

func (bound) Can(mcpmw.Permission) bool { return true }

// dpopEndpoint is an mcpmw endpoint whose Authenticator takes the token
// of "Authorization: DPoP <token>" as valid and bound to jkt (the token
// verifier's part, played here), and returns the DPoPVerifier's refusal as
// it is.
func dpopEndpoint(v *oauth.DPoPVerifier, jkt string, a *audits) http.Handler {
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "DPoP ")
		if !ok {
			return nil, mcpmw.ErrUnauthorized
		}
		if err := v.Check(r, tok, jkt); err != nil {
			return nil, err
		}
		return bound{}, nil
	})
	return mcpmw.New(&mcpmw.Registry{}, authn, a, &mcpmw.Options{ResourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"})
}

// discover is a server/discover POST to mcpURL with token and proof.
func discover(proof string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "server/discover")
	r.Header.Set("Authorization", "DPoP "+token)
	if proof != "" {
		r.Header.Set("DPoP", proof)
	}
	return r
}

// TestDPoPRefusalsOnTheWire: an Authenticator that returns the
// verifier's refusal as it is gets, from mcpmw, the answer the
// conformance scenario expects (sep-1932-server-reject-401): 401 with a
// DPoP challenge naming the error, the description, algs and the
// resource metadata; the Reason in the audit record only. A replay cache
// that cannot answer gives 503 and no challenge.
func TestDPoPRefusalsOnTheWire(t *testing.T) {
	t.Parallel()
	alice := newClient(t, "ES256")
	a := &audits{}
	h := dpopEndpoint(verifier(&oauth.DPoPOptions{Algs: []string{"ES256", "EdDSA"}}), alice.jkt, a)

	proof := alice.sign(t, alice.header(), claims(mcpURL, token, clock), nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, discover(proof))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())

	w = httptest.NewRecorder()
	h.ServeHTTP(w, discover(proof))
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Equal(t, `DPoP error="invalid_dpop_proof", error_description="proof replayed", algs="ES256 EdDSA", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`,
		w.Header().Get("WWW-Authenticate"))
	assert.NotContains(t, w.Body.String(), "accepted before", "the reason is not sent")

	c := claims(mcpURL, token, clock)
	c["htu"] = "https://wrong.example.com/mcp"
	w = httptest.NewRecorder()
	h.ServeHTTP(w, discover(alice.sign(t, alice.header(), c, nil)))
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Equal(t, `DPoP error="invalid_dpop_proof", error_description="htu does not match", algs="ES256 EdDSA", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`,
		w.Header().Get("WWW-Authenticate"))
	assert.NotContains(t, w.Body.String(), "wrong.example.com")

	a.mu.Lock()
	require.Len(t, a.recs, 3, "one record per request")
	for i, want := range []string{"was accepted before", `the proof's htu "https://wrong.example.com/mcp" is not the request's URL https://mcp.example.com/mcp`} {
		rec := a.recs[i+1]
		assert.Equal(t, mcpmw.OutcomeDenied, rec.Outcome)
		require.Error(t, rec.AuthError)
		assert.Contains(t, rec.AuthError.Error(), want, "the full reason, in the audit record")
	}
	a.mu.Unlock()

	down := dpopEndpoint(verifier(&oauth.DPoPOptions{Replay: &failing{}}), alice.jkt, &audits{})
	w = httptest.NewRecorder()
	down.ServeHTTP(w, discover(alice.sign(t, alice.header(), claims(mcpURL, token, clock), nil)))
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Empty(t, w.Header().Get("WWW-Authenticate"))
}
