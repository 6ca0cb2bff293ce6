package mcpmw

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
	"github.com/mcpmw/mcpmw/internal/uritemplate"
)

// A Resource is data a client may read by URI: a file, a record, a
// document. Register it with Registry.AddResources; a caller holding its
// Permission sees it in resources/list and may read it (resources/read).
type Resource struct {
	// URI identifies the resource: an absolute URI ("notes://3",
	// "file:///etc/motd"). It is found by its normal form (RFC 3986
	// §6.2.2: percent-encoding normalised, the scheme lower-cased; see
	// uri.go), so a read of any spelling of it (notes://%33,
	// NOTES://3) reads it, and no template can serve such a spelling
	// instead. Name is its short name; Title an optional display name;
	// Description tells the model what is in it.
	URI, Name, Title, Description string
	// MimeType is the type of its contents, when known.
	MimeType string
	// Size is its size in bytes; 0 means unknown (left off the wire).
	Size int64
	// Icons are optional images for it; 2025-06-18 clients get none.
	Icons []Icon
	// Meta is the definition's _meta: what an extension adds to it (MCP
	// Apps' {"ui": {"resourceUri": ...}}, say), encoded once, at
	// registration, with encoding/json. Keys starting with
	// "io.modelcontextprotocol/" are the protocol's; use your own prefix
	// for your own.
	Meta map[string]any
	// Extension is the ID of the protocol extension the resource belongs
	// to, if any: MCP Apps' ui:// resources say "io.modelcontextprotocol/ui".
	// A handler New builds over a registry that holds such a resource
	// declares that extension (settings {}) in server/discover and
	// initialize, unless Options.Extensions declares it itself. Like every
	// capability, it is decided once, by New.
	Extension string
	// Annotations tell a client how to use it (audience, priority, last
	// modification).
	Annotations *ContentAnnotations
	// Unlisted leaves the resource out of resources/list: a client reads
	// it (gated by Permission as any other) by a URI it learned elsewhere,
	// such as the contents or a manifest of a listed resource, so that a
	// listing names the entry points rather than every file behind them.
	Unlisted bool
	// Permission is what a caller must be able to do (Caller.Can) to see
	// and read the resource. It is required, as for tools. An entry a
	// template's List returns leaves it empty (or names the template's):
	// the template's Permission gates the read of its URI, so an entry may
	// not name another one (see ResourceTemplate.List). See Permission for
	// what a caller without it learns.
	Permission Permission
	// Read returns the contents of uri, the resource's URI as registered.
	// Required for a resource added directly; nil for the entries a
	// template's List returns (those are read through the template). It
	// returns:
	//   - an error wrapping ErrResourceNotFound: the not-found answer;
	//   - an *Error: sent as that JSON-RPC error;
	//   - any other error: -32603 "Internal error" and a log line; its
	//     text is not sent to the client.
	// It may ask the client for input with Ask, as a tool does.
	Read func(ctx context.Context, c Caller, uri string) ([]ResourceContents, error)
}

// ResourceContents is one item a resource read returns: text, or binary
// data when Blob is not nil (sent base64-encoded). A URI left empty is the
// URI that was read.
type ResourceContents struct {
	URI, MimeType string
	Text          string // a text resource
	Blob          []byte // a binary one when non-nil: sent base64 as "blob"
	// Meta is the contents item's _meta (MCP Apps' {"ui": {"csp": ...}}
	// on a ui:// resource, say), encoded with encoding/json at each read.
	Meta map[string]any
}

// TextContents returns the contents of a text resource.
func TextContents(uri, mimeType, text string) ResourceContents {
	return ResourceContents{URI: uri, MimeType: mimeType, Text: text}
}

// BlobContents returns the contents of a binary resource.
func BlobContents(uri, mimeType string, data []byte) ResourceContents {
	if data == nil {
		data = []byte{} // still binary: an empty blob, not an empty text
	}
	return ResourceContents{URI: uri, MimeType: mimeType, Blob: data}
}

