package mcpmw_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// pngBytes stands for a binary resource: bytes that are not text.
var pngBytes = []byte{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff}

// tenantOf names the caller's tenant (here: the user), for a template
// whose List and Read depend on the caller.
func tenantOf(c mcpmw.Caller) string {
	if u, ok := c.(*user); ok {
		return u.name
	}
	return "?"
}

// testResources returns a registry of: two text resources for "read", a
// blob for "read", a secret for "write"; a note template for "read" whose
// List shows the caller's own notes and whose Read knows notes 1 to 9;
// and an admin template.
func testResources() *mcpmw.Registry {
	var reg mcpmw.Registry
	text := func(body string) func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
		return func(_ context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", body)}, nil
		}
	}
	reg.AddResources(
		mcpmw.Resource{URI: "test://static-text", Name: "static-text", Description: "A text.", MimeType: "text/plain", Permission: "read",
			Read: text("This is the content of the static text resource.")},
		mcpmw.Resource{URI: "test://motd", Name: "motd", Title: "Message of the day", Description: "Today's message.", Size: 5, Permission: "read",
			Icons: []mcpmw.Icon{{Src: "https://example.com/m.png"}}, Read: text("hello")},
		mcpmw.Resource{URI: "test://static-binary", Name: "static-binary", MimeType: "image/png", Permission: "read",
			Read: func(_ context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
				return []mcpmw.ResourceContents{mcpmw.BlobContents(uri, "image/png", pngBytes)}, nil
			}},
		mcpmw.Resource{URI: "test://secret", Name: "secret", Permission: "write", Read: text("the secret")},
		mcpmw.Resource{URI: "test://notes/7", Name: "note seven (direct)", Permission: "read", Read: text("direct seven")},
	)
	reg.AddResourceTemplates(
		mcpmw.ResourceTemplate{URITemplate: "test://notes/{id}", Name: "note", Description: "A note by id.", MimeType: "text/plain", Permission: "read",
			Read: func(_ context.Context, c mcpmw.Caller, uri string, vars map[string]string) ([]mcpmw.ResourceContents, error) {
				if len(vars["id"]) != 1 || vars["id"] < "1" || vars["id"] > "9" {
					return nil, fmt.Errorf("note %q: %w", vars["id"], mcpmw.ErrResourceNotFound)
				}
				return []mcpmw.ResourceContents{{MimeType: "text/plain", Text: "note " + vars["id"] + " of " + tenantOf(c)}}, nil
			},
			List: func(_ context.Context, c mcpmw.Caller) ([]mcpmw.Resource, error) {
				return []mcpmw.Resource{{URI: "test://notes/1", Name: tenantOf(c) + "'s note 1"}, {URI: "test://notes/2", Name: "note 2", Permission: "read"}}, nil
			}},
		mcpmw.ResourceTemplate{URITemplate: "test://admin/{+path}", Name: "admin", Permission: "admin",
			Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
				panic("never read: nobody is an admin")
			}},
	)
	return &reg
}

// resourceHandler serves testResources with a spy and a log buffer.
func resourceHandler(t *testing.T, reg *mcpmw.Registry, opts *mcpmw.Options) (http.Handler, *spy, *syncBuffer) {
	t.Helper()
	if opts == nil {
		opts = &mcpmw.Options{}
	}
	logs := &syncBuffer{}
	opts.Logger = newTextLogger(logs)
	a := &spy{}
	return mcpmw.New(reg, tokenAuthn, a, opts), a, logs
}

// readReq is a resources/read of uri on version (2026-07-28 with _meta
// and the routing headers, or a legacy one), as token.
func readReq(version, token, uri string, extra ...string) *http.Request {
	p := `"uri":` + jsonString(uri)
	if len(extra) > 0 {
		p += "," + extra[0]
	}
	if version == mcpmw.LatestVersion {
		return modern("1", "resources/read", p, "Mcp-Name", uri, "Authorization", "Bearer "+token)
	}
	return legacy(version, "1", "resources/read", p, "Authorization", "Bearer "+token)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// listReq is a list request on version as token.
func listReq(version, token, method, params string) *http.Request {
	if version == mcpmw.LatestVersion {
		return modern("1", method, params, "Authorization", "Bearer "+token)
	}
	return legacy(version, "1", method, params, "Authorization", "Bearer "+token)
}

var allVersions = []string{mcpmw.LatestVersion, mcpmw.Version20251125, mcpmw.Version20250618}

const serverMetaWire = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-server","version":"0.0.0"}}`

func TestResourceReadWire(t *testing.T) {
	t.Parallel()
	h, a, _ := resourceHandler(t, testResources(), nil)
	for _, v := range allVersions {
		envelope := func(inner string) string {
			if v == mcpmw.LatestVersion {
				return `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",` + inner + `,"ttlMs":60000,"cacheScope":"private",` + serverMetaWire + `}}`
			}
			return `{"jsonrpc":"2.0","id":1,"result":{` + inner + `}}`
		}
		for _, tt := range []struct{ uri, want string }{
			{"test://static-text", `"contents":[{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content of the static text resource."}]`},
			{"test://static-binary", `"contents":[{"uri":"test://static-binary","mimeType":"image/png","blob":"iVBORw0KGgoA/w=="}]`},
			{"test://notes/3", `"contents":[{"uri":"test://notes/3","mimeType":"text/plain","text":"note 3 of reader"}]`},
			{"test://notes/7", `"contents":[{"uri":"test://notes/7","mimeType":"text/plain","text":"direct seven"}]`}, // a resource comes before a template
		} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, readReq(v, "reader", tt.uri))
			assert.Equal(t, 200, w.Code, "%s %s", v, tt.uri)
			assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
			assert.Equal(t, envelope(tt.want), strings.TrimSpace(w.Body.String()), "%s %s", v, tt.uri)
			rec := a.records()[len(a.records())-1]
			assert.Equal(t, mcpmw.OutcomeOK, rec.Outcome)
			assert.Equal(t, "resources/read", rec.Method)
			assert.Equal(t, "read 1 content", rec.Summary)
		}
	}
	assert.Len(t, a.records(), 12, "one record per request")
}

