package mcpmw_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

func TestToolsListPagination(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	for i := range 7 {
		capability := mcpmw.Permission("read")
		if i%2 == 1 {
			capability = "write"
		}
		reg.AddTools(mcpmw.Tool{Name: fmt.Sprintf("t%d", i), Description: "d", Permission: capability, Call: noop})
	}
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{PageSize: 2})
	walk := func(token string) (names []string, pages int) {
		cursor := ""
		for pages < 10 {
			params := ""
			if cursor != "" {
				params = `"cursor":"` + cursor + `"`
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, modern("1", "tools/list", params, "Authorization", "Bearer "+token))
			require.Equal(t, 200, w.Code, w.Body.String())
			res := decode(t, w).Result
			assert.Equal(t, "private", res["cacheScope"], "every page is private")
			for _, tool := range res["tools"].([]any) {
				names = append(names, tool.(map[string]any)["name"].(string))
			}
			pages++
			next, ok := res["nextCursor"].(string)
			if !ok {
				return names, pages
			}
			cursor = next
		}
		t.Fatal("pagination did not end")
		return nil, 0
	}
	names, pages := walk("reader")
	assert.Equal(t, []string{"t0", "t2", "t4", "t6"}, names, "only what the reader can use, in registration order")
	assert.Equal(t, 2, pages)
	names, pages = walk("writer")
	assert.Equal(t, []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6"}, names)
	assert.Equal(t, 4, pages)

	for _, bad := range []string{`"cursor":"!!"`, `"cursor":"dG9vbHM6OTk"`, `"cursor":"dG9vbHM6LTE"`, `"cursor":7`} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, modern("1", "tools/list", bad))
		assert.Equal(t, mcpmw.CodeInvalidParams, decode(t, w).Error.Code, bad)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "tools/list", `"cursor":""`))
	assert.Len(t, decode(t, w).Result["tools"], 2, "an empty cursor starts at the beginning")
}

func TestToolCallChecksCapabilityAgain(t *testing.T) {
	t.Parallel()
	ran := false
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "drop", Description: "d", Permission: "admin", Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		ran = true
		return mcpmw.TextResult("dropped"), nil
	}})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	for _, r := range []*httptest.ResponseRecorder{httptest.NewRecorder(), httptest.NewRecorder()} {
		h.ServeHTTP(r, modern("1", "tools/call", `"name":"drop"`, "Authorization", "Bearer writer"))
		assert.Equal(t, 403, r.Code)
		assert.Equal(t, `Bearer error="insufficient_scope", scope="admin"`, r.Header().Get("WWW-Authenticate"))
	}
	assert.False(t, ran, "a denied call runs nothing")
}
