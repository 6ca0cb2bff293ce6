package mcpmw

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// A List is what a method of an extension lists per caller (skills/list's
// skills, say), served exactly as tools/list is: pages of the Handler's
// PageSize, cursors that no other list accepts, Caller.Can asked once per
// distinct permission rather than once per item, each page encoded once
// per set of permissions and then reused byte for byte, and on
// 2026-07-28 the Handler's ttlMs, cacheScope ("private": what a caller
// sees depends on who it is) and serverInfo. A List is immutable: to
// change what is listed, build a new one and serve that (hold it in an
// atomic.Pointer), which starts its cache afresh. It is safe for
// concurrent use, by several Handlers too.
type List struct {
	kind  listKind
	items []*listItem
	perms []guard  // distinct permissions, in order of first use
	pages sync.Map // *pageFormat (a Handler's) → *pageCache
}

// A ListItem is one item of a List: the JSON object listed, and the
// permission a caller must hold to see it (and, for the method that
// reads the item, to use it: the list is a courtesy, the call check is
// the gate).
type ListItem struct {
	Permission Permission
	JSON       json.RawMessage
}

// listItem is a ListItem as a List keeps it.
type listItem struct {
	permIndex int
	enc       []byte
}

func (e *listItem) listed(revision) (int, []byte) { return e.permIndex, e.enc }

// NewList returns the List of items, in this order, listed under the
// result member name (e.g. "skills"). It panics when name is empty, or an
// item is not a JSON object or has no Permission.
func NewList(name string, items ...ListItem) *List {
	if name == "" {
		panic("mcpmw: NewList needs the name of the result member the items are listed under")
	}
	l := &List{kind: listKind{name: name, cursor: name + ":", noun: "item"}, items: make([]*listItem, len(items))}
	idx := map[Permission]int{}
	for i, it := range items {
		var enc bytes.Buffer
		if err := json.Compact(&enc, it.JSON); err != nil || jsonwire.KindOf(enc.Bytes()) != jsonwire.KindObject {
			panic(fmt.Sprintf("mcpmw: NewList(%q): item %d is not a JSON object", name, i))
		}
		if it.Permission == "" {
			panic(fmt.Sprintf("mcpmw: NewList(%q): item %d has no Permission; name one that every caller who may see it has", name, i))
		}
		p, ok := idx[it.Permission]
		if !ok {
			p = len(l.perms)
			l.perms = append(l.perms, guard{perm: it.Permission})
			idx[it.Permission] = p
		}
		l.items[i] = &listItem{permIndex: p, enc: enc.Bytes()}
	}
	return l
}

// Len returns how many items l holds.
func (l *List) Len() int { return len(l.items) }

// Page answers req, a request of a list method, with the page of l its
// params.cursor names that req.Caller may see, in the Handler's page
// format: call it from the Method's Handle. An unknown or foreign cursor,
// or one past the end, gets -32602.
func (l *List) Page(ctx context.Context, req *Request) *Response {
	off, resp := listCursor(req, l.kind)
	if resp != nil {
		return resp
	}
	f := &defaultPageFormat
	if info := callFrom(ctx); info != nil && info.format != nil {
		f = info.format
	}
	caller := req.Caller
	if caller == nil {
		caller = nobody{}
	}
	return cachedPage(*f, l.kind, l.items, l.perms, l.cacheFor(f), caller, req.ClientCapabilities, req.revision(), off)
}

// cacheFor returns l's page cache for the page format f of one Handler.
func (l *List) cacheFor(f *pageFormat) *pageCache {
	if c, ok := l.pages.Load(f); ok {
		return c.(*pageCache)
	}
	c, _ := l.pages.LoadOrStore(f, &pageCache{})
	return c.(*pageCache)
}

// defaultPageFormat is the format of a List served outside a Handler's
// request (a test calling Page directly, say): the default page size,
// nothing else.
var defaultPageFormat = pageFormat{size: defaultPageSize}

// nobody is the Caller of a request without one: it may use nothing.
type nobody struct{}

func (nobody) Can(Permission) bool { return false }
