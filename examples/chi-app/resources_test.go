package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The app's resources, template, prompts, completions and change
// notifications, checked from outside as the contract states them.

// resourceRead is a resources/read of uri on 2026-07-28 (version v26) or a
// legacy revision.
func resourceRead(token, version, id, uri string) request {
	if version != v26 {
		return legacy(token, version, id, "resources/read", `"uri":`+strconv.Quote(uri))
	}
	r := modern(token, id, "resources/read", `"uri":`+strconv.Quote(uri))
	r.header.Set("Mcp-Name", uri)
	return r
}

// promptGet is a 2026-07-28 prompts/get.
func promptGet(token, id, name, args string) request {
	p := `"name":` + strconv.Quote(name)
	if args != "" {
		p += `,"arguments":` + args
	}
	r := modern(token, id, "prompts/get", p)
	r.header.Set("Mcp-Name", name)
	return r
}

// listedResources returns the URIs of a resources/list result, checking
// the envelope.
func listedResources(t *testing.T, rep reply) map[string]map[string]any {
	t.Helper()
	isModern(t, rep.result)
	assert.Equal(t, "private", str(t, rep.result, "cacheScope"), "the list depends on the caller")
	assert.Contains(t, rep.result, "ttlMs")
	var rs []map[string]any
	require.NoError(t, json.Unmarshal(rep.result["resources"], &rs))
	out := map[string]map[string]any{}
	for _, r := range rs {
		if uri := r["uri"].(string); !strings.HasPrefix(uri, "skill://") { // the skills' SKILL.md: skills_test.go
			out[uri] = r
		}
	}
	return out
}

// contentsOf decodes a resources/read result's one content.
func contentsOf(t *testing.T, rep reply) map[string]any {
	t.Helper()
	var cs []map[string]any
	require.NoError(t, json.Unmarshal(rep.result["contents"], &cs))
	require.Len(t, cs, 1)
	return cs[0]
}

