package apps_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/apps"
)

// ok is a tool's Call that answers "ok".
func ok(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
	return mcpmw.TextResult("ok"), nil
}

// metaJSON is t's Meta as the wire carries it.
func metaJSON(t *testing.T, tool mcpmw.Tool) string {
	t.Helper()
	raw, err := json.Marshal(tool.Meta)
	require.NoError(t, err)
	return string(raw)
}

func TestToolMeta(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		meta    apps.ToolMeta
		want    string
		appOnly bool
	}{
		{name: "a UI, both may call", meta: apps.ToolMeta{ResourceURI: "ui://x/board"},
			want: `{"ui":{"resourceUri":"ui://x/board"},"ui/resourceUri":"ui://x/board"}`},
		{name: "both named", meta: apps.ToolMeta{ResourceURI: "ui://x/board", Visibility: []apps.Visibility{apps.VisibilityModel, apps.VisibilityApp}},
			want: `{"ui":{"resourceUri":"ui://x/board","visibility":["model","app"]},"ui/resourceUri":"ui://x/board"}`},
		{name: "model only", meta: apps.ToolMeta{ResourceURI: "ui://x/board", Visibility: []apps.Visibility{apps.VisibilityModel}},
			want: `{"ui":{"resourceUri":"ui://x/board","visibility":["model"]},"ui/resourceUri":"ui://x/board"}`},
		{name: "app only", meta: apps.ToolMeta{ResourceURI: "ui://x/board", Visibility: []apps.Visibility{apps.VisibilityApp}},
			want: `{"ui":{"resourceUri":"ui://x/board","visibility":["app"]},"ui/resourceUri":"ui://x/board"}`, appOnly: true},
		{name: "app only, no UI of its own", meta: apps.ToolMeta{Visibility: []apps.Visibility{apps.VisibilityApp}},
			want: `{"ui":{"visibility":["app"]}}`, appOnly: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tool := apps.Tool(mcpmw.Tool{Name: "t", Permission: "read", Call: ok}, tt.meta)
			assert.JSONEq(t, tt.want, metaJSON(t, tool))
			if tt.appOnly {
				assert.Equal(t, []mcpmw.ClientCapability{apps.ClientCapability()}, tool.ListedOnlyFor)
			} else {
				assert.Nil(t, tool.ListedOnlyFor)
			}
		})
	}
}

func TestToolKeepsWhatItWasGiven(t *testing.T) {
	t.Parallel()
	roots := mcpmw.Capability("roots")
	given := mcpmw.Tool{Name: "t", Permission: "read", Call: ok,
		Meta: map[string]any{"com.example/x": 1}, ListedOnlyFor: []mcpmw.ClientCapability{roots}}
	vis := []apps.Visibility{apps.VisibilityApp}
	tool := apps.Tool(given, apps.ToolMeta{ResourceURI: "ui://x/board", Visibility: vis})
	assert.JSONEq(t, `{"com.example/x":1,"ui":{"resourceUri":"ui://x/board","visibility":["app"]},"ui/resourceUri":"ui://x/board"}`, metaJSON(t, tool))
	assert.Equal(t, []mcpmw.ClientCapability{roots, apps.ClientCapability()}, tool.ListedOnlyFor)
	assert.Equal(t, map[string]any{"com.example/x": 1}, given.Meta, "the given Meta is not written to")
	assert.Equal(t, []mcpmw.ClientCapability{roots}, given.ListedOnlyFor[:1:1])
	vis[0] = apps.VisibilityModel
	assert.JSONEq(t, `{"com.example/x":1,"ui":{"resourceUri":"ui://x/board","visibility":["app"]},"ui/resourceUri":"ui://x/board"}`, metaJSON(t, tool),
		"the visibility is copied")
	given.ListedOnlyFor = append(given.ListedOnlyFor[:1], roots)
	assert.Equal(t, []mcpmw.ClientCapability{roots, apps.ClientCapability()}, tool.ListedOnlyFor, "ListedOnlyFor is copied")
}

