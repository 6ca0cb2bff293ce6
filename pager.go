package mcpmw

import (
	"strconv"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// Every paginated list (tools, prompts, resources with the entries of
// their templates' List, resource templates) is paged by one pager: it
// skips the first off entries the caller may see, takes at most a page's
// worth, notes where the next page starts, and closes the result with the
// list's cursor and, on 2026-07-28, its cache trailer. Tools, prompts and
// templates keep the pages it builds (listpages.go); a resources/list
// page, which holds what templates list for one caller, is built for each
// request.

// A listKind is what a paginated list is called: its member in the
// result (name), the prefix of its cursors (cursor.go: a cursor of one list is
// no cursor of another) and the noun its record's summary counts.
type listKind struct{ name, cursor, noun string }

var (
	toolsList     = listKind{"tools", "tools:", "tool"}
	promptsList   = listKind{"prompts", "prompts:", "prompt"}
	resourcesList = listKind{"resources", "resources:", "resource"}
	templatesList = listKind{"resourceTemplates", "templates:", "resource template"}
)

// defaultPageSize is Options.PageSize's default.
const defaultPageSize = 100

// pageFormat is what a list page is made of besides its entries: the
// Handler's page size, and the 2026-07-28 envelope fields.
type pageFormat struct {
	size       int
	ttlMs      int64
	serverMeta []byte
}

// pager builds one page of a list of kind.
type pager struct {
	kind      listKind
	f         pageFormat
	rev       revision
	off, seen int // the offset, and the visible entries skipped so far
	n         int // entries on the page
	next      int // the next page's offset, once the page is full (at least 1: a page holds at least one entry); -1 until then
	body      []byte
}

// newPager starts the page at offset off of a list of kind, for revision
// rev, with room for about size bytes of entries.
func newPager(kind listKind, f pageFormat, rev revision, off, size int) pager {
	p := pager{kind: kind, f: f, rev: rev, off: off, next: -1}
	p.body = openResult(make([]byte, 0, size+96+len(kind.name)+len(f.serverMeta)), rev)
	p.body = jsonwire.AppendString(p.body, kind.name)
	p.body = append(p.body, ":["...)
	return p
}

// take reports whether the page has room for one more entry the caller
// may see (and counts it), skipping those before the offset; once it is
// full it records where the next page starts.
func (p *pager) take() bool {
	switch {
	case p.next >= 0:
		return false
	case p.seen < p.off:
		p.seen++
		return false
	case p.n == p.f.size:
		p.next = p.off + p.n
		return false
	}
	if p.n > 0 {
		p.body = append(p.body, ',')
	}
	p.n++
	return true
}

// add puts enc, the encoding of an entry the caller may see, on the page
// if it has room for it, and reports whether the page is full.
func (p *pager) add(enc []byte) (full bool) {
	if p.take() {
		p.body = append(p.body, enc...)
	}
	return p.full()
}

// full reports whether the page found its last entry and the next one.
func (p *pager) full() bool { return p.next >= 0 }

// close ends the page: the next cursor, and on 2026-07-28 the list's
// cache trailer and serverInfo. It refuses a cursor past the end of the
// list.
func (p *pager) close() *Response {
	if p.seen < p.off {
		return ErrorResponse(CodeInvalidParams, "Invalid params: cursor is past the end of the list; list again without a cursor")
	}
	p.body = append(p.body, ']')
	if p.next >= 0 {
		p.body = append(p.body, `,"nextCursor":`...)
		p.body = jsonwire.AppendString(p.body, encodeListCursor(p.kind.cursor, p.next))
	}
	p.body = closeCachedResult(p.body, p.rev, p.f.ttlMs, "private", p.f.serverMeta)
	return &Response{Result: p.body, Summary: "listed " + strconv.Itoa(p.n) + " " + p.kind.noun + plural(p.n), encoded: true}
}