// A ResourceTemplate is a family of resources whose URIs follow an RFC
// 6570 template, such as "notes://{id}": a resources/read of a URI no
// resource was added under is read through the first template (in order
// of registration) it matches, with the template's variables, and gated
// by that template's Permission alone.
//
// A URI matches a template exactly when it is one of the template's
// expansions (RFC 6570), compared in normal form (see Resource.URI): so
// a URI the first template could have expanded to is never served by a
// later one, however the values are split. When several splits expand to
// the URI, the values are those with the shortest first variable, then
// the shortest second, and so on.
type ResourceTemplate struct {
	// URITemplate is the template: literals and {var} or {+var}
	// expressions, two variables always separated by a literal.
	//
	// A {var} (simple expansion) spans unreserved characters and
	// percent-encoded octets; its value, decoded, never holds '/', '?' or
	// '#': a URI whose {var} would decode to one (file:///docs/..%2Fetc),
	// or to NUL or invalid UTF-8, matches the template but is refused
	// with -32602, after the permission check, and Read never sees it.
	//
	// A {+var} (reserved expansion) may span anything, '/' included, so
	// its value may hold "..": a Read that maps it to a file must confine
	// it itself (os.Root, filepath.IsLocal). Its octets are decoded but
	// for those of reserved characters and '%', which stay encoded
	// ("a%2Fb" stays "a%2Fb", never "a/b", which "a/b" itself expands
	// to). A value holding NUL or invalid UTF-8 is refused as for {var}.
	// A URI holding a "." or ".." path segment is refused before any
	// template is tried.
	//
	// A variable may match nothing: its value is then "".
	URITemplate string
	// Name, Title, Description and MimeType describe the resources the
	// template names, as for a Resource.
	Name, Title, Description, MimeType string
	Icons                              []Icon
	Annotations                        *ContentAnnotations
	// Meta is the template's _meta, encoded once, as Resource.Meta.
	Meta map[string]any
	// Permission is what a caller must hold to see the template, to read
	// any resource through it and to complete its variables. It is
	// required. A caller without it that reads a URI the template matches
	// gets 403 before Read runs: it learns that the URI falls under a
	// template it may not use, not whether the record exists (see
	// Permission).
	Permission Permission
	// Read returns the contents of uri, the URI read in normal form,
	// whose variables are in vars (decoded as URITemplate says). Its
	// errors are those of Resource.Read; a uri that matches but names
	// nothing is an error wrapping ErrResourceNotFound. It is required.
	Read func(ctx context.Context, c Caller, uri string, vars map[string]string) ([]ResourceContents, error)
	// List, optional, returns the concrete resources of this template the
	// caller may see (e.g. the caller's tenant's records); resources/list
	// shows them after the direct resources, for callers holding
	// Permission.
	//
	// The list is a courtesy and the read is the gate, and a read of an
	// entry's URI goes through the template (its Permission, its Read)
	// without calling List, which may cost as much as the list itself. So
	// an entry carries nothing that only a read could honour: it leaves
	// Permission empty (or names the template's) and Read nil, and
	// resources/list answers -32603, with a log line naming the entry,
	// when one does not. A resource that needs its own permission is
	// registered as a Resource, which a read of its URI finds before any
	// template; or it gets a template of its own.
	List func(ctx context.Context, c Caller) ([]Resource, error)
	// Complete suggests values of a variable by name (completion/complete).
	Complete map[string]Completer
}

// ErrResourceNotFound is what a Read returns (or wraps) for a resource that
// does not exist: the client gets the same answer as for a URI nothing
// matches.
var ErrResourceNotFound = errors.New("mcpmw: resource not found")

// CodeResourceNotFound is the error code of a resource not found on the
// legacy revisions; 2026-07-28 answers -32602 (CodeInvalidParams).
const CodeResourceNotFound = -32002

