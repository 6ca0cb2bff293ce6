package mcpmw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// resourceMethods serves the resources capability from a Registry:
// resources/list, resources/templates/list, resources/read, and on the
// legacy revisions resources/subscribe and resources/unsubscribe, which a
// stateless endpoint accepts and cannot remember.
type resourceMethods struct {
	rounds   *rounds // rounds of asking the client (Ask)
	reg      *Registry
	pageSize int
	ttl      time.Duration
	ad       *advertisement // for serverInfo in results
	pages    listPages[*templateEntry]
}

func (m *resourceMethods) methods() []Method {
	legacy := []string{Version20251125, Version20250618}
	return []Method{
		{Name: "resources/list", Capability: "resources", Handle: m.list},
		{Name: "resources/templates/list", Capability: "resources", Handle: m.templatesList, quick: true},
		{Name: "resources/read", Capability: "resources", NameParam: "uri", Streams: true, Target: m.target, Handle: m.read},
		{Name: "resources/subscribe", Capability: "resources", Revisions: legacy, Handle: m.subscribe, quick: true},
		{Name: "resources/unsubscribe", Capability: "resources", Revisions: legacy, Handle: m.subscribe, quick: true},
	}
}

// format is what this handler's list pages are made of.
func (m *resourceMethods) format() pageFormat {
	return pageFormat{size: m.pageSize, ttlMs: m.ttl.Milliseconds(), serverMeta: m.ad.serverMeta}
}

// list answers resources/list: the direct resources the caller may see,
// in registration order, then the entries of each permitted template's
// List, one page at a time. A template's List runs only when the page
// reaches past the direct resources.
func (m *resourceMethods) list(ctx context.Context, req *Request) *Response {
	off, resp := listCursor(req, resourcesList)
	if resp != nil {
		return resp
	}
	tab, rev := m.reg.resources(), req.revision()
	size := 0
	for _, e := range tab.res.list {
		size += len(e.enc[rev]) + 1
	}
	p := newPager(resourcesList, m.format(), rev, off, min(size, 64<<10))
	listDirect(&p, &tab.res, req.Caller)
	for _, t := range tab.tmpl.list {
		if p.full() {
			break
		}
		if t.List != nil && req.Caller.Can(t.Permission) {
			if resp := listTemplate(ctx, &p, t, req.Caller); resp != nil {
				return resp
			}
		}
	}
	return p.close()
}

// listDirect puts on p the direct resources c may see, but the Unlisted,
// asking c.Can once per distinct permission.
func listDirect(p *pager, res *catalogue[*resourceEntry], c Caller) {
	can := make([]int8, len(res.perms)) // 0 unknown, 1 yes, -1 no
	for _, e := range res.list {
		if e.Unlisted {
			continue
		}
		if can[e.permIndex] == 0 {
			can[e.permIndex] = -1
			if c.Can(e.Permission) {
				can[e.permIndex] = 1
			}
		}
		if can[e.permIndex] > 0 && p.add(e.enc[p.rev]) {
			return
		}
	}
}

// listTemplate puts on p the resources template t's List returns for c,
// each checked first (checkListEntry): a List that fails, or returns an
// entry it may not, fails the whole list.
func listTemplate(ctx context.Context, p *pager, t *templateEntry, c Caller) *Response {
	entries, err := t.List(ctx, c)
	if err != nil {
		return internalError("", fmt.Errorf("resource template %q: List: %w", t.URITemplate, err), "")
	}
	for i := range entries {
		if err := checkListEntry(&entries[i], t.Permission); err != nil {
			return internalError("", fmt.Errorf("resource template %q: List returned the resource %q: %v", t.URITemplate, entries[i].URI, err), "")
		}
	}
	for i := range entries {
		r := &entries[i]
		if !p.take() {
			if p.full() {
				break
			}
			continue
		}
		if p.body, err = appendResourceDef(p.body, r, p.rev); err != nil {
			return internalError("", fmt.Errorf("resource template %q: List returned the resource %q: %w", t.URITemplate, r.URI, err), "")
		}
	}
	return nil
}

