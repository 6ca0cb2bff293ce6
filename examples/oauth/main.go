// Command oauth is an MCP endpoint protected by OAuth 2.1: it verifies the
// access tokens its clients present with the oauth module (JWT access
// tokens per RFC 9068 against the issuer's keys, opaque tokens by
// introspection, RFC 7662) and publishes its protected resource metadata
// (RFC 9728), so that a client that gets a 401 learns where to get a token.
//
//	go run .    # in examples/oauth
//
// Environment (anything invalid stops the program with a message naming
// the variable):
//
//	ADDR       listen address (default 127.0.0.1:8080)
//	RESOURCE   the endpoint's canonical resource identifier, the audience
//	           tokens must carry (default http://ADDR/mcp)
//	ISSUER     the authorization server's issuer URL; its metadata is read
//	           from ISSUER/.well-known/oauth-authorization-server, then
//	           ISSUER/.well-known/openid-configuration, at start-up, and its
//	           keys from the jwks_uri there (refreshed as it rotates them)
//	INTROSPECTION_CLIENT_ID, INTROSPECTION_CLIENT_SECRET
//	           when set (both, with ISSUER), opaque tokens are introspected
//	           at the issuer's introspection_endpoint, authenticated with
//	           HTTP Basic
//	DPOP       off | allowed | required (default allowed): DPoP-bound tokens
//	           (RFC 9449)
//	REDIS_URL  the DPoP replay cache shared by every instance
//	           (redis://host:port/db); unset, each instance keeps its own
//	JWKS_FILE  a JSON Web Key Set file: the issuer's keys, fixed (no fetch)
//
// Without ISSUER the program is its own demonstration issuer
// (https://auth.example.com): it verifies with the keys of JWKS_FILE, or,
// without one, generates a key pair at start-up and prints two tokens
// valid for an hour, one with scope "read" and one with "write" (which
// implies read). It never fetches anything then.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/oauth"
	"github.com/mcpmw/mcpmw/oauthmeta"
)

// demoIssuerURL is the issuer the program plays without ISSUER.
const demoIssuerURL = "https://auth.example.com"

// config is what the environment decides.
type config struct {
	addr, resource, issuer, jwksFile string
	introID, introSecret             string
	dpop                             string // off, allowed, required
	redisURL                         string
}

// demo reports whether the program is its own issuer.
func (c config) demo() bool { return c.issuer == "" }

// configFromEnv reads and checks the environment; an error names the
// variable at fault.
func configFromEnv(getenv func(string) string) (config, error) {
	c := config{addr: "127.0.0.1:8080", dpop: "allowed"}
	if v := getenv("ADDR"); v != "" {
		if _, _, err := net.SplitHostPort(v); err != nil {
			return c, fmt.Errorf("ADDR %q: %w", v, err)
		}
		c.addr = v
	}
	c.resource = "http://" + c.addr + "/mcp"
	if v := getenv("RESOURCE"); v != "" {
		if err := httpURL(v); err != nil {
			return c, fmt.Errorf("RESOURCE %q: %w", v, err)
		}
		c.resource = v
	}
	if v := getenv("ISSUER"); v != "" {
		if err := httpURL(v); err != nil {
			return c, fmt.Errorf("ISSUER %q: %w", v, err)
		}
		c.issuer = v
	}
	c.introID, c.introSecret = getenv("INTROSPECTION_CLIENT_ID"), getenv("INTROSPECTION_CLIENT_SECRET")
	switch {
	case c.introID == "" && c.introSecret != "":
		return c, errors.New("INTROSPECTION_CLIENT_SECRET is set without INTROSPECTION_CLIENT_ID")
	case c.introID != "" && c.introSecret == "":
		return c, errors.New("INTROSPECTION_CLIENT_ID is set without INTROSPECTION_CLIENT_SECRET")
	case c.introID != "" && c.demo():
		return c, errors.New("INTROSPECTION_CLIENT_ID needs ISSUER, whose metadata names the introspection endpoint")
	}
	if v := getenv("DPOP"); v != "" {
		if v != "off" && v != "allowed" && v != "required" {
			return c, fmt.Errorf("DPOP %q: want off, allowed or required", v)
		}
		c.dpop = v
	}
	if v := getenv("REDIS_URL"); v != "" {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			return c, fmt.Errorf("REDIS_URL %q: want redis://host:port/db", v)
		}
		c.redisURL = v
	}
	c.jwksFile = getenv("JWKS_FILE")
	return c, nil
}

// httpURL checks that s is an absolute http(s) URL with a host and no
// query or fragment.
func httpURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return errors.New("want an absolute http or https URL")
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#"):
		return errors.New("want no query or fragment")
	}
	return nil
}

// newAuthenticator builds the token verifier c describes; jwks, when not
// nil, are the issuer's keys, fixed.
func newAuthenticator(c config, jwks []byte) (*oauth.Authenticator, error) {
	oc := oauth.Config{
		Issuer:   c.issuer,
		Resource: c.resource,
		Implies:  map[string][]string{"write": {"read"}},
		JWKS:     jwks,
	}
	if c.demo() {
		oc.Issuer = demoIssuerURL
	}
	if c.introID != "" {
		oc.Introspection = &oauth.Introspection{ClientID: c.introID, ClientSecret: c.introSecret}
	}
	return oauth.New(oc)
}

