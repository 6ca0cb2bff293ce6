package interop

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpgoClient connects mcp-go's client to url as the caller of token, at
// revision rev, and closes it when the test ends.
func mcpgoClient(t *testing.T, ctx context.Context, url, token, rev string) (*client.Client, *wireRecorder) {
	t.Helper()
	wire := newWireRecorder(http.DefaultTransport, token)
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("MCPMW_INTEROP_DUMP") != "" {
			t.Logf("wire traffic of %s at %s:\n%s", token, rev, wire.dump())
		}
	})
	tr, err := transport.NewStreamableHTTP(url,
		transport.WithHTTPBasicClient(&http.Client{Transport: wire}),
		transport.WithHTTPTimeout(10*time.Second))
	require.NoError(t, err)
	c := client.NewClient(tr, client.WithProtocolVersion(rev))
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: rev,
		ClientInfo:      mcp.Implementation{Name: "interop-mcp-go-resources", Version: "0.1.0"},
	}})
	require.NoError(t, err, "connect as %s at %s", token, rev)
	require.Equal(t, rev, c.ProtocolVersion(), "protocol version in effect")
	return c, wire
}

// TestMCPGoResources drives the example app's resources, template, prompts
// and completions with mcp-go's client at each revision it speaks.
func TestMCPGoResources(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example app")
	}
	t.Parallel()
	app := startChiApp(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	notes := seedNotes(t, ctx, app.url)
	for _, rev := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			testMCPGoResources(t, app.url, rev, notes)
		})
	}
}

