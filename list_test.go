package mcpmw_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// A List serves an extension's list method as tools/list is served.

// countingCaller holds perms and counts Can's calls.
type countingCaller struct {
	perms map[mcpmw.Permission]bool
	asked *atomic.Int32
}

func (c countingCaller) Can(p mcpmw.Permission) bool { c.asked.Add(1); return c.perms[p] }

func listEndpoint(t *testing.T, l *mcpmw.List, caller mcpmw.Caller, opts mcpmw.Options) *mcpmw.Handler {
	t.Helper()
	opts.Extensions = []mcpmw.Extension{{ID: "com.example/things", Methods: []mcpmw.Method{{Name: "things/list", Handle: l.Page}}}}
	h := mcpmw.New(nil, mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return caller, nil }), &spy{}, &opts)
	t.Cleanup(h.Close)
	return h
}

func listPage(t *testing.T, h *mcpmw.Handler, method, cursor string) answer {
	t.Helper()
	params := ""
	if cursor != "" {
		params = `"cursor":` + strconv.Quote(cursor)
	}
	return decode(t, serve(h, modern("1", method, params)))
}

func names(t *testing.T, a answer, member string) []string {
	t.Helper()
	require.Nil(t, a.Error)
	var out []string
	for _, it := range a.Result[member].([]any) {
		out = append(out, it.(map[string]any)["name"].(string))
	}
	return out
}

func TestListPagesPerCallerWithTheHandlersPageSizeAndStrictCursors(t *testing.T) {
	t.Parallel()
	var items []mcpmw.ListItem
	for i := range 7 {
		perm := mcpmw.Permission("even")
		if i%2 == 1 {
			perm = "odd"
		}
		items = append(items, mcpmw.ListItem{Permission: perm, JSON: json.RawMessage(`{ "name": "t` + strconv.Itoa(i) + `" }`)})
	}
	l := mcpmw.NewList("things", items...)
	assert.Equal(t, 7, l.Len())
	var asked atomic.Int32
	evenOnly := countingCaller{perms: map[mcpmw.Permission]bool{"even": true}, asked: &asked}
	h := listEndpoint(t, l, evenOnly, mcpmw.Options{PageSize: 3, CacheTTL: 7 * time.Second})

	first := listPage(t, h, "things/list", "")
	assert.Equal(t, []string{"t0", "t2", "t4"}, names(t, first, "things"), "only what the caller may see, compacted, a page of PageSize")
	assert.Equal(t, float64(7000), first.Result["ttlMs"])
	assert.Equal(t, "private", first.Result["cacheScope"])
	assert.Contains(t, first.Result["_meta"], "io.modelcontextprotocol/serverInfo")
	next, _ := first.Result["nextCursor"].(string)
	require.NotEmpty(t, next)
	assert.Equal(t, int32(2), asked.Load(), "Can asked once per distinct permission, not per item")

	second := listPage(t, h, "things/list", next)
	assert.Equal(t, []string{"t6"}, names(t, second, "things"))
	assert.NotContains(t, second.Result, "nextCursor")

	again := listPage(t, h, "things/list", "")
	assert.Equal(t, first.Result, again.Result, "the cached page, the same for the same permissions")
	assert.Equal(t, int32(6), asked.Load(), "a cached page still asks Can once per permission: who the caller is may change")

	for _, bad := range []string{"bm90LW91cnM", "not base64!", strconv.Quote("x")} {
		a := listPage(t, h, "things/list", bad)
		require.NotNil(t, a.Error, bad)
		assert.Equal(t, mcpmw.CodeInvalidParams, a.Error.Code)
	}
}

func TestListCursorsOfOneListAreRefusedByAnother(t *testing.T) {
	t.Parallel()
	var items []mcpmw.ListItem
	for i := range 3 {
		items = append(items, mcpmw.ListItem{Permission: "read", JSON: json.RawMessage(`{"name":"t` + strconv.Itoa(i) + `"}`)})
	}
	things, others := mcpmw.NewList("things", items...), mcpmw.NewList("others", items...)
	var asked atomic.Int32
	caller := countingCaller{perms: map[mcpmw.Permission]bool{"read": true}, asked: &asked}
	opts := mcpmw.Options{PageSize: 1, Extensions: []mcpmw.Extension{{ID: "com.example/things", Methods: []mcpmw.Method{
		{Name: "things/list", Handle: things.Page}, {Name: "others/list", Handle: others.Page},
	}}}}
	h := mcpmw.New(nil, mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return caller, nil }), &spy{}, &opts)
	t.Cleanup(h.Close)
	next := listPage(t, h, "things/list", "").Result["nextCursor"].(string)
	a := listPage(t, h, "others/list", next)
	require.NotNil(t, a.Error)
	assert.Contains(t, a.Error.Message, "not one this server issued for others/list")
}

func TestListServedByTwoHandlersKeepsEachOnesFormat(t *testing.T) {
	t.Parallel()
	var items []mcpmw.ListItem
	for i := range 4 {
		items = append(items, mcpmw.ListItem{Permission: "read", JSON: json.RawMessage(`{"name":"t` + strconv.Itoa(i) + `"}`)})
	}
	l := mcpmw.NewList("things", items...)
	var asked atomic.Int32
	caller := countingCaller{perms: map[mcpmw.Permission]bool{"read": true}, asked: &asked}
	small := listEndpoint(t, l, caller, mcpmw.Options{PageSize: 1})
	big := listEndpoint(t, l, caller, mcpmw.Options{PageSize: 10})
	for range 2 {
		assert.Len(t, names(t, listPage(t, small, "things/list", ""), "things"), 1)
		assert.Len(t, names(t, listPage(t, big, "things/list", ""), "things"), 4)
	}
	direct := l.Page(context.Background(), &mcpmw.Request{Method: "things/list", Caller: caller})
	require.Nil(t, direct.Error)
	assert.Contains(t, string(direct.Result), `"things":[{"name":"t0"}`, "outside a Handler: the default page size")
}

func TestNewListRefusesWhatCannotBeListed(t *testing.T) {
	t.Parallel()
	assert.PanicsWithValue(t, "mcpmw: NewList needs the name of the result member the items are listed under", func() { mcpmw.NewList("") })
	assert.Panics(t, func() { mcpmw.NewList("x", mcpmw.ListItem{Permission: "p", JSON: json.RawMessage(`[1]`)}) })
	assert.Panics(t, func() { mcpmw.NewList("x", mcpmw.ListItem{Permission: "p", JSON: json.RawMessage(`{"a":`)}) })
	assert.Panics(t, func() { mcpmw.NewList("x", mcpmw.ListItem{JSON: json.RawMessage(`{}`)}) })
}
