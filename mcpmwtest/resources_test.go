package mcpmwtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// A reply is a handwritten endpoint's answer to one request, given its
// params: the members that follow the id, `"result":{…}` or `"error":{…}`.
type reply func(params map[string]any) string

// fakeEndpoint is a handwritten endpoint for the methods the root package
// does not serve yet: it answers initialize and notifications/initialized
// as a stateless legacy server does, every method of replies with its
// reply in one JSON body, and any other with 404 and -32601.
func fakeEndpoint(replies map[string]reply) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params map[string]any  `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if msg.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var answer string
		if rep, ok := replies[msg.Method]; ok {
			answer = rep(msg.Params)
		} else if msg.Method == "initialize" {
			answer = fmt.Sprintf(`"result":{"protocolVersion":%q,"capabilities":{},"serverInfo":{"name":"fake","version":"1"}}`,
				msg.Params["protocolVersion"])
		} else {
			answer = `"error":{"code":-32601,"message":"Method not found"}`
			w.WriteHeader(http.StatusNotFound)
		}
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,%s}`, msg.ID, answer)
	})
}

// newFake serves fakeEndpoint(replies) and keeps the requests it receives.
func newFake(t *testing.T, replies map[string]reply) (*mcpmwtest.Server, *capture) {
	c := &capture{h: fakeEndpoint(replies)}
	return mcpmwtest.NewServer(t, c), c
}

// result is a reply with a fixed result.
func result(json string) reply {
	return func(map[string]any) string { return `"result":` + json }
}

// paramsOf returns the params a request sent, without _meta, and whether it
// had a _meta.
func paramsOf(s sent) (map[string]any, bool) {
	params, _ := s.body["params"].(map[string]any)
	out := map[string]any{}
	for k, v := range params {
		out[k] = v
	}
	_, meta := out["_meta"]
	delete(out, "_meta")
	return out, meta
}

// checkWire asserts what a client on version sent for the requests, after
// the legacy handshake: the methods, the params (without _meta), the
// routing headers on 2026-07-28 and the negotiated version on 2025-11-25.
func checkWire(t *testing.T, version string, reqs []sent, methods []string, params []map[string]any, names []string) {
	t.Helper()
	if version == "2025-11-25" {
		require.GreaterOrEqual(t, len(reqs), 2)
		assert.Equal(t, "initialize", reqs[0].body["method"])
		assert.Equal(t, "notifications/initialized", reqs[1].body["method"])
		reqs = reqs[2:]
	}
	require.Len(t, reqs, len(methods))
	for i, r := range reqs {
		assert.Equal(t, methods[i], r.body["method"])
		got, meta := paramsOf(r)
		assert.Equal(t, params[i], got, "request %d", i)
		assert.Equal(t, version, r.header.Get("MCP-Protocol-Version"))
		if version == "2025-11-25" {
			assert.False(t, meta, "a legacy request has no _meta")
			assert.Empty(t, r.header.Values("Mcp-Method"))
			assert.Empty(t, r.header.Values("Mcp-Name"))
			continue
		}
		assert.True(t, meta, "a 2026-07-28 request has _meta")
		assert.Equal(t, methods[i], r.header.Get("Mcp-Method"))
		name := ""
		if names != nil {
			name = names[i]
		}
		assert.Equal(t, name, r.header.Get("Mcp-Name"))
	}
}

// cacheable is what a 2026-07-28 list or read result carries besides its
// content; legacy results carry none of it.
func cacheable(version string) string {
	if version == "2025-11-25" {
		return ""
	}
	return `"resultType":"complete","ttlMs":0,"cacheScope":"private",`
}

// versions are the revisions every method is tested on.
var versions = []string{"2026-07-28", "2025-11-25"}

func TestListResources(t *testing.T) {
	t.Parallel()
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			first := `{"uri":"file:///a.txt","name":"a","title":"A","description":"The first.","mimeType":"text/plain","size":12,"icons":[{"src":"https://x/i.png"}]}`
			second := `{"uri":"file:///b.bin","name":"b"}`
			srv, got := newFake(t, map[string]reply{"resources/list": func(p map[string]any) string {
				if p["cursor"] == "p2" {
					return `"result":{` + cacheable(version) + `"resources":[` + second + `]}`
				}
				return `"result":{` + cacheable(version) + `"resources":[` + first + `],"nextCursor":"p2"}`
			}})
			res, err := srv.Client(mcpmwtest.Revision(version)).ListResources(t.Context())
			require.NoError(t, err)
			assert.Equal(t, []mcpmwtest.Resource{
				{URI: "file:///a.txt", Name: "a", Title: "A", Description: "The first.", MimeType: "text/plain", Size: 12, Raw: json.RawMessage(first)},
				{URI: "file:///b.bin", Name: "b", Raw: json.RawMessage(second)},
			}, res)
			checkWire(t, version, got.requests(), []string{"resources/list", "resources/list"},
				[]map[string]any{{}, {"cursor": "p2"}}, nil)
		})
	}
}

func TestListResourceTemplates(t *testing.T) {
	t.Parallel()
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			first := `{"uriTemplate":"file:///{path}","name":"files","title":"Files","description":"Any file.","mimeType":"text/plain"}`
			second := `{"uriTemplate":"db://{table}/{id}","name":"rows"}`
			srv, got := newFake(t, map[string]reply{"resources/templates/list": func(p map[string]any) string {
				if p["cursor"] == "next" {
					return `"result":{` + cacheable(version) + `"resourceTemplates":[` + second + `]}`
				}
				return `"result":{` + cacheable(version) + `"resourceTemplates":[` + first + `],"nextCursor":"next"}`
			}})
			res, err := srv.Client(mcpmwtest.Revision(version)).ListResourceTemplates(t.Context())
			require.NoError(t, err)
			assert.Equal(t, []mcpmwtest.ResourceTemplate{
				{URITemplate: "file:///{path}", Name: "files", Title: "Files", Description: "Any file.", MimeType: "text/plain", Raw: json.RawMessage(first)},
				{URITemplate: "db://{table}/{id}", Name: "rows", Raw: json.RawMessage(second)},
			}, res)
			checkWire(t, version, got.requests(), []string{"resources/templates/list", "resources/templates/list"},
				[]map[string]any{{}, {"cursor": "next"}}, nil)
		})
	}
}