// testMCPGoResources runs the resources scenario at one revision.
func testMCPGoResources(t *testing.T, url, rev string, notes seededNotes) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, _ := mcpgoClient(t, ctx, url, writerToken, rev)
	caps := c.GetServerCapabilities()
	assert.NotNil(t, caps.Resources, "resources capability")
	assert.NotNil(t, caps.Prompts, "prompts capability")
	assert.NotNil(t, caps.Completions, "completions capability")

	// resources/list: the fixed resources, then the writer's tenant's notes.
	list, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	require.NoError(t, err, "resources/list")
	var uris []string
	var listed []mcp.Resource
	for _, r := range list.Resources {
		if strings.HasPrefix(r.URI, "skill://") { // the skills' SKILL.md files: the TypeScript client's skills test
			continue
		}
		uris = append(uris, r.URI)
		listed = append(listed, r)
	}
	want := []string{"app://readme", "app://stats", "ui://notes/board"} // the notes board, an MCP App
	for _, id := range notes.demo {
		want = append(want, "notes://"+strconv.Itoa(id))
	}
	assert.Equal(t, want, uris, "listed resources")
	if assert.Len(t, listed, len(want)) {
		assert.Equal(t, "text/markdown", listed[0].MIMEType)
		assert.Equal(t, "note "+strconv.Itoa(notes.demo[0]), listed[3].Name)
	}

	// resources/read of app://readme and of a note through the template.
	text := func(res *mcp.ReadResourceResult) (uri, mime, text string) {
		t.Helper()
		require.Len(t, res.Contents, 1)
		tc, ok := mcp.AsTextResourceContents(res.Contents[0])
		require.True(t, ok, "text contents, got %T", res.Contents[0])
		return tc.URI, tc.MIMEType, tc.Text
	}
	rr, err := c.ReadResource(ctx, readRequest("app://readme"))
	require.NoError(t, err, "read app://readme")
	uri, mime, body := text(rr)
	assert.Equal(t, "app://readme", uri)
	assert.Equal(t, "text/markdown", mime)
	assert.True(t, strings.HasPrefix(body, "# chi-app\n"), "readme text %q", body)

	first := "notes://" + strconv.Itoa(notes.demo[0])
	rr, err = c.ReadResource(ctx, readRequest(first))
	require.NoError(t, err, "read %s", first)
	uri, mime, body = text(rr)
	assert.Equal(t, first, uri)
	assert.Equal(t, "text/plain", mime)
	assert.Equal(t, "first demo note", body)

	// A missing note is not found: -32602 on 2026-07-28 (mcp-go's
	// ErrInvalidParams), -32002 on the legacy revisions (ErrResourceNotFound).
	_, err = c.ReadResource(ctx, readRequest("notes://"+strconv.Itoa(notes.other)))
	if rev == "2026-07-28" {
		require.ErrorIs(t, err, mcp.ErrInvalidParams, "another tenant's note")
	} else {
		require.ErrorIs(t, err, mcp.ErrResourceNotFound, "another tenant's note")
	}

	// resources/templates/list.
	tl, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	require.NoError(t, err, "resources/templates/list")
	if assert.Len(t, tl.ResourceTemplates, 1) && assert.NotNil(t, tl.ResourceTemplates[0].URITemplate) {
		assert.Equal(t, "notes://{id}", tl.ResourceTemplates[0].URITemplate.Raw())
		assert.Equal(t, "note", tl.ResourceTemplates[0].Name)
	}

	// prompts/list and prompts/get summarize_notes with a style.
	pl, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	require.NoError(t, err, "prompts/list")
	var prompts []string
	for _, p := range pl.Prompts {
		prompts = append(prompts, p.Name)
	}
	assert.Equal(t, []string{"summarize_notes", "draft_note"}, prompts)

	var gr mcp.GetPromptRequest
	gr.Params.Name = "summarize_notes"
	gr.Params.Arguments = map[string]string{"style": "detailed"}
	gp, err := c.GetPrompt(ctx, gr)
	require.NoError(t, err, "prompts/get summarize_notes")
	assert.Equal(t, "Summary of the team's notes (detailed)", gp.Description)
	if assert.Len(t, gp.Messages, 1) {
		assert.Equal(t, mcp.RoleUser, gp.Messages[0].Role)
		tc, ok := mcp.AsTextContent(gp.Messages[0].Content)
		if assert.True(t, ok, "content %T", gp.Messages[0].Content) {
			assert.Contains(t, tc.Text, "Here are my team's 2 latest notes:")
			assert.Contains(t, tc.Text, "by writer: first demo note")
			assert.True(t, strings.HasSuffix(tc.Text, "in a detailed style."), "prompt text %q", tc.Text)
		}
	}

	// A prompt without its required argument is -32602.
	gr.Params.Name, gr.Params.Arguments = "draft_note", nil
	_, err = c.GetPrompt(ctx, gr)
	require.ErrorIs(t, err, mcp.ErrInvalidParams, "draft_note without topic")
	assert.Contains(t, err.Error(), "topic")

	// completion/complete (mcp-go always sends "context":{}).
	cr, err := c.Complete(ctx, completeRequest(mcp.PromptReference{Type: "ref/prompt", Name: "summarize_notes"}, "style", "b"))
	require.NoError(t, err, "complete style")
	assert.Equal(t, []string{"brief", "bullets"}, cr.Completion.Values)
	assert.Equal(t, 2, cr.Completion.Total)

	id := strconv.Itoa(notes.demo[1])
	cr, err = c.Complete(ctx, completeRequest(mcp.ResourceReference{Type: "ref/resource", URI: "notes://{id}"}, "id", id))
	require.NoError(t, err, "complete id")
	assert.Equal(t, []string{id}, cr.Completion.Values, "the tenant's note ids starting with %s", id)

	// A reader may not read app://stats: 403 with a -32602 body, which
	// mcp-go returns as ErrInvalidParams.
	reader, wire := mcpgoClient(t, ctx, url, readerToken, rev)
	_, err = reader.ReadResource(ctx, readRequest("app://stats"))
	require.ErrorIs(t, err, mcp.ErrInvalidParams, "a reader reading app://stats")
	assert.Contains(t, err.Error(), "app://stats")
	var tErr *transport.Error
	assert.False(t, errors.As(err, &tErr), "a JSON-RPC error, not a transport error: %v", err)
	status, werr := wire.statusOf(`"app://stats"`)
	require.NoError(t, werr)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, wire.lastHeader(`"app://stats"`, "WWW-Authenticate"), `scope="write"`)
	t.Logf("mcp-go reports the refused read as: %v", err)
}

// readRequest builds a resources/read request.
func readRequest(uri string) mcp.ReadResourceRequest {
	var req mcp.ReadResourceRequest
	req.Params.URI = uri
	return req
}

// completeRequest builds a completion/complete request.
func completeRequest(ref any, argument, value string) mcp.CompleteRequest {
	var req mcp.CompleteRequest
	req.Params.Ref = ref
	req.Params.Argument = mcp.CompleteArgument{Name: argument, Value: value}
	return req
}
