package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/examples/internal/redisenv"
	"github.com/mcpmw/mcpmw/internal/redistest"
)

// The notes board's contract, tested from outside as a host would meet
// it: ui://notes/board served and linked from notes_list and note_create;
// notes_board_state listed and callable on 2026-07-28 only for a client
// that renders apps, -32021 for any other, never on the legacy revisions;
// the permission gate first, as for every tool.

// uiCaps is the clientCapabilities of a client that renders apps.
const uiCaps = `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`

// withUI is r, a 2026-07-28 request, from a client that renders apps.
func withUI(r request) request {
	r.body = strings.Replace(r.body, `"io.modelcontextprotocol/clientCapabilities":{}`, uiCaps, 1)
	return r
}

// boardMeta is the _meta of a tool the board renders the results of.
const boardMeta = `{"ui":{"resourceUri":"ui://notes/board"},"ui/resourceUri":"ui://notes/board"}`

// listedMeta returns the _meta of each tool of a tools/list result.
func listedMeta(t *testing.T, rep reply) map[string]json.RawMessage {
	t.Helper()
	var tools []struct {
		Name string          `json:"name"`
		Meta json.RawMessage `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(rep.result["tools"], &tools))
	out := map[string]json.RawMessage{}
	for _, tl := range tools {
		out[tl.Name] = tl.Meta
	}
	return out
}

func TestBoardToolsListed(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	for range 2 { // the second time from the list's cache, whose key holds the capability
		rep := app.exchange(t, withUI(modern(readerToken, `1`, "tools/list", "")), expect{status: 200, audit: audited("ok", "reader", "tools/list", ""),
			check: listed(true, "echo", "add", "notes_list", "notes_export", "notes_board_state")})
		meta := listedMeta(t, rep)
		assert.JSONEq(t, boardMeta, string(meta["notes_list"]))
		assert.JSONEq(t, `{"ui":{"resourceUri":"ui://notes/board","visibility":["app"]},"ui/resourceUri":"ui://notes/board"}`, string(meta["notes_board_state"]))
		assert.Empty(t, meta["echo"], "a tool without a UI has no _meta")

		rep = app.exchange(t, withUI(modern(writerToken, `2`, "tools/list", "")), expect{status: 200, audit: audited("ok", "writer", "tools/list", ""),
			check: listed(true, "echo", "add", "note_create", "note_delete", "notes_list", "notes_export", "notes_board_state")})
		assert.JSONEq(t, boardMeta, string(listedMeta(t, rep)["note_create"]))

		// Without the extension, or with another MIME type, the app-only
		// tool is not offered; the links stay (a client ignores them).
		rep = app.exchange(t, modern(writerToken, `3`, "tools/list", ""), expect{status: 200, audit: audited("ok", "writer", "tools/list", ""),
			check: listed(true, "echo", "add", "note_create", "note_delete", "notes_list", "notes_export")})
		assert.JSONEq(t, boardMeta, string(listedMeta(t, rep)["note_create"]))
		other := modern(readerToken, `4`, "tools/list", "")
		other.body = strings.Replace(other.body, `"io.modelcontextprotocol/clientCapabilities":{}`,
			`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html"]}}}`, 1)
		app.exchange(t, other, expect{status: 200, audit: audited("ok", "reader", "tools/list", ""),
			check: listed(true, "echo", "add", "notes_list", "notes_export")})
		for _, v := range []string{v1125, v0618} {
			rep = app.exchange(t, legacy(readerToken, v, `5`, "tools/list", ""), expect{status: 200, audit: audited("ok", "reader", "tools/list", ""),
				check: listed(false, "echo", "add", "notes_list", "notes_export")})
			assert.JSONEq(t, boardMeta, string(listedMeta(t, rep)["notes_list"]))
		}
	}
}

// boardState is a decoded notes_board_state structuredContent.
type boardStateResult struct {
	Notes    []map[string]any `json:"notes"`
	CanWrite bool             `json:"canWrite"`
}

