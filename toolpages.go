package mcpmw

import (
	"encoding/binary"
	"strconv"
	"sync"
)

// What a caller sees in tools/list depends only on which of the registry's
// capabilities it holds, so the handler asks Caller.Can once per distinct
// permission (not once per tool), and the encoded page for that set is
// built once and then reused byte for byte. The cost of a list is then
// independent of how many tools are registered, and a page is written
// without being re-encoded.

// page is one encoded tools/list result.
type page struct {
	body    []byte // the result object, complete for its revision
	summary string // for the audit record
	err     *Response
}

// pageCache holds the pages of one toolTable. It is bounded: when full it
// starts over, which costs one rebuild per distinct visible set.
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

// pageKey appends the cache key of a tools/list request to dst: revision,
// offset, and a bitset of the table's capabilities the caller holds.
func pageKey(dst []byte, tab *toolTable, c Caller, rev revision, off int) []byte {
	dst = append(dst, byte(rev))
	dst = binary.AppendUvarint(dst, uint64(off))
	var bits byte
	for i, p := range tab.perms {
		if c.Can(p) {
			bits |= 1 << (i % 8)
		}
		if i%8 == 7 {
			dst, bits = append(dst, bits), 0
		}
	}
	if len(tab.perms)%8 != 0 {
		dst = append(dst, bits)
	}
	return dst
}

// allowed reports whether the key's bitset (after its rev and offset
// prefix of length at) grants permission index i.
func allowed(key []byte, at, i int) bool { return key[at+i/8]&(1<<(i%8)) != 0 }

// pageFormat is what a tools/list page is made of besides the tools: the
// page size and the 2026-07-28 envelope fields.
type pageFormat struct {
	size       int
	ttlMs      int64
	serverMeta []byte
}

// page answers tools/list for caller at offset off: the cached page of the
// tools caller's permissions show, built on first use.
func (f pageFormat) page(tab *toolTable, caller Caller, rev revision, off int) *Response {
	var keyBuf [64]byte
	key := pageKey(keyBuf[:0], tab, caller, rev, off)
	p := tab.pages.get(key)
	if p == nil {
		if p = f.build(tab, key, rev, off); p.err != nil {
			return p.err
		}
		tab.pages.put(key, p)
	}
	return &Response{Result: p.body, Summary: p.summary, encoded: true}
}

// build encodes the page the key describes.
func (f pageFormat) build(tab *toolTable, key []byte, rev revision, off int) *page {
	_, n := binary.Uvarint(key[1:])
	at := 1 + n
	var picked []*entry
	seen, next := 0, -1
	size := 0
	for _, e := range tab.list {
		if !allowed(key, at, e.permIndex) {
			continue
		}
		if seen < off {
			seen++
			continue
		}
		if len(picked) == f.size {
			next = off + len(picked)
			break
		}
		picked = append(picked, e)
		size += len(e.enc[rev]) + 1
	}
	if seen < off {
		return &page{err: ErrorResponse(CodeInvalidParams, "Invalid params: cursor is past the end of the list; list again without a cursor")}
	}
	dst := make([]byte, 0, size+96+len(f.serverMeta))
	if rev.envelope() {
		dst = append(dst, `{"resultType":"complete","tools":[`...)
	} else {
		dst = append(dst, `{"tools":[`...)
	}
	for i, e := range picked {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, e.enc[rev]...)
	}
	dst = append(dst, ']')
	if next >= 0 {
		dst = append(dst, `,"nextCursor":`...)
		dst = appendString(dst, encodeCursor(next))
	}
	if rev.envelope() {
		dst = append(dst, `,"ttlMs":`...)
		dst = strconv.AppendInt(dst, f.ttlMs, 10)
		dst = append(dst, `,"cacheScope":"private",`...)
		dst = append(dst, f.serverMeta...)
	}
	dst = append(dst, '}')
	return &page{body: dst, summary: "listed " + strconv.Itoa(len(picked)) + " tools"}
}
