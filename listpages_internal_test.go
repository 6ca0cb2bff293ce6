package mcpmw

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// permSet is a Caller holding exactly the permissions in it.
type permSet map[Permission]bool

func (p permSet) Can(perm Permission) bool { return p[perm] }

// With more than 8 distinct permissions the page key's bitset spans
// several bytes: a caller holding only the ninth and tenth sees exactly
// their tools.
func TestPageKeyBeyondEightPermissions(t *testing.T) {
	t.Parallel()
	var reg Registry
	for i := range 12 {
		n := strconv.Itoa(i)
		reg.AddTools(Tool{Name: "t" + n, Permission: Permission("p" + n), Call: func(context.Context, Caller, *Args) (ToolResult, error) { return ToolResult{}, nil }})
	}
	f, tab := pageFormat{size: 100}, reg.table()
	resp := cachedPage(f, toolsList, tab.list, tab.perms, &pageCache{}, permSet{"p8": true, "p9": true}, nil, rev20251125, 0)
	var got struct{ Tools []struct{ Name string } }
	require.NoError(t, json.Unmarshal(resp.Result, &got))
	var names []string
	for _, tl := range got.Tools {
		names = append(names, tl.Name)
	}
	assert.Equal(t, []string{"t8", "t9"}, names)
}