func TestResourceNotFound(t *testing.T) {
	t.Parallel()
	h, a, _ := resourceHandler(t, testResources(), nil)
	long := "test://nonexistent-" + strings.Repeat("x", 500)
	for _, v := range allVersions {
		code := mcpmw.CodeResourceNotFound
		if v == mcpmw.LatestVersion {
			code = mcpmw.CodeInvalidParams
		}
		for _, uri := range []string{
			"test://nonexistent-resource-for-conformance-testing",
			"test://notes/12", // matches the template, whose Read says ErrResourceNotFound
			"test://notes/",   // a variable is one character or more
			"test://notes/1/2",
			long,
		} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, readReq(v, "reader", uri))
			assert.Equal(t, 200, w.Code, "%s %s: as an unknown tool", v, uri)
			ans := decode(t, w)
			require.NotNil(t, ans.Error, "%s %s: never a result with empty contents", v, uri)
			assert.Nil(t, ans.Result)
			assert.Equal(t, code, ans.Error.Code, v)
			var data struct{ URI string }
			require.NoError(t, json.Unmarshal(ans.Error.Data, &data))
			if uri == long {
				assert.Less(t, len(data.URI), 300, "the echo is capped")
				assert.True(t, strings.HasPrefix(uri, strings.TrimSuffix(data.URI, "…")))
			} else {
				assert.Equal(t, uri, data.URI)
				assert.Equal(t, "Resource not found: "+uri, ans.Error.Message)
			}
			rec := a.records()[len(a.records())-1]
			assert.Equal(t, mcpmw.OutcomeError, rec.Outcome)
			assert.Equal(t, code, rec.ErrorCode)
			assert.Equal(t, "resource not found", rec.Summary)
		}
	}
}

func TestResourceReadDenied(t *testing.T) {
	t.Parallel()
	reg := testResources()
	h, a, _ := resourceHandler(t, reg, nil)
	for _, v := range allVersions {
		for _, uri := range []string{"test://secret", "test://admin/a/b/c"} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, readReq(v, "reader", uri))
			assert.Equal(t, 403, w.Code, uri)
			perm := map[string]string{"test://secret": "write", "test://admin/a/b/c": "admin"}[uri]
			assert.Equal(t, `Bearer error="insufficient_scope", scope="`+perm+`"`, w.Header().Get("WWW-Authenticate"))
			ans := decode(t, w)
			require.NotNil(t, ans.Error)
			assert.Equal(t, mcpmw.CodeInvalidParams, ans.Error.Code)
			assert.NotContains(t, w.Body.String(), "the secret")
			rec := a.records()[len(a.records())-1]
			assert.Equal(t, mcpmw.OutcomeDenied, rec.Outcome)
			assert.Equal(t, 403, rec.Status)
		}
	}
	// The writer reads the secret.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, readReq(mcpmw.LatestVersion, "writer", "test://secret"))
	assert.Equal(t, 200, w.Code)
	assert.Contains(t, w.Body.String(), `"text":"the secret"`)
}

func TestResourceReadBadParams(t *testing.T) {
	t.Parallel()
	h, a, _ := resourceHandler(t, testResources(), nil)
	for _, r := range []*http.Request{
		modern("1", "resources/read", ""),
		modern("1", "resources/read", `"uri":7`),
		legacy(mcpmw.Version20251125, "1", "resources/read", `"uri":null`),
		legacy(mcpmw.Version20250618, "1", "resources/read", ""),
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, 200, w.Code)
		ans := decode(t, w)
		require.NotNil(t, ans.Error)
		assert.Equal(t, mcpmw.CodeInvalidParams, ans.Error.Code)
		assert.Contains(t, ans.Error.Message, "params.uri")
	}
	// On 2026-07-28 Mcp-Name must name the URI.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "resources/read", `"uri":"test://motd"`, "Mcp-Name", "test://other"))
	assert.Equal(t, 400, w.Code)
	assert.Len(t, a.records(), 5)
}

// A Read's errors: an *Error is sent as it is; another error is -32603,
// logged, its text kept from the client; no contents is -32603 too.
func TestResourceReadErrors(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddResources(
		mcpmw.Resource{URI: "e://rpc", Name: "rpc", Permission: "read", Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
			return nil, &mcpmw.Error{Code: -32001, Message: "upstream busy"}
		}},
		mcpmw.Resource{URI: "e://boom", Name: "boom", Permission: "read", Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
			return nil, errors.New("db: password=hunter2 refused")
		}},
		mcpmw.Resource{URI: "e://empty", Name: "empty", Permission: "read", Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
			return nil, nil
		}},
	)
	h, a, logs := resourceHandler(t, &reg, nil)
	for _, tt := range []struct {
		uri    string
		status int
		code   int
		msg    string
		log    string
	}{
		{"e://rpc", 200, -32001, "upstream busy", ""},
		{"e://boom", 500, mcpmw.CodeInternalError, "Internal error", "hunter2"},
		{"e://empty", 500, mcpmw.CodeInternalError, "Internal error", "Read returned no contents"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, readReq(mcpmw.LatestVersion, "reader", tt.uri))
		assert.Equal(t, tt.status, w.Code, tt.uri)
		ans := decode(t, w)
		require.NotNil(t, ans.Error, tt.uri)
		assert.Equal(t, tt.code, ans.Error.Code)
		assert.Equal(t, tt.msg, ans.Error.Message)
		assert.NotContains(t, w.Body.String(), "hunter2")
		if tt.log != "" {
			assert.Contains(t, logs.String(), tt.log)
		}
		assert.Equal(t, mcpmw.OutcomeError, a.records()[len(a.records())-1].Outcome)
	}
}

