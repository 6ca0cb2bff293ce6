package mcpmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpmw/mcpmw"
)

// appUser is an application's own caller type.
type appUser struct {
	Name   string
	Scopes []string
}

func (u *appUser) Can(c mcpmw.Permission) bool {
	for _, s := range u.Scopes {
		if s == string(c) {
			return true
		}
	}
	return false
}

func (u *appUser) String() string { return u.Name }

// post sends an MCP request at 2026-07-28 to h and prints the status and body.
func post(h http.Handler, method, params string) {
	if params != "" {
		params += ","
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer alice")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", method)
	var p struct{ Name string }
	_ = json.Unmarshal([]byte("{"+strings.TrimSuffix(params, ",")+"}"), &p)
	if p.Name != "" {
		r.Header.Set("Mcp-Name", p.Name)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
}

func ExampleNew() {
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{
		Name:        "greet",
		Description: "Greets the caller.",
		Permission:  "read",
		ReadOnly:    mcpmw.HintYes,
		Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("hello, " + c.(*appUser).Name), nil
		},
	})
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		if r.Header.Get("Authorization") == "Bearer alice" {
			return &appUser{Name: "alice", Scopes: []string{"read"}}, nil
		}
		return nil, mcpmw.ErrUnauthorized
	})
	audit := mcpmw.AuditFunc(func(ctx context.Context, rec mcpmw.CallRecord) {
		fmt.Printf("audit: %s %s %s by %v -> %d\n", rec.Outcome, rec.Method, rec.Tool, rec.Caller, rec.Status)
	})
	h := mcpmw.New(&reg, authn, audit, &mcpmw.Options{Server: mcpmw.Implementation{Name: "demo", Version: "1.0.0"}})

	post(h, "tools/call", `"name":"greet"`)
	// Output:
	// audit: ok tools/call greet by alice -> 200
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hello, alice"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"demo","version":"1.0.0"}}}}
}

func ExampleTool() {
	// A tool is a plain value. Args keeps the first problem it meets, so a
	// tool reads everything and checks once.
	listOrders := mcpmw.Tool{
		Name:        "list_orders",
		Title:       "List orders",
		Description: "Lists the caller's most recent orders.",
		Permission:  "orders:read",
		ReadOnly:    mcpmw.HintYes,
		OpenWorld:   mcpmw.HintNo,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"status":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":50}},"required":["status"]}`),
		Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			status := args.String("status")
			limit := args.IntClamp("limit", 10, 1, 50) // 500 becomes 50, absent becomes 10
			if err := args.Err(); err != nil {
				return mcpmw.ToolResult{}, err // an isError result naming the field
			}
			if status != "open" && status != "shipped" {
				return mcpmw.ErrorResult("unknown status %q: use open or shipped", status), nil
			}
			return mcpmw.StructuredResult(map[string]any{"status": status, "limit": limit, "orders": []string{}}), nil
		},
	}

	// A tool test calls the func directly: no server needed.
	for _, args := range []string{`{"status":"open","limit":500}`, `{"status":5}`, `{"status":"lost"}`} {
		res, err := listOrders.Call(context.Background(), &appUser{Name: "bob"}, mcpmw.NewArgs([]byte(args)))
		var ae *mcpmw.ArgError
		switch {
		case errors.As(err, &ae):
			fmt.Printf("argument %s: %s\n", ae.Field, ae.Problem)
		case res.IsError:
			fmt.Println("tool error:", res.AllText())
		default:
			b, _ := json.Marshal(res.StructuredContent)
			fmt.Println("ok:", string(b))
		}
	}
	// Output:
	// ok: {"limit":50,"orders":[],"status":"open"}
	// argument status: must be a string, not a number
	// tool error: unknown status "lost": use open or shipped
}

func ExampleMethod() {
	// One Method adds resources/list, and with it the resources
	// capability, which discover (and initialize) advertise.
	listResources := mcpmw.Method{
		Name:       "resources/list",
		Capability: "resources",
		Handle: func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			resp := mcpmw.ResultResponse(map[string]any{
				"resources":  []map[string]string{{"uri": "docs://readme", "name": "README"}},
				"ttlMs":      60000,
				"cacheScope": "public",
			})
			resp.Summary = "listed 1 resource"
			return resp
		},
	}
	authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) {
		return &appUser{Name: "alice"}, nil
	})
	audit := mcpmw.AuditFunc(func(ctx context.Context, rec mcpmw.CallRecord) {
		fmt.Printf("audit: %s %s (%s)\n", rec.Outcome, rec.Method, rec.Summary)
	})
	h := mcpmw.New(nil, authn, audit, &mcpmw.Options{
		Server:  mcpmw.Implementation{Name: "docs", Version: "2.0.0"},
		Methods: []mcpmw.Method{listResources},
	})

	post(h, "server/discover", "")
	post(h, "resources/list", "")
	post(h, "prompts/list", "") // not registered: -32601
	// Output:
	// audit: ok server/discover (discover)
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18"],"capabilities":{"resources":{"listChanged":true,"subscribe":true}},"ttlMs":60000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"docs","version":"2.0.0"}}}}
	// audit: ok resources/list (listed 1 resource)
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","cacheScope":"public","resources":[{"name":"README","uri":"docs://readme"}],"ttlMs":60000,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"docs","version":"2.0.0"}}}}
	// audit: error prompts/list (Method not found: prompts/list (this server does not offer prompts))
	// 404 {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: prompts/list (this server does not offer prompts)"}}
}

func ExampleDispatcher() {
	// A middleware sees every request on its way to a method, after the
	// handler has checked it: here it notes the caller in the record.
	forCaller := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			resp := next.Dispatch(ctx, req)
			resp.Summary += " for " + req.Caller.(*appUser).Name
			return resp
		})
	}
	authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) {
		return &appUser{Name: "alice"}, nil
	})
	audit := mcpmw.AuditFunc(func(ctx context.Context, rec mcpmw.CallRecord) {
		fmt.Printf("audit: %s %s (%s)\n", rec.Outcome, rec.Method, rec.Summary)
	})
	var reg mcpmw.Registry
	h := mcpmw.New(&reg, authn, audit, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{forCaller}})
	post(h, "tools/list", "")
	// Output:
	// audit: ok tools/list (listed 0 tools for alice)
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[],"ttlMs":60000,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-server","version":"0.0.0"}}}}
}

func ExampleLogAuditor() {
	var reg mcpmw.Registry
	h := mcpmw.New(&reg, mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) {
		return nil, errors.New("no token")
	}), mcpmw.LogAuditor(newJSONLogger(stdoutNoTime{})), nil)
	post(h, "tools/list", "")
	// Output:
	// {"level":"WARN","msg":"mcp request","outcome":"denied","status":401,"method":"","error_code":-32600,"tool":"","target":"","caller":"","client_ip":"192.0.2.1","auth_error":"no token","summary":"authentication failed"}
	// 401 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Unauthorized: send valid credentials in the Authorization header"}}
}

// stdoutNoTime writes to standard output, for Example functions.
type stdoutNoTime struct{}

func (stdoutNoTime) Write(p []byte) (int, error) { return fmt.Print(string(p)) }

// newJSONLogger logs JSON lines to w without the fields that change from run
// to run (time and duration), so examples have fixed output.
func newJSONLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == "duration" {
			return slog.Attr{}
		}
		return a
	}}))
}