func TestResourcesContract(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	app.createNotes(t, writerToken, 1, 2)
	app.createNotes(t, otherToken, 3)

	t.Run("a reader lists the readme and its tenant's notes, not the stats", func(t *testing.T) {
		rep := app.exchange(t, modern(readerToken, `1`, "resources/list", ""), expect{status: 200, audit: audited("ok", "reader", "resources/list", "")})
		got := listedResources(t, rep)
		assert.Len(t, got, 4, "the readme, the notes board (board_test.go) and two notes")
		require.Contains(t, got, "app://readme")
		assert.Equal(t, "text/markdown", got["app://readme"]["mimeType"])
		assert.NotContains(t, got, "app://stats")
		for _, id := range []int{1, 2} {
			r := got[noteURI(id)]
			require.NotNil(t, r, "note %d listed", id)
			assert.Equal(t, "note "+strconv.Itoa(id), r["name"])
			assert.Equal(t, "text/plain", r["mimeType"])
		}
		assert.NotContains(t, got, noteURI(3), "another tenant's note")
	})
	t.Run("a writer lists the stats too; the other tenant its own notes", func(t *testing.T) {
		got := listedResources(t, app.exchange(t, modern(writerToken, `2`, "resources/list", ""), expect{status: 200, audit: audited("ok", "writer", "resources/list", "")}))
		assert.Contains(t, got, "app://stats")
		got = listedResources(t, app.exchange(t, modern(otherToken, `3`, "resources/list", ""), expect{status: 200, audit: audited("ok", "other", "resources/list", "")}))
		assert.ElementsMatch(t, []string{"app://readme", "app://stats", boardURI, noteURI(3)}, keys(got))
	})
	t.Run("readme", func(t *testing.T) {
		rep := app.exchange(t, resourceRead(readerToken, v26, `4`, "app://readme"), expect{status: 200, audit: targeted("ok", "reader", "resources/read", "app://readme")})
		isModern(t, rep.result)
		c := contentsOf(t, rep)
		assert.Equal(t, "app://readme", c["uri"])
		assert.Equal(t, "text/markdown", c["mimeType"])
		assert.Contains(t, c["text"], "chi-app")
	})
	t.Run("stats counts the caller's tenant's notes", func(t *testing.T) {
		rep := app.exchange(t, resourceRead(writerToken, v26, `5`, "app://stats"), expect{status: 200, audit: targeted("ok", "writer", "resources/read", "app://stats")})
		c := contentsOf(t, rep)
		assert.Equal(t, "application/json", c["mimeType"])
		assert.JSONEq(t, `{"notes":2}`, c["text"].(string))
		rep = app.exchange(t, resourceRead(otherToken, v26, `6`, "app://stats"), expect{status: 200, audit: targeted("ok", "other", "resources/read", "app://stats")})
		assert.JSONEq(t, `{"notes":1}`, contentsOf(t, rep)["text"].(string))
	})
	t.Run("a reader may not read the stats", func(t *testing.T) {
		rep := app.exchange(t, resourceRead(readerToken, v26, `7`, "app://stats"), expect{status: 403, code: -32602,
			header: map[string]string{"WWW-Authenticate": `Bearer error="insufficient_scope", scope="write"`},
			audit:  targeted("denied", "reader", "resources/read", "app://stats")})
		assert.NotContains(t, rep.err.Message, "notes", "learns nothing about the resource")
		assert.Empty(t, rep.err.Data)
	})
	t.Run("a note of the caller's tenant, through the template", func(t *testing.T) {
		rep := app.exchange(t, resourceRead(readerToken, v26, `8`, noteURI(2)), expect{status: 200, audit: targeted("ok", "reader", "resources/read", noteURI(2))})
		c := contentsOf(t, rep)
		assert.Equal(t, "note 2", c["text"])
		assert.Equal(t, "text/plain", c["mimeType"])
	})
	for _, tc := range []struct {
		name, version string
		code          int
	}{{"2026-07-28", v26, -32602}, {"2025-11-25", v1125, -32002}, {"2025-06-18", v0618, -32002}} {
		t.Run("another tenant's note is not found, "+tc.name, func(t *testing.T) {
			rep := app.exchange(t, resourceRead(readerToken, tc.version, `9`, noteURI(3)), expect{status: 200, code: tc.code, audit: targeted("error", "reader", "resources/read", noteURI(3))})
			assert.JSONEq(t, `{"uri":"notes://3"}`, string(rep.err.Data))
			rep = app.exchange(t, resourceRead(readerToken, tc.version, `10`, noteURI(99)), expect{status: 200, code: tc.code, audit: targeted("error", "reader", "resources/read", noteURI(99))})
			assert.JSONEq(t, `{"uri":"notes://99"}`, string(rep.err.Data))
		})
	}
	t.Run("only the canonical spelling of an id reads a note", func(t *testing.T) {
		for _, uri := range []string{"notes://01", "notes://+1", "notes://0", "notes://-1", "notes://1x"} {
			rep := app.exchange(t, resourceRead(readerToken, v26, `12`, uri), expect{status: 200, code: -32602, audit: targeted("error", "reader", "resources/read", uri)})
			assert.JSONEq(t, `{"uri":`+strconv.Quote(uri)+`}`, string(rep.err.Data))
		}
	})
	t.Run("templates", func(t *testing.T) {
		rep := app.exchange(t, modern(readerToken, `11`, "resources/templates/list", ""), expect{status: 200, audit: audited("ok", "reader", "resources/templates/list", "")})
		var ts []map[string]any
		require.NoError(t, json.Unmarshal(rep.result["resourceTemplates"], &ts))
		require.Len(t, ts, 1)
		assert.Equal(t, "notes://{id}", ts[0]["uriTemplate"])
	})
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// promptText returns the text of a prompts/get result's one message.
func promptText(t *testing.T, rep reply) string {
	t.Helper()
	isModern(t, rep.result)
	var msgs []struct {
		Role    string `json:"role"`
		Content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	require.NoError(t, json.Unmarshal(rep.result["messages"], &msgs))
	require.Len(t, msgs, 1)
	assert.Equal(t, "user", msgs[0].Role)
	assert.Equal(t, "text", msgs[0].Content.Type)
	return msgs[0].Content.Text
}

func TestPromptsContract(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	app.createNotes(t, writerToken, 1, 2)
	app.createNotes(t, otherToken, 3)

	names := func(rep reply) []string {
		var ps []struct {
			Name string `json:"name"`
		}
		require.NoError(t, json.Unmarshal(rep.result["prompts"], &ps))
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	rep := app.exchange(t, modern(readerToken, `1`, "prompts/list", ""), expect{status: 200, audit: audited("ok", "reader", "prompts/list", "")})
	assert.Equal(t, []string{"summarize_notes"}, names(rep))
	assert.Equal(t, "private", str(t, rep.result, "cacheScope"))
	rep = app.exchange(t, modern(writerToken, `2`, "prompts/list", ""), expect{status: 200, audit: audited("ok", "writer", "prompts/list", "")})
	assert.Equal(t, []string{"summarize_notes", "draft_note"}, names(rep))

	text := promptText(t, app.exchange(t, promptGet(readerToken, `3`, "summarize_notes", `{"style":"bullets"}`),
		expect{status: 200, audit: targeted("ok", "reader", "prompts/get", "summarize_notes")}))
	assert.Contains(t, text, "note 1")
	assert.Contains(t, text, "note 2")
	assert.NotContains(t, text, "note 3", "another tenant's notes are not quoted")
	assert.Contains(t, text, "bullets")
	text = promptText(t, app.exchange(t, promptGet(readerToken, `4`, "summarize_notes", ""),
		expect{status: 200, audit: targeted("ok", "reader", "prompts/get", "summarize_notes")}))
	assert.Contains(t, text, "summar")

	app.exchange(t, promptGet(readerToken, `5`, "draft_note", `{"topic":"x"}`), expect{status: 403, code: -32602,
		header: map[string]string{"WWW-Authenticate": `Bearer error="insufficient_scope", scope="write"`},
		audit:  targeted("denied", "reader", "prompts/get", "draft_note")})
	rep = app.exchange(t, promptGet(writerToken, `6`, "draft_note", `{}`), expect{status: 200, code: -32602, audit: targeted("error", "writer", "prompts/get", "draft_note")})
	assert.Contains(t, rep.err.Message, `"topic"`)
	text = promptText(t, app.exchange(t, promptGet(writerToken, `7`, "draft_note", `{"topic":"the release plan"}`),
		expect{status: 200, audit: targeted("ok", "writer", "prompts/get", "draft_note")}))
	assert.Contains(t, text, "the release plan")
}

// complete is a 2026-07-28 completion/complete.
func complete(token, id, ref, arg, value, context string) request {
	p := `"ref":` + ref + `,"argument":{"name":` + strconv.Quote(arg) + `,"value":` + strconv.Quote(value) + `}`
	if context != "" {
		p += `,"context":{"arguments":` + context + `}`
	}
	return modern(token, id, "completion/complete", p)
}

func TestCompletionContract(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	app.createNotes(t, writerToken, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
	app.createNotes(t, otherToken, 13)

	values := func(rep reply) []string {
		isModern(t, rep.result)
		var c struct {
			Completion struct {
				Values []string `json:"values"`
			} `json:"completion"`
		}
		require.NoError(t, json.Unmarshal(mustJSON(t, rep.result), &c))
		return c.Completion.Values
	}
	prompt := `{"type":"ref/prompt","name":"summarize_notes"}`
	for value, want := range map[string][]string{"": {"brief", "detailed", "bullets"}, "b": {"brief", "bullets"}, "d": {"detailed"}, "x": {}} {
		rep := app.exchange(t, complete(readerToken, `1`, prompt, "style", value, ""), expect{status: 200, audit: targeted("ok", "reader", "completion/complete", "summarize_notes")})
		assert.Equal(t, want, nonNil(values(rep)), "style %q", value)
	}
	tmpl := `{"type":"ref/resource","uri":"notes://{id}"}`
	rep := app.exchange(t, complete(readerToken, `2`, tmpl, "id", "1", ""), expect{status: 200, audit: targeted("ok", "reader", "completion/complete", "notes://{id}")})
	assert.Equal(t, []string{"1", "10", "11", "12"}, values(rep), "the tenant's ids starting with 1, not the other tenant's 13")
	rep = app.exchange(t, complete(otherToken, `3`, tmpl, "id", "1", ""), expect{status: 200, audit: targeted("ok", "other", "completion/complete", "notes://{id}")})
	assert.Equal(t, []string{"13"}, values(rep))
	app.exchange(t, complete(readerToken, `4`, `{"type":"ref/prompt","name":"draft_note"}`, "topic", "", ""), expect{status: 403, code: -32602,
		audit: targeted("denied", "reader", "completion/complete", "draft_note")})
}

func mustJSON(t *testing.T, m map[string]json.RawMessage) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// listenStream opens a 2026-07-28 subscriptions/listen for token's caller
// on srv and returns a channel of its events' data, read until ctx ends.
func listenStream(ctx context.Context, t *testing.T, url, token, filter string) <-chan map[string]any {
	t.Helper()
	r := modern(token, `"listen"`, "subscriptions/listen", `"notifications":`+filter)
	req := r.clientRequest(t, url)
	req = req.WithContext(ctx)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events := make(chan map[string]any, 16)
	go func() {
		defer close(events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m map[string]any
			if json.Unmarshal([]byte(data), &m) == nil {
				events <- m
			}
		}
	}()
	return events
}

// nextEvent returns the next event of a stream, or nil after wait.
func nextEvent(events <-chan map[string]any, wait time.Duration) map[string]any {
	select {
	case ev := <-events:
		return ev
	case <-time.After(wait):
		return nil
	}
}

// TestNoteCreateNotifiesItsTenantOnly: note_create publishes
// resources/list_changed to the listeners of the same tenant only.
func TestNoteCreateNotifiesItsTenantOnly(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	srv := httptest.NewServer(app.h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*patience)
	defer cancel()

	demo := listenStream(ctx, t, srv.URL+"/mcp", readerToken, `{"resourcesListChanged":true}`)
	other := listenStream(ctx, t, srv.URL+"/mcp", otherToken, `{"resourcesListChanged":true}`)
	for _, events := range []<-chan map[string]any{demo, other} {
		ack := nextEvent(events, patience)
		require.NotNil(t, ack, "acknowledgement")
		assert.Equal(t, "notifications/subscriptions/acknowledged", ack["method"])
	}

	send := func(token, id, text string) {
		resp, err := http.DefaultClient.Do(modernCall(token, id, "note_create", `{"text":`+strconv.Quote(text)+`}`).clientRequest(t, srv.URL+"/mcp"))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		_ = resp.Body.Close()
	}
	send(writerToken, `1`, "for demo")
	ev := nextEvent(demo, patience)
	require.NotNil(t, ev, "demo's listener hears demo's change")
	assert.Equal(t, "notifications/resources/list_changed", ev["method"])
	params, _ := ev["params"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	assert.Equal(t, "listen", meta["io.modelcontextprotocol/subscriptionId"])
	assert.Nil(t, nextEvent(other, 300*time.Millisecond), "the other tenant's listener hears nothing of demo's change")

	send(otherToken, `2`, "for other")
	ev = nextEvent(other, patience)
	require.NotNil(t, ev, "other's listener hears other's change")
	assert.Equal(t, "notifications/resources/list_changed", ev["method"])
	assert.Nil(t, nextEvent(demo, 300*time.Millisecond), "demo's listener hears nothing of other's change")
}
