package mcpmw_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpmw/mcpmw"
)

// shopper is the example's session: it may read orders, and belongs to
// one tenant.
type shopper struct{ tenant string }

func (shopper) Can(p mcpmw.Permission) bool     { return p == "orders:read" }
func (s shopper) InAudience(tenant string) bool { return tenant == s.tenant }

// A client listens for changes to one order; the application publishes
// them, each guarded by a permission and meant for one tenant. Close, as
// http.Server.Shutdown would call it, ends the stream with its result.
func ExampleHandler_Publish() {
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		return shopper{tenant: r.Header.Get("X-Tenant")}, nil
	})
	audit := mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {})
	h := mcpmw.New(nil, authn, audit, &mcpmw.Options{
		Server: mcpmw.Implementation{Name: "orders", Version: "1.0.0"},
		Methods: []mcpmw.Method{{Name: "resources/list", Capability: "resources",
			Handle: func(context.Context, *mcpmw.Request) *mcpmw.Response {
				return mcpmw.ResultResponse(map[string]any{"resources": []any{}})
			}}},
	})
	srv := httptest.NewServer(h)
	defer srv.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["orders://7"],"promptsListChanged":true},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	r, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "subscriptions/listen")
	r.Header.Set("X-Tenant", "acme")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	events := bufio.NewScanner(resp.Body)
	next := func() {
		for events.Scan() {
			if data, ok := strings.CutPrefix(events.Text(), "data: "); ok {
				fmt.Println(data)
				return
			}
		}
	}
	next() // the acknowledgement: no prompts are served, so none are listened to

	ctx := context.Background()
	_ = h.Publish(ctx, mcpmw.Event{Method: mcpmw.ResourceUpdated, URI: "orders://7", Permission: "orders:read", Audience: "globex"}) // another tenant's
	_ = h.Publish(ctx, mcpmw.Event{Method: mcpmw.ResourceUpdated, URI: "orders://7", Permission: "orders:read", Audience: "acme"})
	next()

	h.Close()
	next()
	// Output:
	// {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"resourceSubscriptions":["orders://7"]},"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}
	// {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"orders://7","_meta":{"io.modelcontextprotocol/subscriptionId":1}}}
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":1,"io.modelcontextprotocol/serverInfo":{"name":"orders","version":"1.0.0"}}}}
}