// walkList pages through a list method and returns the values of field of
// its entries, and the number of pages.
func walkList(t *testing.T, h http.Handler, version, token, method, member, field string) ([]string, int) {
	t.Helper()
	var out []string
	cursor := ""
	for pages := 1; pages < 20; pages++ {
		params := ""
		if cursor != "" {
			params = `"cursor":` + jsonString(cursor)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, listReq(version, token, method, params))
		require.Equal(t, 200, w.Code, w.Body.String())
		res := decode(t, w).Result
		require.NotNil(t, res, w.Body.String())
		if version == mcpmw.LatestVersion {
			assert.Equal(t, "complete", res["resultType"])
			assert.Equal(t, "private", res["cacheScope"])
			assert.EqualValues(t, 60000, res["ttlMs"])
			assert.Contains(t, res["_meta"], "io.modelcontextprotocol/serverInfo")
		} else {
			for _, k := range []string{"resultType", "cacheScope", "ttlMs", "_meta"} {
				assert.NotContains(t, res, k, version)
			}
		}
		for _, e := range res[member].([]any) {
			out = append(out, e.(map[string]any)[field].(string))
		}
		next, ok := res["nextCursor"].(string)
		if !ok {
			return out, pages
		}
		cursor = next
	}
	t.Fatal("pagination did not end")
	return nil, 0
}

func TestResourcesList(t *testing.T) {
	t.Parallel()
	for _, v := range allVersions {
		for _, size := range []int{1, 2, 3, 100} {
			h, a, _ := resourceHandler(t, testResources(), &mcpmw.Options{PageSize: size})
			uris, pages := walkList(t, h, v, "reader", "resources/list", "resources", "uri")
			assert.Equal(t, []string{"test://static-text", "test://motd", "test://static-binary", "test://notes/7", "test://notes/1", "test://notes/2"}, uris,
				"%s page size %d: direct resources the reader may see, then the template's entries", v, size)
			assert.Equal(t, (6+size-1)/size, pages)
			assert.Contains(t, a.records()[0].Summary, "listed ")
			uris, _ = walkList(t, h, v, "writer", "resources/list", "resources", "uri")
			assert.Equal(t, []string{"test://static-text", "test://motd", "test://static-binary", "test://secret", "test://notes/7", "test://notes/1", "test://notes/2"}, uris)
			names, _ := walkList(t, h, v, "writer", "resources/list", "resources", "name")
			assert.Contains(t, names, "writer's note 1", "List runs for the caller")

			tmpls, _ := walkList(t, h, v, "writer", "resources/templates/list", "resourceTemplates", "uriTemplate")
			assert.Equal(t, []string{"test://notes/{id}"}, tmpls, "the admin template is not the writer's")
		}
	}
}

func TestResourcesListEncoding(t *testing.T) {
	t.Parallel()
	h, a, _ := resourceHandler(t, testResources(), &mcpmw.Options{PageSize: 2})
	for _, v := range allVersions {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, listReq(v, "reader", "resources/list", ""))
		icons := `,"icons":[{"src":"https://example.com/m.png"}]`
		if v == mcpmw.Version20250618 {
			icons = ""
		}
		entries := `"resources":[{"uri":"test://static-text","name":"static-text","description":"A text.","mimeType":"text/plain"},` +
			`{"uri":"test://motd","name":"motd","title":"Message of the day","description":"Today's message."` + icons + `,"size":5}],"nextCursor":"cmVzb3VyY2VzOjI"`
		want := `{"jsonrpc":"2.0","id":1,"result":{` + entries + `}}`
		if v == mcpmw.LatestVersion {
			want = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",` + entries + `,"ttlMs":60000,"cacheScope":"private",` + serverMetaWire + `}}`
		}
		assert.Equal(t, want, strings.TrimSpace(w.Body.String()), v)
		assert.Equal(t, "listed 2 resources", a.records()[len(a.records())-1].Summary)

		w = httptest.NewRecorder()
		h.ServeHTTP(w, listReq(v, "reader", "resources/templates/list", ""))
		tmpl := `"resourceTemplates":[{"uriTemplate":"test://notes/{id}","name":"note","description":"A note by id.","mimeType":"text/plain"}]`
		want = `{"jsonrpc":"2.0","id":1,"result":{` + tmpl + `}}`
		if v == mcpmw.LatestVersion {
			want = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",` + tmpl + `,"ttlMs":60000,"cacheScope":"private",` + serverMetaWire + `}}`
		}
		assert.Equal(t, want, strings.TrimSpace(w.Body.String()), v)
		assert.Equal(t, "listed 1 resource template", a.records()[len(a.records())-1].Summary, "the summary agrees in number")
	}
	h, a, _ = resourceHandler(t, testResources(), &mcpmw.Options{PageSize: 1})
	h.ServeHTTP(httptest.NewRecorder(), listReq(mcpmw.LatestVersion, "reader", "resources/list", ""))
	assert.Equal(t, "listed 1 resource", a.records()[0].Summary, "the summary agrees in number")
}