func TestBoardState(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	state := func(token, caller string) (boardStateResult, string) {
		t.Helper()
		rep := app.exchange(t, withUI(modernCall(token, `1`, "notes_board_state", `{}`)),
			expect{status: 200, audit: audited("ok", caller, "tools/call", "notes_board_state")})
		tr := decodeTool(t, rep)
		require.False(t, tr.IsError, tr.text())
		var s boardStateResult
		require.NoError(t, json.Unmarshal(tr.StructuredContent, &s))
		return s, tr.text()
	}
	s, text := state(readerToken, "reader")
	assert.Equal(t, boardStateResult{Notes: []map[string]any{}, CanWrite: false}, s)
	assert.Equal(t, "0 notes, oldest first; you may not add notes", text)

	for _, n := range []string{"first", "second\nline", "third"} {
		app.exchange(t, modernCall(writerToken, `2`, "note_create", `{"text":`+jsonString(n)+`}`),
			expect{status: 200, audit: audited("ok", "writer", "tools/call", "note_create")})
	}
	app.exchange(t, modernCall(otherToken, `3`, "note_create", `{"text":"another team's"}`),
		expect{status: 200, audit: audited("ok", "other", "tools/call", "note_create")})

	want := []map[string]any{{"id": 1.0, "text": "first"}, {"id": 2.0, "text": "second\nline"}, {"id": 3.0, "text": "third"}}
	s, text = state(readerToken, "reader")
	assert.Equal(t, boardStateResult{Notes: want, CanWrite: false}, s, "oldest first, id and text only")
	assert.Equal(t, `3 notes, oldest first: #1 "first", #2 "second\nline", #3 "third"; you may not add notes`, text)
	assert.NotContains(t, text, "\n", "one line")
	s, text = state(writerToken, "writer")
	assert.Equal(t, boardStateResult{Notes: want, CanWrite: true}, s)
	assert.True(t, strings.HasSuffix(text, "; you may add notes"), text)
	s, _ = state(otherToken, "other")
	assert.Equal(t, boardStateResult{Notes: []map[string]any{{"id": 4.0, "text": "another team's"}}, CanWrite: true}, s, "per team")
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestBoardStateRefused(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	// Without the extension on 2026-07-28: -32021 naming it.
	rep := app.exchange(t, modernCall(readerToken, `1`, "notes_board_state", `{}`),
		expect{status: 400, code: -32021, audit: audited("error", "reader", "tools/call", "notes_board_state")})
	assert.JSONEq(t, `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}`, string(rep.err.Data))
	assert.Contains(t, rep.err.Message, `extensions["io.modelcontextprotocol/ui"]`)
	// On the legacy revisions it does not exist.
	for _, v := range []string{v1125, v0618} {
		rep = app.exchange(t, legacyCall(readerToken, v, `2`, "notes_board_state", `{}`),
			expect{status: 200, code: -32602, audit: audited("error", "reader", "tools/call", "notes_board_state")})
		assert.Equal(t, "Unknown tool: notes_board_state", rep.err.Message)
	}
	// The permission first: a caller without read is refused 403 whether
	// or not its client renders apps.
	for _, r := range []request{withUI(modernCall(guestToken, `3`, "notes_board_state", `{}`)), modernCall(guestToken, `4`, "notes_board_state", `{}`)} {
		app.exchange(t, r, expect{status: 403, code: -32602, audit: audited("denied", "guest", "tools/call", "notes_board_state")})
	}
}

func TestBoardResource(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	for _, r := range []request{resourceRead(readerToken, v26, `1`, boardURI), withUI(resourceRead(readerToken, v26, `2`, boardURI)), resourceRead(readerToken, v1125, `3`, boardURI)} {
		rep := app.exchange(t, r, expect{status: 200, audit: targeted("ok", "reader", "resources/read", boardURI)})
		var contents []struct {
			URI      string          `json:"uri"`
			MimeType string          `json:"mimeType"`
			Text     string          `json:"text"`
			Meta     json.RawMessage `json:"_meta"`
		}
		require.NoError(t, json.Unmarshal(rep.result["contents"], &contents))
		require.Len(t, contents, 1, "a host renders exactly one item")
		c := contents[0]
		assert.Equal(t, boardURI, c.URI)
		assert.Equal(t, "text/html;profile=mcp-app", c.MimeType)
		assert.True(t, strings.HasPrefix(strings.ToLower(c.Text), "<!doctype html>"), "an HTML5 document")
		assert.Equal(t, boardHTML, c.Text)
		assert.JSONEq(t, `{"ui":{"csp":{"connectDomains":[],"resourceDomains":[]},"prefersBorder":true}}`, string(c.Meta))
	}
	app.exchange(t, resourceRead(guestToken, v26, `4`, boardURI), expect{status: 403, code: -32602, audit: targeted("denied", "guest", "resources/read", boardURI)})

	rep := app.exchange(t, modern(readerToken, `5`, "resources/list", ""), expect{status: 200, audit: audited("ok", "reader", "resources/list", "")})
	got := listedResources(t, rep)
	require.Contains(t, got, boardURI)
	assert.Equal(t, "notes-board", got[boardURI]["name"])
	assert.Equal(t, "text/html;profile=mcp-app", got[boardURI]["mimeType"])
}

func TestBoardExtensionDeclared(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	rep := app.exchange(t, modern(readerToken, `1`, "server/discover", ""), expect{status: 200, audit: audited("ok", "reader", "server/discover", "")})
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	require.NoError(t, json.Unmarshal(rep.result["capabilities"], &caps))
	assert.JSONEq(t, `{}`, string(caps.Extensions["io.modelcontextprotocol/ui"]))
	for _, v := range []string{v1125, v0618} {
		rep = app.exchange(t, initialize(readerToken, `2`, v), expect{status: 200, audit: audited("ok", "reader", "initialize", "")})
		caps.Extensions = nil
		require.NoError(t, json.Unmarshal(rep.result["capabilities"], &caps))
		assert.JSONEq(t, `{}`, string(caps.Extensions["io.modelcontextprotocol/ui"]), v)
	}
}

// On Redis the board reads the same notes any instance wrote, and an
// outage is the tool's isError, as for every notes tool.
func TestBoardStateOnRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := testConfig()
	var err error
	c.redis, err = redisenv.FromEnv(func(k string) string {
		return map[string]string{"REDIS_URL": "redis://" + srv.Addr + "/0", "REDIS_TIMEOUT": busyRedisTimeout}[k]
	})
	require.NoError(t, err)
	instance := func() *testApp {
		a := &testApp{audit: &lockedBuffer{}, log: &lockedBuffer{}}
		h, mcp, done := newApp(c, a.audit, a.log)
		a.h = h
		t.Cleanup(func() { mcp.Close(); done() })
		return a
	}
	writer, reader := instance(), instance()
	writer.exchange(t, modernCall(writerToken, `1`, "note_create", `{"text":"in redis"}`),
		expect{status: 200, audit: audited("ok", "writer", "tools/call", "note_create")})
	reader.exchange(t, withUI(modernCall(readerToken, `2`, "notes_board_state", `{}`)), expect{status: 200, audit: audited("ok", "reader", "tools/call", "notes_board_state"),
		check: toolOK(true, `1 notes, oldest first: #1 "in redis"; you may not add notes`, `{"notes":[{"id":1,"text":"in redis"}],"canWrite":false}`)})

	srv.Stop()
	reader.exchange(t, withUI(modernCall(readerToken, `3`, "notes_board_state", `{}`)), expect{status: 200, audit: audited("error", "reader", "tools/call", "notes_board_state"),
		check: toolFailed(true, "the notes store (Redis) is not answering")})
}
