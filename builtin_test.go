package mcpmw_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

var fullServer = mcpmw.Implementation{Name: "orders", Version: "1.4.0", Title: "Orders", Description: "Order tools.",
	WebsiteURL: "https://orders.example.com", Icons: []mcpmw.Icon{{Src: "https://orders.example.com/i.svg", Theme: "dark", Sizes: []string{"any"}}}}

func TestInitializeNegotiation(t *testing.T) {
	t.Parallel()
	h := mcpmw.New(&mcpmw.Registry{}, tokenAuthn, &spy{}, &mcpmw.Options{Server: fullServer, Instructions: "Use list_orders first."})
	for _, tt := range []struct {
		requested, header, want string
		serverInfo              string
	}{
		{"2025-11-25", "", "2025-11-25", `{"name":"orders","title":"Orders","version":"1.4.0","description":"Order tools.","websiteUrl":"https://orders.example.com","icons":[{"src":"https://orders.example.com/i.svg","sizes":["any"],"theme":"dark"}]}`},
		{"2025-06-18", "", "2025-06-18", `{"name":"orders","title":"Orders","version":"1.4.0"}`},
		{"2025-06-18", "2025-06-18", "2025-06-18", `{"name":"orders","title":"Orders","version":"1.4.0"}`},
		{"2024-11-05", "", "2025-11-25", ""},
		{"2025-03-26", "2025-03-26", "2025-11-25", ""},
		{"2026-07-28", "", "2025-11-25", ""}, // never offered through initialize
		{"2099-01-01", "", "2025-11-25", ""},
	} {
		r := req(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+tt.requested+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			"MCP-Protocol-Version", tt.header)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, 200, w.Code, w.Body.String())
		res := decode(t, w).Result
		assert.Equal(t, tt.want, res["protocolVersion"], "requested %s", tt.requested)
		assert.Equal(t, "Use list_orders first.", res["instructions"])
		assert.Empty(t, w.Header().Get("Mcp-Session-Id"))
		assert.NotContains(t, res, "resultType")
		if tt.serverInfo != "" {
			assert.JSONEq(t, tt.serverInfo, toJSON(t, res["serverInfo"]))
		}
	}
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		ttl  time.Duration
		want float64
	}{{0, 60000}, {-1, 0}, {time.Hour, 3600000}} {
		h := mcpmw.New(&mcpmw.Registry{}, tokenAuthn, &spy{}, &mcpmw.Options{Server: fullServer, Instructions: "Be brief.", CacheTTL: tt.ttl})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, modern("1", "server/discover", ""))
		res := decode(t, w).Result
		assert.Equal(t, tt.want, res["ttlMs"])
		assert.JSONEq(t, `{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18"],"capabilities":{"tools":{"listChanged":true}},"instructions":"Be brief.","cacheScope":"public",
			"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"orders","title":"Orders","version":"1.4.0","description":"Order tools.","websiteUrl":"https://orders.example.com","icons":[{"src":"https://orders.example.com/i.svg","sizes":["any"],"theme":"dark"}]}},
			"ttlMs":`+toJSON(t, tt.want)+`}`, toJSON(t, res))
	}
}

func TestLegacyLoggingSetLevel(t *testing.T) {
	t.Parallel()
	with := mcpmw.New(&mcpmw.Registry{}, tokenAuthn, &spy{}, &mcpmw.Options{ClientLogLevel: mcpmw.LogInfo})
	w := httptest.NewRecorder()
	with.ServeHTTP(w, legacy("2025-11-25", "1", "logging/setLevel", `"level":"info"`))
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, w.Body.String(), "exactly {}")

	without := mcpmw.New(&mcpmw.Registry{}, tokenAuthn, &spy{}, nil)
	w = httptest.NewRecorder()
	without.ServeHTTP(w, legacy("2025-11-25", "1", "logging/setLevel", `"level":"info"`))
	assert.Equal(t, mcpmw.CodeMethodNotFound, decode(t, w).Error.Code, "logging is not advertised")
}

func TestLegacySessionIDs(t *testing.T) {
	t.Parallel()
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	off := mcpmw.New(&mcpmw.Registry{}, tokenAuthn, &spy{}, nil)
	w := httptest.NewRecorder()
	off.ServeHTTP(w, req(init))
	assert.Empty(t, w.Header().Get("Mcp-Session-Id"), "never minted by default")

	on := mcpmw.New(&mcpmw.Registry{}, tokenAuthn, &spy{}, &mcpmw.Options{LegacySessionIDs: true})
	ids := map[string]bool{}
	for range 3 {
		w := httptest.NewRecorder()
		on.ServeHTTP(w, req(init))
		id := w.Header().Get("Mcp-Session-Id")
		assert.Regexp(t, `^[0-9a-f]{32}$`, id)
		ids[id] = true
	}
	assert.Len(t, ids, 3, "random each time")

	// The id is never checked: any value, or none, is served the same.
	for _, id := range []string{"", "made-up", "x"} {
		w := httptest.NewRecorder()
		on.ServeHTTP(w, legacy("2025-11-25", "1", "tools/list", "", "Mcp-Session-Id", id))
		assert.Equal(t, 200, w.Code)
		assert.Empty(t, w.Header().Get("Mcp-Session-Id"), "only initialize carries one")
	}
	w = httptest.NewRecorder()
	on.ServeHTTP(w, modern("1", "server/discover", ""))
	assert.Empty(t, w.Header().Get("Mcp-Session-Id"), "never on 2026-07-28")
}
