package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/oauth"
)

// introspectionAS answers introspection for the tokens in answers, after
// checking the resource server's HTTP Basic credentials; every call is
// counted, and each waits for release when it is set.
type introspectionAS struct {
	calls   atomic.Int64
	answers map[string]map[string]any
	release chan struct{}
	status  int
}

func (as *introspectionAS) serve(w http.ResponseWriter, r *http.Request) {
	as.calls.Add(1)
	if as.release != nil {
		<-as.release
	}
	if as.status != 0 {
		http.Error(w, "no", as.status)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok || id != "rs%3A1" || secret != "s%26cret" || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
		return
	}
	if r.PostFormValue("token_type_hint") != "access_token" {
		http.Error(w, "no hint", http.StatusBadRequest)
		return
	}
	answer, ok := as.answers[r.PostFormValue("token")]
	if !ok {
		answer = map[string]any{"active": false}
	}
	json.NewEncoder(w).Encode(answer)
}

func newIntrospecting(t *testing.T, as *introspectionAS, edit func(*oauth.Config)) (*testIssuer, *oauth.Authenticator) {
	t.Helper()
	is := newTestIssuer(t)
	is.introspect = as.serve
	return is, newAuth(t, is, func(c *oauth.Config) {
		c.Introspection = &oauth.Introspection{ClientID: "rs:1", ClientSecret: "s&cret"}
		if edit != nil {
			edit(c)
		}
	})
}

func active(is *testIssuer, edit func(map[string]any)) map[string]any {
	a := map[string]any{"active": true, "iss": is.srv.URL, "sub": "bob", "aud": []string{resource}, "scope": "read",
		"client_id": "app", "exp": time.Now().Add(time.Hour).Unix(), "token_type": "Bearer"}
	if edit != nil {
		edit(a)
	}
	return a
}

func TestIntrospectedTokens(t *testing.T) {
	t.Parallel()
	as := &introspectionAS{answers: map[string]map[string]any{}}
	is, a := newIntrospecting(t, as, nil)
	as.answers["good"] = active(is, nil)
	as.answers["no-iss"] = active(is, func(m map[string]any) { delete(m, "iss") })
	as.answers["client-only"] = active(is, func(m map[string]any) { delete(m, "sub") })
	as.answers["other-aud"] = active(is, func(m map[string]any) { m["aud"] = "https://other.example.com/mcp" })
	as.answers["no-aud"] = active(is, func(m map[string]any) { delete(m, "aud") })
	as.answers["other-iss"] = active(is, func(m map[string]any) { m["iss"] = "https://evil.example.com" })
	as.answers["expired"] = active(is, func(m map[string]any) { m["exp"] = time.Now().Add(-time.Hour).Unix() })
	as.answers["nobody"] = active(is, func(m map[string]any) { delete(m, "sub"); delete(m, "client_id") })
	as.answers["active-string"] = map[string]any{"active": "true"}
	as.answers["no-active"] = map[string]any{"sub": "x"}

	tok, err := a.Verify(t.Context(), "good")
	require.NoError(t, err)
	assert.Equal(t, "bob", tok.Subject)
	assert.True(t, tok.Can("read"))
	assert.Equal(t, is.srv.URL+" bob", tok.CallerID())
	again, err := a.Verify(t.Context(), "good")
	require.NoError(t, err)
	assert.Same(t, tok, again)
	assert.Equal(t, int64(1), as.calls.Load(), "cached")

	tok, err = a.Verify(t.Context(), "no-iss")
	require.NoError(t, err)
	assert.Equal(t, is.srv.URL, tok.Issuer, "the endpoint's issuer")
	tok, err = a.Verify(t.Context(), "client-only")
	require.NoError(t, err)
	assert.Equal(t, "app", tok.Subject, "a client-credentials token's subject is its client")

	for token, desc := range map[string]string{
		"unknown":   "The access token is not active",
		"other-aud": "The access token is not for this resource",
		"no-aud":    "The access token is not for this resource",
		"other-iss": "The access token is from another issuer",
		"expired":   "The access token expired",
		"nobody":    "The access token lacks a required claim",
		"no-active": "The access token is not active",
	} {
		_, err := a.Verify(t.Context(), token)
		e := oauthError(t, err)
		assert.Equal(t, desc, e.Description, token)
		assert.Equal(t, 401, e.Status, token)
		assert.ErrorIs(t, err, mcpmw.ErrInvalidToken)
	}
	_, err = a.Verify(t.Context(), "active-string")
	assert.Equal(t, 503, oauthError(t, err).Status, "an answer that is no RFC 7662 answer")
}

