package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// otherToken is the example app's token of another tenant ("other"), with
// read and write.
const otherToken = "other-token"

// seededNotes are the notes a resources test creates before its clients
// look: two of the writer's tenant (demo) and one of another tenant.
type seededNotes struct {
	demo  []int // note ids of the tenant demo, oldest first
	other int   // a note id of the tenant other
}

// sdkSession connects the official Go SDK client to url as the caller of
// token, at revision rev, and closes the session when the test ends.
func sdkSession(t *testing.T, ctx context.Context, url, token, rev string) (*mcp.ClientSession, *wireRecorder) {
	t.Helper()
	wire := newWireRecorder(http.DefaultTransport, token)
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("MCPMW_INTEROP_DUMP") != "" {
			t.Logf("wire traffic of %s at %s:\n%s", token, rev, wire.dump())
		}
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "interop-sdk-resources", Version: "0.1.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: wire},
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
	require.NoError(t, err, "connect as %s at %s", token, rev)
	t.Cleanup(func() { _ = cs.Close() })
	require.Equal(t, rev, cs.InitializeResult().ProtocolVersion, "negotiated protocol version")
	return cs, wire
}

// seedNotes creates two notes as the writer and one as the other tenant,
// with the SDK client's note_create, and returns their ids.
func seedNotes(t *testing.T, ctx context.Context, url string) seededNotes {
	t.Helper()
	create := func(token, text string) int {
		cs, _ := sdkSession(t, ctx, url, token, "2025-11-25")
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "note_create", Arguments: map[string]any{"text": text}})
		require.NoError(t, err, "note_create as %s", token)
		require.False(t, res.IsError, "note_create: %s", textOf(res))
		var out struct {
			ID int `json:"id"`
		}
		raw, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &out))
		require.Positive(t, out.ID, "note id in %s", raw)
		return out.ID
	}
	var s seededNotes
	s.demo = append(s.demo, create(writerToken, "first demo note"), create(writerToken, "second demo note"))
	s.other = create(otherToken, "a note of the other team")
	return s
}

// TestSDKResources drives the example app's resources, templates, prompts
// and completions with the official Go SDK client at 2026-07-28 and
// 2025-11-25.
func TestSDKResources(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example app")
	}
	t.Parallel()
	app := startChiApp(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	notes := seedNotes(t, ctx, app.url)
	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			testSDKResources(t, app.url, rev, notes)
		})
	}
}