func TestResourcesListBadCursor(t *testing.T) {
	t.Parallel()
	h, _, _ := resourceHandler(t, testResources(), &mcpmw.Options{PageSize: 2})
	toolsCursor := `"dG9vbHM6Mg"` // tools:2, a cursor of another list
	for _, bad := range []string{`"!!"`, toolsCursor, `"cmVzb3VyY2VzOjk5"` /* past the end */, `"cmVzb3VyY2VzOi0x"` /* -1 */, `7`} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, listReq(mcpmw.LatestVersion, "reader", "resources/list", `"cursor":`+bad))
		assert.Equal(t, 200, w.Code)
		ans := decode(t, w)
		require.NotNil(t, ans.Error, bad)
		assert.Equal(t, mcpmw.CodeInvalidParams, ans.Error.Code, bad)
	}
}

func TestResourcesListTemplateListFails(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "x://{id}", Name: "x", Permission: "read",
		Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
			return nil, nil
		},
		List: func(context.Context, mcpmw.Caller) ([]mcpmw.Resource, error) {
			return nil, errors.New("tenant db at 10.0.0.9 unreachable")
		}})
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "y://{id}", Name: "y", Permission: "read",
		Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
			return nil, nil
		},
		List: func(context.Context, mcpmw.Caller) ([]mcpmw.Resource, error) {
			return []mcpmw.Resource{{URI: "no scheme", Name: "bad"}}, nil
		}})
	h, a, logs := resourceHandler(t, &reg, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, listReq(mcpmw.LatestVersion, "reader", "resources/list", ""))
	assert.Equal(t, 500, w.Code)
	ans := decode(t, w)
	require.NotNil(t, ans.Error)
	assert.Equal(t, "Internal error", ans.Error.Message)
	assert.NotContains(t, w.Body.String(), "10.0.0.9")
	assert.Contains(t, logs.String(), "10.0.0.9")
	assert.Len(t, a.records(), 1)

	reg.RemoveResourceTemplates("x://{id}")
	h, _, logs = resourceHandler(t, &reg, nil)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, listReq(mcpmw.LatestVersion, "reader", "resources/list", ""))
	assert.Equal(t, 500, w.Code, "an entry without a scheme is the application's mistake")
	assert.Contains(t, logs.String(), "absolute")
}

func TestResourcesSubscribeLegacyOnly(t *testing.T) {
	t.Parallel()
	h, a, _ := resourceHandler(t, testResources(), nil)
	for _, v := range []string{mcpmw.Version20251125, mcpmw.Version20250618} {
		for _, m := range []string{"resources/subscribe", "resources/unsubscribe"} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, legacy(v, "1", m, `"uri":"test://watched-resource"`))
			assert.Equal(t, 200, w.Code)
			assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, strings.TrimSpace(w.Body.String()))
			assert.Equal(t, mcpmw.OutcomeOK, a.records()[len(a.records())-1].Outcome)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "resources/subscribe", `"uri":"test://watched-resource"`))
	assert.Equal(t, 404, w.Code)
	assert.Equal(t, mcpmw.CodeMethodNotFound, decode(t, w).Error.Code)

	// Declared where it can be delivered: on 2026-07-28, through
	// subscriptions/listen; never to a legacy client, which has no stream
	// to receive notifications/resources/updated on.
	w = httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "server/discover", ""))
	caps := decode(t, w).Result["capabilities"].(map[string]any)
	require.Contains(t, caps, "resources")
	assert.Equal(t, map[string]any{"subscribe": true, "listChanged": true}, caps["resources"])
	for _, v := range []string{mcpmw.Version20251125, mcpmw.Version20250618} {
		w = httptest.NewRecorder()
		h.ServeHTTP(w, legacy(v, "1", "initialize", `"protocolVersion":"`+v+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}`))
		caps = decode(t, w).Result["capabilities"].(map[string]any)
		assert.Equal(t, map[string]any{}, caps["resources"], v)
	}
}

func TestResourcesCapabilityOnlyWithResources(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "server/discover", ""))
	assert.NotContains(t, decode(t, w).Result["capabilities"], "resources")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "resources/list", ""))
	assert.Equal(t, 404, w.Code)
}

func TestResourceRemove(t *testing.T) {
	t.Parallel()
	reg := testResources()
	h, _, _ := resourceHandler(t, reg, nil)
	assert.Equal(t, 1, reg.RemoveResources("test://notes/7", "test://notes/7", "test://none"))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, readReq(mcpmw.LatestVersion, "reader", "test://notes/7"))
	assert.Contains(t, w.Body.String(), `"text":"note 7 of reader"`, "now read through the template")
	assert.Equal(t, 1, reg.RemoveResourceTemplates("test://notes/{id}"))
	assert.Equal(t, 0, reg.RemoveResourceTemplates("test://notes/{id}"))
	w = httptest.NewRecorder()
	h.ServeHTTP(w, readReq(mcpmw.LatestVersion, "reader", "test://notes/7"))
	require.NotNil(t, decode(t, w).Error)
	uris, _ := walkList(t, h, mcpmw.LatestVersion, "reader", "resources/list", "resources", "uri")
	assert.Equal(t, []string{"test://static-text", "test://motd", "test://static-binary"}, uris)
	// Adding again after a removal works.
	reg.AddResources(mcpmw.Resource{URI: "test://notes/7", Name: "back", Permission: "read",
		Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents("", "", "back")}, nil
		}})
	w = httptest.NewRecorder()
	h.ServeHTTP(w, readReq(mcpmw.Version20250618, "reader", "test://notes/7"))
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"test://notes/7","text":"back"}]}}`, strings.TrimSpace(w.Body.String()),
		"a content without a URI is the URI read")
}

