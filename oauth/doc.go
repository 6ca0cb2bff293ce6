// Package oauth makes an MCP endpoint an OAuth 2.1 resource server: it
// verifies the access tokens that clients present (JWT access tokens per
// RFC 9068, opaque tokens through RFC 7662 introspection) and turns them
// into mcpmw callers (*Token), whose permissions are the token's scopes.
//
//	authn, err := oauth.New(oauth.Config{
//		Issuer:   "https://auth.example.com",
//		Resource: "https://api.example.com/mcp", // what aud must contain
//		Implies:  map[string][]string{"write": {"read"}},
//	})
//	r.Handle("/mcp", mcpmw.New(&reg, authn, audit, &mcpmw.Options{ResourceMetadata: meta.URL()}))
//
// # What is checked
//
// A JWT: its typ (at+jwt unless Config.TokenTypes says more), its
// algorithm (asymmetric only, never none or an HMAC), its signature by the
// issuer's key named by its kid, iss, aud (the resource, RFC 8707), exp,
// nbf and iat with a small leeway, and sub. An opaque token: active, then
// the same iss, aud and exp rules on the introspection answer.
//
// # Keys
//
// The issuer's keys come from its jwks_uri, found through its metadata
// (RFC 8414, then OpenID Connect discovery). They are fetched when first
// needed, refreshed in the background once Config.KeyRefresh old, and
// fetched again for a kid they lack, at most once per
// Config.MinKeyRefresh however many tokens ask; while the issuer is out of
// reach the last good keys serve.
//
// # Caches
//
// A JWT's signature is verified once: the Token is kept, keyed by the
// SHA-256 of the token's bytes, until its exp and while its key stays in
// the issuer's key set. An introspection answer is kept for
// Introspection.CacheTTL, never past the token's exp, and concurrent
// introspections of one token are one call. Both caches are bounded
// (Config.CacheSize).
//
// # Refusals
//
// Every refusal is an *Error whose challenges the mcpmw handler writes
// (RFC 6750 §3.1): no credentials, 401 and a challenge without error; a
// malformed Authorization header, two of them, or a token in the query
// string, 400 invalid_request; a refused token, 401 invalid_token with an
// error_description of a few safe words (the whole reason goes to the
// audit record only); the issuer out of reach, 503. A caller denied a
// permission gets the handler's 403 insufficient_scope naming every scope
// the permission needs (Token.ScopesFor).
//
// It is a module of its own so that the core, which is standard library
// only, never imports a JOSE library. The JOSE library is
// github.com/go-jose/go-jose/v4: it verifies signatures against an explicit
// allow-list of algorithms (so alg confusion and "none" are refused by
// construction), computes RFC 7638 thumbprints for DPoP, and keeps go 1.24,
// which lestrrat-go/jwx/v3 no longer does from v3.2.0. The JWKS cache is
// this package's own, on net/http and go-jose's JSONWebKey.
package oauth
