package skills_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
	"github.com/mcpmw/mcpmw/skills"
)

// patience bounds every wait of these tests (mcpmw's Patience, which
// only its own tests see): generous, for a busy machine.
const patience = 30 * time.Second

const reviewMD = "---\nname: code-review\ndescription: Review code using the team's checklist.\n---\n\n# Code review\n\nRead `references/checklist.md`, then review the diff.\n"

// codeReview is SKILLS.md's wire example: its bytes, sizes and digests.
func codeReview() fstest.MapFS {
	return fstest.MapFS{
		"SKILL.md":                {Data: []byte(reviewMD)},
		"references/checklist.md": {Data: []byte("- Tests cover the change.\n- Names say what things are.\n- No TODO\n")},
	}
}

func secretFS() fstest.MapFS {
	return fstest.MapFS{
		"SKILL.md":         {Data: []byte("---\nname: vault\ndescription: Open the vault.\nlicense: MIT\n---\nStep one.\n")},
		"steps/one.md":     {Data: []byte("one\n")},
		"steps/deep/b.bin": {Data: []byte{0xff, 0x00, 0x01}},
	}
}

type server struct {
	srv *mcpmwtest.Server
	rec *mcpmwtest.Recorder
	set *skills.Set
}

func newServer(t *testing.T) *server {
	t.Helper()
	var reg mcpmw.Registry
	set := skills.New(&reg)
	set.Add("code-review", codeReview(), "read")
	set.Add("acme/vault", secretFS(), "admin")
	rec := mcpmwtest.NewRecorder()
	authn := mcpmwtest.Tokens{
		"reader": &mcpmwtest.User{Name: "reader", Permissions: []mcpmw.Permission{"read"}},
		"admin":  &mcpmwtest.User{Name: "admin", Permissions: []mcpmw.Permission{"read", "admin"}},
		"guest":  &mcpmwtest.User{Name: "guest"},
	}
	h := mcpmw.New(&reg, authn, rec, &mcpmw.Options{Extensions: []mcpmw.Extension{set.Extension()}})
	return &server{srv: mcpmwtest.NewServer(t, h), rec: rec, set: set}
}

type entry struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   []struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int    `json:"size"`
	} `json:"resources"`
}

func listSkills(t *testing.T, c *mcpmwtest.Client) ([]entry, map[string]json.RawMessage) {
	t.Helper()
	resp, err := c.Call(t.Context(), "skills/list", nil)
	require.NoError(t, err)
	var out struct {
		Skills []entry `json:"skills"`
	}
	require.NoError(t, resp.Decode(&out))
	var all map[string]json.RawMessage
	require.NoError(t, resp.Decode(&all))
	return out.Skills, all
}

func TestListPerCaller(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for token, want := range map[string][]string{
		"reader": {"skill://code-review/SKILL.md"},
		"admin":  {"skill://code-review/SKILL.md", "skill://acme/vault/SKILL.md"},
		"guest":  {},
	} {
		got, all := listSkills(t, s.srv.Client(mcpmwtest.Bearer(token)))
		uris := []string{}
		for _, e := range got {
			uris = append(uris, e.URI)
		}
		assert.Equal(t, want, uris, token)
		assert.JSONEq(t, `"private"`, string(all["cacheScope"]), token)
		assert.Contains(t, all, "ttlMs")
		assert.NotContains(t, all, "nextCursor")
	}
}

func TestEntryMatchesBytesServed(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	c := s.srv.Client(mcpmwtest.Bearer("admin"))
	got, _ := listSkills(t, c)
	require.Len(t, got, 2)
	assert.Equal(t, map[string]any{"name": "code-review", "description": "Review code using the team's checklist."}, got[0].Frontmatter)
	assert.Equal(t, map[string]any{"name": "vault", "description": "Open the vault.", "license": "MIT"}, got[1].Frontmatter)
	// SKILLS.md §11's digests and sizes.
	assert.Equal(t, "sha256:d2489d6c182e8df9c178563ff9f2eac7998a0c1bb1278c52a7fd5306e4259160", got[0].Resources[0].Digest)
	assert.Equal(t, 149, got[0].Resources[0].Size)
	for _, e := range got {
		for _, r := range e.Resources {
			res, err := c.ReadResource(t.Context(), r.URI)
			require.NoError(t, err, r.URI)
			require.Len(t, res.Contents, 1)
			data := []byte(res.Contents[0].Text)
			if res.Contents[0].Blob != nil {
				data = res.Contents[0].Blob
			}
			sum := sha256.Sum256(data)
			assert.Equal(t, "sha256:"+hex.EncodeToString(sum[:]), r.Digest, r.URI)
			assert.Equal(t, len(data), r.Size, r.URI)
		}
	}
	res, err := c.ReadResource(t.Context(), "skill://code-review/SKILL.md")
	require.NoError(t, err)
	assert.Equal(t, "text/markdown", res.Contents[0].MimeType)
	assert.Equal(t, reviewMD, res.Contents[0].Text)
	list, err := c.ListResources(t.Context())
	require.NoError(t, err)
	found := false
	for _, r := range list {
		assert.NotEqual(t, "skill://code-review/references/checklist.md", r.URI, "a supporting file is in the manifest, not the listing")
		if r.URI == "skill://code-review/SKILL.md" {
			found = true
			assert.Equal(t, "code-review", r.Name)
			assert.Equal(t, "Review code using the team's checklist.", r.Description)
		}
	}
	assert.True(t, found)
}

