// Package asking_test is the tested source of the snippet of
// docs/asking.md.
package asking_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// confirmSchema is the form the user fills in: one box to tick.
var confirmSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)

// noteDelete asks the user to confirm before it deletes note 3.
var noteDelete = mcpmw.Tool{
	Name: "note_delete", Description: "Deletes note 3 once the user confirms.", Permission: "write",
	Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
		// !+ask
		ans, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Delete note 3?", confirmSchema))
		if err != nil {
			return mcpmw.ToolResult{}, err // input_required: the client asks the user and calls again
		}
		// !-ask
		var form struct {
			Action  string `json:"action"`
			Content struct {
				Confirm bool `json:"confirm"`
			} `json:"content"`
		}
		if err := json.Unmarshal(ans, &form); err != nil {
			return mcpmw.ToolResult{}, err
		}
		if form.Action != "accept" || !form.Content.Confirm {
			return mcpmw.TextResult("Kept note 3."), nil
		}
		return mcpmw.TextResult("Deleted note 3."), nil
	},
}

// TestAskRound plays a 2026-07-28 client: the first call is answered
// input_required with the question, and the retry that carries the answer
// runs the tool to its end.
func TestAskRound(t *testing.T) {
	var reg mcpmw.Registry
	reg.AddTools(noteDelete)
	authn := mcpmwtest.Tokens{"writer-token": &mcpmwtest.User{Name: "writer", Permissions: []mcpmw.Permission{"write"}}}
	rec := mcpmwtest.NewRecorder()
	srv := mcpmwtest.NewServer(t, mcpmw.New(&reg, authn, rec, nil))
	c := srv.Client(mcpmwtest.Bearer("writer-token"), mcpmwtest.Capabilities(map[string]any{"elicitation": map[string]any{}}))

	first, err := c.Call(t.Context(), "tools/call", map[string]any{"name": "note_delete", "arguments": map[string]any{}})
	require.NoError(t, err)
	var round struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	require.NoError(t, first.Decode(&round))
	assert.Equal(t, "input_required", round.ResultType)
	require.Contains(t, round.InputRequests, "confirm")
	assert.Contains(t, string(round.InputRequests["confirm"]), `"Delete note 3?"`)
	assert.Equal(t, mcpmw.Outcome("input_required"), rec.Last().Outcome)

	for answer, want := range map[bool]string{true: "Deleted note 3.", false: "Kept note 3."} {
		retry := map[string]any{"name": "note_delete", "arguments": map[string]any{},
			"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": answer}}}}
		if round.RequestState != "" {
			retry["requestState"] = round.RequestState
		}
		done, err := c.Call(t.Context(), "tools/call", retry)
		require.NoError(t, err)
		var res struct {
			Content []struct{ Text string } `json:"content"`
		}
		require.NoError(t, done.Decode(&res))
		require.Len(t, res.Content, 1)
		assert.Equal(t, want, res.Content[0].Text)
	}

	// A client that cannot show a form is never asked: -32021.
	plain := srv.Client(mcpmwtest.Bearer("writer-token"))
	_, err = plain.CallTool(t.Context(), "note_delete", map[string]any{})
	var e *mcpmwtest.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, -32021, e.Code)
}