// resourceTable is an immutable snapshot of a Registry's resources and
// templates.
type resourceTable struct {
	res  catalogue[*resourceEntry] // the direct resources, by URI
	tmpl catalogue[*templateEntry] // the templates, by URI template
}

// resourceEntry is a resource with its definition encoded per revision and
// what a resources/read of it is checked against.
type resourceEntry struct {
	Resource
	norm      string // URI in normal form: the key it is found by
	enc       [revisionCount][]byte
	permIndex int
	target    Target
}

// templateEntry is a template, parsed, with its definition encoded per
// revision and the target a completion of its variables is checked
// against.
type templateEntry struct {
	ResourceTemplate
	tmpl      *uritemplate.Template
	enc       [revisionCount][]byte
	permIndex int // index of Permission in its catalogue's perms
	target    Target
}

var emptyResourceTable = &resourceTable{}

func (r *Registry) resources() *resourceTable {
	if t := r.res.Load(); t != nil {
		return t
	}
	return emptyResourceTable
}

// LookupResource returns the resource registered under uri, in any
// spelling of its normal form (notes://%33 finds notes://3), as it was
// registered: for an extension that checks, at its own registration, that
// a URI it names is served (MCP Apps' ui:// resource of a tool). A URI of
// a template's family is not a registered resource.
func (r *Registry) LookupResource(uri string) (Resource, bool) {
	norm, err := normalURI(uri)
	if err != nil {
		return Resource{}, false
	}
	if e := r.resources().res.byKey[norm]; e != nil {
		res := e.Resource
		res.Icons = cloneIcons(res.Icons)
		res.Meta = maps.Clone(res.Meta)
		if a := res.Annotations; a != nil {
			c := *a
			c.Audience = slices.Clone(a.Audience)
			if a.Priority != nil {
				p := *a.Priority
				c.Priority = &p
			}
			res.Annotations = &c
		}
		return res, true
	}
	return Resource{}, false
}

// resourceExtensions returns the extensions the registered resources
// belong to (Resource.Extension), each once, in order of registration.
func (r *Registry) resourceExtensions() []string {
	var ids []string
	for _, e := range r.resources().res.list {
		if e.Extension != "" && !slices.Contains(ids, e.Extension) {
			ids = append(ids, e.Extension)
		}
	}
	return ids
}

// hasResources reports whether the registry holds a resource or a
// template: the resources capability is served exactly then.
func (r *Registry) hasResources() bool {
	t := r.resources()
	return len(t.res.list)+len(t.tmpl.list) > 0
}

// AddResources registers resources. It panics, with a message naming the
// resource, if a URI is not absolute, has no normal form (a stray '%', a
// "." or ".." segment) or is already taken in another spelling, if Name,
// Permission or Read is missing, or if its annotations cannot be encoded.
// Watchers (subscriptions/listen) holding a permission of them are told
// the list changed.
func (r *Registry) AddResources(rs ...Resource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	add := make([]*resourceEntry, len(rs))
	for i, res := range rs {
		add[i] = prepareResource(res)
	}
	old := r.resources()
	next, perms := old.res.with("resource", add)
	r.res.Store(&resourceTable{res: *next, tmpl: old.tmpl})
	r.changed(ResourcesListChanged, perms)
}

// AddResourceTemplates registers resource templates. It panics, with a
// message naming the template, if a template does not parse or is already
// registered, if Name, Permission or Read is missing, or if Complete names
// a variable the template does not have.
func (r *Registry) AddResourceTemplates(ts ...ResourceTemplate) {
	r.mu.Lock()
	defer r.mu.Unlock()
	add := make([]*templateEntry, len(ts))
	for i, t := range ts {
		add[i] = prepareTemplate(t)
	}
	old := r.resources()
	next, perms := old.tmpl.with("resource template", add)
	r.res.Store(&resourceTable{res: old.res, tmpl: *next})
	r.changed(ResourcesListChanged, perms)
}

