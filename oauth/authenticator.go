package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/echo"
)

// maxTokenBytes bounds an access token: a longer one is refused before
// it is parsed or hashed.
const maxTokenBytes = 16 << 10

// An Authenticator is an mcpmw.Authenticator for OAuth 2.1 access tokens:
// JWTs (RFC 9068) verified against the issuer's keys, and, with
// Config.Introspection, opaque tokens introspected (RFC 7662). Its callers
// are *Token. It is safe for concurrent use; make one per endpoint.
type Authenticator struct {
	s     *settings
	keys  *keySource
	jwts  *tokenCache
	intro *introspector
}

// New checks c and returns its Authenticator. It fetches nothing: the
// issuer's metadata and keys are fetched when the first token needs them
// (call Refresh to fetch them at start-up).
func New(c Config) (*Authenticator, error) {
	s, err := c.check()
	if err != nil {
		return nil, err
	}
	keys, err := newKeySource(s)
	if err != nil {
		return nil, err
	}
	a := &Authenticator{s: s, keys: keys, jwts: newTokenCache(s.cacheSize)}
	if s.introspect != nil {
		a.intro = newIntrospector(s, keys)
	}
	return a, nil
}

// Refresh fetches the issuer's metadata (if it is not known yet) and
// keys now, so that a deployment finds a wrong Issuer at start-up rather
// than at its first request. An Authenticator with fixed keys
// (Config.JWKS) fetches nothing.
func (a *Authenticator) Refresh(ctx context.Context) error {
	if a.s.fixedJWKS != nil {
		return nil
	}
	a.keys.mu.Lock()
	defer a.keys.mu.Unlock()
	a.keys.lastTry = time.Now()
	ks, err := a.keys.load(ctx)
	if err != nil {
		return fmt.Errorf("oauth: %w", err)
	}
	a.keys.cur.Store(ks)
	return nil
}

// Authenticate implements mcpmw.Authenticator. A request without
// credentials gets a 401 with a challenge that carries no error (in the
// schemes the Authenticator takes); a malformed Authorization header, more
// than one, or a token in the query string a 400 invalid_request; a token
// refused a 401 invalid_token that says why in a few words (the whole
// reason goes to the audit record); the issuer out of reach a 503. Every
// refusal is an *Error, or a *DPoPError for a DPoP proof refused.
//
// With Config.DPoP not off, "Authorization: DPoP <token>" is verified
// as a token first, then its proof (the DPoP header) by the DPoPVerifier
// with the token's cnf.jkt; the caller's TokenScheme is then "DPoP".
func (a *Authenticator) Authenticate(r *http.Request) (mcpmw.Caller, error) {
	scheme, token, err := a.credentials(r)
	if err != nil {
		return nil, err
	}
	tok, err := a.Verify(r.Context(), token)
	if err != nil {
		return nil, a.inScheme(err, scheme)
	}
	switch {
	case scheme == "DPoP":
		if err := a.s.dpopCheck.Check(r, token, tok.JKT); err != nil {
			var de *DPoPError
			if errors.As(err, &de) && de.Nonce != "" {
				return nil, &nonceError{de}
			}
			return nil, err
		}
		bound := *tok // the cached Token is shared: this request's copy says DPoP
		bound.scheme = "DPoP"
		return &bound, nil
	case tok.JKT != "":
		return nil, a.inScheme(refused(descBound, "a DPoP-bound token (cnf.jkt) presented as Bearer (RFC 9449 §7.2)"), scheme)
	}
	return tok, nil
}

// credentials are the scheme ("Bearer" or "DPoP") and token of a request's
// one Authorization header, or the refusal of a request without usable
// ones.
func (a *Authenticator) credentials(r *http.Request) (scheme, token string, err error) {
	values := r.Header.Values("Authorization")
	inQuery := strings.Contains(r.URL.RawQuery, "access_token") && r.URL.Query().Has("access_token") // parsed only when it may be there
	switch {
	case len(values) > 1:
		return "", "", malformed("Send one Authorization header", fmt.Sprintf("%d Authorization headers", len(values)))
	case inQuery:
		return "", "", malformed("Send the access token in the Authorization header only", "an access_token query parameter")
	case len(values) == 0:
		return "", "", a.noCredentials("no Authorization header")
	}
	scheme, token, _ = strings.Cut(values[0], " ")
	switch {
	case strings.EqualFold(scheme, "Bearer") && a.s.dpop == DPoPRequired:
		e := refused(descDPoPOnly, "a Bearer token, and DPoP is required")
		return "", "", a.inScheme(e, "DPoP")
	case strings.EqualFold(scheme, "Bearer"):
		scheme = "Bearer"
	case strings.EqualFold(scheme, "DPoP") && a.s.dpop != DPoPOff:
		scheme = "DPoP"
	default:
		return "", "", a.noCredentials(fmt.Sprintf("the Authorization scheme is %q, not one this endpoint takes", echo.Cap(scheme)))
	}
	if !b64token(token) {
		return "", "", a.inScheme(malformed("The Authorization header is malformed", "the credentials are no b64token (RFC 6750 §2.1)"), scheme)
	}
	return scheme, token, nil
}

