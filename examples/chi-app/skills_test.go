package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The app's skills, tested from outside against the contract as written:
// two skills from embedded files, shared by permission (reader-token lists
// notes-howto; writer-token and other-token, of another team, both;
// guest-token none), each whole or not at all, every digest and size in an
// entry that of the bytes resources/read returns.

const (
	howtoURI = "skill://notes-howto/SKILL.md"
	adminURI = "skill://notes-admin/SKILL.md"
)

// skillEntry is one entry of skills/list or the skill of skills/get.
type skillEntry struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   []struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int    `json:"size"`
	} `json:"resources"`
}

// skillGet is a 2026-07-28 skills/get of uri (no Mcp-Name: the method
// names none).
func skillGet(token, id, uri string) request {
	return modern(token, id, "skills/get", `"uri":`+strconv.Quote(uri))
}

// directoryRead is a 2026-07-28 resources/directory/read of uri.
func directoryRead(token, id, uri string) request {
	return modern(token, id, "resources/directory/read", `"uri":`+strconv.Quote(uri))
}

func listSkills(t *testing.T, app *testApp, token, caller string) []skillEntry {
	t.Helper()
	rep := app.exchange(t, modern(token, `1`, "skills/list", ""), expect{status: 200, audit: audited("ok", caller, "skills/list", "")})
	isModern(t, rep.result)
	assert.Equal(t, "private", str(t, rep.result, "cacheScope"), "the list depends on the caller")
	assert.Contains(t, rep.result, "ttlMs")
	assert.NotContains(t, rep.result, "nextCursor")
	var out []skillEntry
	require.NoError(t, json.Unmarshal(rep.result["skills"], &out))
	return out
}

