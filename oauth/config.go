package oauth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcpmw/mcpmw"
)

// Config says which access tokens an Authenticator accepts: whose (Issuer),
// for what (Resource), and how they are checked. Issuer and Resource are
// required; every other field has the default its comment names, so that
// the zero value of each is the safe choice.
type Config struct {
	// Issuer is the authorization server's issuer identifier (RFC 8414
	// §2), e.g. "https://auth.example.com": a JWT's iss, and an
	// introspection answer's when it has one, must equal it exactly. Its
	// metadata is found from it: RFC 8414's
	// /.well-known/oauth-authorization-server (inserted before the
	// issuer's path), then OpenID Connect's /.well-known/openid-configuration
	// (inserted, then appended), and its issuer member must equal Issuer.
	Issuer string
	// Resource is this endpoint's canonical resource identifier (RFC 8707;
	// oauthmeta.Handler.Resource): a token's aud must contain it, or one of
	// Audiences. A trailing slash, and the case of the scheme and host, are
	// not told apart (the MCP authorization specification's SHOULDs).
	Resource string
	// Audiences are other aud values accepted as this endpoint (the URL of
	// a deployment behind a proxy that names it differently, say). Nil
	// accepts Resource alone.
	Audiences []string

	// Algorithms are the JWS algorithms a JWT access token may be signed
	// with. Nil is every asymmetric one: RS256, RS384, RS512, PS256,
	// PS384, PS512, ES256, ES384, ES512 and EdDSA. New refuses "none" and
	// the HMAC ones (HS256...): a token "signed" with the issuer's public
	// key as an HMAC secret is the classic alg-confusion forgery.
	Algorithms []string
	// TokenTypes are the JWT typ header values accepted, compared without
	// case and with an "application/" prefix ignored (RFC 9068 §4). Nil is
	// "at+jwt", which keeps an ID token or another JWT of the same issuer
	// from being accepted as an access token; add "JWT" for an issuer
	// that sends that (many do, including zitadel).
	TokenTypes []string
	// RequiredClaims are claims a JWT must carry beside those always
	// required (iss, sub, aud, exp). RFC 9068 §2.2 requires client_id,
	// iat and jti too; nil does not, because issuers in use leave some
	// out (the MCP conformance suite's DPoP token has no client_id or jti).
	RequiredClaims []string
	// Leeway is the clock skew allowed on exp, nbf and iat: 30 seconds
	// when zero; a negative Leeway allows none.
	Leeway time.Duration

	// JWKSURI is where the issuer's keys are. Empty: the jwks_uri of its
	// metadata.
	JWKSURI string
	// JWKS, when set, is a fixed JSON Web Key Set (RFC 7517): the only
	// keys, never fetched or refreshed (a file a deployment manages).
	JWKS []byte
	// KeyRefresh is how old the keys may grow before a request that uses
	// them starts a refresh in the background (it is not kept waiting): 15
	// minutes when zero.
	KeyRefresh time.Duration
	// MinKeyRefresh is the least time between two fetches of the keys
	// for a token whose kid is unknown: 30 seconds when zero. Tokens with
	// made-up kids cost the issuer one fetch per MinKeyRefresh at most,
	// and are refused in between.
	MinKeyRefresh time.Duration

	// Introspection, when set, makes tokens that are not JWTs (opaque
	// ones) checked by the issuer's introspection endpoint (RFC 7662).
	// Nil refuses them.
	Introspection *Introspection

	// Implies makes a scope grant others: {"write": {"read"}} lets a token
	// with scope write do what read allows, and a scope implied by an
	// implied scope is granted too. Without it a scope grants the
	// permission of its own name and nothing else. (The MCP specification
	// of 2026-07-28 requires a broader scope to satisfy a narrower one.)
	Implies map[string][]string
	// Permissions names the scopes a permission needs when they are not
	// the permission's own name: {"admin": {"notes:read", "notes:write"}}
	// grants admin to a token that has both (or scopes implying them). A
	// 403 for the permission names them all.
	Permissions map[mcpmw.Permission][]string

	// DPoP says whether DPoP-bound tokens (RFC 9449) are taken: DPoPOff
	// (the zero value), DPoPAllowed or DPoPRequired. In every mode a token
	// bound to a key (cnf.jkt) presented as Bearer is refused (RFC 9449
	// §7.2): whoever stole it without the key must not use it.
	DPoP DPoPMode
	// DPoPVerifier checks the proofs of DPoP requests. Nil (with DPoP
	// not off): NewDPoPVerifier(nil), the request's own URL and an
	// in-memory replay cache; behind a proxy, or with several instances,
	// give one with DPoPOptions.BaseURL and a shared Replay.
	DPoPVerifier *DPoPVerifier

	// CacheSize bounds the tokens kept verified (JWT) or introspected, each:
	// 10,000 when zero. A token is kept until its exp at most.
	CacheSize int
	// HTTPClient fetches metadata and keys and calls the introspection
	// endpoint. Nil is a client with a 10-second timeout.
	HTTPClient *http.Client
	// Logger tells of failed key refreshes. Nil is slog.Default().
	Logger *slog.Logger
}