// noCredentials is the 401 of a request without usable credentials: a
// challenge without error in each scheme the endpoint takes (RFC 6750
// §3.1; RFC 9449 §7.2, DPoP with its algs).
func (a *Authenticator) noCredentials(reason string) *Error {
	e := &Error{Status: http.StatusUnauthorized, Reason: reason, Scheme: "Bearer"}
	switch a.s.dpop {
	case DPoPAllowed:
		e.more = []mcpmw.Challenge{{Scheme: "DPoP", Params: map[string]string{"algs": a.s.dpopCheck.Algs()}}}
	case DPoPRequired:
		e.Scheme, e.params = "DPoP", map[string]string{"algs": a.s.dpopCheck.Algs()}
	}
	return e
}

// inScheme makes a refusal's challenge DPoP, with its algs, when the
// token came with that scheme.
func (a *Authenticator) inScheme(err error, scheme string) error {
	var e *Error
	if scheme == "DPoP" && errors.As(err, &e) && e.Status < 500 {
		e.Scheme, e.params = "DPoP", map[string]string{"algs": a.s.dpopCheck.Algs()}
	}
	return err
}

// Verify checks an access token as Authenticate does, for a caller that
// found it elsewhere than in a request's Authorization header.
func (a *Authenticator) Verify(ctx context.Context, token string) (*Token, error) {
	if len(token) > maxTokenBytes {
		return nil, refused(descMalformed, fmt.Sprintf("a token of %d bytes", len(token)))
	}
	if strings.Count(token, ".") != 2 {
		if a.intro == nil {
			return nil, refused(descOpaque, "an opaque token, and no introspection configured")
		}
		return a.intro.introspect(ctx, token)
	}
	return a.verifyJWT(ctx, token)
}

// b64token reports whether s is RFC 6750 §2.1's b64token: 1*( ALPHA /
// DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func b64token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		if !b64tokenChar[body[i]] {
			return false
		}
	}
	return true
}

// b64tokenChar marks the characters of a b64token but "=": a table, since
// every request's token is scanned.
var b64tokenChar = func() (t [256]bool) {
	for _, c := range []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/") {
		t[c] = true
	}
	return t
}()

// verifyJWT checks a JWT access token (RFC 9068 §4), once: a token
// verified before is taken from the cache while it is unexpired and its key
// is still in the key set.
func (a *Authenticator) verifyJWT(ctx context.Context, token string) (*Token, error) {
	now := time.Now()
	k := keyOf(token)
	if e, ok := a.jwts.get(k, now); ok {
		if ks := a.keys.cur.Load(); ks != nil && ks.has(e.kid, e.thumb) {
			return e.tok, nil
		}
		a.jwts.drop(k)
	}
	jws, err := jose.ParseSignedCompact(token, a.s.algs)
	if err != nil {
		return nil, refused(descAlgorithm, "parsing the JWS: "+err.Error())
	}
	h := jws.Signatures[0].Protected
	typ, _ := h.ExtraHeaders[jose.HeaderType].(string)
	if !a.typeAccepted(typ) {
		return nil, refused(descType, fmt.Sprintf("typ %q, want one of %q", echo.Cap(typ), a.s.typs))
	}
	key, ks, err := a.keys.key(ctx, h.KeyID)
	if err != nil {
		return nil, err
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return nil, refused(descSignature, fmt.Sprintf("signature by key %q: %v", key.KeyID, err))
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, refused(descMalformed, "the claims: "+err.Error())
	}
	if e := c.check(a.s, now, false); e != nil {
		return nil, e
	}
	if m := c.missing(a.s.required); m != "" {
		return nil, refused(descClaims, "no "+m)
	}
	tok := c.token(a.s.scopes, a.s.issuer)
	a.jwts.put(k, cached{tok: tok, until: c.Expiry.Add(a.s.leeway), kid: key.KeyID, thumb: ks.thumbs[key]}, now)
	return tok, nil
}

// typeAccepted reports whether typ is one of Config.TokenTypes.
func (a *Authenticator) typeAccepted(typ string) bool {
	t := mediaType(typ)
	for _, want := range a.s.typs {
		if t == want {
			return true
		}
	}
	return false
}
