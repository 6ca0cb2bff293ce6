package apps_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/apps"
)

func TestResourceMeta(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		meta apps.ResourceMeta
		want string
	}{
		{name: "nothing: the host decides", want: `{"ui":{}}`},
		{name: "inline only", meta: apps.ResourceMeta{CSP: &apps.CSP{}, PrefersBorder: mcpmw.HintYes},
			want: `{"ui":{"csp":{"connectDomains":[],"resourceDomains":[]},"prefersBorder":true}}`},
		{name: "no border", meta: apps.ResourceMeta{PrefersBorder: mcpmw.HintNo}, want: `{"ui":{"prefersBorder":false}}`},
		{name: "every origin", meta: apps.ResourceMeta{CSP: &apps.CSP{
			ConnectDomains: []string{"https://api.example.com"}, ResourceDomains: []string{"https://*.cdn.example"},
			FrameDomains: []string{"https://frames.example"}, BaseURIDomains: []string{"https://base.example"}}},
			want: `{"ui":{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://*.cdn.example"],"frameDomains":["https://frames.example"],"baseUriDomains":["https://base.example"]}}}`},
		{name: "permissions and domain", meta: apps.ResourceMeta{Domain: "abc.example-host.com",
			Permissions: apps.Permissions{Camera: true, Microphone: true, Geolocation: true, ClipboardWrite: true}},
			want: `{"ui":{"permissions":{"camera":{},"microphone":{},"geolocation":{},"clipboardWrite":{}},"domain":"abc.example-host.com"}}`},
		{name: "one permission", meta: apps.ResourceMeta{Permissions: apps.Permissions{ClipboardWrite: true}},
			want: `{"ui":{"permissions":{"clipboardWrite":{}}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw, err := json.Marshal(tt.meta.Meta())
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(raw))
		})
	}
}

func TestResourceMetaCopiesTheDomains(t *testing.T) {
	t.Parallel()
	domains := []string{"https://a.example"}
	meta := apps.ResourceMeta{CSP: &apps.CSP{ConnectDomains: domains, ResourceDomains: domains}}.Meta()
	domains[0] = "https://b.example"
	raw, err := json.Marshal(meta)
	require.NoError(t, err)
	assert.JSONEq(t, `{"ui":{"csp":{"connectDomains":["https://a.example"],"resourceDomains":["https://a.example"]}}}`, string(raw))
}

func TestResource(t *testing.T) {
	t.Parallel()
	const html = "<!DOCTYPE html><title>board</title>"
	res := apps.Resource("ui://x/board", "board", "read", html, apps.ResourceMeta{PrefersBorder: mcpmw.HintYes})
	assert.Equal(t, "ui://x/board", res.URI)
	assert.Equal(t, "board", res.Name)
	assert.Equal(t, mcpmw.Permission("read"), res.Permission)
	assert.Equal(t, apps.MIMEType, res.MimeType)
	assert.Equal(t, apps.ExtensionID, res.Extension)
	assert.Nil(t, res.Meta, "_meta.ui goes on the contents item")
	got, err := res.Read(t.Context(), nil, res.URI)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, apps.Contents("ui://x/board", html, apps.ResourceMeta{PrefersBorder: mcpmw.HintYes}), got[0])
	assert.Equal(t, mcpmw.ResourceContents{URI: "ui://x/board", MimeType: "text/html;profile=mcp-app", Text: html,
		Meta: map[string]any{"ui": apps.ResourceMeta{PrefersBorder: mcpmw.HintYes}.Meta()["ui"]}}, got[0])

	assert.PanicsWithValue(t, `apps: resource "https://x/board": the URI of a UI must start with ui://`, func() {
		apps.Resource("https://x/board", "board", "read", html, apps.ResourceMeta{})
	})
}
