package astest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/oauth"
	"github.com/mcpmw/mcpmw/oauth/internal/astest"
)

const resource = "http://127.0.0.1:9/mcp"

func start(t *testing.T) *astest.Provider {
	t.Helper()
	p, err := astest.Start(
		astest.Client{ID: "jwt-client", Secret: "s1", JWT: true, Audience: []string{resource}},
		astest.Client{ID: "opaque-client", Secret: "s2", Audience: []string{resource}},
		astest.Client{ID: "other-jwt", Secret: "s3", JWT: true, Audience: []string{"https://other.example.com/mcp"}},
		astest.Client{ID: "other-opaque", Secret: "s4", Audience: []string{"https://other.example.com/mcp"}},
	)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// token gets an access token from p with the client-credentials grant, at
// the token endpoint its discovery document names.
func token(t *testing.T, p *astest.Provider, id, secret, scope string) string {
	t.Helper()
	resp, err := http.Get(p.Issuer + "/.well-known/openid-configuration")
	require.NoError(t, err)
	defer resp.Body.Close()
	var doc struct {
		TokenEndpoint string `json:"token_endpoint"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
	cc := clientcredentials.Config{ClientID: id, ClientSecret: secret, TokenURL: doc.TokenEndpoint, Scopes: strings.Fields(scope)}
	tok, err := cc.Token(t.Context())
	require.NoError(t, err)
	return tok.AccessToken
}

func authenticator(t *testing.T, p *astest.Provider, edit func(*oauth.Config)) *oauth.Authenticator {
	t.Helper()
	c := oauth.Config{
		Issuer: p.Issuer, Resource: resource,
		TokenTypes:    []string{"at+jwt", "JWT"}, // zitadel/oidc signs access tokens with typ JWT
		Implies:       map[string][]string{"write": {"read"}},
		Introspection: &oauth.Introspection{ClientID: p.IntrospectorID, ClientSecret: p.IntrospectorSecret},
		MinKeyRefresh: time.Nanosecond,
		Logger:        slog.New(slog.DiscardHandler),
	}
	if edit != nil {
		edit(&c)
	}
	a, err := oauth.New(c)
	require.NoError(t, err)
	return a
}

func header(t *testing.T, jwt string) map[string]any {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.Split(jwt, ".")[0])
	require.NoError(t, err)
	var h map[string]any
	require.NoError(t, json.Unmarshal(raw, &h))
	return h
}

// A JWT access token from the provider's client-credentials grant is
// verified with the keys found through its discovery document.
func TestJWTFromTheProvider(t *testing.T) {
	t.Parallel()
	p := start(t)
	a := authenticator(t, p, nil)
	jwt := token(t, p, "jwt-client", "s1", "write")
	assert.Equal(t, "JWT", header(t, jwt)["typ"], "what the provider sends")
	tok, err := a.Verify(t.Context(), jwt)
	require.NoError(t, err)
	assert.Equal(t, p.Issuer, tok.Issuer)
	assert.Equal(t, "jwt-client", tok.Subject)
	assert.True(t, tok.Can("read"), "write implies read")
	assert.True(t, tok.Can("write"))

	strict := authenticator(t, p, func(c *oauth.Config) { c.TokenTypes = nil })
	_, err = strict.Verify(t.Context(), jwt)
	assert.ErrorIs(t, err, mcpmw.ErrInvalidToken, "typ JWT is refused unless allowed")

	_, err = a.Verify(t.Context(), token(t, p, "other-jwt", "s3", "read"))
	var e *oauth.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "The access token is not for this resource", e.Description)
}

// When the provider rotates its keys, a token signed with the new key is
// verified (its kid is unknown: the keys are fetched again), and once the
// old key leaves the JWKS a token it signed is verified no more, even the
// one cached.
func TestTheProviderRotatesItsKeys(t *testing.T) {
	t.Parallel()
	p := start(t)
	a := authenticator(t, p, nil)
	old := token(t, p, "jwt-client", "s1", "read")
	_, err := a.Verify(t.Context(), old)
	require.NoError(t, err)
	oldKid := p.KeyIDs()[0]

	require.NoError(t, p.RotateKeys())
	fresh := token(t, p, "jwt-client", "s1", "read")
	assert.NotEqual(t, oldKid, header(t, fresh)["kid"])
	_, err = a.Verify(t.Context(), fresh)
	require.NoError(t, err)
	_, err = a.Verify(t.Context(), old)
	require.NoError(t, err, "the old key is still published")

	require.NoError(t, p.RotateKeys()) // the old key leaves
	newest := token(t, p, "jwt-client", "s1", "read")
	_, err = a.Verify(t.Context(), newest)
	require.NoError(t, err)
	assert.NotContains(t, p.KeyIDs(), oldKid)
	_, err = a.Verify(t.Context(), old)
	var e *oauth.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "The access token is signed with an unknown key", e.Description)
}

// Opaque tokens are introspected at the provider's introspection endpoint,
// which the resource server authenticates to with HTTP Basic.
func TestOpaqueTokensAreIntrospected(t *testing.T) {
	t.Parallel()
	p := start(t)
	a := authenticator(t, p, nil)
	opaque := token(t, p, "opaque-client", "s2", "read")
	assert.NotEqual(t, 2, strings.Count(opaque, "."), "not a JWT")
	tok, err := a.Verify(t.Context(), opaque)
	require.NoError(t, err)
	assert.Equal(t, "opaque-client", tok.Subject)
	assert.Equal(t, p.Issuer, tok.Issuer)
	assert.True(t, tok.Can("read"))
	assert.False(t, tok.Can("write"))

	_, err = a.Verify(t.Context(), opaque+"x")
	var e *oauth.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "The access token is not active", e.Description)

	_, err = a.Verify(t.Context(), token(t, p, "other-opaque", "s4", "read"))
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "The access token is not for this resource", e.Description)

	wrong := authenticator(t, p, func(c *oauth.Config) { c.Introspection.ClientSecret = "wrong" })
	_, err = wrong.Verify(t.Context(), opaque)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusServiceUnavailable, e.Status, "the provider refused the resource server: no verdict on the token")
}

// The whole way through an mcpmw endpoint: the provider's tokens get in,
// and a token for another resource gets 401 invalid_token.
func TestAnEndpointBehindTheProvider(t *testing.T) {
	t.Parallel()
	p := start(t)
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "whoami", Permission: "read", InputSchema: json.RawMessage(`{"type":"object"}`),
		Call: func(_ context.Context, c mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult(c.(*oauth.Token).Subject), nil
		}})
	h := mcpmw.New(&reg, authenticator(t, p, nil), mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}), nil)
	call := func(tok string) *httptest.ResponseRecorder {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		r := httptest.NewRequest(http.MethodPost, resource, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "tools/call")
		r.Header.Set("Mcp-Name", "whoami")
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for _, id := range []string{"jwt-client", "opaque-client"} {
		w := call(token(t, p, id, map[string]string{"jwt-client": "s1", "opaque-client": "s2"}[id], "read"))
		assert.Equal(t, 200, w.Code, w.Body.String())
		assert.Contains(t, w.Body.String(), id)
	}
	w := call(token(t, p, "other-jwt", "s3", "read"))
	assert.Equal(t, 401, w.Code)
	assert.Equal(t, `Bearer error="invalid_token", error_description="The access token is not for this resource"`, w.Header().Get("WWW-Authenticate"))
}
