// Package oauthmeta serves the OAuth 2.0 Protected Resource Metadata (RFC
// 9728) of an MCP endpoint: the JSON document from which a client that got a
// 401 learns which authorization servers issue tokens for the endpoint and
// which scopes it understands. The MCP authorization specification requires
// a protected MCP server to publish it.
//
// One call builds the document from a Config, checks it, and says where it
// lives:
//
//	meta := oauthmeta.New(oauthmeta.Config{
//		Resource:             "https://api.example.com/mcp",
//		AuthorizationServers: []string{"https://auth.example.com"},
//		ScopesSupported:      []string{"read", "write"},
//	})
//	r.Handle(meta.Path(), meta) // /.well-known/oauth-protected-resource/mcp
//	r.Handle("/mcp", mcpmw.New(&reg, authn, audit, &mcpmw.Options{
//		ResourceMetadata: meta.URL(), // named in the 401 and 403 challenges
//	}))
//
// # Where the document lives
//
// RFC 9728 §3.1 places the document at the resource identifier with
// "/.well-known/oauth-protected-resource" inserted between the host and the
// path: for https://api.example.com/mcp it is
// https://api.example.com/.well-known/oauth-protected-resource/mcp, and for
// a resource at the root of its host, https://api.example.com/, it is
// https://api.example.com/.well-known/oauth-protected-resource. A trailing
// slash of the path is dropped, as the Go and TypeScript MCP SDKs drop it
// when they derive the URL themselves. Handler.Path is that path, to mount on
// the router that serves the host's root (not under the MCP endpoint's own
// prefix); Handler.URL is the absolute URL, for
// mcpmw.Options.ResourceMetadata.
//
// # What it does not do
//
// It verifies no tokens. The Authenticator does, and it must check that a
// token was issued for this resource (its audience contains
// Config.Resource, RFC 8707 and RFC 9068), or a token meant for another
// service would be accepted here. The example module examples/oauth shows an
// Authenticator for JWT access tokens that does.
package oauthmeta

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// WellKnownPrefix is the well-known URI suffix RFC 9728 registers for
// protected resource metadata.
const WellKnownPrefix = "/.well-known/oauth-protected-resource"

// Config describes a protected resource, one MCP endpoint. New checks it and
// panics, with a message starting "oauthmeta:", on a value RFC 9728 or the
// MCP authorization specification does not allow.
type Config struct {
	// Resource is the resource identifier: the URL clients use for the
	// endpoint, e.g. "https://api.example.com/mcp". It must be an absolute
	// https URL with a host and without a query, a fragment or user
	// information; http is allowed for loopback hosts (localhost,
	// 127.0.0.0/8, ::1), for local development. It is published exactly as
	// written: clients check that it equals the URL they called (RFC 9728
	// §3.3), and tokens' audience is compared with it.
	Resource string
	// AuthorizationServers are the issuer identifiers (RFC 8414) of the
	// authorization servers that issue tokens for Resource: https URLs
	// (http for loopback hosts) without a query or fragment. At least one
	// is required, as the MCP authorization specification requires.
	AuthorizationServers []string
	// ScopesSupported are the scope values a token for Resource may carry,
	// usually the Permissions the endpoint's tools declare. Each must be an
	// RFC 6749 scope token (printable ASCII, no space, '"' or '\'). Nil
	// leaves the member out.
	ScopesSupported []string
	// BearerMethodsSupported say how a client may present its token:
	// "header", "body" or "query" (RFC 6750 §2). Nil or empty means
	// ["header"], the only one MCP allows (it forbids tokens in the query
	// string, and an MCP body is JSON-RPC, not a form).
	BearerMethodsSupported []string
	// ResourceName is a human-readable name for the endpoint, shown to
	// users by clients. Empty leaves it out.
	ResourceName string
	// ResourceDocumentation, ResourcePolicyURI and ResourceTOSURI are
	// absolute http or https URLs of pages about the endpoint: its
	// documentation, its data policy, its terms of service. Empty leaves
	// them out.
	ResourceDocumentation string
	ResourcePolicyURI     string
	ResourceTOSURI        string

	// DPoPSigningAlgValuesSupported are the JWS algorithms the endpoint
	// accepts for DPoP proofs (RFC 9449; the member RFC 9728 §2 names
	// dpop_signing_alg_values_supported), so that a client knows which key
	// to prove possession with before its first request: with the oauth
	// module, strings.Fields(verifier.Algs()). Set it when the endpoint
	// takes DPoP-bound tokens. "none" and the HMACs (HS256...) are refused:
	// a proof needs a key only the client holds. Nil leaves the member out.
	DPoPSigningAlgValuesSupported []string
	// DPoPBoundAccessTokensRequired says that the endpoint takes
	// DPoP-bound tokens only, refusing Bearer ones
	// (dpop_bound_access_tokens_required, RFC 9728 §2). False, RFC 9728's
	// default, leaves the member out.
	DPoPBoundAccessTokensRequired bool
}