// Concurrent introspections of one token make one call.
func TestIntrospectionsOfOneTokenAreCoalesced(t *testing.T) {
	t.Parallel()
	as := &introspectionAS{answers: map[string]map[string]any{}, release: make(chan struct{})}
	is, a := newIntrospecting(t, as, nil)
	as.answers["good"] = active(is, nil)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := a.Verify(t.Context(), "good")
			assert.NoError(t, err)
		}()
	}
	for i := 0; i < 3000 && as.calls.Load() == 0; i++ {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let the others join the flight
	close(as.release)
	wg.Wait()
	assert.Equal(t, int64(1), as.calls.Load())
}

// A cached answer is kept no longer than the token's exp, nor CacheTTL.
func TestIntrospectionCacheNeverOutlivesTheToken(t *testing.T) {
	t.Parallel()
	as := &introspectionAS{answers: map[string]map[string]any{}}
	is, a := newIntrospecting(t, as, func(c *oauth.Config) { c.Leeway = -1 })
	as.answers["short"] = active(is, func(m map[string]any) { m["exp"] = float64(time.Now().Add(1500*time.Millisecond).UnixMilli()) / 1000 })
	_, err := a.Verify(t.Context(), "short")
	require.NoError(t, err)
	time.Sleep(1600 * time.Millisecond)
	_, err = a.Verify(t.Context(), "short")
	assert.Equal(t, "The access token expired", oauthError(t, err).Description, "asked again, and expired")
	assert.Equal(t, int64(2), as.calls.Load())

	as2 := &introspectionAS{answers: map[string]map[string]any{}}
	is2, b := newIntrospecting(t, as2, func(c *oauth.Config) { c.Introspection.CacheTTL = time.Nanosecond })
	as2.answers["good"] = active(is2, nil)
	_, err = b.Verify(t.Context(), "good")
	require.NoError(t, err)
	_, err = b.Verify(t.Context(), "good")
	require.NoError(t, err)
	assert.Equal(t, int64(2), as2.calls.Load(), "CacheTTL")
}

// The endpoint's failures are the server's: 503, never a verdict on the
// token; so is a resource server the endpoint does not know.
func TestIntrospectionEndpointFailures(t *testing.T) {
	t.Parallel()
	as := &introspectionAS{status: http.StatusInternalServerError}
	_, a := newIntrospecting(t, as, nil)
	_, err := a.Verify(t.Context(), "x")
	assert.Equal(t, 503, oauthError(t, err).Status)

	as2 := &introspectionAS{answers: map[string]map[string]any{}}
	_, b := newIntrospecting(t, as2, func(c *oauth.Config) { c.Introspection.ClientSecret = "wrong" })
	_, err = b.Verify(t.Context(), "x")
	assert.Equal(t, 503, oauthError(t, err).Status)

	_, c := newIntrospecting(t, &introspectionAS{}, func(c *oauth.Config) { c.Introspection.Endpoint = "http://127.0.0.1:1/introspect" })
	_, err = c.Verify(t.Context(), "x")
	assert.Equal(t, 503, oauthError(t, err).Status)
}

// A request that gives up waiting is answered at once; the flight goes on
// for the others.
func TestAnIntrospectionOutlivesTheRequestThatBeganIt(t *testing.T) {
	t.Parallel()
	as := &introspectionAS{answers: map[string]map[string]any{}, release: make(chan struct{})}
	is, a := newIntrospecting(t, as, nil)
	as.answers["good"] = active(is, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { _, err := a.Verify(ctx, "good"); done <- err }()
	for i := 0; i < 3000 && as.calls.Load() == 0; i++ {
		time.Sleep(time.Millisecond)
	}
	cancel()
	assert.Equal(t, 503, oauthError(t, <-done).Status)
	close(as.release)
	_, err := a.Verify(t.Context(), "good")
	assert.NoError(t, err)
}