func TestResourceAddPanics(t *testing.T) {
	t.Parallel()
	read := func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) { return nil, nil }
	tread := func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
		return nil, nil
	}
	nan := func() *float64 { var z float64; v := z / z; return &v }()
	for _, tt := range []struct {
		name string
		add  func(*mcpmw.Registry)
		want string
	}{
		{"relative URI", func(r *mcpmw.Registry) {
			r.AddResources(mcpmw.Resource{URI: "notes/1", Name: "n", Permission: "p", Read: read})
		}, "must be absolute"},
		{"scheme characters only", func(r *mcpmw.Registry) {
			r.AddResources(mcpmw.Resource{URI: "readme", Name: "n", Permission: "p", Read: read})
		}, "must be absolute"},
		{"no name", func(r *mcpmw.Registry) { r.AddResources(mcpmw.Resource{URI: "n://1", Permission: "p", Read: read}) }, "no Name"},
		{"no permission", func(r *mcpmw.Registry) { r.AddResources(mcpmw.Resource{URI: "n://1", Name: "n", Read: read}) }, "no Permission"},
		{"no read", func(r *mcpmw.Registry) { r.AddResources(mcpmw.Resource{URI: "n://1", Name: "n", Permission: "p"}) }, "no Read"},
		{"bad annotations", func(r *mcpmw.Registry) {
			r.AddResources(mcpmw.Resource{URI: "n://1", Name: "n", Permission: "p", Read: read, Annotations: &mcpmw.ContentAnnotations{Priority: nan}})
		}, "n://1"},
		{"twice", func(r *mcpmw.Registry) {
			r.AddResources(mcpmw.Resource{URI: "n://1", Name: "n", Permission: "p", Read: read}, mcpmw.Resource{URI: "n://1", Name: "n", Permission: "p", Read: read})
		}, "registered twice"},
		{"template unclosed", func(r *mcpmw.Registry) {
			r.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "n://{id", Name: "n", Permission: "p", Read: tread})
		}, "not closed"},
		{"template adjacent variables", func(r *mcpmw.Registry) {
			r.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "n://{a}{b}", Name: "n", Permission: "p", Read: tread})
		}, "separated by a literal"},
		{"template level 3", func(r *mcpmw.Registry) {
			r.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "n://x{?q}", Name: "n", Permission: "p", Read: tread})
		}, "operator"},
		{"template no read", func(r *mcpmw.Registry) {
			r.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "n://{a}", Name: "n", Permission: "p"})
		}, "no Read"},
		{"template completes an unknown variable", func(r *mcpmw.Registry) {
			r.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "n://{a}", Name: "n", Permission: "p", Read: tread, Complete: map[string]mcpmw.Completer{"b": nil}})
		}, `"b"`},
		{"template with a nil completer", func(r *mcpmw.Registry) {
			r.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "n://{a}", Name: "n", Permission: "p", Read: tread, Complete: map[string]mcpmw.Completer{"a": nil}})
		}, `the Completer of "a" is nil`},
		{"template twice", func(r *mcpmw.Registry) {
			tm := mcpmw.ResourceTemplate{URITemplate: "n://{a}", Name: "n", Permission: "p", Read: tread}
			r.AddResourceTemplates(tm, tm)
		}, "registered twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var reg mcpmw.Registry
			defer func() {
				v := recover()
				require.NotNil(t, v, "Add must panic")
				assert.Contains(t, fmt.Sprint(v), tt.want)
				h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, modern("1", "resources/list", ""))
				assert.Equal(t, 404, w.Code, "nothing half-registered")
			}()
			tt.add(&reg)
		})
	}
}

