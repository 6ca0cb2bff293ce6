// Command oauth is an MCP endpoint protected by OAuth 2.0: it accepts JWT
// access tokens (RFC 9068) and publishes its protected resource metadata (RFC
// 9728), so that a client that gets a 401 learns where to get a token.
//
//	go run .    # in examples/oauth
//
// Environment:
//
//	ADDR       listen address (default 127.0.0.1:8080)
//	RESOURCE   the endpoint's resource identifier, the audience tokens must carry
//	           (default http://ADDR/mcp)
//	ISSUER     the authorization server that issues the tokens (default https://auth.example.com)
//	JWKS_FILE  a JSON Web Key Set file holding the issuer's P-256 (ES256) public keys
//
// Without JWKS_FILE the program generates a key pair at start-up, plays the
// issuer itself, and prints two tokens valid for an hour: one with scope
// "read", one with "read write". It never fetches anything from the network:
// a real deployment downloads the issuer's JWKS (its jwks_uri) into
// JWKS_FILE, and refreshes it when the issuer rotates its keys.
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
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/oauthmeta"
)

// config is what the environment decides.
type config struct {
	addr, resource, issuer, jwksFile string
}

func configFromEnv(getenv func(string) string) config {
	c := config{addr: "127.0.0.1:8080", issuer: "https://auth.example.com"}
	if v := getenv("ADDR"); v != "" {
		c.addr = v
	}
	c.resource = "http://" + c.addr + "/mcp"
	if v := getenv("RESOURCE"); v != "" {
		c.resource = v
	}
	if v := getenv("ISSUER"); v != "" {
		c.issuer = v
	}
	c.jwksFile = getenv("JWKS_FILE")
	return c
}

// newHandler builds the application: the MCP endpoint at the resource's path,
// and its metadata document at the well-known path RFC 9728 derives from it.
// It panics on a resource or issuer oauthmeta refuses.
func newHandler(c config, keys map[string]*ecdsa.PublicKey, auditOut io.Writer) http.Handler {
	meta := oauthmeta.New(oauthmeta.Config{
		Resource:             c.resource,
		AuthorizationServers: []string{c.issuer},
		ScopesSupported:      []string{"read", "write"},
		ResourceName:         "mcpmw OAuth example",
	})
	var reg mcpmw.Registry
	reg.AddTools(tools()...)
	endpoint := mcpmw.New(&reg, newJWTAuth(c.issuer, meta.Resource(), keys),
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
	u, err := url.Parse(resource) // oauthmeta.New has checked it
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
			Call: func(_ context.Context, c mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult(fmt.Sprint(c)), nil // tokenCaller.String: never the token
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
// with when no JWKS_FILE is given.
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

func (d *demoIssuer) keys() map[string]*ecdsa.PublicKey {
	return map[string]*ecdsa.PublicKey{d.kid: &d.priv.PublicKey}
}

// token signs an access token for resource, as issuer, to subject.
func (d *demoIssuer) token(issuer, resource, subject, scope string, ttl time.Duration) (string, error) {
	now := time.Now()
	t := jwt.NewWithClaims(jwt.SigningMethodES256, accessClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: issuer, Subject: subject, Audience: jwt.ClaimStrings{resource},
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(ttl)), ID: rand.Text(),
		},
		Scope: scope, ClientID: "demo-client",
	})
	t.Header["kid"] = d.kid
	t.Header["typ"] = "at+jwt"
	return t.SignedString(d.priv)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "oauth:", err)
		os.Exit(1)
	}
}

func run() error {
	c := configFromEnv(os.Getenv)
	var keys map[string]*ecdsa.PublicKey
	if c.jwksFile != "" {
		data, err := os.ReadFile(c.jwksFile)
		if err != nil {
			return fmt.Errorf("JWKS_FILE: %w", err)
		}
		if keys, err = parseJWKS(data); err != nil {
			return fmt.Errorf("JWKS_FILE %s: %w", c.jwksFile, err)
		}
	} else {
		demo, err := newDemoIssuer()
		if err != nil {
			return err
		}
		keys = demo.keys()
		for _, who := range []struct{ sub, scope string }{{"reader", "read"}, {"writer", "read write"}} {
			tok, err := demo.token(c.issuer, c.resource, who.sub, who.scope, time.Hour)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "oauth: token for %s (scope %q), valid 1h:\n%s\n", who.sub, who.scope, tok)
		}
	}
	srv := &http.Server{Addr: c.addr, Handler: newHandler(c, keys, os.Stderr),
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	fmt.Fprintf(os.Stderr, "oauth: MCP endpoint %s, metadata at its well-known URL (see the WWW-Authenticate of a 401)\n", c.resource)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
