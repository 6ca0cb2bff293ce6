package mcpmw_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/mcpmw/mcpmw"
)

// A tool names its sensitive arguments by JSON pointer: the tool gets the
// value, the audit record (and every log line and message built from it)
// gets "[redacted]".
func ExampleTool_sensitive() {
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{
		Name: "login", Description: "Logs in.", Permission: "read",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"user":{"type":"string"},"password":{"type":"string"},"pin":{"type":"integer"}}}`),
		Sensitive:   []string{"/password", "/pin"},
		Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			user, password, _ := args.String("user"), args.String("password"), args.OptInt("pin", 0)
			if err := args.Err(); err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult(fmt.Sprintf("%s logged in (a %d-character password)", user, len(password))), nil
		},
	})
	authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) {
		return &appUser{Name: "alice", Scopes: []string{"read"}}, nil
	})
	audit := mcpmw.AuditFunc(func(_ context.Context, rec mcpmw.CallRecord) {
		fmt.Printf("audit: %s %s (%s)\n", rec.Tool, rec.Arguments, rec.Summary)
	})
	h := mcpmw.New(&reg, authn, audit, &mcpmw.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})

	post(h, "tools/call", `"name":"login","arguments":{"user":"alice","password":"hunter2"}`)
	post(h, "tools/call", `"name":"login","arguments":{"user":"alice","password":"hunter2","pin":12.5}`)
	// Output:
	// audit: login {"user":"alice","password":"[redacted]"} (ok)
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"alice logged in (a 7-character password)"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-server","version":"0.0.0"}}}}
	// audit: login {"user":"alice","password":"[redacted]","pin":"[redacted]"} (argument "pin" must be an integer, not [redacted])
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"Invalid arguments: argument \"pin\" must be an integer, not [redacted]. Check the tool's input schema and call it again."}],"isError":true,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-server","version":"0.0.0"}}}}
}