// A resource read may ask the client, as a tool does: on 2026-07-28 an
// input_required round, retried with the answer and the state.
func TestResourceReadAsks(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "vault://{key}", Name: "vault", Permission: "read",
		Read: func(ctx context.Context, _ mcpmw.Caller, uri string, vars map[string]string) ([]mcpmw.ResourceContents, error) {
			ans, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Reveal "+vars["key"]+"?", confirmForm))
			if err != nil {
				mcpmw.SetRoundState(ctx, []byte("k="+vars["key"]))
				return nil, err
			}
			var r struct{ Action string }
			_ = json.Unmarshal(ans, &r)
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", r.Action+" "+string(mcpmw.RoundState(ctx)))}, nil
		}})
	h, a, _ := resourceHandler(t, &reg, nil)
	ask := func(extra string) *http.Request {
		if extra != "" {
			extra = "," + extra
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"vault://pin"` + extra + `,` + allCaps + `}}`
		return req(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/read", "Mcp-Name", "vault://pin")
	}
	code, res, rpcErr := serveRound(t, h, ask(""))
	require.Equal(t, 200, code)
	require.Nil(t, rpcErr)
	assert.Equal(t, "input_required", res.ResultType)
	require.Contains(t, res.InputRequests, "confirm")
	assert.JSONEq(t, `{"mode":"form","message":"Reveal pin?","requestedSchema":`+string(confirmForm)+`}`, string(res.InputRequests["confirm"].Params))
	require.NotEmpty(t, res.RequestState)
	assert.Equal(t, mcpmw.OutcomeInputRequired, a.records()[0].Outcome)

	w := httptest.NewRecorder()
	h.ServeHTTP(w, ask(`"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"`+res.RequestState+`"`))
	assert.Equal(t, 200, w.Code)
	ans := decode(t, w)
	require.Nil(t, ans.Error, w.Body.String())
	assert.Equal(t, "complete", ans.Result["resultType"])
	assert.Equal(t, "accept k=pin", ans.Result["contents"].([]any)[0].(map[string]any)["text"])

	// The state is bound to the URI's normal form: the same URI spelled
	// another way resumes the round; another URI's read refuses it.
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"VAULT://%70in","inputResponses":{"confirm":{"action":"decline"}},"requestState":"` + res.RequestState + `",` + allCaps + `}}`
	w = httptest.NewRecorder()
	h.ServeHTTP(w, req(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/read", "Mcp-Name", "VAULT://%70in"))
	ans = decode(t, w)
	require.Nil(t, ans.Error, w.Body.String())
	assert.Equal(t, "decline k=pin", ans.Result["contents"].([]any)[0].(map[string]any)["text"])
	body = `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"vault://other","requestState":"` + res.RequestState + `",` + allCaps + `}}`
	code, _, rpcErr = serveRound(t, h, req(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/read", "Mcp-Name", "vault://other"))
	assert.Equal(t, 200, code)
	require.NotNil(t, rpcErr)
	assert.Equal(t, mcpmw.CodeInvalidParams, rpcErr.Code)
}

// On a legacy revision the read asks over its event stream, and the
// client's answer POST reaches it.
func TestResourceReadAsksLegacy(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddResources(mcpmw.Resource{URI: "vault://pin", Name: "pin", Permission: "read",
		Read: func(ctx context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
			ans, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Reveal?", confirmForm))
			if err != nil {
				return nil, err
			}
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "", string(ans))}, nil
		}})
	aud := &spy{}
	srv := httptest.NewServer(mcpmw.New(&reg, tokenAuthn, aud, &mcpmw.Options{Logger: newTextLogger(&syncBuffer{})}))
	t.Cleanup(srv.Close)
	resp := legacyPost(context.Background(), t, srv.URL, "reader", mcpmw.Version20251125,
		`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"vault://pin"}}`)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	stream := bufio.NewReader(resp.Body)
	askMsg := nextMessage(t, stream)
	assert.Equal(t, "elicitation/create", askMsg.Method)
	assert.Equal(t, http.StatusAccepted, postAnswer(t, srv.URL, "reader", mcpmw.Version20251125,
		answerBody(askMsg.ID, `"result":{"action":"decline"}`)))
	for {
		line, err := stream.ReadString('\n')
		require.NoError(t, err)
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"vault://pin","text":"{\"action\":\"decline\"}"}]}}`, data)
			break
		}
	}
}

// A middleware that points an admitted read at another resource does not
// get past the permission gate.
func TestResourceReadChecksPermissionAgain(t *testing.T) {
	t.Parallel()
	reg := testResources()
	swap := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, r *mcpmw.Request) *mcpmw.Response {
			if r.Method == "resources/read" {
				r.Params = json.RawMessage(strings.Replace(string(r.Params), "test://motd", "test://secret", 1))
			}
			return next.Dispatch(ctx, r)
		})
	}
	h, a, _ := resourceHandler(t, reg, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{swap}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, readReq(mcpmw.LatestVersion, "reader", "test://motd"))
	assert.Equal(t, 403, w.Code)
	assert.NotContains(t, w.Body.String(), "the secret")
	assert.Equal(t, mcpmw.OutcomeDenied, a.records()[0].Outcome)
}

// A middleware that dispatches with a context of its own (the handler's
// record of what the gate admitted is not in it) still cannot read what
// the caller may not: the method checks the permission itself.
func TestResourceReadWithoutTheGatesContext(t *testing.T) {
	t.Parallel()
	fresh := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(_ context.Context, r *mcpmw.Request) *mcpmw.Response {
			if r.Method == "resources/read" { // and points the read at the secret
				r.Params = json.RawMessage(strings.Replace(string(r.Params), "test://motd", "test://secret", 1))
			}
			return next.Dispatch(context.Background(), r)
		})
	}
	h, _, _ := resourceHandler(t, testResources(), &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{fresh}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, readReq(mcpmw.Version20251125, "writer", "test://secret"))
	assert.Equal(t, 200, w.Code, "a permitted read goes through")
	assert.Contains(t, w.Body.String(), "the secret")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, readReq(mcpmw.Version20251125, "reader", "test://motd"))
	assert.Equal(t, 403, w.Code)
	assert.NotContains(t, w.Body.String(), "the secret")
}

// A template's List runs only for a caller holding the template's
// permission: what it lists is never shown to anyone else, even when the
// List itself does not look at the caller.
func TestTemplateListOnlyForPermittedCallers(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	var reg mcpmw.Registry
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "secret://{id}", Name: "secret", Permission: "write",
		Read: func(_ context.Context, _ mcpmw.Caller, uri string, _ map[string]string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "x")}, nil
		},
		List: func(context.Context, mcpmw.Caller) ([]mcpmw.Resource, error) {
			calls.Add(1)
			return []mcpmw.Resource{{URI: "secret://1", Name: "secret 1"}}, nil
		}})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	list := func(token string) string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, listReq(mcpmw.Version20251125, token, "resources/list", ""))
		require.Equal(t, http.StatusOK, w.Code)
		return w.Body.String()
	}
	assert.NotContains(t, list("reader"), "secret://1")
	assert.Zero(t, calls.Load(), "List is not even asked for a caller without the permission")
	assert.Contains(t, list("writer"), "secret://1")
	assert.Equal(t, int32(1), calls.Load())
}

// servedBy returns a template Read that says which template served the
// read and with what values.
func servedBy(name string) func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
	return func(_ context.Context, _ mcpmw.Caller, uri string, vars map[string]string) ([]mcpmw.ResourceContents, error) {
		b, _ := json.Marshal(vars)
		return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", name+" "+string(b))}, nil
	}
}