func TestGet(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	c := s.srv.Client(mcpmwtest.Bearer("reader"))
	resp, err := c.Call(t.Context(), "skills/get", map[string]string{"uri": "skill://code-review/SKILL.md"})
	require.NoError(t, err)
	var out map[string]json.RawMessage
	require.NoError(t, resp.Decode(&out))
	assert.NotContains(t, out, "nextCursor")
	assert.Contains(t, out, "ttlMs")
	assert.JSONEq(t, `"private"`, string(out["cacheScope"]))
	var sk entry
	require.NoError(t, json.Unmarshal(out["skill"], &sk))
	assert.Equal(t, "skill://code-review/SKILL.md", sk.URI)
	require.Len(t, sk.Resources, 2)
	assert.Equal(t, "skill://code-review/SKILL.md", sk.Resources[0].URI)
	assert.Equal(t, "skill://code-review/references/checklist.md", sk.Resources[1].URI)
	assert.Equal(t, "skill://code-review/SKILL.md", s.rec.Last().Target)

	// Another spelling of the URI finds the skill, and is echoed.
	resp, err = c.Call(t.Context(), "skills/get", map[string]string{"uri": "SKILL://code-%72eview/SKILL.md"})
	require.NoError(t, err)
	var again struct {
		Skill entry `json:"skill"`
	}
	require.NoError(t, resp.Decode(&again))
	assert.Equal(t, "SKILL://code-%72eview/SKILL.md", again.Skill.URI)
	assert.Equal(t, sk.Resources, again.Skill.Resources)
	_, err = c.Call(t.Context(), "resources/directory/read", map[string]string{"uri": "skill://code-review/%72eferences"})
	require.NoError(t, err)

	_, err = c.Call(t.Context(), "skills/get", map[string]string{"uri": "skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md"})
	var e *mcpmwtest.Error
	require.True(t, errors.As(err, &e), "%v", err)
	assert.Equal(t, mcpmw.CodeInvalidParams, e.Code)
}

