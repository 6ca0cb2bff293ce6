package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpmw/mcpmw"
)

// alg is the one signature algorithm accepted. Pinning it is what stops
// "alg":"none" and algorithm confusion (an HS256 token "signed" with the
// public key): the header's alg is chosen by whoever made the token.
const alg = "ES256"

// maxTokenBytes bounds the token the parser is asked to decode.
const maxTokenBytes = 8 << 10

// tokenCaller is the Caller for a verified access token: who it was issued
// to, and the scopes it grants.
type tokenCaller struct {
	subject  string
	clientID string
	scopes   []string
}

// Can reports whether the token's scope claim grants permission p.
func (c *tokenCaller) Can(p mcpmw.Permission) bool { return slices.Contains(c.scopes, string(p)) }

// CallerID is the token's subject: the same for every token issued to one
// user, so that a legacy client can cancel its own running calls.
func (c *tokenCaller) CallerID() string { return c.subject }

// String is how the caller appears in audit records: never the token.
func (c *tokenCaller) String() string {
	return fmt.Sprintf("sub=%q client=%q scope=%q", c.subject, c.clientID, strings.Join(c.scopes, " "))
}

// accessClaims are the claims of a JWT access token (RFC 9068 §2.2).
type accessClaims struct {
	jwt.RegisteredClaims
	Scope    string `json:"scope"`
	ClientID string `json:"client_id"`
}

// jwtAuth is an mcpmw.Authenticator for JWT access tokens (RFC 9068) signed
// with ES256 by one issuer for one resource.
type jwtAuth struct {
	parser *jwt.Parser
	keys   map[string]*ecdsa.PublicKey // by kid
}

// newJWTAuth verifies tokens of issuer for resource, signed with one of keys.
func newJWTAuth(issuer, resource string, keys map[string]*ecdsa.PublicKey) *jwtAuth {
	return &jwtAuth{
		keys: keys,
		parser: jwt.NewParser(
			jwt.WithValidMethods([]string{alg}),
			jwt.WithIssuer(issuer),     // iss must be present and equal
			jwt.WithAudience(resource), // aud must be present and contain the resource (RFC 8707)
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(), // an iat in the future is refused
			jwt.WithLeeway(30*time.Second),
		),
	}
}

// Authenticate implements mcpmw.Authenticator. A request without a usable
// bearer token is refused with mcpmw.ErrUnauthorized, one whose token was
// read and refused with mcpmw.ErrInvalidToken (its challenge adds
// error="invalid_token"); both get 401 with the challenge naming the
// resource metadata, and the reason goes to the audit record only.
func (a *jwtAuth) Authenticate(r *http.Request) (mcpmw.Caller, error) {
	values := r.Header.Values("Authorization")
	if len(values) != 1 {
		return nil, fmt.Errorf("want one Authorization header, got %d: %w", len(values), mcpmw.ErrUnauthorized)
	}
	scheme, raw, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || raw == "" {
		return nil, fmt.Errorf("no bearer token: %w", mcpmw.ErrUnauthorized)
	}
	if len(raw) > maxTokenBytes {
		return nil, fmt.Errorf("bearer token of %d bytes: %w", len(raw), mcpmw.ErrUnauthorized)
	}
	var claims accessClaims
	token, err := a.parser.ParseWithClaims(raw, &claims, a.key)
	if err != nil {
		return nil, fmt.Errorf("access token refused: %v: %w", err, mcpmw.ErrInvalidToken)
	}
	// RFC 9068 §4: an access token says so in typ, which keeps an ID token
	// or another JWT of the same issuer from being replayed as one.
	if typ, _ := token.Header["typ"].(string); !strings.EqualFold(typ, "at+jwt") && !strings.EqualFold(typ, "application/at+jwt") {
		return nil, fmt.Errorf("access token refused: typ %q, want at+jwt: %w", typ, mcpmw.ErrInvalidToken)
	}
	if claims.Subject == "" {
		return nil, fmt.Errorf("access token refused: no sub: %w", mcpmw.ErrInvalidToken)
	}
	return &tokenCaller{subject: claims.Subject, clientID: claims.ClientID, scopes: strings.Fields(claims.Scope)}, nil
}

// key is the jwt.Keyfunc: the public key the token's kid names.
func (a *jwtAuth) key(t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	k, ok := a.keys[kid]
	if !ok {
		return nil, fmt.Errorf("no key with kid %q", kid)
	}
	return k, nil
}

// parseJWKS reads the P-256 signing keys of a JSON Web Key Set (RFC 7517),
// by kid. Keys of other types, curves, algorithms or uses are skipped; a set
// with none left is an error.
func parseJWKS(data []byte) (map[string]*ecdsa.PublicKey, error) {
	var set struct {
		Keys []struct {
			Kty, Crv, X, Y, Kid, Alg, Use string
		}
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	keys := map[string]*ecdsa.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "EC" || k.Crv != "P-256" || (k.Alg != "" && k.Alg != alg) || (k.Use != "" && k.Use != "sig") {
			continue
		}
		if k.Kid == "" {
			return nil, errors.New("JWKS: a P-256 key has no kid")
		}
		if _, dup := keys[k.Kid]; dup {
			return nil, fmt.Errorf("JWKS: kid %q appears twice", k.Kid)
		}
		x, errX := base64.RawURLEncoding.DecodeString(k.X)
		y, errY := base64.RawURLEncoding.DecodeString(k.Y)
		if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
			return nil, fmt.Errorf("JWKS: key %q: x and y must be 32 bytes of base64url", k.Kid)
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return nil, fmt.Errorf("JWKS: key %q: %w", k.Kid, err)
		}
		keys[k.Kid] = pub
	}
	if len(keys) == 0 {
		return nil, errors.New("JWKS: no P-256 (ES256) signing key")
	}
	return keys, nil
}