// Introspection is how opaque tokens are introspected (RFC 7662).
type Introspection struct {
	// Endpoint is the introspection endpoint. Empty: the
	// introspection_endpoint of the issuer's metadata.
	Endpoint string
	// ClientID and ClientSecret authenticate this resource server to the
	// endpoint with HTTP Basic (client_secret_basic, RFC 6749 §2.3.1),
	// which RFC 7662 §2.1 requires of every caller.
	ClientID, ClientSecret string
	// CacheTTL is how long an active answer is kept: 1 minute when zero,
	// and never past the token's exp. A token revoked at the issuer is
	// accepted until then.
	CacheTTL time.Duration
}

// A DPoPMode says whether an Authenticator takes DPoP-bound tokens
// (Config.DPoP).
type DPoPMode int

const (
	// DPoPOff takes Bearer tokens only: "Authorization: DPoP" is no
	// credentials to it, and a DPoP-bound token is refused.
	DPoPOff DPoPMode = iota
	// DPoPAllowed takes Bearer tokens, and DPoP-bound tokens with their
	// proofs; a request without credentials is told of both schemes.
	DPoPAllowed
	// DPoPRequired takes DPoP-bound tokens with their proofs only: a
	// Bearer token is refused with a DPoP challenge.
	DPoPRequired
)

// defaultAlgorithms are the asymmetric JWS algorithms.
var defaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// knownClaims are the claims RequiredClaims may name.
var knownClaims = []string{"client_id", "iat", "jti", "nbf", "scope"}

// settings is a Config checked, with its defaults.
type settings struct {
	issuer     string
	audiences  []string // normalised: Resource first
	algs       []jose.SignatureAlgorithm
	typs       []string // lower case, without application/
	required   []string
	leeway     time.Duration
	refresh    time.Duration
	minRefresh time.Duration
	cacheSize  int
	client     *http.Client
	logger     *slog.Logger
	introspect *Introspection
	introTTL   time.Duration
	scopes     *scopePolicy
	jwksURI    string
	fixedJWKS  []byte
	dpop       DPoPMode
	dpopCheck  *DPoPVerifier // nil when dpop is DPoPOff
}

