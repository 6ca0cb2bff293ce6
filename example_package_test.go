package mcpmw_test

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpmw/mcpmw"
)

// session is the application's own idea of who is calling: the handler
// only asks it Can.
type session struct {
	name  string
	perms map[mcpmw.Permission]bool
}

func (s *session) Can(p mcpmw.Permission) bool { return s.perms[p] }
func (s *session) String() string              { return s.name }

// A whole endpoint, as the package documentation shows it: the
// application's authenticator and auditor, one tool, and the handler
// mounted on a router (a ServeMux here; chi or any other works alike).
// The last lines call it the way a 2025-11-25 client does.
func Example() {
	echo := mcpmw.Tool{
		Name: "echo", Description: "Returns the message.", Permission: "read",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
		Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			msg := args.String("message")
			if err := args.Err(); err != nil {
				return mcpmw.ToolResult{}, err // an isError result naming the argument
			}
			return mcpmw.TextResult(msg), nil
		},
	}
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(token), []byte("reader-token")) != 1 {
			return nil, mcpmw.ErrUnauthorized // 401 with WWW-Authenticate
		}
		return &session{name: "reader", perms: map[mcpmw.Permission]bool{"read": true}}, nil
	})
	auditor := mcpmw.AuditFunc(func(ctx context.Context, rec mcpmw.CallRecord) {
		fmt.Println("audit:", rec.Method, rec.Tool, rec.Outcome, rec.Caller, rec.Status)
	})

	var reg mcpmw.Registry
	reg.AddTools(echo)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpmw.New(&reg, authn, auditor, &mcpmw.Options{
		Server: mcpmw.Implementation{Name: "orders", Version: "1.4.0"},
	}))

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer reader-token")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
	// Output:
	// audit: tools/call echo ok reader 200
	// 200 {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}
}
