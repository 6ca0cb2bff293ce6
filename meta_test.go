package mcpmw_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// Meta is encoded as each definition's _meta, and a contents item's.

func TestMetaIsEncodedOnEveryDefinitionAndContentsItem(t *testing.T) {
	t.Parallel()
	ui := map[string]any{"ui": map[string]any{"resourceUri": "ui://notes/app.html"}}
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "notes_app", Permission: "read", Meta: ui, Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.TextResult("ok"), nil
	}})
	reg.AddResources(mcpmw.Resource{URI: "ui://notes/app.html", Name: "app", Permission: "read", Meta: map[string]any{"k": 1},
		Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{{URI: "ui://notes/app.html", MimeType: "text/html;profile=mcp-app", Text: "<p>hi</p>",
				Meta: map[string]any{"ui": map[string]any{"prefersBorder": true}}}}, nil
		}})
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "notes://{id}", Name: "note", Permission: "read", Meta: map[string]any{"t": "x"},
		Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
			return nil, nil
		}})
	reg.AddPrompts(mcpmw.Prompt{Name: "p", Permission: "read", Meta: map[string]any{"p": true},
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{}, nil
		}})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	t.Cleanup(h.Close)
	first := func(method, member string) map[string]any {
		a := decode(t, serve(h, modern("1", method, "")))
		require.Nil(t, a.Error, method)
		return a.Result[member].([]any)[0].(map[string]any)
	}
	assert.Equal(t, ui, first("tools/list", "tools")["_meta"])
	assert.Equal(t, map[string]any{"k": float64(1)}, first("resources/list", "resources")["_meta"])
	assert.Equal(t, map[string]any{"t": "x"}, first("resources/templates/list", "resourceTemplates")["_meta"])
	assert.Equal(t, map[string]any{"p": true}, first("prompts/list", "prompts")["_meta"])
	for _, v := range []string{mcpmw.Version20251125, mcpmw.Version20250618} {
		a := decode(t, serve(h, legacy(v, "1", "tools/list", "")))
		assert.Equal(t, ui, a.Result["tools"].([]any)[0].(map[string]any)["_meta"], v)
	}
	read := decode(t, serve(h, modern("1", "resources/read", `"uri":"ui://notes/app.html"`, "Mcp-Name", "ui://notes/app.html")))
	require.Nil(t, read.Error)
	assert.Equal(t, map[string]any{"ui": map[string]any{"prefersBorder": true}}, read.Result["contents"].([]any)[0].(map[string]any)["_meta"])

	got, ok := reg.LookupResource("UI://notes/app.html")
	require.True(t, ok, "found by its normal form")
	assert.Equal(t, "ui://notes/app.html", got.URI)
	_, ok = reg.LookupResource("notes://3")
	assert.False(t, ok, "a template's URI is no registered resource")
	_, ok = reg.LookupResource("%zz")
	assert.False(t, ok)
}

func TestMetaThatCannotBeEncoded(t *testing.T) {
	t.Parallel()
	assert.PanicsWithValue(t, `mcpmw: tool "t": its Meta cannot be encoded as JSON: json: unsupported type: chan int`, func() {
		var reg mcpmw.Registry
		reg.AddTools(mcpmw.Tool{Name: "t", Permission: "p", Meta: map[string]any{"c": make(chan int)},
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{}, nil
			}})
	})
	var reg mcpmw.Registry
	reg.AddResources(mcpmw.Resource{URI: "x://y", Name: "y", Permission: "read",
		Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{{Text: "t", Meta: map[string]any{"c": make(chan int)}}}, nil
		}})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	t.Cleanup(h.Close)
	w := serve(h, modern("1", "resources/read", `"uri":"x://y"`, "Mcp-Name", "x://y"))
	assert.Equal(t, http.StatusInternalServerError, w.Code, w.Body.String())
	var a struct{ Error struct{ Message string } }
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &a))
	assert.Equal(t, "Internal error", a.Error.Message, "the reason is logged, not sent")
}

func TestLookupResourceReturnsACopy(t *testing.T) {
	t.Parallel()
	prio := 0.5
	var reg mcpmw.Registry
	reg.AddResources(mcpmw.Resource{URI: "x://y", Name: "y", Permission: "read", Meta: map[string]any{"k": "v"},
		Annotations: &mcpmw.ContentAnnotations{Audience: []string{"user"}, Priority: &prio},
		Read:        func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) { return nil, nil }})
	got, ok := reg.LookupResource("x://y")
	require.True(t, ok)
	got.Meta["k"], got.Annotations.Audience[0], *got.Annotations.Priority = "changed", "assistant", 1
	again, _ := reg.LookupResource("x://y")
	assert.Equal(t, "v", again.Meta["k"])
	assert.Equal(t, []string{"user"}, again.Annotations.Audience)
	assert.Equal(t, 0.5, *again.Annotations.Priority, "what was registered stays as registered")
}

func TestMetaThatCannotBeEncodedOnAPromptOrTemplatePanicsNamingIt(t *testing.T) {
	t.Parallel()
	bad := map[string]any{"c": make(chan int)}
	assert.PanicsWithValue(t, `mcpmw: prompt "p": its Meta cannot be encoded as JSON: json: unsupported type: chan int`, func() {
		var reg mcpmw.Registry
		reg.AddPrompts(mcpmw.Prompt{Name: "p", Permission: "read", Meta: bad,
			Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
				return mcpmw.PromptResult{}, nil
			}})
	})
	assert.Panics(t, func() {
		var reg mcpmw.Registry
		reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "notes://{id}", Name: "note", Permission: "read", Meta: bad,
			Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
				return nil, nil
			}})
	})
}