// readText reads uri as token on version and returns the status and the
// first content's text, or the error message.
func readText(t *testing.T, h http.Handler, version, token, uri string) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, readReq(version, token, uri))
	ans := decode(t, w)
	if ans.Error != nil {
		return w.Code, ans.Error.Message
	}
	return w.Code, ans.Result["contents"].([]any)[0].(map[string]any)["text"].(string)
}

// A URI that is an expansion of a template is that template's, however
// its values must be split to see it: repo://a/secrets/b/secrets/c is
// repo://{+path}/secrets/{name} with path "a/secrets/b", so its
// permission gates the read, and the catch-all registered after it never
// serves it.
func TestTemplateMatchFindsTheSplitThatMatches(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddResourceTemplates(
		mcpmw.ResourceTemplate{URITemplate: "repo://{+path}/secrets/{name}", Name: "secret", Permission: "write", Read: servedBy("secret")},
		mcpmw.ResourceTemplate{URITemplate: "repo://{+path}", Name: "file", Permission: "read", Read: servedBy("file")},
	)
	h, _, _ := resourceHandler(t, &reg, nil)
	for _, v := range allVersions {
		for _, uri := range []string{"repo://a/secrets/b/secrets/c", "repo://a/secrets/b", "repo:///secrets/c", "repo://x/secrets/secrets/secrets/y"} {
			code, text := readText(t, h, v, "reader", uri)
			assert.Equal(t, 403, code, "%s %s: %s", v, uri, text)
		}
		code, text := readText(t, h, v, "writer", "repo://a/secrets/b/secrets/c")
		assert.Equal(t, 200, code)
		assert.Equal(t, `secret {"name":"c","path":"a/secrets/b"}`, text)
		code, text = readText(t, h, v, "reader", "repo://a/secrets/b/c")
		assert.Equal(t, 200, code, "no split of it is the first template's")
		assert.Equal(t, `file {"path":"a/secrets/b/c"}`, text)
	}
}

// When several templates match a URI (here all three), the first
// registered serves the read and its permission alone gates it, whichever
// is the stricter.
func TestTemplateFirstRegisteredServesAndGates(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		first, second mcpmw.Permission
		reader        int // the reader's status
	}{
		{first: "write", second: "read", reader: 403},
		{first: "read", second: "write", reader: 200},
	} {
		var reg mcpmw.Registry
		reg.AddResourceTemplates(
			mcpmw.ResourceTemplate{URITemplate: "x://{a}", Name: "first", Permission: tt.first, Read: servedBy("first")},
			mcpmw.ResourceTemplate{URITemplate: "x://{+b}", Name: "second", Permission: tt.second, Read: servedBy("second")},
			mcpmw.ResourceTemplate{URITemplate: "x://{c}-{+d}", Name: "third", Permission: tt.second, Read: servedBy("third")},
		)
		h, a, _ := resourceHandler(t, &reg, nil)
		for _, v := range allVersions {
			code, text := readText(t, h, v, "reader", "x://q-r")
			assert.Equal(t, tt.reader, code, "%s, first %s: %s", v, tt.first, text)
			rec := a.records()[len(a.records())-1]
			if tt.reader == 403 {
				assert.Equal(t, mcpmw.OutcomeDenied, rec.Outcome)
				assert.Contains(t, rec.Summary, string(tt.first))
			} else {
				assert.Equal(t, `first {"a":"q-r"}`, text)
			}
			code, text = readText(t, h, v, "writer", "x://q-r")
			assert.Equal(t, 200, code)
			assert.Equal(t, `first {"a":"q-r"}`, text, "the first template serves it")
			code, text = readText(t, h, v, "writer", "x://q/r")
			assert.Equal(t, 200, code)
			assert.Equal(t, `second {"b":"q/r"}`, text, "a URI only the second matches")
		}
	}
}

