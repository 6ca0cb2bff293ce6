package mcpmw_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// planRegistry has a direct resource docs://plan that only writers may
// read and, after it, a template docs://{name} readers may read, whose
// Read serves any name, docs://plan's included: the template must never
// serve a URI the direct resource is found by.
func planRegistry() *mcpmw.Registry {
	var reg mcpmw.Registry
	reg.AddResources(mcpmw.Resource{URI: "docs://plan", Name: "plan", Permission: "write",
		Read: func(_ context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "the plan (direct) read as "+uri)}, nil
		}})
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "docs://{name}", Name: "doc", Permission: "read",
		Read: func(_ context.Context, _ mcpmw.Caller, uri string, vars map[string]string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "the "+vars["name"]+" (template)")}, nil
		}})
	return &reg
}

// Every spelling of a direct resource's URI (percent-encoded unreserved
// characters, lower-case hex, an upper-case scheme) reaches the direct
// resource, on every revision: its permission gates the read, and the
// template that would also match the spelling never serves it.
func TestDirectResourceShadowsTemplateInEverySpelling(t *testing.T) {
	t.Parallel()
	h, a, _ := resourceHandler(t, planRegistry(), nil)
	spellings := []string{"docs://plan", "docs://%70lan", "docs://pl%61n", "docs://%70%6c%61%6e", "DOCS://plan", "Docs://%70lan"}
	for _, v := range allVersions {
		for _, uri := range spellings {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, readReq(v, "reader", uri))
			assert.Equal(t, 403, w.Code, "%s %s: the direct resource's permission", v, uri)
			assert.NotContains(t, w.Body.String(), "the plan", "%s %s", v, uri)
			rec := a.records()[len(a.records())-1]
			assert.Equal(t, mcpmw.OutcomeDenied, rec.Outcome)
			assert.Equal(t, "docs://plan", rec.Target, "the record names what the URI is, in any spelling")

			w = httptest.NewRecorder()
			h.ServeHTTP(w, readReq(v, "writer", uri))
			require.Equal(t, 200, w.Code, "%s %s", v, uri)
			assert.Contains(t, w.Body.String(), `"uri":"docs://plan","mimeType":"text/plain","text":"the plan (direct) read as docs://plan"`,
				"%s %s: the direct resource serves it, and is given its URI as registered", v, uri)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, readReq(v, "reader", "docs://pl%61ns"))
		assert.Equal(t, 200, w.Code)
		assert.Contains(t, w.Body.String(), `"uri":"docs://plans","mimeType":"text/plain","text":"the plans (template)"`,
			"another URI goes to the template, which is given its normal form")
	}
}

// A direct resource registered in a spelling that is not its normal form
// is found by every spelling all the same, is listed as registered, and
// is one resource: adding another spelling of it panics, and removing any
// spelling removes it.
func TestDirectResourceRegisteredInAnySpelling(t *testing.T) {
	t.Parallel()
	reg := planRegistry()
	reg.AddResources(mcpmw.Resource{URI: "DOCS://caf%c3%a9", Name: "café", Permission: "write",
		Read: func(_ context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "the menu")}, nil
		}})
	h, _, _ := resourceHandler(t, reg, nil)
	for _, uri := range []string{"docs://café", "docs://caf%C3%A9", "DOCS://caf%c3%a9"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, readReq(mcpmw.Version20251125, "reader", uri)) // no Mcp-Name to base64-encode
		assert.Equal(t, 403, w.Code, uri)
		w = httptest.NewRecorder()
		h.ServeHTTP(w, readReq(mcpmw.Version20251125, "writer", uri))
		assert.Contains(t, w.Body.String(), `"uri":"DOCS://caf%c3%a9","mimeType":"text/plain","text":"the menu"`, uri)
	}
	uris, _ := walkList(t, h, mcpmw.LatestVersion, "writer", "resources/list", "resources", "uri")
	assert.Equal(t, []string{"docs://plan", "DOCS://caf%c3%a9"}, uris)

	for _, again := range []string{"docs://%70lan", "docs://café"} {
		assert.PanicsWithValue(t, fmt.Sprintf("mcpmw: resource %q is registered twice", map[string]string{"docs://%70lan": "docs://plan", "docs://café": "docs://caf%C3%A9"}[again]), func() {
			reg.AddResources(mcpmw.Resource{URI: again, Name: "again", Permission: "read",
				Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) { return nil, nil }})
		}, again)
	}
	assert.Equal(t, 1, reg.RemoveResources("Docs://%70%6C%61%6E"))
	assert.Equal(t, 1, reg.RemoveResources("docs://café", "docs://100%"))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, readReq(mcpmw.LatestVersion, "reader", "docs://plan"))
	assert.Contains(t, w.Body.String(), "the plan (template)", "the direct resource is gone: the template serves its URI now")
}