// document is the metadata, with the member names of RFC 9728 §2. Members
// without a value are left out (§3.2).
type document struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	ResourceName           string   `json:"resource_name,omitempty"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
	ResourcePolicyURI      string   `json:"resource_policy_uri,omitempty"`
	ResourceTOSURI         string   `json:"resource_tos_uri,omitempty"`
	DPoPSigningAlgs        []string `json:"dpop_signing_alg_values_supported,omitempty"`
	DPoPRequired           bool     `json:"dpop_bound_access_tokens_required,omitempty"`
}

// Handler serves one resource's metadata document. It is an http.Handler
// answering GET and HEAD with the document (application/json), OPTIONS with
// 204 (a CORS preflight), and anything else with 405. Every answer carries
// Access-Control-Allow-Origin: *, because browser-based MCP clients fetch
// the document from another origin, and it is public, carries no
// credentials and is the same for everyone.
//
// A Handler is immutable, and safe for concurrent use.
type Handler struct {
	resource string
	path     string
	url      string
	doc      []byte
}

// New checks c, encodes its document once, and returns the Handler serving
// it. It panics if c is invalid (see Config): the configuration is the
// program's, not a request's.
func New(c Config) *Handler {
	u, err := checkURL(c.Resource, false)
	if err != nil {
		panic(fmt.Sprintf("oauthmeta: Config.Resource %q: %v", c.Resource, err))
	}
	path, escaped, err := wellKnownPath(u)
	if err != nil {
		panic(fmt.Sprintf("oauthmeta: Config.Resource %q: %v", c.Resource, err))
	}
	if len(c.AuthorizationServers) == 0 {
		panic("oauthmeta: Config.AuthorizationServers is empty; MCP requires at least one authorization server")
	}
	for _, as := range c.AuthorizationServers {
		if _, err := checkURL(as, false); err != nil {
			panic(fmt.Sprintf("oauthmeta: Config.AuthorizationServers: %q: %v", as, err))
		}
	}
	for _, s := range c.ScopesSupported {
		if !validScope(s) {
			panic(fmt.Sprintf("oauthmeta: Config.ScopesSupported: %q is not a scope token (RFC 6749 §3.3)", s))
		}
	}
	methods := c.BearerMethodsSupported
	if len(methods) == 0 {
		methods = []string{"header"}
	}
	for _, m := range methods {
		if m != "header" && m != "body" && m != "query" {
			panic(fmt.Sprintf("oauthmeta: Config.BearerMethodsSupported: %q is not one of header, body, query", m))
		}
	}
	for _, page := range []struct{ name, url string }{{"ResourceDocumentation", c.ResourceDocumentation},
		{"ResourcePolicyURI", c.ResourcePolicyURI}, {"ResourceTOSURI", c.ResourceTOSURI}} {
		if page.url == "" {
			continue
		}
		if _, err := checkURL(page.url, true); err != nil {
			panic(fmt.Sprintf("oauthmeta: Config.%s %q: %v", page.name, page.url, err))
		}
	}
	for _, alg := range c.DPoPSigningAlgValuesSupported {
		if !proofAlg(alg) {
			panic(fmt.Sprintf("oauthmeta: Config.DPoPSigningAlgValuesSupported: %q is not an asymmetric JWS algorithm (RFC 9449 §11.6)", alg))
		}
	}
	doc := document{
		Resource:               c.Resource,
		AuthorizationServers:   c.AuthorizationServers,
		ScopesSupported:        c.ScopesSupported,
		BearerMethodsSupported: methods,
		ResourceName:           c.ResourceName,
		ResourceDocumentation:  c.ResourceDocumentation,
		ResourcePolicyURI:      c.ResourcePolicyURI,
		ResourceTOSURI:         c.ResourceTOSURI,
		DPoPSigningAlgs:        c.DPoPSigningAlgValuesSupported,
		DPoPRequired:           c.DPoPBoundAccessTokensRequired,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the document is JSON, never HTML: keep & < > readable
	if err := enc.Encode(doc); err != nil {
		panic("oauthmeta: encoding the document: " + err.Error()) // strings and string slices always encode
	}
	return &Handler{
		resource: c.Resource,
		path:     path,
		url:      u.Scheme + "://" + u.Host + escaped,
		doc:      bytes.TrimSuffix(buf.Bytes(), []byte("\n")),
	}
}

// Path is the path the document is served at, as r.URL.Path carries it
// (unescaped), e.g. "/.well-known/oauth-protected-resource/mcp". Mount the
// Handler there, on the router that serves the resource's host from its
// root.
func (h *Handler) Path() string { return h.path }

// URL is the document's absolute URL, e.g.
// "https://api.example.com/.well-known/oauth-protected-resource/mcp": the
// value for mcpmw.Options.ResourceMetadata.
func (h *Handler) URL() string { return h.url }

// Resource is the resource identifier, Config.Resource as given: the
// audience an Authenticator requires of a token.
func (h *Handler) Resource() string { return h.resource }

// ServeHTTP answers GET and HEAD with the document, OPTIONS with 204, and
// other methods with 405. It does not look at the request's path: mount it
// at Path.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		hdr.Set("Content-Type", "application/json")
		hdr.Set("Content-Length", strconv.Itoa(len(h.doc)))
		hdr.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(h.doc) // a client that left cannot be told
		}
	case http.MethodOptions:
		hdr.Set("Allow", "GET, HEAD, OPTIONS")
		hdr.Set("Access-Control-Allow-Methods", "GET, HEAD")
		// Clients may send MCP-Protocol-Version with the request; any header
		// is fine for a public document fetched without credentials.
		hdr.Set("Access-Control-Allow-Headers", "*")
		hdr.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
	default:
		hdr.Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "method not allowed: the resource metadata is read with GET", http.StatusMethodNotAllowed)
	}
}

// checkURL parses s as an absolute URL with a host and without a fragment,
// query or user information. A page (documentation and the like) may be
// http or https; anything else must be https, or http on a loopback host.
func checkURL(s string, page bool) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, err
	case u.Scheme != "https" && u.Scheme != "http" || u.Host == "":
		return nil, fmt.Errorf("not an absolute http(s) URL with a host")
	case u.Hostname() == "":
		return nil, fmt.Errorf("has no host")
	case u.User != nil:
		return nil, fmt.Errorf("has user information")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return nil, fmt.Errorf("has a fragment")
	case page:
		return u, nil
	case u.RawQuery != "" || u.ForceQuery:
		return nil, fmt.Errorf("has a query (RFC 8707 §2 and RFC 8414 §2 rule one out; its well-known URL could not be mounted on a router)")
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return nil, fmt.Errorf("is http on a host that is not loopback; use https")
	}
	return u, nil
}

// loopback reports whether host names this machine: localhost, or a
// loopback IP address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// wellKnownPath inserts WellKnownPrefix between u's host and its path (RFC
// 9728 §3.1), dropping a trailing slash, and returns the result unescaped
// (for routers) and escaped (for the URL). It refuses paths a router would
// clean or redirect: empty, "." and ".." segments.
func wellKnownPath(u *url.URL) (path, escaped string, err error) {
	p := strings.TrimSuffix(u.Path, "/")
	if p != "" {
		for _, seg := range strings.Split(p[1:], "/") {
			if seg == "" || seg == "." || seg == ".." {
				return "", "", fmt.Errorf("path %q has an empty, \".\" or \"..\" segment", u.Path)
			}
		}
	}
	return WellKnownPrefix + p, WellKnownPrefix + strings.TrimSuffix(u.EscapedPath(), "/"), nil
}

// validScope reports whether s is a scope token (RFC 6749 §3.3):
// 1*( %x21 / %x23-5B / %x5D-7E ).
func validScope(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return s != ""
}

// proofAlg reports whether alg may sign a DPoP proof: a JWS alg value
// (printable ASCII, no space) that is neither "none" nor an HMAC, whose
// key the server would share (RFC 9449 §11.6). Other names pass, so that
// an algorithm registered later needs no change here.
func proofAlg(alg string) bool {
	return validScope(alg) && alg != "none" && !strings.HasPrefix(alg, "HS")
}