// newHandler builds the application: the MCP endpoint at the resource's
// path, and its metadata document at the well-known path RFC 9728 derives
// from it. It panics on a resource or issuer oauthmeta refuses
// (configFromEnv has checked them).
func newHandler(c config, authn mcpmw.Authenticator, auditOut io.Writer) http.Handler {
	issuer := c.issuer
	if c.demo() {
		issuer = demoIssuerURL
	}
	meta := oauthmeta.New(oauthmeta.Config{
		Resource:             c.resource,
		AuthorizationServers: []string{issuer},
		ScopesSupported:      []string{"read", "write"},
		ResourceName:         "mcpmw OAuth example",
	})
	var reg mcpmw.Registry
	reg.AddTools(tools()...)
	endpoint := mcpmw.New(&reg, authn,
		mcpmw.LogAuditor(slog.New(slog.NewJSONHandler(auditOut, nil))),
		&mcpmw.Options{
			Server:           mcpmw.Implementation{Name: "oauth-example", Version: "1.0.0"},
			ResourceMetadata: meta.URL(), // 401 and 403 challenges point here
		})
	mux := http.NewServeMux()
	mux.Handle(meta.Path(), meta)
	mux.Handle(resourcePath(c.resource), endpoint)
	return mux
}

// resourcePath is the path part of the resource identifier, where the MCP
// endpoint is mounted ("/" for a resource at the root of its host).
func resourcePath(resource string) string {
	u, err := url.Parse(resource) // configFromEnv has checked it
	if err != nil || u.Path == "" {
		return "/"
	}
	return u.Path
}

// tools are the endpoint's tools: one for each scope.
func tools() []mcpmw.Tool {
	return []mcpmw.Tool{
		{
			Name: "whoami", Description: "Says who the access token was issued to, and its scopes.",
			Permission: "read", ReadOnly: mcpmw.HintYes, OpenWorld: mcpmw.HintNo,
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"sub":{"type":"string"},` +
				`"scopes":{"type":"array","items":{"type":"string"}}},"required":["sub","scopes"]}`),
			Call: func(_ context.Context, c mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				tok := c.(*oauth.Token)
				scopes := tok.Scopes
				if scopes == nil {
					scopes = []string{}
				}
				return mcpmw.StructuredResult(map[string]any{"sub": tok.Subject, "scopes": scopes}), nil
			},
		},
		{
			Name: "shout", Description: "Returns the message in capitals.", Permission: "write", OpenWorld: mcpmw.HintNo,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"],"additionalProperties":false}`),
			Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				msg := args.String("message")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult(strings.ToUpper(msg)), nil
			},
		},
	}
}

// demoIssuer is the key pair the program signs its demonstration tokens
// with when it is its own issuer and has no JWKS_FILE.
type demoIssuer struct {
	kid  string
	priv *ecdsa.PrivateKey
}

func newDemoIssuer() (*demoIssuer, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &demoIssuer{kid: "demo-" + rand.Text()[:8], priv: priv}, nil
}

// jwks is the demo key's JSON Web Key Set.
func (d *demoIssuer) jwks() []byte {
	data, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &d.priv.PublicKey, KeyID: d.kid, Algorithm: string(jose.ES256), Use: "sig"}}})
	return data
}

// token signs an RFC 9068 access token for resource, as the demo issuer,
// to subject.
func (d *demoIssuer) token(resource, subject, scope string, ttl time.Duration) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: d.priv},
		(&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", d.kid))
	if err != nil {
		return "", err
	}
	now := time.Now()
	payload, err := json.Marshal(map[string]any{"iss": demoIssuerURL, "sub": subject, "aud": resource,
		"iat": now.Unix(), "exp": now.Add(ttl).Unix(), "jti": rand.Text(), "client_id": "demo-client", "scope": scope})
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "oauth:", err)
		os.Exit(1)
	}
}

func run() error {
	c, err := configFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	var jwks []byte
	switch {
	case c.jwksFile != "":
		if jwks, err = os.ReadFile(c.jwksFile); err != nil {
			return fmt.Errorf("JWKS_FILE: %w", err)
		}
	case c.demo():
		demo, err := newDemoIssuer()
		if err != nil {
			return err
		}
		jwks = demo.jwks()
		for _, who := range []struct{ sub, scope string }{{"reader", "read"}, {"writer", "write"}} {
			tok, err := demo.token(c.resource, who.sub, who.scope, time.Hour)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "oauth: token for %s (scope %q), valid 1h:\n%s\n", who.sub, who.scope, tok)
		}
	}
	authn, err := newAuthenticator(c, jwks)
	if err != nil {
		if c.jwksFile != "" && strings.Contains(err.Error(), "JWKS") {
			return fmt.Errorf("JWKS_FILE %s: %w", c.jwksFile, err)
		}
		return err
	}
	if !c.demo() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := authn.Refresh(ctx) // a wrong ISSUER shows now, not at the first request
		cancel()
		if err != nil {
			return fmt.Errorf("ISSUER %s: %w", c.issuer, err)
		}
	}
	srv := &http.Server{Addr: c.addr, Handler: newHandler(c, authn, os.Stderr),
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	fmt.Fprintf(os.Stderr, "oauth: MCP endpoint %s, metadata at its well-known URL (see the WWW-Authenticate of a 401)\n", c.resource)
	select {
	case err := <-errc:
		return fmt.Errorf("ADDR %s: %w", c.addr, err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
