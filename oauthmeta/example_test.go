package oauthmeta_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/oauthmeta"
)

// scopes is a caller whose token granted these scopes.
type scopes []string

func (s scopes) Can(p mcpmw.Permission) bool { return slices.Contains(s, string(p)) }

// The document, mounted beside the endpoint, and the challenges that point
// clients to it: the 401 to a request without a token, and the 403 to a
// caller whose token lacks the scope a tool needs.
func Example() {
	meta := oauthmeta.New(oauthmeta.Config{
		Resource:             "https://api.example.com/mcp",
		AuthorizationServers: []string{"https://auth.example.com"},
		ScopesSupported:      []string{"read", "write"},
		ResourceName:         "Orders",
	})

	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{
		Name: "cancel_order", Description: "Cancels an order.", Permission: "write",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("cancelled"), nil
		},
	})
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		if r.Header.Get("Authorization") == "Bearer read-only" { // a real Authenticator verifies a token
			return scopes{"read"}, nil
		}
		return nil, mcpmw.ErrUnauthorized
	})
	mux := http.NewServeMux()
	mux.Handle(meta.Path(), meta)
	mux.Handle("/mcp", mcpmw.New(&reg, authn, mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}),
		&mcpmw.Options{ResourceMetadata: meta.URL()}))

	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "https://api.example.com"+meta.Path(), nil))
	fmt.Println("GET", meta.Path(), w.Code)
	fmt.Println(w.Body.String())

	for _, token := range []string{"", "read-only"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cancel_order","arguments":{},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		r := httptest.NewRequest(http.MethodPost, "https://api.example.com/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "tools/call")
		r.Header.Set("Mcp-Name", "cancel_order")
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))
	}
	// Output:
	// GET /.well-known/oauth-protected-resource/mcp 200
	// {"resource":"https://api.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["read","write"],"bearer_methods_supported":["header"],"resource_name":"Orders"}
	// 401 Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"
	// 403 Bearer error="insufficient_scope", scope="write", resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"
}