func TestSkillsDeclared(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	rep := app.exchange(t, modern(readerToken, `1`, "server/discover", ""), expect{status: 200, audit: audited("ok", "reader", "server/discover", "")})
	var caps struct {
		Resources  json.RawMessage            `json:"resources"`
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	require.NoError(t, json.Unmarshal(rep.result["capabilities"], &caps))
	assert.NotEmpty(t, caps.Resources, "the extension needs the resources capability")
	assert.JSONEq(t, `{"directoryRead":true}`, string(caps.Extensions["io.modelcontextprotocol/skills"]))
}

func TestSkillsListedByPermission(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	uris := func(es []skillEntry) []string {
		out := []string{}
		for _, e := range es {
			out = append(out, e.URI)
		}
		return out
	}
	reader := listSkills(t, app, readerToken, "reader")
	assert.Equal(t, []string{howtoURI}, uris(reader))
	assert.Equal(t, map[string]any{"name": "notes-howto", "description": "How to keep and find team notes with this server's tools."}, reader[0].Frontmatter)
	for token, caller := range map[string]string{writerToken: "writer", otherToken: "other"} {
		got := listSkills(t, app, token, caller)
		assert.Equal(t, []string{howtoURI, adminURI}, uris(got), caller)
		assert.Equal(t, map[string]any{"name": "notes-admin", "description": "How to review and delete team notes safely.", "license": "MIT"}, got[1].Frontmatter)
	}
	assert.Empty(t, listSkills(t, app, guestToken, "guest"), "an empty list, not an error")
}

// TestSkillsDigestsMatchReads: every file of every entry reads back as the
// bytes its digest and size describe, and SKILL.md is markdown text.
func TestSkillsDigestsMatchReads(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	entries := listSkills(t, app, writerToken, "writer")
	require.Len(t, entries, 2)
	want := map[string][]string{
		howtoURI: {howtoURI, "skill://notes-howto/reference/tools.md"},
		adminURI: {adminURI, "skill://notes-admin/checklists/delete.md"},
	}
	for i, e := range entries {
		var files []string
		for _, r := range e.Resources {
			files = append(files, r.URI)
			rep := app.exchange(t, resourceRead(writerToken, v26, strconv.Itoa(10+i), r.URI), expect{status: 200, audit: targeted("ok", "writer", "resources/read", r.URI)})
			c := contentsOf(t, rep)
			data := []byte(c["text"].(string))
			if r.URI == e.URI {
				assert.Equal(t, "text/markdown", c["mimeType"])
			}
			sum := sha256.Sum256(data)
			assert.Equal(t, "sha256:"+hex.EncodeToString(sum[:]), r.Digest, r.URI)
			assert.Equal(t, len(data), r.Size, r.URI)
			_, isBlob := c["blob"]
			assert.False(t, isBlob)
		}
		assert.Equal(t, want[e.URI], files)
		rep := app.exchange(t, skillGet(writerToken, `20`, e.URI), expect{status: 200, audit: targeted("ok", "writer", "skills/get", e.URI)})
		isModern(t, rep.result)
		assert.NotContains(t, rep.result, "nextCursor")
		var got skillEntry
		require.NoError(t, json.Unmarshal(rep.result["skill"], &got))
		assert.Equal(t, e, got, "skills/get answers the entry skills/list lists")
	}
}

// TestSkillsWholeOrNotAtAll: the reader, without write, gets the 403 a
// denied tool call gets, naming write, for notes-admin's entry, each of
// its files and its directories; a skill that does not exist gets -32602.
func TestSkillsWholeOrNotAtAll(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	insufficient := map[string]string{"WWW-Authenticate": `Bearer error="insufficient_scope", scope="write"`}
	for i, r := range []struct {
		req    request
		method string
		uri    string
	}{
		{skillGet(readerToken, `1`, adminURI), "skills/get", adminURI},
		{resourceRead(readerToken, v26, `2`, adminURI), "resources/read", adminURI},
		{resourceRead(readerToken, v26, `3`, "skill://notes-admin/checklists/delete.md"), "resources/read", "skill://notes-admin/checklists/delete.md"},
		{directoryRead(readerToken, `4`, "skill://notes-admin"), "resources/directory/read", "skill://notes-admin"},
		{directoryRead(readerToken, `5`, "skill://notes-admin/checklists"), "resources/directory/read", "skill://notes-admin/checklists"},
	} {
		rep := app.exchange(t, r.req, expect{status: 403, code: -32602, header: insufficient, audit: targeted("denied", "reader", r.method, r.uri)})
		assert.NotContains(t, rep.err.Message, "safely", "learns nothing about the skill (%d)", i)
		assert.Empty(t, rep.err.Data)
	}
	for _, uri := range []string{"skill://notes-nothing/SKILL.md", "skill://notes-howto/reference/tools.md"} {
		app.exchange(t, skillGet(writerToken, `6`, uri), expect{status: 200, code: -32602, audit: targeted("error", "writer", "skills/get", uri)})
	}
	app.exchange(t, directoryRead(writerToken, `7`, howtoURI), expect{status: 200, code: -32602, audit: targeted("error", "writer", "resources/directory/read", howtoURI)})
	app.exchange(t, directoryRead(readerToken, `8`, "skill://notes-howto"), expect{status: 200, audit: targeted("ok", "reader", "resources/directory/read", "skill://notes-howto"),
		check: func(t *testing.T, rep reply) {
			assert.JSONEq(t, `[{"uri":"skill://notes-howto/SKILL.md","name":"SKILL.md","mimeType":"text/markdown","size":`+
				strconv.Itoa(len(mustRead(t, "skills/notes-howto/SKILL.md")))+`},`+
				`{"uri":"skill://notes-howto/reference","name":"reference","mimeType":"inode/directory"}]`, string(rep.result["resources"]))
		}})
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	data, err := skillFiles.ReadFile(name)
	require.NoError(t, err)
	return data
}

// TestSkillsInResourcesList: each SKILL.md a caller may read is in
// resources/list, named and described as its frontmatter says; the other
// files are in the skill's manifest only.
func TestSkillsInResourcesList(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	for _, c := range []struct {
		token, caller string
		want          []string
	}{{readerToken, "reader", []string{howtoURI}}, {writerToken, "writer", []string{howtoURI, adminURI}}, {guestToken, "guest", nil}} {
		token, want := c.token, c.want
		rep := app.exchange(t, modern(token, `1`, "resources/list", ""), expect{status: 200, audit: audited("ok", c.caller, "resources/list", "")})
		var rs []map[string]any
		require.NoError(t, json.Unmarshal(rep.result["resources"], &rs))
		var got []string
		for _, r := range rs {
			uri := r["uri"].(string)
			if !strings.HasPrefix(uri, "skill://") {
				continue
			}
			got = append(got, uri)
			if uri == howtoURI {
				assert.Equal(t, "notes-howto", r["name"])
				assert.Equal(t, "How to keep and find team notes with this server's tools.", r["description"])
				assert.Equal(t, "text/markdown", r["mimeType"])
			}
		}
		assert.Equal(t, want, got, token)
	}
}
