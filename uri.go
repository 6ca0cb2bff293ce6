package mcpmw

import "github.com/mcpmw/mcpmw/internal/urisyntax"

// One view of a resource URI. A client may spell one URI several ways
// (docs://plan, docs://%70lan, DOCS://plan, docs://pl%61n), and every
// place that compares, looks up or matches a URI (the direct resources,
// the templates, the permission gate, the requestState binding, the audit
// record) compares its normal form, so that no spelling reaches another
// entry than the one its normal form names: a direct resource shadows a
// template for every spelling of its URI. The normal form is defined and
// built in one function, internal/urisyntax's Normal: a leaf every package
// of this module can reach (an extension's own package that looks a
// resource URI up included), and whose pieces internal/uritemplate puts a
// template's literals in the same form with.

// normalURI returns the normal form of uri, or what keeps it from having
// one (urisyntax.Normal). A URI already in normal form is returned as it
// is, without allocating.
func normalURI(uri string) (string, error) { return urisyntax.Normal(uri) }

// hasScheme reports whether uri starts with an RFC 3986 scheme and ':'.
func hasScheme(uri string) bool { return urisyntax.SchemeLen(uri) > 0 }
