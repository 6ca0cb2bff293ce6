package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// introspector checks opaque tokens at the issuer's introspection
// endpoint (RFC 7662): each token's answer cached (never past its exp),
// and concurrent introspections of one token made once.
type introspector struct {
	s     *settings
	keys  *keySource // for the discovered endpoint
	cache *tokenCache

	mu      sync.Mutex
	flights map[tokenKey]*flight
}

// flight is one introspection in progress, which later askers of the same
// token wait for.
type flight struct {
	done chan struct{}
	tok  *Token
	err  error
}

func newIntrospector(s *settings, keys *keySource) *introspector {
	return &introspector{s: s, keys: keys, cache: newTokenCache(s.cacheSize), flights: map[tokenKey]*flight{}}
}

// introspect returns the cached answer for token, or asks the endpoint,
// once for every concurrent request with the same token.
func (in *introspector) introspect(ctx context.Context, token string) (*Token, error) {
	k := keyOf(token)
	if e, ok := in.cache.get(k, time.Now()); ok {
		return e.tok, nil
	}
	in.mu.Lock()
	f, ok := in.flights[k]
	if !ok {
		f = &flight{done: make(chan struct{})}
		in.flights[k] = f
		go in.fly(k, f, token)
	}
	in.mu.Unlock()
	select {
	case <-f.done:
		return f.tok, f.err
	case <-ctx.Done():
		return nil, unavailable("the request ended while the token was being introspected: " + ctx.Err().Error())
	}
}

// fly introspects token for every request waiting on f, on its own
// goroutine, so that the request that began it may give up without
// failing the others (the HTTP client's timeout bounds it).
func (in *introspector) fly(k tokenKey, f *flight, token string) {
	defer func() {
		in.mu.Lock()
		delete(in.flights, k)
		in.mu.Unlock()
		close(f.done)
	}()
	now := time.Now()
	c, err := in.ask(context.Background(), token)
	if err != nil {
		f.err = err
		return
	}
	if c.Active == nil || !*c.Active {
		f.err = refused(descInactive, "the introspection endpoint answered active: false")
		return
	}
	if e := c.check(in.s, now, true); e != nil {
		f.err = e
		return
	}
	if c.Subject == "" {
		c.Subject = c.ClientID
	}
	if c.Subject == "" {
		f.err = refused(descClaims, "the introspection answer has neither sub nor client_id")
		return
	}
	f.tok = c.token(in.s.scopes, in.s.issuer)
	until := now.Add(in.s.introTTL)
	if c.Expiry != nil && c.Expiry.Before(until) {
		until = c.Expiry.Time
	}
	in.cache.put(k, cached{tok: f.tok, until: until}, now)
}

// ask POSTs the token to the introspection endpoint, authenticated with
// HTTP Basic (RFC 6749 §2.3.1: each part form-encoded first).
func (in *introspector) ask(ctx context.Context, token string) (*claims, error) {
	endpoint := in.s.introspect.Endpoint
	if endpoint == "" {
		m, err := in.keys.Metadata(ctx)
		if err != nil {
			return nil, unavailable("introspection: " + err.Error())
		}
		if m.IntrospectionEndpoint == "" {
			return nil, unavailable("introspection: the issuer's metadata has no introspection_endpoint")
		}
		endpoint = m.IntrospectionEndpoint
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, unavailable("introspection: " + err.Error())
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.s.introspect.ClientID), url.QueryEscape(in.s.introspect.ClientSecret))
	resp, err := in.s.client.Do(req)
	if err != nil {
		return nil, unavailable("introspection: " + err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, unavailable(fmt.Sprintf("introspection: POST %s: %s", endpoint, resp.Status))
	}
	var c claims
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, maxDocumentBytes)).Decode(&c); err != nil {
		return nil, unavailable(fmt.Sprintf("introspection: POST %s: the answer: %v", endpoint, err))
	}
	return &c, nil
}