// TestDenied: a caller without the skill's permission who names its
// SKILL.md, any file or any directory gets the 403 a denied tool call
// gets, naming the permission; a name that is not registered, -32602.
func TestDenied(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	c := s.srv.Client(mcpmwtest.Bearer("reader"))
	for _, call := range []struct{ method, uri string }{
		{"skills/get", "skill://acme/vault/SKILL.md"},
		{"resources/read", "skill://acme/vault/SKILL.md"},
		{"resources/read", "skill://acme/vault/steps/deep/b.bin"},
		{"resources/directory/read", "skill://acme/vault"},
		{"resources/directory/read", "skill://acme/vault/steps/deep"},
	} {
		var err error
		if call.method == "resources/read" {
			_, err = c.ReadResource(t.Context(), call.uri)
		} else {
			_, err = c.Call(t.Context(), call.method, map[string]string{"uri": call.uri})
		}
		var e *mcpmwtest.Error
		require.True(t, errors.As(err, &e), "%s %s: %v", call.method, call.uri, err)
		assert.Equal(t, http.StatusForbidden, e.Status, call)
		assert.Contains(t, e.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`, call)
		assert.Contains(t, e.Header.Get("WWW-Authenticate"), `scope="admin"`, call)
		assert.Equal(t, call.uri, s.rec.Last().Target, call)
	}
	for _, params := range []any{map[string]any{}, map[string]any{"uri": 5}} {
		for _, method := range []string{"skills/get", "resources/directory/read"} {
			_, err := c.Call(t.Context(), method, params)
			var e *mcpmwtest.Error
			require.True(t, errors.As(err, &e), "%s %v: %v", method, params, err)
			assert.Equal(t, mcpmw.CodeInvalidParams, e.Code)
			assert.Contains(t, e.Message, "needs params.uri")
		}
	}
	for _, call := range []struct{ method, uri string }{
		{"skills/get", "skill://code-review/%zz/SKILL.md"}, // no normal form
		{"skills/get", "skill://acme/nothing/SKILL.md"},
		{"skills/get", "skill://code-review/references/checklist.md"},
		{"resources/directory/read", "skill://code-review/SKILL.md"},
		{"resources/directory/read", "skill://nothing"},
	} {
		_, err := c.Call(t.Context(), call.method, map[string]string{"uri": call.uri})
		var e *mcpmwtest.Error
		require.True(t, errors.As(err, &e), "%s %s: %v", call.method, call.uri, err)
		assert.Equal(t, mcpmw.CodeInvalidParams, e.Code, call)
	}
}

func TestDirectoryRead(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	c := s.srv.Client(mcpmwtest.Bearer("admin"))
	resp, err := c.Call(t.Context(), "resources/directory/read", map[string]string{"uri": "skill://acme/vault"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"resultType":"complete","ttlMs":60000,"cacheScope":"private","resources":[
		{"uri":"skill://acme/vault/SKILL.md","name":"SKILL.md","mimeType":"text/markdown","size":72},
		{"uri":"skill://acme/vault/steps","name":"steps","mimeType":"inode/directory"}]}`, withoutMeta(t, resp.Result))
	resp, err = c.Call(t.Context(), "resources/directory/read", map[string]string{"uri": "skill://acme/vault/steps"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"resultType":"complete","ttlMs":60000,"cacheScope":"private","resources":[
		{"uri":"skill://acme/vault/steps/deep","name":"deep","mimeType":"inode/directory"},
		{"uri":"skill://acme/vault/steps/one.md","name":"one.md","mimeType":"text/markdown","size":4}]}`, withoutMeta(t, resp.Result))
}

// TestDirectoryReadCursor: a directory is read on one page, so a cursor
// is one the server never issued: -32602; a null one is no cursor.
func TestDirectoryReadCursor(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	c := s.srv.Client(mcpmwtest.Bearer("reader"))
	_, err := c.Call(t.Context(), "resources/directory/read", map[string]any{"uri": "skill://code-review", "cursor": "x"})
	var e *mcpmwtest.Error
	require.True(t, errors.As(err, &e), "%v", err)
	assert.Equal(t, mcpmw.CodeInvalidParams, e.Code)
	assert.Equal(t, "skill://code-review", s.rec.Last().Target)
	_, err = c.Call(t.Context(), "resources/directory/read", map[string]any{"uri": "skill://code-review", "cursor": nil})
	require.NoError(t, err)
}

func withoutMeta(t *testing.T, raw json.RawMessage) string {
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	delete(m, "_meta")
	out, _ := json.Marshal(m)
	return string(out)
}

func TestDeclared(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		d, err := s.srv.Client(mcpmwtest.Bearer("guest"), mcpmwtest.Revision(rev)).Discover(t.Context())
		require.NoError(t, err)
		assert.Contains(t, d.Capabilities, "resources", rev)
		var exts map[string]map[string]any
		require.NoError(t, json.Unmarshal(d.Capabilities["extensions"], &exts), rev)
		assert.Equal(t, map[string]any{"directoryRead": true}, exts[skills.ID], rev)
	}
}

// TestRunTimeChanges: a skill added or removed while the endpoint serves
// is listed, read and gated at once, and listeners who may see it are
// told the resource list changed; others hear nothing.
func TestRunTimeChanges(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	admin, reader := s.srv.Client(mcpmwtest.Bearer("admin")), s.srv.Client(mcpmwtest.Bearer("reader"))
	adminHears, err := admin.Listen(ctx, mcpmwtest.ListenFilter{ResourcesListChanged: true})
	require.NoError(t, err)
	defer adminHears.Close()
	readerHears, err := reader.Listen(ctx, mcpmwtest.ListenFilter{ResourcesListChanged: true})
	require.NoError(t, err)
	defer readerHears.Close()

	s.set.Add("acme/late", fstest.MapFS{"SKILL.md": md("late"), "notes/a.md": {Data: []byte("a\n")}}, "admin")
	n, err := adminHears.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, "notifications/resources/list_changed", n.Method)
	got, _ := listSkills(t, admin)
	require.Len(t, got, 3)
	assert.Equal(t, "skill://acme/late/SKILL.md", got[2].URI)
	_, err = admin.ReadResource(ctx, "skill://acme/late/notes/a.md")
	require.NoError(t, err)
	got, _ = listSkills(t, reader)
	assert.Len(t, got, 1)

	assert.Equal(t, 1, s.set.Remove("acme/late", "nothing"))
	assert.Zero(t, s.set.Remove("acme/late"))
	n, err = adminHears.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, "notifications/resources/list_changed", n.Method)
	got, _ = listSkills(t, admin)
	assert.Len(t, got, 2)
	_, err = admin.Call(ctx, "skills/get", map[string]string{"uri": "skill://acme/late/SKILL.md"})
	var e *mcpmwtest.Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, mcpmw.CodeInvalidParams, e.Code)
	_, err = admin.ReadResource(ctx, "skill://acme/late/notes/a.md")
	require.Error(t, err)

	// The reader may see neither change: a read-only skill added now is
	// the first thing it hears.
	s.set.Add("seen", fstest.MapFS{"SKILL.md": md("seen")}, "read")
	n, err = readerHears.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, "notifications/resources/list_changed", n.Method)
	got, _ = listSkills(t, reader)
	assert.Len(t, got, 2)
}

// TestNestedSkill: a folder holding a SKILL.md of its own is a skill of
// its own, listed after the one around it; its files are in both
// manifests.
func TestNestedSkill(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	set := skills.New(&reg)
	set.Add("review", fstest.MapFS{
		"SKILL.md":             md("review"),
		"notes.md":             {Data: []byte("n\n")},
		"security/SKILL.md":    md("security"),
		"security/threats.md":  {Data: []byte("t\n")},
		"securityish/other.md": {Data: []byte("o\n")},
	}, "read")
	authn := mcpmwtest.Tokens{"r": &mcpmwtest.User{Name: "r", Permissions: []mcpmw.Permission{"read"}}}
	srv := mcpmwtest.NewServer(t, mcpmw.New(&reg, authn, mcpmwtest.NewRecorder(), &mcpmw.Options{Extensions: []mcpmw.Extension{set.Extension()}}))
	got, _ := listSkills(t, srv.Client(mcpmwtest.Bearer("r")))
	require.Len(t, got, 2)
	manifest := func(e entry) []string {
		var out []string
		for _, r := range e.Resources {
			out = append(out, r.URI)
		}
		return out
	}
	assert.Equal(t, "skill://review/SKILL.md", got[0].URI)
	assert.Equal(t, []string{"skill://review/SKILL.md", "skill://review/notes.md", "skill://review/security/SKILL.md",
		"skill://review/security/threats.md", "skill://review/securityish/other.md"}, manifest(got[0]))
	assert.Equal(t, "skill://review/security/SKILL.md", got[1].URI)
	assert.Equal(t, []string{"skill://review/security/SKILL.md", "skill://review/security/threats.md"}, manifest(got[1]))
	assert.Equal(t, 1, set.Remove("review"))
	_, ok := reg.LookupResource("skill://review/security/threats.md")
	assert.False(t, ok)
}

// TestEscapedFileNames: a file name a URI cannot carry as it is (a space,
// a non-ASCII letter) is percent-encoded in its URI, which reads it.
func TestEscapedFileNames(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	set := skills.New(&reg)
	set.Add("odd", fstest.MapFS{"SKILL.md": md("odd"), "my notes/café.md": {Data: []byte("c\n")}}, "read")
	authn := mcpmwtest.Tokens{"r": &mcpmwtest.User{Name: "r", Permissions: []mcpmw.Permission{"read"}}}
	srv := mcpmwtest.NewServer(t, mcpmw.New(&reg, authn, mcpmwtest.NewRecorder(), &mcpmw.Options{Extensions: []mcpmw.Extension{set.Extension()}}))
	c := srv.Client(mcpmwtest.Bearer("r"))
	got, _ := listSkills(t, c)
	require.Len(t, got, 1)
	require.Len(t, got[0].Resources, 2)
	uri := got[0].Resources[1].URI
	assert.Equal(t, "skill://odd/my%20notes/caf%C3%A9.md", uri)
	res, err := c.ReadResource(t.Context(), uri)
	require.NoError(t, err)
	assert.Equal(t, "c\n", res.Contents[0].Text)
	resp, err := c.Call(t.Context(), "resources/directory/read", map[string]string{"uri": "skill://odd/my%20notes"})
	require.NoError(t, err)
	assert.Contains(t, string(resp.Result), `"uri":"skill://odd/my%20notes/caf%C3%A9.md","name":"café.md"`)
}
