// Package oauth makes an MCP endpoint an OAuth 2.1 resource server: it
// verifies the access tokens that clients present (JWT access tokens per
// RFC 9068, opaque tokens through RFC 7662 introspection, and DPoP-bound
// tokens per RFC 9449) and turns them into mcpmw callers.
//
// It is a module of its own so that the core, which is standard library
// only, never imports a JOSE library. The JOSE library is
// github.com/go-jose/go-jose/v4: it verifies signatures against an explicit
// allow-list of algorithms (so alg confusion and "none" are refused by
// construction), computes RFC 7638 thumbprints for DPoP, and keeps go 1.24,
// which lestrrat-go/jwx/v3 no longer does from v3.2.0.
package oauth