func (c *Config) check() (*settings, error) {
	s := &settings{issuer: c.Issuer, leeway: c.Leeway, refresh: c.KeyRefresh, minRefresh: c.MinKeyRefresh,
		cacheSize: c.CacheSize, client: c.HTTPClient, logger: c.Logger, introspect: c.Introspection,
		jwksURI: c.JWKSURI, fixedJWKS: c.JWKS}
	if err := fetchableURL(c.Issuer); err != nil {
		return nil, fmt.Errorf("oauth: Issuer %q: %w", c.Issuer, err)
	}
	if err := absoluteURL(c.Resource); err != nil {
		return nil, fmt.Errorf("oauth: Resource %q: %w", c.Resource, err)
	}
	for _, aud := range append([]string{c.Resource}, c.Audiences...) {
		if aud == "" {
			return nil, errors.New("oauth: an empty audience")
		}
		s.audiences = append(s.audiences, normalAudience(aud))
	}
	algs := c.Algorithms
	if algs == nil {
		algs = defaultAlgorithms
	}
	for _, a := range algs {
		if !slices.Contains(defaultAlgorithms, a) {
			return nil, fmt.Errorf("oauth: algorithm %q: only asymmetric JWS algorithms (%s) are accepted", a, strings.Join(defaultAlgorithms, " "))
		}
		s.algs = append(s.algs, jose.SignatureAlgorithm(a))
	}
	if len(s.algs) == 0 {
		return nil, errors.New("oauth: Algorithms is empty")
	}
	typs := c.TokenTypes
	if typs == nil {
		typs = []string{"at+jwt"}
	}
	for _, t := range typs {
		s.typs = append(s.typs, mediaType(t))
	}
	for _, claim := range c.RequiredClaims {
		if !slices.Contains(knownClaims, claim) {
			return nil, fmt.Errorf("oauth: RequiredClaims: %q is none of %s", claim, strings.Join(knownClaims, " "))
		}
	}
	s.required = c.RequiredClaims
	if s.leeway == 0 {
		s.leeway = 30 * time.Second
	}
	s.leeway = max(s.leeway, 0)
	if s.refresh <= 0 {
		s.refresh = 15 * time.Minute
	}
	if s.minRefresh <= 0 {
		s.minRefresh = 30 * time.Second
	}
	if s.cacheSize <= 0 {
		s.cacheSize = 10_000
	}
	if s.client == nil {
		s.client = &http.Client{Timeout: 10 * time.Second}
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if in := c.Introspection; in != nil {
		if in.ClientID == "" {
			return nil, errors.New("oauth: Introspection.ClientID is empty: RFC 7662 requires the resource server to authenticate")
		}
		if in.Endpoint != "" {
			if err := fetchableURL(in.Endpoint); err != nil {
				return nil, fmt.Errorf("oauth: Introspection.Endpoint %q: %w", in.Endpoint, err)
			}
		}
		s.introTTL = in.CacheTTL
		if s.introTTL <= 0 {
			s.introTTL = time.Minute
		}
	}
	if c.JWKSURI != "" {
		if err := fetchableURL(c.JWKSURI); err != nil {
			return nil, fmt.Errorf("oauth: JWKSURI %q: %w", c.JWKSURI, err)
		}
	}
	switch s.dpop = c.DPoP; {
	case c.DPoP < DPoPOff || c.DPoP > DPoPRequired:
		return nil, fmt.Errorf("oauth: DPoP %d is none of DPoPOff, DPoPAllowed, DPoPRequired", c.DPoP)
	case c.DPoP != DPoPOff:
		s.dpopCheck = c.DPoPVerifier
		if s.dpopCheck == nil {
			s.dpopCheck = NewDPoPVerifier(nil)
		}
	}
	scopes, err := newScopePolicy(c.Implies, c.Permissions)
	if err != nil {
		return nil, err
	}
	s.scopes = scopes
	return s, nil
}

// absoluteURL checks that s is an absolute http(s) URL with a host and no
// fragment.
func absoluteURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err
	case u.Scheme != "https" && u.Scheme != "http" || u.Host == "":
		return errors.New("not an absolute http or https URL")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return errors.New("has a fragment")
	}
	return nil
}

// fetchableURL checks that s, a URL keys or verdicts are fetched from, is
// absolute and https: over http anyone on the path could hand out keys.
// http is allowed for a loopback host (localhost, 127.0.0.0/8, ::1), for
// tests and local development.
func fetchableURL(s string) error {
	if err := absoluteURL(s); err != nil {
		return err
	}
	u, _ := url.Parse(s)
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); host == "localhost" || err == nil && ip.IsLoopback() {
		return nil
	}
	return errors.New("not https (http is for a loopback host only)")
}

// normalAudience is aud in the form audiences are compared in: the scheme
// and host lower case, no trailing slash (RFC 8707 resource identifiers;
// the MCP specification's canonical URI). A value that is no URL is kept
// as it is.
func normalAudience(aud string) string {
	aud = strings.TrimSuffix(aud, "/")
	scheme, rest, ok := strings.Cut(aud, "://")
	if !ok {
		return aud
	}
	host, path, _ := strings.Cut(rest, "/")
	if path != "" || strings.HasSuffix(rest, "/") {
		path = "/" + path
	}
	return strings.ToLower(scheme) + "://" + strings.ToLower(host) + path
}

// mediaType is a typ value in the form typs are compared in (RFC 7515
// §4.1.9): lower case, without "application/".
func mediaType(t string) string {
	t = strings.ToLower(t)
	return strings.TrimPrefix(t, "application/")
}
