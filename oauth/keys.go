package oauth

import (
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// maxDocumentBytes bounds a metadata document, key set or introspection
// answer read from the issuer.
const maxDocumentBytes = 1 << 20

// keySet is the issuer's signing keys as one fetch found them. It is never
// changed: a refresh stores a new one.
type keySet struct {
	byKID   map[string]*jose.JSONWebKey
	thumbs  map[*jose.JSONWebKey]string // each key's RFC 7638 thumbprint
	all     []*jose.JSONWebKey
	fetched time.Time
}

// has reports whether the key with this kid and thumbprint is still in
// the set: a verified token signed with a key that left it is verified
// no more.
func (ks *keySet) has(kid, thumb string) bool {
	k, ok := ks.byKID[kid]
	return ok && ks.thumbs[k] == thumb
}

// parseKeySet reads the public signing keys of a JWKS document: a key
// that is private, symmetric, meant for encryption or unreadable is left
// out, so that one odd key does not cost the others.
func parseKeySet(data []byte, now time.Time) (*keySet, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	ks := &keySet{byKID: map[string]*jose.JSONWebKey{}, thumbs: map[*jose.JSONWebKey]string{}, fetched: now}
	for _, raw := range doc.Keys {
		k := new(jose.JSONWebKey)
		if err := k.UnmarshalJSON(raw); err != nil || !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") {
			continue
		}
		if _, dup := ks.byKID[k.KeyID]; dup {
			continue // the first key of a kid wins: a token names one key
		}
		tp, err := k.Thumbprint(crypto.SHA256)
		if err != nil {
			continue
		}
		ks.byKID[k.KeyID] = k
		ks.thumbs[k] = base64.RawURLEncoding.EncodeToString(tp)
		ks.all = append(ks.all, k)
	}
	if len(ks.all) == 0 {
		return nil, errors.New("JWKS: no public signing key")
	}
	return ks, nil
}

// metadata is what the issuer's metadata document says that this package
// uses (RFC 8414 §2).
type metadata struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// discoveryURLs are where the issuer's metadata may be, in the order they
// are tried: RFC 8414 §3.1's well-known URI (inserted between host and
// path), then OpenID Connect Discovery's, inserted and then appended (the
// MCP specification's order for an issuer with a path; for one without,
// the three are two).
func discoveryURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	path := strings.TrimSuffix(u.Path, "/")
	at := func(p string) string {
		v := *u
		v.Path, v.RawPath = p, ""
		return v.String()
	}
	urls := []string{at("/.well-known/oauth-authorization-server" + path)}
	if path != "" {
		urls = append(urls, at("/.well-known/openid-configuration"+path))
	}
	return append(urls, at(path+"/.well-known/openid-configuration"))
}

// keySource holds the issuer's keys: fetched when first needed, refreshed
// in the background once they are KeyRefresh old (a request never waits
// for that), and fetched again at once for a kid it does not know, at most
// once per MinKeyRefresh. The last good keys serve while a refresh fails.
type keySource struct {
	s   *settings
	cur atomic.Pointer[keySet]

	mu       sync.Mutex // one fetch at a time; held while fetching, so that a burst waits for one fetch
	lastTry  time.Time  // when a fetch last started, under mu
	meta     *metadata  // the issuer's metadata once read, under mu
	fetching atomic.Bool
}

func newKeySource(s *settings) (*keySource, error) {
	k := &keySource{s: s}
	if s.fixedJWKS != nil {
		ks, err := parseKeySet(s.fixedJWKS, time.Now())
		if err != nil {
			return nil, fmt.Errorf("oauth: JWKS: %w", err)
		}
		k.cur.Store(ks)
	}
	return k, nil
}

// key returns the key of kid ("" for a token without one: when the set
// has a single key, that key), and the set it is in.
func (k *keySource) key(ctx context.Context, kid string) (*jose.JSONWebKey, *keySet, error) {
	ks := k.cur.Load()
	if ks != nil {
		if key := ks.lookup(kid); key != nil {
			if k.s.fixedJWKS == nil && time.Since(ks.fetched) >= k.s.refresh && k.fetching.CompareAndSwap(false, true) {
				go k.refreshInBackground()
			}
			return key, ks, nil
		}
		if k.s.fixedJWKS != nil {
			return nil, nil, refused(descUnknownKey, fmt.Sprintf("no key with kid %q in the fixed JWKS", kid))
		}
	}
	ks, err := k.fetch(ctx, kid)
	if err != nil {
		return nil, nil, err
	}
	if key := ks.lookup(kid); key != nil {
		return key, ks, nil
	}
	return nil, nil, refused(descUnknownKey, fmt.Sprintf("no key with kid %q in the issuer's JWKS", kid))
}