// checkListEntry checks a resource a template's List returned: what every
// listed resource needs, and nothing that only a read could honour, since
// a read of its URI is gated by the template's permission and served by
// the template's Read (see ResourceTemplate.List).
func checkListEntry(r *Resource, permission Permission) error {
	switch {
	case r.Permission != "" && r.Permission != permission:
		return fmt.Errorf("it names the Permission %q, which a read of its URI would not check (the template's %q gates it): "+
			"register it as a Resource with that Permission, or give it a template of its own", r.Permission, permission)
	case r.Read != nil:
		return errors.New("it has a Read func, which a read of its URI would not call (the template's Read serves it): leave it nil")
	}
	return checkResource(r, false)
}

// templatesList answers resources/templates/list: the templates the
// caller may use, in registration order, one cached page at a time, like
// tools/list.
func (m *resourceMethods) templatesList(_ context.Context, req *Request) *Response {
	return listCatalogue(req, templatesList, m.format(), &m.reg.resources().tmpl, &m.pages)
}

// readURI reads the uri of a resources/read.
func readURI(req *Request) (string, *Response) {
	uri, ok := req.StringParam("uri")
	if !ok {
		return "", ErrorResponse(CodeInvalidParams, "Invalid params: "+req.Method+" needs params.uri, the resource's URI as a string")
	}
	return uri, nil
}

// readTarget is what the URI of a resources/read names: a direct
// resource, or the first template the URI matches and its values.
type readTarget struct {
	uri  string         // a direct resource's URI as registered, else the URI read in normal form
	res  *resourceEntry // the direct resource, or nil
	tmpl *templateEntry // else the template
	vars map[string]string
}

// templateRead is the target of a read through a template: the URI read,
// gated by the template's permission, and what the read needs. Its
// Target's found is the templateRead itself.
type templateRead struct {
	target Target
	read   readTarget
}

// readTargetOf is what t, a target m.target found, names.
func readTargetOf(t *Target) readTarget {
	if e, ok := t.Found.(*resourceEntry); ok {
		return readTarget{uri: e.URI, res: e}
	}
	return t.Found.(*templateRead).read
}

// target finds what a resources/read names, by the normal form of its
// URI (the one view of a URI every lookup and match shares): a resource
// added under that URI, in any spelling, else the first template the URI
// matches, with its values. A string with no normal form is -32602.
func (m *resourceMethods) target(req *Request) (*Target, *Response) {
	raw, resp := readURI(req)
	if resp != nil {
		return nil, resp
	}
	uri, err := normalURI(raw)
	if err != nil {
		resp := ErrorResponse(CodeInvalidParams, "Invalid params: params.uri is not a URI: "+err.Error())
		resp.Target = capEcho(raw)
		return nil, resp
	}
	tab := m.reg.resources()
	if e := tab.res.byKey[uri]; e != nil {
		return &e.target, nil
	}
	vars := map[string]string{}
	if t := tab.matchTemplate(uri, vars); t != nil {
		tr := &templateRead{target: Target{Kind: "resource", Name: uri, Permission: t.Permission}, read: readTarget{uri: uri, tmpl: t, vars: vars}}
		tr.target.Found = tr
		return &tr.target, nil
	}
	return nil, resourceNotFound(req, uri)
}

// resourceNotFound is the answer to a read of a URI that names nothing:
// -32602 on 2026-07-28, -32002 on the legacy revisions, with the URI
// (capped) in data.
func resourceNotFound(req *Request, uri string) *Response {
	code := CodeInvalidParams
	if req.revision().legacy() {
		code = CodeResourceNotFound
	}
	echo := capEcho(uri)
	data := jsonwire.AppendString(append(make([]byte, 0, len(echo)+16), `{"uri":`...), echo)
	return &Response{
		Error:   &Error{Code: code, Message: "Resource not found: " + echo, Data: json.RawMessage(append(data, '}'))},
		Target:  echo,
		Summary: "resource not found",
	}
}

