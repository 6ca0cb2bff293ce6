package mcpmw_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// callResult registers one tool returning res and calls it at each revision,
// returning the raw result objects by revision.
func callResult(t *testing.T, res mcpmw.ToolResult) map[string]string {
	t.Helper()
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "r", Description: "d", Permission: "read", Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return res, nil
	}})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{Server: mcpmw.Implementation{Name: "s", Version: "1"}})
	out := map[string]string{}
	for v, r := range map[string]*http.Request{
		"2026-07-28": modern("1", "tools/call", `"name":"r"`),
		"2025-11-25": legacy("2025-11-25", "1", "tools/call", `"name":"r"`),
		"2025-06-18": legacy("2025-06-18", "1", "tools/call", `"name":"r"`),
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, 200, w.Code, w.Body.String())
		body := w.Body.String()
		prefix := `{"jsonrpc":"2.0","id":1,"result":`
		require.Greater(t, len(body), len(prefix)+1)
		out[v] = body[len(prefix) : len(body)-1]
	}
	return out
}

const serverMeta = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}`

func TestToolResultEncoding(t *testing.T) {
	t.Parallel()
	prio := 0.5
	for _, tt := range []struct {
		name        string
		res         mcpmw.ToolResult
		modern, old string // the result object; old is for both legacy revisions
	}{
		{"text", mcpmw.TextResult("hi <b> & \"q\""),
			`{"resultType":"complete","content":[{"type":"text","text":"hi \u003cb\u003e \u0026 \"q\""}],` + serverMeta + `}`,
			`{"content":[{"type":"text","text":"hi \u003cb\u003e \u0026 \"q\""}]}`},
		{"empty", mcpmw.ToolResult{},
			`{"resultType":"complete","content":[],` + serverMeta + `}`, `{"content":[]}`},
		{"error", mcpmw.ErrorResult("no city %q", "Atlantis"),
			`{"resultType":"complete","content":[{"type":"text","text":"no city \"Atlantis\""}],"isError":true,` + serverMeta + `}`,
			`{"content":[{"type":"text","text":"no city \"Atlantis\""}],"isError":true}`},
		{"structured object", mcpmw.StructuredResult(map[string]int{"sum": 5}),
			`{"resultType":"complete","content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5},` + serverMeta + `}`,
			`{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}`},
		{"structured array is text only on legacy", mcpmw.StructuredResult([]int{1, 2}),
			`{"resultType":"complete","content":[{"type":"text","text":"[1,2]"}],"structuredContent":[1,2],` + serverMeta + `}`,
			`{"content":[{"type":"text","text":"[1,2]"}]}`},
		{"structured array with content keeps its text on legacy",
			mcpmw.ToolResult{Content: []mcpmw.Content{mcpmw.TextContent("two")}, StructuredContent: []int{1, 2}},
			`{"resultType":"complete","content":[{"type":"text","text":"two"}],"structuredContent":[1,2],` + serverMeta + `}`,
			`{"content":[{"type":"text","text":"two"},{"type":"text","text":"[1,2]"}]}`},
		{"all kinds", mcpmw.ToolResult{Content: []mcpmw.Content{
			mcpmw.ImageContent([]byte{0x89, 'P', 'N', 'G'}, "image/png"),
			mcpmw.AudioContent([]byte("RIFF"), "audio/wav"),
			{Type: "resource_link", URI: "https://t.example/1", Name: "PAY-1", Title: "T", Description: "D", MimeType: "text/html", Size: 12,
				Annotations: &mcpmw.ContentAnnotations{Audience: []string{"user"}, Priority: &prio}},
			mcpmw.EmbeddedResource("test://embedded-resource", "text/plain", "body", nil),
			mcpmw.EmbeddedResource("test://blob", "application/octet-stream", "", []byte{0, 1}),
		}},
			`{"resultType":"complete","content":[{"type":"image","data":"iVBORw==","mimeType":"image/png"},{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"},` +
				`{"type":"resource_link","uri":"https://t.example/1","name":"PAY-1","title":"T","description":"D","mimeType":"text/html","size":12,"annotations":{"audience":["user"],"priority":0.5}},` +
				`{"type":"resource","resource":{"uri":"test://embedded-resource","mimeType":"text/plain","text":"body"}},{"type":"resource","resource":{"uri":"test://blob","mimeType":"application/octet-stream","blob":"AAE="}}],` + serverMeta + `}`,
			`{"content":[{"type":"image","data":"iVBORw==","mimeType":"image/png"},{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"},` +
				`{"type":"resource_link","uri":"https://t.example/1","name":"PAY-1","title":"T","description":"D","mimeType":"text/html","size":12,"annotations":{"audience":["user"],"priority":0.5}},` +
				`{"type":"resource","resource":{"uri":"test://embedded-resource","mimeType":"text/plain","text":"body"}},{"type":"resource","resource":{"uri":"test://blob","mimeType":"application/octet-stream","blob":"AAE="}}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := callResult(t, tt.res)
			assert.Equal(t, tt.modern, got["2026-07-28"])
			assert.Equal(t, tt.old, got["2025-11-25"])
			assert.Equal(t, tt.old, got["2025-06-18"])
		})
	}
}

func TestToolResultBadContent(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "bad", Description: "d", Permission: "read", Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.ToolResult{Content: []mcpmw.Content{{Type: "video"}}}, nil
	}}, mcpmw.Tool{Name: "unencodable", Description: "d", Permission: "read", Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.StructuredResult(map[string]any{"ch": make(chan int)}), nil
	}})
	logs := &syncBuffer{}
	a := &spy{}
	h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{Logger: newTextLogger(logs)})
	for _, name := range []string{"bad", "unencodable"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, modern("1", "tools/call", `"name":"`+name+`"`))
		assert.Equal(t, 500, w.Code)
		assert.Equal(t, mcpmw.CodeInternalError, decode(t, w).Error.Code)
	}
	assert.Contains(t, logs.String(), `content block type \"video\"`)
	assert.Contains(t, logs.String(), "StructuredContent")
	assert.Len(t, a.records(), 2)
}

func TestToolResultText(t *testing.T) {
	t.Parallel()
	r := mcpmw.ToolResult{Content: []mcpmw.Content{mcpmw.TextContent("a"), mcpmw.ImageContent(nil, "image/png"), mcpmw.TextContent("b")}}
	assert.Equal(t, "a\nb", r.AllText())
	assert.Equal(t, "", mcpmw.ToolResult{}.AllText())
	assert.True(t, mcpmw.ErrorResult("x").IsError)
	assert.Equal(t, "x", mcpmw.TextResult("x").AllText())
}
