package mcpmw

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCatalogue(t *testing.T) {
	t.Parallel()
	tool := func(name string, p Permission) *entry { return &entry{Tool: Tool{Name: name, Permission: p}} }
	var empty catalogue[*entry]
	a, perms := empty.with("tool", []*entry{tool("a", "read"), tool("b", "write"), tool("c", "read")})
	assert.Equal(t, []Permission{"read", "write", "read"}, perms, "one per added entry")
	assert.Equal(t, []guard{{perm: "read"}, {perm: "write"}}, a.perms, "distinct, in order of first use")
	assert.Equal(t, []int{0, 1, 0}, []int{a.byKey["a"].permIndex, a.byKey["b"].permIndex, a.byKey["c"].permIndex})
	assert.Empty(t, empty.list, "the original is not changed")

	b, perms := a.without([]string{"b", "b", "nope"})
	assert.Equal(t, []Permission{"write"}, perms, "once per removed entry")
	assert.Equal(t, []string{"a", "c"}, []string{b.list[0].Name, b.list[1].Name})
	assert.NotContains(t, b.byKey, "b")
	assert.Equal(t, a.perms, b.perms, "permissions only grow: kept indices stay valid")
	assert.Len(t, a.list, 3, "the original is not changed")

	same, perms := b.without([]string{"nope"})
	assert.Same(t, b, same, "nothing removed: the same catalogue")
	assert.Nil(t, perms)

	require.PanicsWithValue(t, `mcpmw: tool "x" is registered twice`, func() { b.with("tool", []*entry{tool("x", "p"), tool("x", "p")}) })
	require.PanicsWithValue(t, `mcpmw: tool "a" is registered twice`, func() { b.with("tool", []*entry{tool("a", "p")}) })
	assert.Len(t, b.list, 2, "a panicking add changes nothing")

	ui := Capability("extensions", "io.modelcontextprotocol/ui")
	listedFor := &entry{Tool: Tool{Name: "app", Permission: "read", ListedOnlyFor: []ClientCapability{ui}}}
	c, _ := b.with("tool", []*entry{listedFor, tool("d", "read")})
	assert.Equal(t, []guard{{perm: "read"}, {perm: "write"}, {perm: "read", needs: []ClientCapability{ui}}}, c.perms, "a permission with capabilities needed is a guard of its own")
	assert.Equal(t, []int{2, 0}, []int{c.byKey["app"].permIndex, c.byKey["d"].permIndex})
}
