package mcpmw_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpmw/mcpmw"
)

// postRead sends a 2026-07-28 resources/read of uri, as alice, and prints
// the status and body.
func postRead(h http.Handler, uri string) {
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + uri + `",` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer alice")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "resources/read")
	r.Header.Set("Mcp-Name", uri)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
}

func ExampleRegistry_AddResources() {
	notes := map[string]string{"1": "Buy milk.", "2": "Call Bob."}
	var reg mcpmw.Registry
	reg.AddResources(mcpmw.Resource{
		URI: "notes://readme", Name: "readme", Description: "How notes work.", MimeType: "text/plain", Permission: "notes:read",
		Read: func(ctx context.Context, c mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "One note per id.")}, nil
		},
	})
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{
		URITemplate: "notes://{id}", Name: "note", Description: "A note by id.", MimeType: "text/plain", Permission: "notes:read",
		Read: func(ctx context.Context, c mcpmw.Caller, uri string, vars map[string]string) ([]mcpmw.ResourceContents, error) {
			text, ok := notes[vars["id"]]
			if !ok {
				return nil, mcpmw.ErrResourceNotFound
			}
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", text)}, nil
		},
	})
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		return &appUser{Name: "alice", Scopes: []string{"notes:read"}}, nil
	})
	audit := mcpmw.AuditFunc(func(ctx context.Context, rec mcpmw.CallRecord) {
		fmt.Printf("audit: %s %s (%s) -> %d\n", rec.Outcome, rec.Method, rec.Summary, rec.Status)
	})
	h := mcpmw.New(&reg, authn, audit, &mcpmw.Options{Server: mcpmw.Implementation{Name: "notes", Version: "1.0.0"}})

	postRead(h, "notes://2")
	postRead(h, "notes://9")
	// Output:
	// audit: ok resources/read (read 1 content) -> 200
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","contents":[{"uri":"notes://2","mimeType":"text/plain","text":"Call Bob."}],"ttlMs":60000,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"notes","version":"1.0.0"}}}}
	// audit: error resources/read (resource not found) -> 200
	// 200 {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found: notes://9","data":{"uri":"notes://9"}}}
}
