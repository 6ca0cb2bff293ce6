package oauth_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/oauth"
	"github.com/mcpmw/mcpmw/oauthmeta"
)

// An endpoint that accepts the access tokens of one issuer, for itself.
func Example() {
	var reg mcpmw.Registry
	audit := mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {})
	mux := http.NewServeMux()
	// !+setup
	meta := oauthmeta.New(oauthmeta.Config{
		Resource:             "https://api.example.com/mcp",
		AuthorizationServers: []string{"https://auth.example.com"},
		ScopesSupported:      []string{"notes:read", "notes:write"},
	})
	authn, err := oauth.New(oauth.Config{
		Issuer:   "https://auth.example.com", // its metadata and keys are found from here
		Resource: meta.Resource(),            // what every token's aud must contain
		Implies:  map[string][]string{"notes:write": {"notes:read"}},
	})
	if err != nil {
		log.Fatal(err) // a Config that cannot work: a bad URL, an HMAC algorithm...
	}
	mux.Handle(meta.Path(), meta)
	mux.Handle("/mcp", mcpmw.New(&reg, authn, audit, &mcpmw.Options{ResourceMetadata: meta.URL()}))
	// !-setup
	fmt.Println(meta.Path())
	// Output: /.well-known/oauth-protected-resource/mcp
}

// Opaque tokens are introspected at the issuer's introspection endpoint,
// with this resource server's own client credentials.
func ExampleIntrospection() {
	// !+introspection
	authn, err := oauth.New(oauth.Config{
		Issuer:   "https://auth.example.com",
		Resource: "https://api.example.com/mcp",
		Introspection: &oauth.Introspection{
			ClientID:     "mcp-resource-server", // HTTP Basic at the introspection_endpoint of the metadata
			ClientSecret: "from-your-secret-store",
		},
	})
	// !-introspection
	fmt.Println(authn != nil, err)
	// Output: true <nil>
}

// A tool reads who called from the Token.
func ExampleToken() {
	// !+whoami
	whoami := func(_ context.Context, c mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
		tok := c.(*oauth.Token) // the Authenticator's callers are *oauth.Token
		return mcpmw.StructuredResult(map[string]any{"sub": tok.Subject, "client": tok.ClientID, "scopes": tok.Scopes}), nil
	}
	// !-whoami
	fmt.Println(whoami != nil)
	// Output: true
}