// Templates are one in any spelling of their literals too: adding another
// spelling panics, removing any spelling removes it, and a completion's
// ref finds it in any spelling.
func TestTemplateRegisteredInAnySpelling(t *testing.T) {
	t.Parallel()
	reg := completionRegistry()
	assert.PanicsWithValue(t, `mcpmw: resource template "docs://{id}" is registered twice`, func() {
		reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "DOCS://{id}", Name: "again", Permission: "read",
			Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
				return nil, nil
			}})
	})
	h, _, _ := resourceHandler(t, reg, nil)
	for _, ref := range []string{"docs://{id}", "Docs://{id}", "DOCS://{id}"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, completeReq(mcpmw.LatestVersion, `"ref":{"type":"ref/resource","uri":`+jsonString(ref)+`},"argument":{"name":"id","value":"a"}`))
		assert.Equal(t, 200, w.Code, ref)
		ans := decode(t, w)
		require.Nil(t, ans.Error, "%s: %s", ref, w.Body)
		assert.Equal(t, []any{"a1", "a2"}, ans.Result["completion"].(map[string]any)["values"], ref)
	}
	assert.Equal(t, 0, reg.RemoveResourceTemplates("docs://{name}"), "another template")
	assert.Equal(t, 1, reg.RemoveResourceTemplates("DOCS://{id}"))
}

// A string that has no normal form (a '%' that starts no octet, a "." or
// ".." path segment) names no resource: the read is refused with -32602
// before anything is looked up, on every revision, and nothing is read.
func TestResourceReadOfANonURIIsRefused(t *testing.T) {
	t.Parallel()
	var reads []string
	var reg mcpmw.Registry
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "file:///{+path}", Name: "file", Permission: "read",
		Read: func(_ context.Context, _ mcpmw.Caller, uri string, _ map[string]string) ([]mcpmw.ResourceContents, error) {
			reads = append(reads, uri)
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "x")}, nil
		}})
	h, a, _ := resourceHandler(t, &reg, nil)
	for _, v := range allVersions {
		for uri, why := range map[string]string{
			"file:///srv/100%":               "starts no percent-encoded octet",
			"file:///srv/%zz":                "starts no percent-encoded octet",
			"file:///srv/docs/../etc/passwd": "'..' segment",
			"file:///srv/%2e%2E/etc/passwd":  "'..' segment",
			"file:///srv/./docs":             "'.' segment",
		} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, readReq(v, "reader", uri))
			assert.Equal(t, 200, w.Code, uri)
			ans := decode(t, w)
			require.NotNil(t, ans.Error, "%s %s", v, uri)
			assert.Equal(t, mcpmw.CodeInvalidParams, ans.Error.Code)
			assert.Contains(t, ans.Error.Message, "params.uri is not a URI")
			assert.Contains(t, ans.Error.Message, why)
			assert.Equal(t, uri, a.records()[len(a.records())-1].Target)
		}
	}
	assert.Empty(t, reads)
}

// A legacy resources/subscribe, which keeps nothing, records the URI in
// normal form too.
func TestResourceSubscribeRecordsTheNormalURI(t *testing.T) {
	t.Parallel()
	h, a, _ := resourceHandler(t, planRegistry(), nil)
	for uri, want := range map[string]string{"DOCS://%70lan": "docs://plan", "docs://100%": "docs://100%"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, legacy(mcpmw.Version20251125, "1", "resources/subscribe", `"uri":`+jsonString(uri)))
		assert.Equal(t, 200, w.Code)
		assert.Equal(t, want, a.records()[len(a.records())-1].Target, uri)
	}
}