// testSDKResources runs the resources scenario at one revision.
func testSDKResources(t *testing.T, url, rev string, notes seededNotes) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, _ := sdkSession(t, ctx, url, writerToken, rev)
	caps := cs.InitializeResult().Capabilities
	require.NotNil(t, caps)
	assert.NotNil(t, caps.Resources, "resources capability")
	assert.NotNil(t, caps.Prompts, "prompts capability")
	assert.NotNil(t, caps.Completions, "completions capability")

	// resources/list: the fixed resources, then the writer's tenant's notes;
	// the other tenant's note is not there.
	list, err := cs.ListResources(ctx, nil)
	require.NoError(t, err, "resources/list")
	got := map[string]*mcp.Resource{}
	var uris []string
	for _, r := range list.Resources {
		if strings.HasPrefix(r.URI, "skill://") { // the skills' SKILL.md files: the TypeScript client's skills test
			continue
		}
		got[r.URI] = r
		uris = append(uris, r.URI)
	}
	want := []string{"app://readme", "app://stats", "ui://notes/board"} // the notes board, an MCP App
	for _, id := range notes.demo {
		want = append(want, "notes://"+strconv.Itoa(id))
	}
	assert.Equal(t, want, uris, "listed resources")
	assert.NotContains(t, uris, "notes://"+strconv.Itoa(notes.other), "another tenant's note")
	if r := got["app://readme"]; assert.NotNil(t, r) {
		assert.Equal(t, "readme", r.Name)
		assert.Equal(t, "About this app", r.Title)
		assert.Equal(t, "text/markdown", r.MIMEType)
	}
	first := "notes://" + strconv.Itoa(notes.demo[0])
	if r := got[first]; assert.NotNil(t, r) {
		assert.Equal(t, "note "+strconv.Itoa(notes.demo[0]), r.Name)
		assert.Equal(t, "text/plain", r.MIMEType)
		assert.Equal(t, "Note by writer", r.Description)
	}

	// resources/read of a fixed resource and of a note through the template.
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "app://readme"})
	require.NoError(t, err, "read app://readme")
	if assert.Len(t, rr.Contents, 1) {
		assert.Equal(t, "app://readme", rr.Contents[0].URI)
		assert.Equal(t, "text/markdown", rr.Contents[0].MIMEType)
		assert.True(t, strings.HasPrefix(rr.Contents[0].Text, "# chi-app\n"), "readme text %q", rr.Contents[0].Text)
	}
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: first})
	require.NoError(t, err, "read %s", first)
	if assert.Len(t, rr.Contents, 1) {
		assert.Equal(t, first, rr.Contents[0].URI)
		assert.Equal(t, "text/plain", rr.Contents[0].MIMEType)
		assert.Equal(t, "first demo note", rr.Contents[0].Text)
	}
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "app://stats"})
	require.NoError(t, err, "read app://stats as the writer")
	if assert.Len(t, rr.Contents, 1) {
		assert.Equal(t, "application/json", rr.Contents[0].MIMEType)
		assert.JSONEq(t, `{"notes":2}`, rr.Contents[0].Text)
	}

	// A missing note, and another tenant's, are not found: -32602 with
	// data.uri on 2026-07-28, -32002 on the legacy revisions.
	for _, uri := range []string{"notes://999999", "notes://" + strconv.Itoa(notes.other)} {
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if rev == "2026-07-28" {
			rpcErr := requireRPCError(t, err, mcpmw.CodeInvalidParams, "")
			assert.JSONEq(t, fmt.Sprintf(`{"uri":%q}`, uri), string(rpcErr.Data), "error data of %s", uri)
		} else {
			requireRPCError(t, err, -32002, "")
		}
	}

	// resources/templates/list.
	tl, err := cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err, "resources/templates/list")
	if assert.Len(t, tl.ResourceTemplates, 1) {
		tmpl := tl.ResourceTemplates[0]
		assert.Equal(t, "notes://{id}", tmpl.URITemplate)
		assert.Equal(t, "note", tmpl.Name)
		assert.Equal(t, "text/plain", tmpl.MIMEType)
	}

	// prompts/list: the writer sees both prompts, with their arguments.
	pl, err := cs.ListPrompts(ctx, nil)
	require.NoError(t, err, "prompts/list")
	var prompts []string
	args := map[string][]mcp.PromptArgument{}
	for _, p := range pl.Prompts {
		prompts = append(prompts, p.Name)
		for _, a := range p.Arguments {
			args[p.Name] = append(args[p.Name], *a)
		}
	}
	assert.Equal(t, []string{"summarize_notes", "draft_note"}, prompts)
	if assert.Len(t, args["summarize_notes"], 1) {
		assert.Equal(t, "style", args["summarize_notes"][0].Name)
		assert.False(t, args["summarize_notes"][0].Required)
	}
	if assert.Len(t, args["draft_note"], 1) {
		assert.Equal(t, "topic", args["draft_note"][0].Name)
		assert.True(t, args["draft_note"][0].Required)
	}

	// prompts/get summarize_notes with a style: one user message quoting the
	// tenant's notes, newest first, and none of the other tenant's.
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "summarize_notes", Arguments: map[string]string{"style": "bullets"}})
	require.NoError(t, err, "prompts/get summarize_notes")
	assert.Equal(t, "Summary of the team's notes (bullets)", gp.Description)
	if assert.Len(t, gp.Messages, 1) {
		assert.Equal(t, mcp.Role("user"), gp.Messages[0].Role)
		tc, ok := gp.Messages[0].Content.(*mcp.TextContent)
		if assert.True(t, ok, "content %T", gp.Messages[0].Content) {
			assert.Contains(t, tc.Text, "Here are my team's 2 latest notes:")
			assert.Contains(t, tc.Text, fmt.Sprintf("> #%d by writer: second demo note\n> #%d by writer: first demo note", notes.demo[1], notes.demo[0]))
			assert.NotContains(t, tc.Text, "other team")
			assert.True(t, strings.HasSuffix(tc.Text, "Please summarize them in a bullets style."), "prompt text %q", tc.Text)
		}
	}

	// completion/complete of the prompt argument style and of the template
	// variable id.
	cr, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "summarize_notes"},
		Argument: mcp.CompleteParamsArgument{Name: "style", Value: "b"},
	})
	require.NoError(t, err, "complete style")
	assert.Equal(t, []string{"brief", "bullets"}, cr.Completion.Values)
	assert.Equal(t, 2, cr.Completion.Total)
	assert.False(t, cr.Completion.HasMore)

	prefix := strconv.Itoa(notes.demo[0])[:1]
	var wantIDs []string
	for _, id := range notes.demo {
		if s := strconv.Itoa(id); strings.HasPrefix(s, prefix) {
			wantIDs = append(wantIDs, s)
		}
	}
	cr, err = cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "notes://{id}"},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: prefix},
	})
	require.NoError(t, err, "complete id")
	assert.Equal(t, wantIDs, cr.Completion.Values, "ids of the tenant's notes starting with %q", prefix)
	assert.NotContains(t, cr.Completion.Values, strconv.Itoa(notes.other))

	// A reader neither lists nor reads app://stats: the 403's JSON-RPC body
	// reaches the caller as a -32602 error.
	reader, wire := sdkSession(t, ctx, url, readerToken, rev)
	list, err = reader.ListResources(ctx, nil)
	require.NoError(t, err, "resources/list as the reader")
	uris = nil
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	assert.NotContains(t, uris, "app://stats", "a reader does not see app://stats")
	assert.Contains(t, uris, "app://readme")
	_, err = reader.ReadResource(ctx, &mcp.ReadResourceParams{URI: "app://stats"})
	requireRPCError(t, err, mcpmw.CodeInvalidParams, "")
	assert.Contains(t, err.Error(), "Forbidden", "the SDK names the HTTP status")
	t.Logf("the SDK reports the refused read as: %v", err)
	status, werr := wire.statusOf(`"app://stats"`)
	require.NoError(t, werr)
	assert.Equal(t, http.StatusForbidden, status)
	ch := wire.lastHeader(`"app://stats"`, "WWW-Authenticate")
	assert.Contains(t, ch, `error="insufficient_scope"`)
	assert.Contains(t, ch, `scope="write"`)

	// The refusal left the reader's session usable.
	rr, err = reader.ReadResource(ctx, &mcp.ReadResourceParams{URI: first})
	require.NoError(t, err, "read a note as the reader after the refusal")
	if assert.Len(t, rr.Contents, 1) {
		assert.Equal(t, "first demo note", rr.Contents[0].Text)
	}
}