// A list that breaks the protocol is an error, not a short list.
func TestListResourcesBroken(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, result, err string }{
		{name: "no resources", result: `{"ttlMs":0}`, err: `mcpmwtest: the resources/list result has no resources array: {"ttlMs":0}`},
		{name: "resources not an array", result: `{"resources":{}}`, err: `mcpmwtest: the resources/list result has no resources array: {"resources":{}}`},
		{name: "a cursor twice", result: `{"resources":[],"nextCursor":"x"}`, err: `mcpmwtest: resources/list returned cursor "x" twice`},
		{name: "a cursor not a string", result: `{"resources":[],"nextCursor":7}`, err: `mcpmwtest: the resources/list nextCursor is not a string: 7`},
		{name: "a bad item", result: `{"resources":[{"uri":1}]}`,
			err: `mcpmwtest: an item of resources: json: cannot unmarshal number into Go struct field Resource.uri of type string: {"uri":1}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newFake(t, map[string]reply{"resources/list": result(tt.result)})
			_, err := srv.Client().ListResources(t.Context())
			assert.EqualError(t, err, tt.err)
		})
	}
}

func TestReadResource(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		version, uri, name string
	}{
		{version: "2026-07-28", uri: "file:///notes/a.txt", name: "file:///notes/a.txt"},
		{version: "2026-07-28", uri: "file:///notes/zürich.txt", name: "=?base64?ZmlsZTovLy9ub3Rlcy96w7xyaWNoLnR4dA==?="},
		{version: "2025-11-25", uri: "file:///notes/a.txt"},
	} {
		t.Run(tt.version+" "+tt.uri, func(t *testing.T) {
			t.Parallel()
			body := `{` + cacheable(tt.version) + `"contents":[` +
				`{"uri":"file:///notes/a.txt","mimeType":"text/plain","text":"line one"},` +
				`{"uri":"file:///notes/a.png","mimeType":"image/png","blob":"iVBORw=="},` +
				`{"uri":"file:///notes/b.txt","text":"line two"}]}`
			srv, got := newFake(t, map[string]reply{"resources/read": result(body)})
			res, err := srv.Client(mcpmwtest.Revision(tt.version)).ReadResource(t.Context(), tt.uri)
			require.NoError(t, err)
			assert.Equal(t, []mcpmwtest.ResourceContents{
				{URI: "file:///notes/a.txt", MimeType: "text/plain", Text: "line one"},
				{URI: "file:///notes/a.png", MimeType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G'}},
				{URI: "file:///notes/b.txt", Text: "line two"},
			}, res.Contents)
			assert.Equal(t, "line one\nline two", res.Text())
			assert.JSONEq(t, body, string(res.Result))
			assert.Equal(t, http.StatusOK, res.Status)
			checkWire(t, tt.version, got.requests(), []string{"resources/read"},
				[]map[string]any{{"uri": tt.uri}}, []string{tt.name})
		})
	}
}

func TestReadResourceErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, answer string
		code         int
		data, err    string
	}{
		{name: "not found 2026", answer: `"error":{"code":-32602,"message":"Resource not found","data":{"uri":"file:///nope"}}`,
			code: -32602, data: `{"uri":"file:///nope"}`},
		{name: "not found legacy", answer: `"error":{"code":-32002,"message":"Resource not found"}`, code: -32002},
		{name: "no contents", answer: `"result":{"resultType":"complete"}`,
			err: `mcpmwtest: the resources/read result has no contents: {"resultType":"complete"}`},
		{name: "blob not base64", answer: `"result":{"contents":[{"uri":"x","blob":"%%%"}]}`,
			err: "mcpmwtest: decoding the result: illegal base64 data at input byte 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newFake(t, map[string]reply{"resources/read": func(map[string]any) string { return tt.answer }})
			_, err := srv.Client().ReadResource(t.Context(), "file:///nope")
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				return
			}
			var e *mcpmwtest.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.code, e.Code)
			assert.Equal(t, "Resource not found", e.Message)
			if tt.data == "" {
				assert.Nil(t, e.Data)
			} else {
				assert.JSONEq(t, tt.data, string(e.Data))
			}
		})
	}
}

// A handwritten endpoint answers resources/read; the client decodes the
// blob and joins the text.
func ExampleClient_ReadResource() {
	srv := httptest.NewServer(fakeEndpoint(map[string]reply{"resources/read": func(p map[string]any) string {
		return `"result":{"resultType":"complete","ttlMs":60000,"cacheScope":"public","contents":[` +
			`{"uri":"` + p["uri"].(string) + `","mimeType":"text/markdown","text":"# Notes"},` +
			`{"uri":"file:///logo.png","mimeType":"image/png","blob":"iVBORw=="}]}`
	}}))
	defer srv.Close()

	res, err := mcpmwtest.NewClient(srv.URL).ReadResource(context.Background(), "file:///notes.md")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text())
	fmt.Printf("%s %q\n", res.Contents[1].MimeType, res.Contents[1].Blob)
	// Output:
	// # Notes
	// image/png "\x89PNG"
}
