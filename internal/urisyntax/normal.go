package urisyntax

import (
	"errors"
	"strings"
)

// Normal returns the normal form of uri, or what keeps it from having one.
// A URI already in normal form is returned as it is, without allocating.
//
// One URI has several spellings (docs://plan, docs://%70lan, DOCS://plan,
// docs://pl%61n), and whatever compares, looks up or matches a resource
// URI compares this form, so that no spelling reaches another entry than
// the one its normal form names (ARCHITECTURE.md, invariant 8). It is
// RFC 3986 §6.2.2's syntax-based normalisation:
//
//   - percent-encoding (§6.2.2.2): an octet of an unreserved character
//     (ALPHA, DIGIT, '-', '.', '_', '~') is decoded, the hex digits of
//     every other one upper-cased; a byte a URI cannot hold (a space, a
//     control, '"', '<', '>', '\', '^', '`', '{', '|', '}', any byte
//     from 0x80) is percent-encoded, as RFC 3987 §3.1 maps an IRI to a
//     URI, so docs://café and docs://caf%C3%A9 are one resource;
//   - case (§6.2.2.1): the scheme is lower-cased. The host is not: MCP
//     URIs mostly have schemes of their own whose authority is an
//     identifier (notes://AbC12, repo://{owner}/...), which lower-casing
//     would change before a template's Read sees it. So docs://PLAN and
//     docs://plan are two URIs here, and a Read whose store folds case
//     must fold it for both, as it must for any other part of its URIs;
//   - dot-segments (§6.2.2.3): a URI whose path holds a "." or ".."
//     segment is refused rather than resolved. Resolving would make
//     file:///srv/docs/a/../plan read as file:///srv/docs/plan, but a
//     template could then no longer tell which of its expansions a URI
//     is, and no client needs to send one.
//
// A '%' that starts no percent-encoded octet is refused too: such a
// string is no URI, and guessing what it meant would give one resource
// two names. Nothing else is normalised (no scheme-based rules, such as
// an http default port).
func Normal(uri string) (string, error) {
	n, err := NormalizePercent(uri, SchemeLen(uri))
	if err != nil {
		return "", err
	}
	if seg := dotSegment(n); seg != "" {
		return "", errors.New("its path holds a '" + seg + "' segment: resolve it first (RFC 3986 §5.2.4)")
	}
	return n, nil
}

// dotSegment returns the first "." or ".." segment of the path of u, a
// URI in normal form (so that %2E is already '.'), or "".
func dotSegment(u string) string {
	if n := SchemeLen(u); n > 0 {
		u = u[n+1:]
	}
	if strings.HasPrefix(u, "//") { // the authority, up to the path
		u = u[2:]
		if i := strings.IndexAny(u, "/?#"); i >= 0 {
			u = u[i:]
		} else {
			u = ""
		}
	}
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	for u != "" {
		seg := u
		if i := strings.IndexByte(u, '/'); i >= 0 {
			seg, u = u[:i], u[i+1:]
		} else {
			u = ""
		}
		if seg == "." || seg == ".." {
			return seg
		}
	}
	return ""
}