// read answers resources/read. The handler checked the caller's permission
// before the middleware ran; when a middleware has since rewritten the
// request, what it names is checked here (AdmittedTarget).
func (m *resourceMethods) read(ctx context.Context, req *Request) *Response {
	t, resp := AdmittedTarget(ctx, req, m.target)
	if resp != nil {
		return resp
	}
	rt := readTargetOf(t)
	uri := rt.uri
	if rt.tmpl != nil {
		if name, why := rt.tmpl.tmpl.BadValue(rt.vars); name != "" {
			resp := ErrorResponse(CodeInvalidParams, "Invalid params: the value of {"+name+"} in this URI, "+quoteEcho(rt.vars[name])+", "+why+
				": the resource template "+strconv.Quote(rt.tmpl.URITemplate)+" does not read it")
			resp.Target = capEcho(uri)
			return resp
		}
	}
	ctx, rnd, resp := m.rounds.begin(ctx, req, uri)
	if resp != nil {
		return resp
	}
	var contents []ResourceContents
	var err error
	if rt.res != nil {
		contents, err = rt.res.Read(ctx, req.Caller, uri)
	} else {
		contents, err = rt.tmpl.Read(ctx, req.Caller, uri, rt.vars)
	}
	if ctx.Err() != nil {
		return clientGone(ctx, capEcho(uri))
	}
	if resp, asked := m.rounds.inputRequired(req, t, rnd, err); asked {
		resp.Target = capEcho(uri)
		return resp
	}
	if err != nil {
		return readError(req, uri, err)
	}
	if len(contents) == 0 {
		return internalError(capEcho(uri), fmt.Errorf("resource %q: Read returned no contents and no error (return ErrResourceNotFound for a resource that does not exist)", capEcho(uri)),
			"read failed: Read returned no contents and no error")
	}
	result, err := m.encodeRead(contents, uri, req.revision())
	if err != nil {
		return internalError(capEcho(uri), fmt.Errorf("resource %q: Read returned contents: %w", capEcho(uri), err), "read failed: contents whose Meta cannot be encoded")
	}
	return &Response{Result: result, Target: capEcho(uri),
		Summary: "read " + strconv.Itoa(len(contents)) + " content" + plural(len(contents)), encoded: true}
}

// readError turns an error a Read returned into its Response.
func readError(req *Request, uri string, err error) *Response {
	var je *Error
	var ke *AskError
	switch {
	case errors.Is(err, ErrResourceNotFound):
		return resourceNotFound(req, uri)
	case errors.As(err, &je):
		return &Response{Error: je, Target: capEcho(uri), Summary: capEcho(je.Message)}
	case errors.As(err, &ke):
		// A legacy client that would not or could not answer what the read
		// asked: nothing failed on this side, so nothing is logged.
		resp := ErrorResponse(CodeInternalError, "The resource could not be read: "+ke.Error())
		resp.Target, resp.Summary = capEcho(uri), capEcho(ke.Error())
		return resp
	default:
		return failed(capEcho(uri), "read", err)
	}
}

// encodeRead encodes a ReadResourceResult for revision v.
func (m *resourceMethods) encodeRead(contents []ResourceContents, uri string, v revision) ([]byte, error) {
	size := 96 + len(m.ad.serverMeta)
	for i := range contents {
		c := &contents[i]
		size += 48 + len(c.URI) + len(uri) + len(c.MimeType) + len(c.Text) + len(c.Text)/8 + len(c.Blob)*4/3
	}
	dst := append(openResult(make([]byte, 0, size), v), `"contents":[`...)
	for i := range contents {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendContents(dst, &contents[i], uri); err != nil {
			return nil, err
		}
	}
	return closeCachedResult(append(dst, ']'), v, m.ttl.Milliseconds(), "private", m.ad.serverMeta), nil
}

// subscribe answers a legacy resources/subscribe or unsubscribe with {}: a
// stateless endpoint keeps no subscriptions (a 2026-07-28 client names the
// URIs it watches on subscriptions/listen instead). The record names the
// URI in normal form when it has one.
func (m *resourceMethods) subscribe(_ context.Context, req *Request) *Response {
	uri, resp := readURI(req)
	if resp != nil {
		return resp
	}
	if n, err := normalURI(uri); err == nil {
		uri = n
	}
	return &Response{Result: json.RawMessage("{}"), Target: capEcho(uri), encoded: true,
		Summary: "accepted; a stateless endpoint keeps no subscriptions"}
}
