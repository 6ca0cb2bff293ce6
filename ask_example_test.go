package mcpmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpmw/mcpmw"
)

// account is a caller with a stable identity: round state and legacy
// answers are bound to its CallerID.
type account struct{ id string }

func (a account) Can(mcpmw.Permission) bool { return true }
func (a account) CallerID() string          { return a.id }

func ExampleAsk() {
	confirm := json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{
		Name: "delete_order", Description: "Deletes an order once the user confirms.", Permission: "orders:write",
		RequiredClientCapabilities: []mcpmw.ClientCapability{mcpmw.Capability("elicitation")},
		Call: func(ctx context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			id := args.Int("id")
			if err := args.Err(); err != nil {
				return mcpmw.ToolResult{}, err
			}
			// The common case reads straight down: the answer when the
			// client sent it, otherwise the round ends here.
			raw, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm(fmt.Sprintf("Delete order %d?", id), confirm))
			if errors.Is(err, mcpmw.ErrInputRequired) {
				mcpmw.SetRoundState(ctx, []byte(fmt.Sprint("asked about ", id))) // sealed, back in the retry
				return mcpmw.ToolResult{}, err
			}
			if err != nil {
				return mcpmw.ToolResult{}, err // an *AskError on the legacy revisions: the model reads why
			}
			var ans struct {
				Action  string `json:"action"`
				Content struct {
					Confirm bool `json:"confirm"`
				} `json:"content"`
			}
			if err := json.Unmarshal(raw, &ans); err != nil {
				return mcpmw.ToolResult{}, err
			}
			if ans.Action != "accept" || !ans.Content.Confirm {
				return mcpmw.TextResult(fmt.Sprintf("kept order %d", id)), nil
			}
			return mcpmw.TextResult(fmt.Sprintf("deleted order %d (state: %s)", id, mcpmw.RoundState(ctx))), nil
		},
	})
	authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return account{"acct-42"}, nil })
	audit := mcpmw.AuditFunc(func(_ context.Context, rec mcpmw.CallRecord) { fmt.Println("audit:", rec.Outcome, rec.Tool) })
	h := mcpmw.New(&reg, authn, audit, nil)

	call := func(extra string) map[string]any {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_order","arguments":{"id":7}` + extra +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "tools/call")
		r.Header.Set("Mcp-Name", "delete_order")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var out struct{ Result map[string]any }
		_ = json.Unmarshal(w.Body.Bytes(), &out)
		return out.Result
	}

	// Round 1: the tool asks.
	res := call("")
	question := res["inputRequests"].(map[string]any)["confirm"].(map[string]any)
	fmt.Println(res["resultType"], question["method"], question["params"].(map[string]any)["message"])

	// Round 2: the client retries with the user's answer and the state.
	state, _ := json.Marshal(res["requestState"])
	res = call(`,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":` + string(state))
	fmt.Println(res["resultType"], res["content"].([]any)[0].(map[string]any)["text"])
	// Output:
	// audit: input_required delete_order
	// input_required elicitation/create Delete order 7?
	// audit: ok delete_order
	// complete deleted order 7 (state: asked about 7)
}
