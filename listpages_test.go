package mcpmw_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// Two Handlers serving one Registry used to share each other's list
// pages: the cache lived in the Registry's snapshot, keyed by revision,
// offset and permissions, while page size, ttlMs and serverInfo came from
// whichever Handler built the page first. A public endpoint (PageSize 100)
// served a one-entry page with a nextCursor and the other's serverInfo.
// Every list of each Handler is its own now.
func TestListPagesAreEachHandlersOwn(t *testing.T) {
	t.Parallel()
	reg := testResources()
	reg.AddTools(testTools()[:3]...)
	reg.AddPrompts(testPrompts()[0], testPrompts()[2])
	type endpoint struct {
		name     string
		h        *mcpmw.Handler
		pageSize int
		ttlMs    float64
	}
	newEndpoint := func(name string, pageSize int, ttl time.Duration) endpoint {
		h := mcpmw.New(reg, tokenAuthn, &spy{}, &mcpmw.Options{Server: mcpmw.Implementation{Name: name, Version: "1"}, PageSize: pageSize, CacheTTL: ttl})
		return endpoint{name: name, h: h, pageSize: pageSize, ttlMs: float64(ttl.Milliseconds())}
	}
	small, public := newEndpoint("small", 1, 5*time.Second), newEndpoint("public", 100, time.Minute)
	for _, tc := range []struct {
		method, member string
		all            int // entries the reader may see
	}{
		{"tools/list", "tools", 2}, // write_it needs write
		{"prompts/list", "prompts", 2},
		{"resources/list", "resources", 6},
		{"resources/templates/list", "resourceTemplates", 1},
	} {
		for _, version := range allVersions {
			// The small endpoint lists first, so that a shared page
			// would be its own.
			for _, e := range []endpoint{small, public, small} {
				w := httptest.NewRecorder()
				e.h.ServeHTTP(w, listReq(version, "reader", tc.method, ""))
				require.Equal(t, 200, w.Code, w.Body.String())
				var res map[string]any
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &struct{ Result *map[string]any }{&res}))
				msg := e.name + " " + tc.method + " " + version
				want := min(tc.all, e.pageSize)
				assert.Len(t, res[tc.member], want, msg)
				if want < tc.all {
					assert.Contains(t, res, "nextCursor", msg)
				} else {
					assert.NotContains(t, res, "nextCursor", msg)
				}
				if version != mcpmw.LatestVersion {
					continue
				}
				assert.Equal(t, e.ttlMs, res["ttlMs"], msg)
				info := res["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"].(map[string]any)
				assert.Equal(t, e.name, info["name"], msg)
			}
		}
	}
}
