package interop

import (
	"context"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPGoRoundTrip drives the example app (examples/chi-app, run as its
// own process) with mcp-go's client over its streamable HTTP transport, at
// each revision that client speaks: 2026-07-28 (server/discover, no
// handshake), 2025-11-25 and 2025-06-18 (initialize). Then it checks the
// app's audit file against what the client did.
func TestMCPGoRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example app")
	}
	t.Parallel()
	app := startChiApp(t)
	var (
		mu  sync.Mutex
		ran []string // the revisions -run selected
	)
	t.Run("revisions", func(t *testing.T) {
		for _, rev := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
			t.Run(rev, func(t *testing.T) {
				t.Parallel()
				mu.Lock()
				ran = append(ran, rev)
				mu.Unlock()
				testMCPGo(t, app.url, rev)
			})
		}
	})
	app.stop(t)
	if t.Failed() {
		return
	}

	// One record per tools/call, in order, at the revision the client spoke;
	// the refused call is audited as denied with its 403.
	type call struct {
		tool, outcome, caller string
		status                int
	}
	got := map[string][]call{}
	for _, rec := range app.auditRecords(t) {
		if rec.Method == "tools/call" {
			got[rec.ProtocolVersion] = append(got[rec.ProtocolVersion], call{rec.Tool, rec.Outcome, rec.Caller, rec.Status})
		}
	}
	for _, rev := range ran {
		assert.Equal(t, []call{
			{"echo", "ok", "reader", 200},
			{"add", "ok", "reader", 200},
			{"note_create", "denied", "reader", 403},
			{"no_such_tool", "error", "reader", 200},
			{"echo", "ok", "reader", 200},
			{"note_create", "ok", "writer", 200},
		}, got[rev], "audited tool calls at %s", rev)
	}
}

// testMCPGo runs the scenario at one revision: connect, list, call, read
// structured output, be refused, and go on after the refusal.
func testMCPGo(t *testing.T, url, rev string) {
	wire := newWireRecorder(http.DefaultTransport, readerToken)
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("MCPMW_INTEROP_DUMP") != "" {
			t.Logf("wire traffic at %s:\n%s", rev, wire.dump())
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	tr, err := transport.NewStreamableHTTP(url,
		transport.WithHTTPBasicClient(&http.Client{Transport: wire}),
		transport.WithHTTPTimeout(10*time.Second))
	require.NoError(t, err)
	// WithProtocolVersion pins the revision: 2026-07-28 probes with
	// server/discover, an earlier one goes straight to initialize.
	c := client.NewClient(tr, client.WithProtocolVersion(rev))
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { _ = c.Close() })

	ir, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: rev,
		ClientInfo:      mcp.Implementation{Name: "interop-mcp-go", Version: "0.1.0"},
	}})
	require.NoError(t, err, "connect")
	// A failed server/discover would make the client fall back to
	// initialize quietly, so check which way it went.
	require.Equal(t, rev, c.ProtocolVersion(), "protocol version in effect")
	assert.Equal(t, rev, ir.ProtocolVersion)
	assert.Equal(t, "chi-app", ir.ServerInfo.Name)
	assert.NotNil(t, ir.Capabilities.Tools, "tools capability")
	if rev == "2026-07-28" {
		assert.Equal(t, []string{"server/discover"}, wire.methods(), "a modern connection starts with server/discover alone")
	} else {
		assert.Equal(t, []string{"initialize", "notifications/initialized"}, wire.methods(), "a legacy connection starts with the handshake")
	}

	// tools/list shows the reader what it may call, in registration order.
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	require.NoError(t, err, "tools/list")
	var names []string
	tools := map[string]mcp.Tool{}
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		tools[tool.Name] = tool
	}
	assert.Equal(t, []string{"echo", "add", "notes_list", "notes_export"}, names, "tools a reader may call")
	add := tools["add"]
	assert.Equal(t, "object", add.OutputSchema.Type, "add output schema")
	assert.Contains(t, add.OutputSchema.Properties, "sum")
	if assert.NotNil(t, add.Annotations.ReadOnlyHint) {
		assert.True(t, *add.Annotations.ReadOnlyHint, "add readOnlyHint")
	}

	res, err := c.CallTool(ctx, callTool("echo", map[string]any{"message": "hello from mcp-go"}))
	require.NoError(t, err, "call echo")
	assert.False(t, res.IsError)
	assert.Equal(t, "hello from mcp-go", mcpgoText(res))

	// add answers with text and with structuredContent {"sum": n}.
	res, err = c.CallTool(ctx, callTool("add", map[string]any{"a": 2, "b": 3.5}))
	require.NoError(t, err, "call add")
	assert.False(t, res.IsError)
	assert.Equal(t, "5.5", mcpgoText(res))
	assert.Equal(t, map[string]any{"sum": 5.5}, res.StructuredContent, "structured content")

	// A reader may not create notes: 403 with a JSON-RPC -32602 body, which
	// mcp-go reads and returns as ErrInvalidParams.
	_, err = c.CallTool(ctx, callTool("note_create", map[string]any{"text": "not allowed"}))
	require.ErrorIs(t, err, mcp.ErrInvalidParams, "refused call")
	assert.Contains(t, err.Error(), "note_create")
	status, werr := wire.statusOf(`"note_create"`)
	require.NoError(t, werr)
	assert.Equal(t, http.StatusForbidden, status, "HTTP status of the refused call")

	// An unknown tool is -32602 too, at 200.
	_, err = c.CallTool(ctx, callTool("no_such_tool", map[string]any{}))
	require.ErrorIs(t, err, mcp.ErrInvalidParams, "unknown tool")
	assert.Contains(t, err.Error(), "no_such_tool")
	status, werr = wire.statusOf(`"no_such_tool"`)
	require.NoError(t, werr)
	assert.Equal(t, http.StatusOK, status, "HTTP status of the unknown tool")

	// The refusals left the client usable.
	res, err = c.CallTool(ctx, callTool("echo", map[string]any{"message": "still here"}))
	require.NoError(t, err, "call echo after the refusals")
	assert.Equal(t, "still here", mcpgoText(res))

	// Each request is authenticated on its own: with the writer's token the
	// same client may create a note.
	wire.setToken(writerToken)
	res, err = c.CallTool(ctx, callTool("note_create", map[string]any{"text": "from mcp-go at " + rev}))
	require.NoError(t, err, "note_create as the writer")
	assert.False(t, res.IsError)
	if sc, ok := res.StructuredContent.(map[string]any); assert.True(t, ok, "structured content %#v", res.StructuredContent) {
		assert.Contains(t, sc, "id")
	}

	require.NoError(t, c.Close(), "close")
}

// callTool builds a tools/call request.
func callTool(name string, args map[string]any) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	return req
}

// mcpgoText returns the text of the result's first text content block.
func mcpgoText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			return tc.Text
		}
	}
	return ""
}