// A simple {var} whose value would decode to '/', '?' or '#', or any
// value decoding to NUL or invalid UTF-8, never reaches Read: the URI is
// the template's (a later catch-all does not get it), its permission is
// checked first, and then the read is refused with -32602.
func TestTemplateValueThatBreaksItsDocIsRefused(t *testing.T) {
	t.Parallel()
	var reads []string
	read := func(_ context.Context, _ mcpmw.Caller, uri string, vars map[string]string) ([]mcpmw.ResourceContents, error) {
		reads = append(reads, uri)
		return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "read "+vars["name"]+vars["path"])}, nil
	}
	var reg mcpmw.Registry
	reg.AddResourceTemplates(
		mcpmw.ResourceTemplate{URITemplate: "file:///srv/docs/{name}", Name: "doc", Permission: "read", Read: read},
		mcpmw.ResourceTemplate{URITemplate: "file:///srv/private/{+path}", Name: "private", Permission: "write", Read: read},
		mcpmw.ResourceTemplate{URITemplate: "file:///{+path}", Name: "anything", Permission: "read", Read: read},
	)
	h, a, _ := resourceHandler(t, &reg, nil)
	for _, v := range allVersions {
		for _, tt := range []struct{ uri, why string }{
			{"file:///srv/docs/..%2F..%2Fetc%2Fpasswd", "holds a '/', '?' or '#'"},
			{"file:///srv/docs/a%3Fb", "holds a '/', '?' or '#'"},
			{"file:///srv/docs/a%23b", "holds a '/', '?' or '#'"},
			{"file:///srv/docs/a%00.txt", "NUL"},
			{"file:///srv/docs/%FF%FE", "UTF-8"},
			{"file:///srv/x%00/y", "NUL"}, // in a reserved value too
			{"file:///srv/x/%C3", "UTF-8"},
		} {
			code, msg := readText(t, h, v, "reader", tt.uri)
			assert.Equal(t, 200, code, "%s %s", v, tt.uri)
			assert.Contains(t, msg, "Invalid params: the value of {", tt.uri)
			assert.Contains(t, msg, tt.why, tt.uri)
			rec := a.records()[len(a.records())-1]
			assert.Equal(t, mcpmw.CodeInvalidParams, rec.ErrorCode)
		}
		// The template's permission first: the writer-only template's URI
		// is a 403 to the reader, never a -32602 telling what is wrong.
		code, _ := readText(t, h, v, "reader", "file:///srv/private/a%00")
		assert.Equal(t, 403, code)
		code, msg := readText(t, h, v, "writer", "file:///srv/private/a%00")
		assert.Equal(t, 200, code)
		assert.Contains(t, msg, "NUL")
		// A reserved value keeps what a reserved expansion keeps: '/'
		// and an encoded '/', still encoded.
		code, msg = readText(t, h, v, "writer", "file:///srv/private/a/b%2Fc")
		assert.Equal(t, 200, code)
		assert.Equal(t, "read a/b%2Fc", msg)
		code, msg = readText(t, h, v, "reader", "file:///srv/docs/caf%C3%A9%20menu")
		assert.Equal(t, 200, code)
		assert.Equal(t, "read café menu", msg)
	}
	assert.Equal(t, []string{"file:///srv/private/a/b%2Fc", "file:///srv/docs/caf%C3%A9%20menu"}, reads[:2], "Read saw only the good values")
	assert.Len(t, reads, 2*len(allVersions))
}

// A template's List entry cannot carry what only a read could honour:
// the read of its URI is gated by the template's permission, so an entry
// naming a permission of its own, or a Read of its own, is the
// application's mistake (-32603, logged) rather than a gate that is not
// one. The permission of its own goes on a direct resource, which gates
// every spelling of its URI.
func TestTemplateListEntryCannotLookLikeAGate(t *testing.T) {
	t.Parallel()
	noRead := func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) { return nil, nil }
	for _, tt := range []struct {
		name  string
		entry mcpmw.Resource
		log   string
	}{
		{"its own permission", mcpmw.Resource{URI: "reports://salaries", Name: "salaries", Permission: "hr"}, `names the Permission \"hr\", which a read of its URI would not check`},
		{"its own Read", mcpmw.Resource{URI: "reports://salaries", Name: "salaries", Read: noRead}, "has a Read func, which a read of its URI would not call"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var reg mcpmw.Registry
			reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "reports://{name}", Name: "report", Permission: "read", Read: servedBy("report"),
				List: func(context.Context, mcpmw.Caller) ([]mcpmw.Resource, error) {
					return []mcpmw.Resource{{URI: "reports://q1", Name: "q1"}, tt.entry}, nil
				}})
			h, a, logs := resourceHandler(t, &reg, &mcpmw.Options{PageSize: 1})
			for _, v := range allVersions {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, listReq(v, "reader", "resources/list", ""))
				assert.Equal(t, 500, w.Code, "%s: even on a page the entry is not on", v)
				ans := decode(t, w)
				require.NotNil(t, ans.Error)
				assert.Equal(t, "Internal error", ans.Error.Message)
				assert.Equal(t, mcpmw.OutcomeError, a.records()[len(a.records())-1].Outcome)
			}
			assert.Contains(t, logs.String(), tt.log)
			assert.Contains(t, logs.String(), `List returned the resource \"reports://salaries\"`)
		})
	}
	// The way to give one URI of a template a permission of its own.
	var reg mcpmw.Registry
	reg.AddResources(mcpmw.Resource{URI: "reports://salaries", Name: "salaries", Permission: "write",
		Read: func(_ context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "the salaries")}, nil
		}})
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "reports://{name}", Name: "report", Permission: "read", Read: servedBy("report")})
	h, _, _ := resourceHandler(t, &reg, nil)
	for _, uri := range []string{"reports://salaries", "reports://%73alaries", "REPORTS://salarie%73"} {
		code, text := readText(t, h, mcpmw.Version20251125, "reader", uri)
		assert.Equal(t, 403, code, uri)
		assert.NotContains(t, text, "the salaries")
	}
}

// canCounter is a caller holding "read" that counts the Can calls made.
type canCounter struct{ n atomic.Int32 }

func (c *canCounter) Can(p mcpmw.Permission) bool { c.n.Add(1); return p == "read" }

// resources/templates/list is paged like tools/list: the caller's
// permissions are asked once per distinct permission (not once per
// template), and the page for that set is built once and then reused.
func TestTemplatesListAsksEachPermissionOnce(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	read := func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
		return nil, nil
	}
	for _, u := range []string{"a://{x}", "b://{x}", "c://{x}", "d://{x}"} {
		perm := mcpmw.Permission("read")
		if u == "d://{x}" {
			perm = "write"
		}
		reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: u, Name: u[:1], Permission: perm, Read: read})
	}
	caller := &canCounter{}
	h := mcpmw.New(&reg, mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return caller, nil }), &spy{}, nil)
	for range 2 {
		caller.n.Store(0)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, legacy(mcpmw.Version20251125, "1", "resources/templates/list", ""))
		require.Equal(t, 200, w.Code)
		assert.Equal(t, 3, strings.Count(w.Body.String(), `"uriTemplate"`), w.Body.String())
		assert.EqualValues(t, 2, caller.n.Load(), "Can once per distinct permission")
	}
}
