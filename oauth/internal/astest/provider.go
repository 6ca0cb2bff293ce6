// Package astest runs a real OAuth 2.0 / OpenID Connect provider in
// process, zitadel/oidc's op package, for the oauth module's tests: it
// issues access tokens through the client-credentials grant (JWT or
// opaque, per client), serves its discovery document and JWKS, rotates
// its signing keys on demand, and introspects its opaque tokens for a
// resource server that authenticates with HTTP Basic.
//
// It is a module of its own, test-only, so that the provider's
// dependencies (chi, OpenTelemetry, golang.org/x/oauth2...) never enter
// the oauth module's go.mod, and a later provider version that needs a
// newer Go cannot raise the oauth module's go line. zitadel/oidc v3.45.0
// is the newest release on go 1.24.
package astest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// A Client is a client-credentials client of the provider.
type Client struct {
	ID, Secret string
	// JWT makes its access tokens JWTs; otherwise they are opaque.
	JWT bool
	// Audience is the aud of its tokens (the resource they are for).
	Audience []string
}

// Provider is the running provider.
type Provider struct {
	// Issuer is its issuer identifier, the httptest server's URL.
	Issuer string
	// Introspector is the resource server's own client, allowed to
	// introspect, with its secret.
	IntrospectorID, IntrospectorSecret string

	srv     *httptest.Server
	storage *store
}

// Start runs a provider on 127.0.0.1 with the given clients, until Close.
func Start(clients ...Client) (*Provider, error) {
	srv := httptest.NewUnstartedServer(nil)
	issuer := "http://" + srv.Listener.Addr().String()
	st := &store{
		Storage: storage.NewStorage(storage.NewUserStore(issuer)),
		clients: map[string]Client{}, tokens: map[string]issued{},
		introspector: Client{ID: "mcp-resource-server", Secret: rand.Text()},
	}
	for _, c := range clients {
		st.clients[c.ID] = c
	}
	if err := st.Rotate(); err != nil {
		return nil, err
	}
	var key [32]byte
	rand.Read(key[:])
	provider, err := op.NewProvider(&op.Config{CryptoKey: key, SupportedScopes: []string{"read", "write"}},
		st, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		return nil, err
	}
	srv.Config.Handler = provider
	srv.Start()
	return &Provider{Issuer: issuer, IntrospectorID: st.introspector.ID, IntrospectorSecret: st.introspector.Secret,
		srv: srv, storage: st}, nil
}

// Close stops the provider.
func (p *Provider) Close() { p.srv.Close() }

// RotateKeys makes a new signing key current; the previous one stays in
// the JWKS, the one before it leaves.
func (p *Provider) RotateKeys() error { return p.storage.Rotate() }

// KeyIDs are the kids in the JWKS, newest first.
func (p *Provider) KeyIDs() []string { return p.storage.keyIDs() }

// issued is what the provider remembers of an access token it issued, for
// its introspection answer.
type issued struct {
	client string
	aud    []string
	scopes []string
	exp    time.Time
}

// store is the example storage of zitadel/oidc, with the parts this
// provider needs replaced: its clients, the audience of their tokens, its
// rotating ES256 keys, a scope claim in JWTs, and introspection answers
// that carry iss, aud and exp (the example's carry none, and a resource
// server must check them).
type store struct {
	*storage.Storage

	mu           sync.Mutex
	clients      map[string]Client
	introspector Client
	keys         []*signingKey // newest first, at most two
	tokens       map[string]issued
}

type signingKey struct {
	id  string
	key *ecdsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

type publicKey struct{ *signingKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }

// Rotate adds a new current key and keeps the previous one.
func (s *store) Rotate() error {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append([]*signingKey{{id: rand.Text()[:12], key: k}}, s.keys...)
	if len(s.keys) > 2 {
		s.keys = s.keys[:2]
	}
	return nil
}

func (s *store) keyIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for _, k := range s.keys {
		ids = append(ids, k.id)
	}
	return ids
}

func (s *store) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[0], nil
}

func (s *store) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.ES256}, nil
}

func (s *store) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []op.Key
	for _, k := range s.keys {
		out = append(out, publicKey{k})
	}
	return out, nil
}

func (s *store) ClientCredentials(_ context.Context, id, secret string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok || c.Secret != secret {
		return nil, errors.New("wrong client or secret")
	}
	return client{c}, nil
}

func (s *store) ClientCredentialsTokenRequest(_ context.Context, id string, scopes []string) (op.TokenRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return nil, errors.New("no such client")
	}
	return &oidc.JWTTokenRequest{Subject: c.ID, Audience: c.Audience, Scopes: scopes}, nil
}

// CreateAccessToken remembers the token for introspection.
func (s *store) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, exp, err := s.Storage.CreateAccessToken(ctx, req)
	if err != nil {
		return "", time.Time{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[id] = issued{client: req.GetSubject(), aud: req.GetAudience(), scopes: req.GetScopes(), exp: exp}
	return id, exp, nil
}

// GetPrivateClaimsFromScopes adds the scope claim to a JWT access token:
// op's JWTs carry none, and RFC 9068 §2.2.3 says they should.
func (s *store) GetPrivateClaimsFromScopes(_ context.Context, _, _ string, scopes []string) (map[string]any, error) {
	return map[string]any{"scope": strings.Join(scopes, " ")}, nil
}

// AuthorizeClientIDSecret authenticates the resource server at the
// introspection endpoint.
func (s *store) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if id != s.introspector.ID || secret != s.introspector.Secret {
		return errors.New("wrong client or secret")
	}
	return nil
}

// SetIntrospectionFromToken answers for a token this provider issued and
// has not seen expire: what a resource server checks (iss, aud, exp) and
// what it uses (sub, client_id, scope).
func (s *store) SetIntrospectionFromToken(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[tokenID]
	if !ok || time.Now().After(t.exp) {
		return errors.New("no such token")
	}
	resp.Issuer = op.IssuerFromContext(ctx)
	resp.Subject = subject
	resp.ClientID = t.client
	resp.Audience = slices.Clone(t.aud)
	resp.Scope = slices.Clone(t.scopes)
	resp.Expiration = oidc.FromTime(t.exp)
	resp.TokenType = oidc.BearerToken
	return nil
}

// client is a Client as op sees it: client credentials only.
type client struct{ c Client }

func (c client) GetID() string                      { return c.c.ID }
func (client) RedirectURIs() []string               { return nil }
func (client) PostLogoutRedirectURIs() []string     { return nil }
func (client) ApplicationType() op.ApplicationType  { return op.ApplicationTypeWeb }
func (client) AuthMethod() oidc.AuthMethod          { return oidc.AuthMethodBasic }
func (client) ResponseTypes() []oidc.ResponseType   { return nil }
func (client) GrantTypes() []oidc.GrantType         { return []oidc.GrantType{oidc.GrantTypeClientCredentials} }
func (client) LoginURL(string) string               { return "" }
func (client) IDTokenLifetime() time.Duration       { return time.Hour }
func (client) DevMode() bool                        { return false }
func (client) IsScopeAllowed(string) bool           { return true }
func (client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (client) ClockSkew() time.Duration             { return 0 }
func (client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c client) AccessTokenType() op.AccessTokenType {
	if c.c.JWT {
		return op.AccessTokenTypeJWT
	}
	return op.AccessTokenTypeBearer
}
