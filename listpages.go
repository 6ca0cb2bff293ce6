package mcpmw

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
)

// What a caller sees in tools/list (prompts/list, resources/templates/list)
// depends only on which
// of the registry's permissions it holds, so the handler asks Caller.Can
// once per distinct permission (not once per entry), and the encoded page
// for that set is built once and then reused byte for byte. The cost of a
// list is then independent of how many entries are registered, and a page
// is written without being re-encoded. Tools, prompts and resource
// templates share this code, and the one pager (pager.go); entries say, through listEntry, what guards them and how they are
// encoded.
//
// A page is shaped by the registry's entries (one snapshot of its table),
// the revision, the offset, the caller's permissions, and the Handler's
// page size, ttlMs and serverInfo. The last three are the Handler's: two
// Handlers may serve one Registry with different ones. So the cache is
// the Handler's own, one per list (listPages), holding the pages of one
// snapshot and started afresh for the next; its key is the rest: the
// revision, the offset and the permission bits (pageKey).

// A listEntry is one registered tool, prompt or template as a list sees it: the index
// of its permission in its table's perms, and its definition encoded for
// a revision.
type listEntry interface {
	listed(rev revision) (permIndex int, enc []byte)
}

func (e *entry) listed(rev revision) (int, []byte)         { return e.permIndex, e.enc[rev] }
func (e *promptEntry) listed(rev revision) (int, []byte)   { return e.permIndex, e.enc[rev] }
func (e *templateEntry) listed(rev revision) (int, []byte) { return e.permIndex, e.enc[rev] }

// page is one encoded list result.
type page struct {
	body    []byte // the result object, complete for its revision
	summary string // for the audit record
	err     *Response
}

// pageCache holds one Handler's pages of one snapshot of a table
// (toolTable, promptTable, a resourceTable's templates). It is bounded: when full it starts over, which
// costs one rebuild per distinct visible set.
type pageCache struct {
	mu    sync.RWMutex
	m     map[string]*page
	bytes int
}

const (
	maxCachedPages     = 1024
	maxCachedPageBytes = 32 << 20
)

func (c *pageCache) get(key []byte) *page {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[string(key)]
}

func (c *pageCache) put(key []byte, p *page) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedPages || c.bytes+len(p.body) > maxCachedPageBytes {
		c.m, c.bytes = make(map[string]*page), 0
	}
	c.m[string(key)] = p
	c.bytes += len(p.body)
}

// listPages is one Handler's cache of one list's pages: those of the
// snapshot of the table it last served, replaced whole when a request
// brings a newer snapshot, so that no page outlives the entries it lists.
type listPages[E catalogued] struct {
	cur atomic.Pointer[snapshotPages[E]]
}

// snapshotPages are the pages of one snapshot.
type snapshotPages[E catalogued] struct {
	of    *catalogue[E]
	pages pageCache
}

// of returns the cache of the pages of snapshot c. Requests racing across
// a change of the registry may each start one; the last one stored stays.
func (l *listPages[E]) of(c *catalogue[E]) *pageCache {
	if p := l.cur.Load(); p != nil && p.of == c {
		return &p.pages
	}
	p := &snapshotPages[E]{of: c}
	l.cur.Store(p)
	return &p.pages
}

// pageKey appends the cache key of a list request to dst: revision,
// offset, and a bitset of the table's guards the request passes (the
// permissions the caller holds, and the client capabilities it declares
// where an entry needs some).
func pageKey(dst []byte, perms []guard, c Caller, caps []byte, rev revision, off int) []byte {
	dst = append(dst, byte(rev))
	dst = binary.AppendUvarint(dst, uint64(off))
	var bits byte
	for i, g := range perms {
		if g.open(c, caps, rev) {
			bits |= 1 << (i % 8)
		}
		if i%8 == 7 {
			dst, bits = append(dst, bits), 0
		}
	}
	if len(perms)%8 != 0 {
		dst = append(dst, bits)
	}
	return dst
}

// allowed reports whether the key's bitset (after its rev and offset
// prefix of length at) grants permission index i.
func allowed(key []byte, at, i int) bool { return key[at+i/8]&(1<<(i%8)) != 0 }

// listCatalogue answers a request for the list of kind whose entries are
// the catalogue c (one snapshot of a table): the page its cursor names,
// from this Handler's cache of c's pages, pages.
func listCatalogue[E interface {
	catalogued
	listEntry
}](req *Request, kind listKind, f pageFormat, c *catalogue[E], pages *listPages[E]) *Response {
	off, resp := listCursor(req, kind)
	if resp != nil {
		return resp
	}
	return cachedPage(f, kind, c.list, c.perms, pages.of(c), req.Caller, req.ClientCapabilities, req.revision(), off)
}

// cachedPage answers a list request of kind (tools/list: toolsList) for
// caller at offset off: the cached page of the entries of list the
// caller's permissions show, built on first use. perms are list's
// table's, and pages the cache of that table's pages in format f.
func cachedPage[E listEntry](f pageFormat, kind listKind, list []E, perms []guard, pages *pageCache, caller Caller, caps []byte, rev revision, off int) *Response {
	var keyBuf [64]byte
	key := pageKey(keyBuf[:0], perms, caller, caps, rev, off)
	p := pages.get(key)
	if p == nil {
		if p = buildPage(f, kind, list, key, rev, off); p.err != nil {
			return p.err
		}
		pages.put(key, p)
	}
	return &Response{Result: p.body, Summary: p.summary, encoded: true}
}

// buildPage encodes the page the key describes.
func buildPage[E listEntry](f pageFormat, kind listKind, list []E, key []byte, rev revision, off int) *page {
	_, n := binary.Uvarint(key[1:])
	at := 1 + n
	size := 0
	for _, e := range list {
		_, enc := e.listed(rev)
		size += len(enc) + 1
	}
	p := newPager(kind, f, rev, off, min(size, 64<<10))
	for _, e := range list {
		permIndex, enc := e.listed(rev)
		if allowed(key, at, permIndex) && p.add(enc) {
			break
		}
	}
	resp := p.close()
	if resp.Error != nil {
		return &page{err: resp}
	}
	return &page{body: resp.Result, summary: resp.Summary}
}
