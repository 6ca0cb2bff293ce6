package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestIOWorkloadSmoke runs the I/O workload end to end, briefly: a real
// redis-server and the catalogue API started by the harness, every
// contestant in its own process (ours also behind the proxy, 1 and 3
// instances), both modes, every answer checked. It keeps the workload
// compiling and running in CI in a few seconds; the figures it makes mean
// nothing, and a cell whose 300 ms window no call fell in (on a busy
// machine, under -race) is not a failure, as long as every answer was
// right and some came. It needs redis-server; without one it skips,
// unless MCPMW_REQUIRE_REDIS is set.
func TestIOWorkloadSmoke(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("MCPMW_REQUIRE_REDIS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	// runIO passes the addresses to the contestants' processes in the
	// environment; restore it afterwards.
	t.Setenv(redisEnv, "")
	t.Setenv(ioAPIURLEnv, "")
	cfg := ioConfig{
		vus: 4, duration: 300 * time.Millisecond, warmup: 100 * time.Millisecond, rounds: 1,
		modes: ioModes, contestants: ioContestantNames, seed: smallSeed, command: "smoke",
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var log bytes.Buffer
	rep, err := runIO(ctx, cfg, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var out bytes.Buffer
	rep.write(&out)
	for _, mode := range ioModes {
		for _, name := range ioContestantNames {
			rs := rep.cells[ioCellKey{mode, name}]
			if len(rs) != 1 {
				t.Fatalf("%s, %s: %d results, want 1", mode, name, len(rs))
			}
			r := rs[0]
			wrong := r.errors
			if r.windowEmpty {
				wrong--
			}
			if wrong != 0 || r.checked == 0 || r.mcpRequests < r.toolCalls || r.p99 < r.p50 {
				t.Errorf("%s, %s: %+v", mode, name, r)
			}
			if !strings.Contains(out.String(), "| "+string(mode)+" | "+ioContestantTitle(name)+" | ") {
				t.Errorf("no row for %s, %s in:\n%s", mode, name, out.String())
			}
		}
	}
	// A legacy session counts its initialize too.
	if r := rep.cells[ioCellKey{modeLegacy, "ours"}][0]; r.mcpRequests < 2*r.toolCalls {
		t.Errorf("legacy ours: %d MCP requests for %d tool calls, want at least twice as many", r.mcpRequests, r.toolCalls)
	}
	t.Logf("\n%s", out.String())
}

// The catalogue answers the published API's figures: the workload's
// search finds 2,251 products, cheapest first.
func TestCatalogAPI(t *testing.T) {
	srv := httptest.NewServer(newCatalog().handler())
	t.Cleanup(srv.Close)
	get := func(method, path, body string, v any) int {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode
	}
	var found searchAnswer
	get("GET", "/products/search?category=Electronics&min_price=50&max_price=500&limit=10", "", &found)
	if found.TotalFound != 2251 || len(found.Products) != 10 || found.Category != "Electronics" {
		t.Fatalf("search: %d found, %d products, category %q", found.TotalFound, len(found.Products), found.Category)
	}
	for i, p := range found.Products {
		if p.Category != "Electronics" || p.Price < 50 || p.Price > 500 || (i > 0 && p.Price < found.Products[i-1].Price) {
			t.Fatalf("search: product %d: %+v", i, p)
		}
	}
	if found.Products[0].ID != 4901 || found.Products[0].Price != 50 {
		t.Errorf("the cheapest is %+v, want product 4901 at 50", found.Products[0])
	}
	// The cheapest Electronics are products 1 and 99901 (1.00), then 21
	// and 99921 (1.20): the catalogue's order is not the price's.
	get("GET", "/products/search?category=Electronics&max_price=1.3&limit=4", "", &found)
	var ids []int
	for _, p := range found.Products {
		ids = append(ids, p.ID)
	}
	if found.TotalFound != 4 || !slices.Equal(ids, []int{1, 99901, 21, 99921}) {
		t.Errorf("the cheapest: %d found, ids %v, want 4, [1 99901 21 99921]", found.TotalFound, ids)
	}
	get("GET", "/products/search?category=Nothing", "", &found)
	if found.TotalFound != 0 || found.Products == nil || len(found.Products) != 0 {
		t.Errorf("an unknown category: %+v", found)
	}
	var all searchAnswer
	get("GET", "/products/search?category=Books&limit=5000", "", &all) // over 1000: the default, 10
	if all.TotalFound != catalogSize/len(categories) || len(all.Products) != 10 {
		t.Errorf("Books: %d found, %d products", all.TotalFound, len(all.Products))
	}

	var p product
	if get("GET", "/products/42", "", &p); p.ID != 42 || p.SKU != "SKU-000042" || p.Category != "Books" || p.Price != 1.41 || len(p.Tags) != 4 {
		t.Errorf("product 42: %+v", p)
	}
	for _, id := range []string{"0", "100001", "x"} {
		if status := get("GET", "/products/"+id, "", &p); status != http.StatusNotFound {
			t.Errorf("product %s: HTTP %d, want 404", id, status)
		}
	}

	var cart cartAnswer
	get("POST", "/cart/calculate", `{"user_id":"user-00007","items":[{"product_id":42,"quantity":2},{"product_id":1337,"quantity":1}]}`, &cart)
	// 2 × 1.41 + 14.36 = 17.18: under 100, so no discount and 5.99 shipping.
	want := cartAnswer{OrderID: "ORD-user00007-2", UserID: "user-00007", Subtotal: 17.18, Tax: 1.46, Shipping: 5.99, Total: 24.63, ItemsCount: 2}
	if cart != want {
		t.Errorf("cart: %+v, want %+v", cart, want)
	}
	get("POST", "/cart/calculate", `{"user_id":"u","items":[{"product_id":99900,"quantity":1},{"product_id":0,"quantity":5}]}`, &cart)
	// 999.99 (the unknown product counts nothing): a 10% discount and free shipping.
	want = cartAnswer{OrderID: "ORD-u-2", UserID: "u", Subtotal: 999.99, Tax: 85, Discount: 100, Total: 984.99, ItemsCount: 2}
	if cart != want {
		t.Errorf("large cart: %+v, want %+v", cart, want)
	}
	if status := get("POST", "/cart/calculate", `{`, &cart); status != http.StatusBadRequest {
		t.Errorf("a broken cart: HTTP %d, want 400", status)
	}
}

// The load generator's checks refuse what k6's refuse.
func TestIOChecksRefuseWrongAnswers(t *testing.T) {
	calls := ioCalls("user-00003")
	wrap := func(text string) []byte {
		b, _ := json.Marshal(text)
		return []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":` + string(b) + `}]}}`)
	}
	ten := `[1,2,3,4,5,6,7,8,9,10]`
	goodSearch := `{"total_found":2251,"products":` + ten + `,"top10_popular_ids":` + ten + `}`
	goodCart := `{"user_id":"user-00003","cart":{"items":[{}]},"recent_history":[{},{},{},{},{}]}`
	goodCheckout := `{"status":"confirmed","total":1.5,"items_count":2}`
	for i, good := range []string{goodSearch, goodCart, goodCheckout} {
		if err := checkCall(calls[i], 200, wrap(good)); err != nil {
			t.Fatalf("%s: good answer refused: %v", calls[i].tool, err)
		}
	}
	for _, tt := range []struct {
		call      int
		good      string
		from, to  string
		rawAnswer string
	}{
		{call: 0, good: goodSearch, from: "2251", to: "2250"},
		{call: 0, good: goodSearch, from: `"products":[1,`, to: `"products":[`},
		{call: 0, good: goodSearch, from: `"top10_popular_ids":[1,`, to: `"top10_popular_ids":[`},
		{call: 0, good: goodSearch, from: `{`, to: `[`},
		{call: 1, good: goodCart, from: `"user-00003"`, to: `"user-00004"`},
		{call: 1, good: goodCart, from: `[{}]`, to: `[]`},
		{call: 1, good: goodCart, from: `[{},`, to: `[`},
		{call: 1, good: goodCart, from: `{},{}]}`, to: `{},{},{}]}`},
		{call: 1, good: goodCart, from: `{`, to: `[`},
		{call: 2, good: goodCheckout, from: "confirmed", to: "pending"},
		{call: 2, good: goodCheckout, from: "1.5", to: "0"},
		{call: 2, good: goodCheckout, from: `"items_count":2`, to: `"items_count":3`},
		{call: 2, good: goodCheckout, from: `{`, to: `[`},
		{call: 2, rawAnswer: `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{}"}],"isError":true}}`},
		{call: 2, rawAnswer: `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`},
		{call: 2, rawAnswer: `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"image","text":"{}"}]}}`},
		{call: 2, rawAnswer: `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{}"},{"type":"text","text":"{}"}]}}`},
		{call: 2, rawAnswer: `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{}"}]}}`},
		{call: 2, rawAnswer: `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"no"}}`},
		{call: 2, rawAnswer: `{"jsonrpc":"2.0","id":2}`},
		{call: 2, rawAnswer: `not JSON`},
	} {
		body := []byte(tt.rawAnswer)
		if tt.rawAnswer == "" {
			bad := strings.Replace(tt.good, tt.from, tt.to, 1)
			if bad == tt.good {
				t.Fatalf("%s %q: the replacement changed nothing", calls[tt.call].tool, tt.from)
			}
			body = wrap(bad)
		}
		if err := checkCall(calls[tt.call], 200, body); err == nil {
			t.Errorf("%s: wrong answer accepted: %s", calls[tt.call].tool, body)
		}
	}
	if err := checkCall(calls[2], 500, wrap(goodCheckout)); err == nil {
		t.Error("HTTP 500 accepted")
	}
	// An event stream whose data line holds the answer is read as the
	// published script reads it.
	sse := append([]byte("event: message\ndata: "), wrap(goodCheckout)...)
	if err := checkCall(calls[2], 200, append(sse, "\n\n"...)); err != nil {
		t.Errorf("an event stream refused: %v", err)
	}
	list := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"get_user_cart"},{"name":"checkout"},{"name":"search_products"}]}}`
	if err := checkList(200, []byte(list)); err != nil {
		t.Errorf("tools/list refused: %v", err)
	}
	for _, bad := range []string{
		strings.Replace(list, `{"name":"checkout"},`, ``, 1),
		strings.Replace(list, `"checkout"`, `"get_user_cart"`, 1),
		strings.Replace(list, `"id":2`, `"id":1`, 1),
	} {
		if err := checkList(200, []byte(bad)); err == nil {
			t.Errorf("wrong tools/list accepted: %s", bad)
		}
	}
}

// The requests of each mode: 2026-07-28 carries _meta and the routing
// headers; legacy, the version its session negotiated and no _meta.
func TestIORequests(t *testing.T) {
	r := mode2026.request("tools/call", "checkout", `{"a":1}`, "")
	var body struct {
		Method string `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      map[string]any  `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	if body.Method != "tools/call" || body.Params.Name != "checkout" || string(body.Params.Arguments) != `{"a":1}` ||
		body.Params.Meta["io.modelcontextprotocol/protocolVersion"] != protocolVersion {
		t.Errorf("2026 tools/call: %s", r.body)
	}
	if r.header.Get("Mcp-Protocol-Version") != protocolVersion || r.header.Get("Mcp-Method") != "tools/call" || r.header.Get("Mcp-Name") != "checkout" {
		t.Errorf("2026 tools/call headers: %v", r.header)
	}
	r = mode2026.request("tools/list", "", "", "")
	if !json.Valid(r.body) || !bytes.Contains(r.body, []byte(`"params":{"_meta":{`)) || r.header.Get("Mcp-Name") != "" || r.header.Get("Mcp-Method") != "tools/list" {
		t.Errorf("2026 tools/list: %s %v", r.body, r.header)
	}
	r = modeLegacy.request("tools/list", "", "", "2025-11-25")
	if string(r.body) != `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}` || r.header.Get("Mcp-Protocol-Version") != "2025-11-25" || r.header.Get("Mcp-Method") != "" {
		t.Errorf("legacy tools/list: %s %v", r.body, r.header)
	}
	r = modeLegacy.request("tools/call", "search_products", `{}`, "2024-11-05")
	if string(r.body) != `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_products","arguments":{}}}` {
		t.Errorf("legacy tools/call: %s", r.body)
	}
	for _, bad := range []string{"", "2025", "legacy,x"} {
		if _, err := parseIOModes(bad); err == nil {
			t.Errorf("-iomodes %q accepted", bad)
		}
	}
	if _, err := parseIOContestants("ours,floor"); err == nil {
		t.Error("-iocontestants floor accepted")
	}
	if s, err := parseSeed("small"); err != nil || s != smallSeed {
		t.Errorf("-ioseed small: %v %v", s, err)
	}
	if _, err := parseSeed("huge"); err == nil {
		t.Error("-ioseed huge accepted")
	}
}