// lookup is the key of kid, or, for "", the one key of a set that has
// one.
func (ks *keySet) lookup(kid string) *jose.JSONWebKey {
	if kid == "" {
		if len(ks.all) == 1 {
			return ks.all[0]
		}
		return nil
	}
	return ks.byKID[kid]
}

// fetch fetches the keys for a kid the current set lacks, unless another
// fetch found it while this one waited, or the last fetch began less than
// MinKeyRefresh ago; it returns the set to look in.
func (k *keySource) fetch(ctx context.Context, kid string) (*keySet, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	cur := k.cur.Load()
	if cur != nil && cur.lookup(kid) != nil {
		return cur, nil
	}
	if !k.lastTry.IsZero() && time.Since(k.lastTry) < k.s.minRefresh {
		if cur == nil {
			return nil, unavailable("the issuer's keys could not be fetched, and the next try is throttled")
		}
		return cur, nil
	}
	k.lastTry = time.Now()
	ks, err := k.load(ctx)
	if err != nil {
		k.s.logger.Warn("oauth: fetching the issuer's keys failed", "issuer", k.s.issuer, "err", err)
		if cur == nil {
			return nil, unavailable("fetching the issuer's keys: " + err.Error())
		}
		return cur, nil
	}
	k.cur.Store(ks)
	return ks, nil
}

// refreshInBackground fetches the keys because they grew old; a failure
// keeps the old ones, logged.
func (k *keySource) refreshInBackground() {
	defer k.fetching.Store(false)
	k.mu.Lock()
	defer k.mu.Unlock()
	if time.Since(k.cur.Load().fetched) < k.s.refresh { // a fetch for an unknown kid came first
		return
	}
	k.lastTry = time.Now()
	ks, err := k.load(context.Background())
	if err != nil {
		k.s.logger.Warn("oauth: refreshing the issuer's keys failed; the last good ones serve", "issuer", k.s.issuer, "err", err)
		return
	}
	k.cur.Store(ks)
}

// load reads the key set from the jwks_uri, discovering it first if need
// be. It is called under mu.
func (k *keySource) load(ctx context.Context) (*keySet, error) {
	uri := k.s.jwksURI
	if uri == "" {
		m, err := k.metadata(ctx)
		if err != nil {
			return nil, err
		}
		if m.JWKSURI == "" {
			return nil, errors.New("the issuer's metadata has no jwks_uri")
		}
		uri = m.JWKSURI
	}
	data, err := getDocument(ctx, k.s.client, uri)
	if err != nil {
		return nil, err
	}
	return parseKeySet(data, time.Now())
}

// metadata is the issuer's metadata, read once; it is called under mu.
func (k *keySource) metadata(ctx context.Context) (*metadata, error) {
	if k.meta != nil {
		return k.meta, nil
	}
	m, err := discover(ctx, k.s.client, k.s.issuer)
	if err != nil {
		return nil, err
	}
	k.meta = m
	return m, nil
}

// Metadata returns the issuer's metadata under mu, discovering it if need
// be (for the introspection endpoint).
func (k *keySource) Metadata(ctx context.Context) (*metadata, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.metadata(ctx)
}

// discover reads the issuer's metadata from the first of its well-known
// URLs that has it, and checks that it is the issuer's (RFC 8414 §3.3).
func discover(ctx context.Context, client *http.Client, issuer string) (*metadata, error) {
	var errs []error
	for _, u := range discoveryURLs(issuer) {
		data, err := getDocument(ctx, client, u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var m metadata
		if err := json.Unmarshal(data, &m); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", u, err))
			continue
		}
		if m.Issuer != issuer {
			return nil, fmt.Errorf("%s names issuer %q, not %q (RFC 8414 §3.3)", u, m.Issuer, issuer)
		}
		return &m, nil
	}
	return nil, fmt.Errorf("discovering the issuer's metadata: %w", errors.Join(errs...))
}

// getDocument GETs a JSON document of at most maxDocumentBytes.
func getDocument(ctx context.Context, client *http.Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if len(data) > maxDocumentBytes {
		return nil, fmt.Errorf("GET %s: more than %d bytes", u, maxDocumentBytes)
	}
	return data, nil
}
