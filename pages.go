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
func pageKey(dst []byte, tab *toolTable, c Caller, rev, off int) []byte {
	dst = append(dst, byte(rev))
	dst = binary.AppendUvarint(dst, uint64(off))
	var bits byte
	for i, p := range tab.caps {
		if c.Can(p) {
			bits |= 1 << (i % 8)
		}
		if i%8 == 7 {
			dst, bits = append(dst, bits), 0
		}
	}
	if len(tab.caps)%8 != 0 {
		dst = append(dst, bits)
	}
	return dst
}

// allowed reports whether the key's bitset (after its rev and offset
// prefix of length at) grants permission index i.
func allowed(key []byte, at, i int) bool { return key[at+i/8]&(1<<(i%8)) != 0 }

// buildPage encodes the page the key describes.
func (c *core) buildPage(tab *toolTable, key []byte, rev, off int, legacy bool) *page {
	_, n := binary.Uvarint(key[1:])
	at := 1 + n
	var picked []*entry
	seen, next := 0, -1
	size := 0
	for _, e := range tab.list {
		if !allowed(key, at, e.capIndex) {
			continue
		}
		if seen < off {
			seen++
			continue
		}
		if len(picked) == c.pageSize {
			next = off + len(picked)
			break
		}
		picked = append(picked, e)
		size += len(e.enc[rev]) + 1
	}
	if seen < off {
		return &page{err: ErrorResponse(CodeInvalidParams, "Invalid params: cursor is past the end of the list; list again without a cursor")}
	}
	dst := make([]byte, 0, size+96+len(c.p.serverMeta))
	if legacy {
		dst = append(dst, `{"tools":[`...)
	} else {
		dst = append(dst, `{"resultType":"complete","tools":[`...)
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
	if !legacy {
		dst = append(dst, `,"ttlMs":`...)
		dst = strconv.AppendInt(dst, c.p.ttlMs, 10)
		dst = append(dst, `,"cacheScope":"private",`...)
		dst = append(dst, c.p.serverMeta...)
	}
	dst = append(dst, '}')
	return &page{body: dst, summary: "listed " + strconv.Itoa(len(picked)) + " tools"}
}
