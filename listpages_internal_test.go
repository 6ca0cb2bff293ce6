package mcpmw

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The page cache starts over when it holds maxCachedPages pages, or when a
// page would take it past maxCachedPageBytes; up to the bounds it keeps
// every page.
func TestPageCacheBounds(t *testing.T) {
	t.Parallel()
	var c pageCache
	small := &page{body: []byte("{}")}
	for i := range maxCachedPages {
		c.put([]byte(strconv.Itoa(i)), small)
	}
	assert.Len(t, c.m, maxCachedPages, "full, not yet over")
	assert.Same(t, small, c.get([]byte("0")))
	c.put([]byte("one more"), small)
	assert.Len(t, c.m, 1, "started over")
	assert.Nil(t, c.get([]byte("0")))

	var b pageCache
	b.put([]byte("a"), &page{body: make([]byte, maxCachedPageBytes-2)})
	b.put([]byte("b"), &page{body: make([]byte, 2)})
	assert.Len(t, b.m, 2, "exactly at the byte bound: kept")
	assert.Equal(t, maxCachedPageBytes, b.bytes)
	b.put([]byte("c"), &page{body: make([]byte, 1)})
	assert.Len(t, b.m, 1, "one byte over: started over")
	assert.Equal(t, 1, b.bytes)
}
