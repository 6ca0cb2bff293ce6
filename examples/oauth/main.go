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
//	           (RFC 9449); off takes Bearer tokens only, required DPoP
//	           ones only. A proof's htu must be RESOURCE's scheme and host
//	           followed by the request's path: the URL the client used,
//	           even behind a proxy
//	REDIS_URL  redis://[user:password@]host:port/db (rediss:// for TLS):
//	           the DPoP replay cache every instance shares, so that a proof
//	           accepted by one is refused by all; checked at start-up
//	           (unused with DPOP=off).
//	           Unset, each instance keeps its own, in memory
//	REDIS_TIMEOUT  how long each call to Redis may take (a Go duration;
//	           unset, mcpredis's 50ms); past it the proof is refused with
//	           503, never accepted unchecked
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
	"github.com/redis/go-redis/v9"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/oauth"
	"github.com/mcpmw/mcpmw/oauthmeta"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// demoIssuerURL is the issuer the program plays without ISSUER.
const demoIssuerURL = "https://auth.example.com"

// config is what the environment decides.
type config struct {
	addr, resource, issuer, jwksFile string
	introID, introSecret             string
	dpop                             oauth.DPoPMode
	redis                            *redis.Options // nil: no REDIS_URL
	redisTimeout                     time.Duration  // 0: mcpredis's default
}

// demo reports whether the program is its own issuer.
func (c config) demo() bool { return c.issuer == "" }

// configFromEnv reads and checks the environment; an error names the
// variable at fault.
func configFromEnv(getenv func(string) string) (config, error) {
	c := config{addr: "127.0.0.1:8080", dpop: oauth.DPoPAllowed}
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
	switch v := getenv("DPOP"); v {
	case "off":
		c.dpop = oauth.DPoPOff
	case "", "allowed":
	case "required":
		c.dpop = oauth.DPoPRequired
	default:
		return c, fmt.Errorf("DPOP %q: want off, allowed or required", v)
	}
	if v := getenv("REDIS_URL"); v != "" {
		opts, err := redisOptions(v)
		if err != nil {
			return c, err
		}
		c.redis = opts
	}
	if v := getenv("REDIS_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("REDIS_TIMEOUT %q: want a positive duration such as 200ms (unset: 50ms)", v)
		}
		c.redisTimeout = d
	}
	c.jwksFile = getenv("JWKS_FILE")
	return c, nil
}

// redisOptions parses REDIS_URL. Its errors never quote the URL, which
// may hold a password.
func redisOptions(v string) (*redis.Options, error) {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, errors.New("REDIS_URL: want redis://[user:password@]host:port/db (or rediss://)")
	}
	opts, err := redis.ParseURL(v)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL, password and all
		}
		return nil, fmt.Errorf("REDIS_URL: %w (want redis://[user:password@]host:port/db)", err)
	}
	// Each call must end at its own deadline, not at the client's 3 s
	// read timeout (mcpredis refuses a client without it), and is sent
	// once: a SET NX retried after its reply was lost would find its own
	// key and call an honest proof a replay.
	opts.ContextTimeoutEnabled = true
	opts.MaxRetries = -1
	return opts, nil
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

// newDPoPVerifier returns the DPoP proof verifier c describes, nil with
// DPOP=off; replay, when not nil, is its replay cache (nil: one in
// memory).
func newDPoPVerifier(c config, replay oauth.ReplayCache) *oauth.DPoPVerifier {
	if c.dpop == oauth.DPoPOff {
		return nil
	}
	return oauth.NewDPoPVerifier(&oauth.DPoPOptions{BaseURL: origin(c.resource), Replay: replay})
}

// newAuthenticator builds the token verifier c describes; jwks, when not
// nil, are the issuer's keys, fixed; dpop checks DPoP proofs (nil with
// DPOP=off).
func newAuthenticator(c config, jwks []byte, dpop *oauth.DPoPVerifier) (*oauth.Authenticator, error) {
	oc := oauth.Config{
		Issuer:       c.issuer,
		Resource:     c.resource,
		Implies:      map[string][]string{"write": {"read"}},
		JWKS:         jwks,
		DPoP:         c.dpop,
		DPoPVerifier: dpop,
	}
	if c.demo() {
		oc.Issuer = demoIssuerURL
	}
	if c.introID != "" {
		oc.Introspection = &oauth.Introspection{ClientID: c.introID, ClientSecret: c.introSecret}
	}
	return oauth.New(oc)
}

// origin is the scheme and host of the resource identifier: the base of
// the URL a client sends its requests to, which a DPoP proof's htu names
// (with the request's path after it), whatever URL a proxy in between
// forwards to this process.
func origin(resource string) string {
	u, err := url.Parse(resource) // configFromEnv has checked it
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// newReplayCache connects to the Redis of REDIS_URL and returns the DPoP
// replay cache every instance shares there, once Redis has answered a PING
// (so that a wrong REDIS_URL stops the program now), and the func that
// closes the connection.
func newReplayCache(c config, logger *slog.Logger) (oauth.ReplayCache, func(), error) {
	client := redis.NewClient(c.redis)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, nil, fmt.Errorf("REDIS_URL: Redis at %s does not answer: %w", c.redis.Addr, err)
	}
	cache := mcpredis.NewReplayCache(mcpredis.Config{Client: client, Prefix: "oauth-example:",
		Timeout: c.redisTimeout, Logger: logger})
	return cache, func() { _ = client.Close() }, nil
}

// newHandler builds the application: the MCP endpoint at the resource's
// path, and its metadata document at the well-known path RFC 9728 derives
// from it, which advertises DPoP when dpop is not nil (its algorithms, and
// whether Bearer tokens are refused). It panics on a resource or issuer
// oauthmeta refuses (configFromEnv has checked them).
func newHandler(c config, authn mcpmw.Authenticator, dpop *oauth.DPoPVerifier, auditOut io.Writer) http.Handler {
	issuer := c.issuer
	if c.demo() {
		issuer = demoIssuerURL
	}
	mc := oauthmeta.Config{
		Resource:             c.resource,
		AuthorizationServers: []string{issuer},
		ScopesSupported:      []string{"read", "write"},
		ResourceName:         "mcpmw OAuth example",
	}
	if dpop != nil {
		mc.DPoPSigningAlgValuesSupported = strings.Fields(dpop.Algs())
		mc.DPoPBoundAccessTokensRequired = c.dpop == oauth.DPoPRequired
	}
	meta := oauthmeta.New(mc)
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
	var replay oauth.ReplayCache // nil: in memory, this instance's own
	if c.redis != nil && c.dpop != oauth.DPoPOff {
		cache, closeRedis, err := newReplayCache(c, slog.New(slog.NewTextHandler(os.Stderr, nil)))
		if err != nil {
			return err
		}
		defer closeRedis()
		replay = cache
	}
	dpop := newDPoPVerifier(c, replay)
	authn, err := newAuthenticator(c, jwks, dpop)
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
	srv := &http.Server{Addr: c.addr, Handler: newHandler(c, authn, dpop, os.Stderr),
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
