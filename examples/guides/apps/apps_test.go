// Package apps_test is the tested source of the snippets of docs/apps.md.
package apps_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/apps"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// boardHTML stands in for the application's embedded board: one HTML5
// document, its script and style inline.
const boardHTML = "<!DOCTYPE html><html><head><title>Board</title></head><body></body></html>"

// notesList and boardState stand in for the application's tools.
var (
	notesList = mcpmw.Tool{Name: "notes_list", Permission: "read",
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("0 notes"), nil // meaningful to a host without apps
		}}
	boardState = mcpmw.Tool{Name: "notes_board_state", Permission: "read",
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.ToolResult{Content: []mcpmw.Content{mcpmw.TextContent("0 notes; you may add notes")},
				StructuredContent: map[string]any{"notes": []any{}, "canWrite": true}}, nil
		}}
)

// registry registers the board and its tools as the guide shows.
func registry() *mcpmw.Registry {
	var reg mcpmw.Registry
	// !+register
	reg.AddResources(apps.Resource("ui://notes/board", "notes-board", "read", boardHTML,
		apps.ResourceMeta{CSP: &apps.CSP{}, PrefersBorder: mcpmw.HintYes})) // first: AddTools checks the tools' UI is there
	apps.AddTools(&reg,
		apps.Tool(notesList, apps.ToolMeta{ResourceURI: "ui://notes/board"}),
		apps.Tool(boardState, apps.ToolMeta{ResourceURI: "ui://notes/board", Visibility: []apps.Visibility{apps.VisibilityApp}}),
	)
	// !-register
	return &reg
}

// TestBoard is the guide's test of an app, line for line.
func TestBoard(t *testing.T) {
	reg := registry()
	// !+test
	authn := mcpmwtest.Tokens{"reader-token": &mcpmwtest.User{Name: "reader", Permissions: []mcpmw.Permission{"read"}}}
	srv := mcpmwtest.NewServer(t, mcpmw.New(reg, authn, mcpmwtest.NewRecorder(), nil))
	rendersApps := map[string]any{"extensions": map[string]any{
		apps.ExtensionID: map[string]any{"mimeTypes": []string{apps.MIMEType}}}}
	host := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Capabilities(rendersApps))
	plain := srv.Client(mcpmwtest.Bearer("reader-token"))

	tools, err := host.ListTools(t.Context()) // the host sees the app-only tool, and keeps it from its model
	require.NoError(t, err)
	require.Len(t, tools, 2)
	var def struct {
		Meta json.RawMessage `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(tools[0].Raw, &def))
	assert.JSONEq(t, `{"ui":{"resourceUri":"ui://notes/board"},"ui/resourceUri":"ui://notes/board"}`, string(def.Meta))
	ui, err := host.ReadResource(t.Context(), "ui://notes/board")
	require.NoError(t, err)
	assert.Contains(t, string(ui.Result), `"mimeType":"text/html;profile=mcp-app"`)
	state, err := host.CallTool(t.Context(), "notes_board_state", nil) // as the app calls it, through the host
	require.NoError(t, err)
	assert.JSONEq(t, `{"notes":[],"canWrite":true}`, string(state.StructuredContent))

	tools, err = plain.ListTools(t.Context()) // a client that does not render apps
	require.NoError(t, err)
	assert.Len(t, tools, 1)
	_, err = plain.CallTool(t.Context(), "notes_board_state", nil)
	var refused *mcpmwtest.Error
	require.True(t, errors.As(err, &refused))
	assert.Equal(t, mcpmw.CodeMissingRequiredClientCapability, refused.Code) // -32021, naming the extension
	// !-test
}