func TestToolPanicsNamingTheTool(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		tool mcpmw.Tool
		meta apps.ToolMeta
		want string
	}{
		{name: "not ui://", meta: apps.ToolMeta{ResourceURI: "https://x/board"},
			want: `apps: tool "t": ResourceURI "https://x/board" is not a ui:// URI`},
		{name: "a ui path, not a ui URI", meta: apps.ToolMeta{ResourceURI: "ui:/x"},
			want: `apps: tool "t": ResourceURI "ui:/x" is not a ui:// URI`},
		{name: "empty visibility", meta: apps.ToolMeta{ResourceURI: "ui://x", Visibility: []apps.Visibility{}},
			want: `apps: tool "t": Visibility is empty: nobody could call the tool (leave it nil for both model and app)`},
		{name: "unknown visibility", meta: apps.ToolMeta{Visibility: []apps.Visibility{apps.VisibilityApp, "user"}},
			want: `apps: tool "t": Visibility "user" is neither "model" nor "app"`},
		{name: "ui already in Meta", tool: mcpmw.Tool{Meta: map[string]any{"ui": map[string]any{}}}, meta: apps.ToolMeta{ResourceURI: "ui://x"},
			want: `apps: tool "t": its Meta already has the key "ui", which Tool sets`},
		{name: "flat key already in Meta", tool: mcpmw.Tool{Meta: map[string]any{"ui/resourceUri": "ui://y"}}, meta: apps.ToolMeta{ResourceURI: "ui://x"},
			want: `apps: tool "t": its Meta already has the key "ui/resourceUri", which Tool sets`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.tool.Name = "t"
			assert.PanicsWithValue(t, tt.want, func() { apps.Tool(tt.tool, tt.meta) })
		})
	}
}

func TestAddTools(t *testing.T) {
	t.Parallel()
	newReg := func() *mcpmw.Registry {
		var reg mcpmw.Registry
		reg.AddResources(apps.Resource("ui://x/board", "board", "read", "<!DOCTYPE html><title>b</title>", apps.ResourceMeta{}),
			mcpmw.Resource{URI: "ui://x/text", Name: "text", MimeType: "text/plain", Permission: "read",
				Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) { return nil, nil }})
		return &reg
	}
	reg := newReg()
	apps.AddTools(reg,
		apps.Tool(mcpmw.Tool{Name: "linked", Permission: "read", Call: ok}, apps.ToolMeta{ResourceURI: "ui://x/board"}),
		apps.Tool(mcpmw.Tool{Name: "spelt", Permission: "read", Call: ok}, apps.ToolMeta{ResourceURI: "ui://x/%62oard"}),
		apps.Tool(mcpmw.Tool{Name: "unlinked", Permission: "read", Call: ok}, apps.ToolMeta{Visibility: []apps.Visibility{apps.VisibilityApp}}),
		mcpmw.Tool{Name: "plain", Permission: "read", Call: ok},
		mcpmw.Tool{Name: "by_hand", Permission: "read", Call: ok, Meta: map[string]any{"ui": map[string]any{"resourceUri": "ui://x/board"}}},
	)
	assert.Equal(t, 5, reg.NumTools())

	for _, tt := range []struct {
		name string
		tool mcpmw.Tool
		want string
	}{
		{name: "not registered", tool: apps.Tool(mcpmw.Tool{Name: "t", Permission: "read", Call: ok}, apps.ToolMeta{ResourceURI: "ui://x/nothing"}),
			want: `apps: tool "t": its resourceUri "ui://x/nothing" names no registered resource; add the UI (Resource) to the registry first`},
		{name: "not a UI", tool: apps.Tool(mcpmw.Tool{Name: "t", Permission: "read", Call: ok}, apps.ToolMeta{ResourceURI: "ui://x/text"}),
			want: `apps: tool "t": its resourceUri "ui://x/text" names a resource of MIME type "text/plain", not "text/html;profile=mcp-app"`},
		{name: "by hand, not ui://", tool: mcpmw.Tool{Name: "t", Permission: "read", Call: ok, Meta: map[string]any{"ui": map[string]any{"resourceUri": "https://x"}}},
			want: `apps: tool "t": its resourceUri "https://x" is not a ui:// URI`},
		{name: "flat key by hand, not registered", tool: mcpmw.Tool{Name: "t", Permission: "read", Call: ok, Meta: map[string]any{"ui/resourceUri": "ui://x/gone"}},
			want: `apps: tool "t": its resourceUri "ui://x/gone" names no registered resource; add the UI (Resource) to the registry first`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := newReg()
			assert.PanicsWithValue(t, tt.want, func() { apps.AddTools(reg, tt.tool) })
			assert.Zero(t, reg.NumTools(), "nothing registered")
		})
	}
}
