package mcpmw_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/mcpmw/mcpmw"
)

// A prompt is registered like a tool, on the same Registry: prompts/list
// shows it to callers with its permission, and prompts/get fills it in.
func ExampleRegistry_AddPrompts() {
	var reg mcpmw.Registry
	reg.AddPrompts(mcpmw.Prompt{
		Name:        "review",
		Description: "Asks for a code review in a given language.",
		Permission:  "read",
		Arguments:   []mcpmw.PromptArgument{{Name: "lang", Description: "The language of the code.", Required: true}},
		Get: func(ctx context.Context, c mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{
				mcpmw.UserMessage(mcpmw.TextContent("Review this " + args["lang"] + " code for " + c.(*appUser).Name + ".")),
			}}, nil
		},
	})
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		return &appUser{Name: "alice", Scopes: []string{"read"}}, nil
	})
	audit := mcpmw.AuditFunc(func(ctx context.Context, rec mcpmw.CallRecord) {
		fmt.Printf("audit: %s %s: %s\n", rec.Outcome, rec.Method, rec.Summary)
	})
	h := mcpmw.New(&reg, authn, audit, &mcpmw.Options{Server: mcpmw.Implementation{Name: "demo", Version: "1.0.0"}})

	post(h, "prompts/list", "")
	post(h, "prompts/get", `"name":"review","arguments":{"lang":"Go"}`)
	post(h, "prompts/get", `"name":"review"`)
	// Output:
	// audit: ok prompts/list: listed 1 prompt
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","prompts":[{"name":"review","description":"Asks for a code review in a given language.","arguments":[{"name":"lang","description":"The language of the code.","required":true}]}],"ttlMs":60000,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"demo","version":"1.0.0"}}}}
	// audit: ok prompts/get: got prompt review: 1 message
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","messages":[{"role":"user","content":{"type":"text","text":"Review this Go code for alice."}}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"demo","version":"1.0.0"}}}}
	// audit: error prompts/get: Invalid params: prompt "review" needs argument "lang"
	// 200 {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: prompt \"review\" needs argument \"lang\""}}
}