// RemoveResources unregisters the resources with these URIs (in any
// spelling) and reports how many were registered. A read already running
// finishes; later ones are not found (or read through a template the URI
// matches).
func (r *Registry) RemoveResources(uris ...string) int {
	keys := make([]string, len(uris))
	for i, u := range uris {
		keys[i] = u // a URI without a normal form is no key
		if n, err := normalURI(u); err == nil {
			keys[i] = n
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.resources()
	next, perms := old.res.without(keys)
	if len(perms) == 0 {
		return 0
	}
	r.res.Store(&resourceTable{res: *next, tmpl: old.tmpl})
	r.changed(ResourcesListChanged, perms)
	return len(perms)
}

// RemoveResourceTemplates unregisters the templates given by their
// URITemplate (in any spelling of its literals) and reports how many were
// registered.
func (r *Registry) RemoveResourceTemplates(uriTemplates ...string) int {
	keys := make([]string, len(uriTemplates))
	for i, t := range uriTemplates {
		keys[i] = uritemplate.Key(t)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.resources()
	next, perms := old.tmpl.without(keys)
	if len(perms) == 0 {
		return 0
	}
	r.res.Store(&resourceTable{res: old.res, tmpl: *next})
	r.changed(ResourcesListChanged, perms)
	return len(perms)
}

// templateByURI returns the target of the template registered under
// uriTemplate, in any spelling of its literals, for the permission gate
// and completion/complete, or nil.
func (r *Registry) templateByURI(uriTemplate string) *Target {
	byKey := r.resources().tmpl.byKey
	e := byKey[uriTemplate] // a template as listed is usually its own key
	if e == nil {
		e = byKey[uritemplate.Key(uriTemplate)]
	}
	if e == nil {
		return nil
	}
	return &e.target
}

// matchTemplate returns the first template uri, in normal form, matches,
// filling vars when it is not nil.
func (t *resourceTable) matchTemplate(uri string, vars map[string]string) *templateEntry {
	for _, e := range t.tmpl.list {
		if e.tmpl.Match(uri, vars) {
			return e
		}
	}
	return nil
}

// prepareResource validates res and encodes its definition per revision.
func prepareResource(res Resource) *resourceEntry {
	if err := checkResource(&res, true); err != nil {
		panic(fmt.Sprintf("mcpmw: resource %q: %v", res.URI, err))
	}
	if res.Read == nil {
		panic(fmt.Sprintf("mcpmw: resource %q has no Read func", res.URI))
	}
	norm, err := normalURI(res.URI)
	if err != nil {
		panic(fmt.Sprintf("mcpmw: resource %q: the URI has no normal form: %v", res.URI, err))
	}
	e := &resourceEntry{Resource: res, norm: norm, target: Target{Kind: "resource", Name: res.URI, Permission: res.Permission}}
	e.target.Found = e
	for v := range revisionCount {
		enc, err := appendResourceDef(nil, &res, v)
		if err != nil {
			panic(fmt.Sprintf("mcpmw: resource %q: %v", res.URI, err))
		}
		e.enc[v] = enc
	}
	return e
}

// checkResource checks what every listed resource needs: an absolute URI,
// a name, and, when needPermission (not for a template's List entries), a
// permission.
func checkResource(res *Resource, needPermission bool) error {
	switch {
	case !hasScheme(res.URI):
		return errors.New("the URI must be absolute, starting with a scheme such as \"notes:\"")
	case res.Name == "":
		return errors.New("it has no Name")
	case res.Permission == "" && needPermission:
		return errors.New("it has no Permission; name one that every permitted caller has")
	}
	return nil
}

// prepareTemplate validates t, parses its template and encodes its
// definition per revision.
func prepareTemplate(t ResourceTemplate) *templateEntry {
	fail := func(format string, a ...any) {
		panic(fmt.Sprintf("mcpmw: resource template %q: ", t.URITemplate) + fmt.Sprintf(format, a...))
	}
	tmpl, err := uritemplate.Parse(t.URITemplate)
	switch {
	case err != nil:
		fail("%v", err)
	case !hasScheme(t.URITemplate):
		fail("the template must be of absolute URIs, starting with a scheme such as \"notes:\"")
	case t.Name == "":
		fail("it has no Name")
	case t.Permission == "":
		fail("it has no Permission; name one that every permitted caller has")
	case t.Read == nil:
		fail("it has no Read func")
	}
	for name, c := range t.Complete {
		found := false
		for _, n := range tmpl.Names() {
			found = found || n == name
		}
		switch {
		case !found:
			fail("Complete names the variable %q, which the template does not have (it has %v)", name, tmpl.Names())
		case c == nil:
			fail("the Completer of %q is nil", name)
		}
	}
	t.Complete = maps.Clone(t.Complete) // looked up at every completion/complete: the caller's map may change
	e := &templateEntry{ResourceTemplate: t, tmpl: tmpl,
		target: Target{Kind: "resource template", Name: t.URITemplate, Permission: t.Permission}}
	e.target.Found = e
	for v := range revisionCount {
		enc, err := appendTemplateDef(nil, &t, v)
		if err != nil {
			fail("%v", err)
		}
		e.enc[v] = enc
	}
	return e
}

// appendResourceDef encodes a Resource as revision v defines it.
func appendResourceDef(dst []byte, r *Resource, v revision) ([]byte, error) {
	dst = append(dst, `{"uri":`...)
	dst = jsonwire.AppendString(dst, r.URI)
	dst = appendDescriptor(dst, r.Name, r.Title, r.Description, r.MimeType, r.Icons, v)
	if r.Size > 0 {
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, r.Size, 10)
	}
	dst, err := appendAnnotations(dst, r.Annotations)
	if err != nil {
		return dst, err
	}
	return appendMetaMember(append(dst, '}'), r.Meta)
}

// appendTemplateDef encodes a ResourceTemplate as revision v defines it.
func appendTemplateDef(dst []byte, t *ResourceTemplate, v revision) ([]byte, error) {
	dst = append(dst, `{"uriTemplate":`...)
	dst = jsonwire.AppendString(dst, t.URITemplate)
	dst = appendDescriptor(dst, t.Name, t.Title, t.Description, t.MimeType, t.Icons, v)
	dst, err := appendAnnotations(dst, t.Annotations)
	if err != nil {
		return dst, err
	}
	return appendMetaMember(append(dst, '}'), t.Meta)
}

// appendDescriptor appends the members resources and templates share.
func appendDescriptor(dst []byte, name, title, description, mimeType string, icons []Icon, v revision) []byte {
	dst = append(dst, `,"name":`...)
	dst = jsonwire.AppendString(dst, name)
	for _, f := range [...]struct{ k, v string }{{"title", title}, {"description", description}, {"mimeType", mimeType}} {
		if f.v != "" {
			dst = append(dst, ',')
			dst = jsonwire.AppendString(dst, f.k)
			dst = append(dst, ':')
			dst = jsonwire.AppendString(dst, f.v)
		}
	}
	if len(icons) > 0 && v.icons() {
		dst = append(dst, `,"icons":`...)
		dst = appendIcons(dst, icons)
	}
	return dst
}

// appendContents encodes the contents of a read of uri; it fails when
// the contents' Meta cannot be encoded.
func appendContents(dst []byte, c *ResourceContents, uri string) ([]byte, error) {
	if c.URI != "" {
		uri = c.URI
	}
	dst = append(dst, `{"uri":`...)
	dst = jsonwire.AppendString(dst, uri)
	if c.MimeType != "" {
		dst = append(dst, `,"mimeType":`...)
		dst = jsonwire.AppendString(dst, c.MimeType)
	}
	if c.Blob != nil {
		dst = append(dst, `,"blob":`...)
		dst = jsonwire.AppendBase64(dst, c.Blob)
	} else {
		dst = append(dst, `,"text":`...)
		dst = jsonwire.AppendString(dst, c.Text)
	}
	return appendMetaMember(append(dst, '}'), c.Meta)
}
