// Package audit_test is the tested source of the snippet of
// docs/audit.md.
package audit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
	"github.com/mcpmw/mcpmw/typed"
)

// loginFunc and resetFunc stand in for the application's own code; they
// get every value as sent.
func loginFunc(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
	if args.String("password") != "hunter2" {
		return mcpmw.ErrorResult("wrong password"), nil
	}
	return mcpmw.TextResult("welcome " + args.String("user")), nil
}

func resetFunc(ctx context.Context, c mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
	return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("Reset " + args["user"] + "'s password."))}}, nil
}

// sensitive returns the guide's tool, typed tool and prompt.
func sensitive() (mcpmw.Tool, mcpmw.Tool, mcpmw.Prompt) {
	// !+sensitive
	login := mcpmw.Tool{
		Name: "login", Permission: "read",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"user":{"type":"string"},"password":{"type":"string"},` +
			`"cards":{"type":"array","items":{"type":"object","properties":{"number":{"type":"string"}}}}}}`),
		Sensitive: []string{"/password", "/cards/*/number"}, // JSON pointers into the arguments
		Call:      loginFunc,
	}

	type payIn struct { // typed: a struct tag, resolved once by typed.NewTool into the same pointers
		Amount int    `json:"amount"`
		APIKey string `json:"api_key" mcpmw:"sensitive"`
	}

	reset := mcpmw.Prompt{Name: "reset_password", Permission: "read", Get: resetFunc,
		Arguments: []mcpmw.PromptArgument{{Name: "user"}, {Name: "new_password", Sensitive: true}}}
	// !-sensitive
	pay := typed.NewTool("pay", "Pays.", "read", func(ctx context.Context, c mcpmw.Caller, in payIn) (string, error) {
		return "paid " + in.APIKey[:2] + "…", nil
	})
	return login, pay, reset
}

func TestSensitiveArguments(t *testing.T) {
	login, pay, reset := sensitive()
	assert.Equal(t, []string{"/api_key"}, pay.Sensitive, "the tag becomes a pointer")
	var reg mcpmw.Registry
	reg.AddTools(login, pay)
	reg.AddPrompts(reset)
	authn := mcpmwtest.Tokens{"t": &mcpmwtest.User{Name: "ann", Permissions: []mcpmw.Permission{"read"}}}
	rec := mcpmwtest.NewRecorder()
	srv := mcpmwtest.NewServer(t, mcpmw.New(&reg, authn, rec, nil))
	c := srv.Client(mcpmwtest.Bearer("t"))

	res, err := c.CallTool(t.Context(), "login", map[string]any{"user": "ann", "password": "hunter2",
		"cards": []map[string]string{{"number": "4111111111111111"}, {"number": "5500000000000004"}}})
	require.NoError(t, err)
	assert.Equal(t, "welcome ann", res.Text, "the tool gets every value as sent")
	assert.JSONEq(t, `{"user":"ann","password":"[redacted]","cards":[{"number":"[redacted]"},{"number":"[redacted]"}]}`,
		string(rec.Last().Arguments))

	res, err = c.CallTool(t.Context(), "pay", map[string]any{"amount": 5, "api_key": "sk-123"})
	require.NoError(t, err)
	assert.Equal(t, "paid sk…", res.Text)
	assert.JSONEq(t, `{"amount":5,"api_key":"[redacted]"}`, string(rec.Last().Arguments))

	// A value that breaks the rules is not quoted either.
	res, err = c.CallTool(t.Context(), "login", map[string]any{"password": 12345})
	require.NoError(t, err)
	assert.NotContains(t, res.Text, "12345")
	assert.NotContains(t, rec.Last().Summary, "12345")

	p, err := c.GetPrompt(t.Context(), "reset_password", map[string]string{"user": "ann", "new_password": "s3cret"})
	require.NoError(t, err)
	assert.Equal(t, "Reset ann's password.", p.Messages[0].Content.Text)
	assert.Nil(t, rec.Last().Arguments, "prompt arguments are not part of the record")
}
