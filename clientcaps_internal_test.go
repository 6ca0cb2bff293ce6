package mcpmw

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClientCapabilityPathsNameExtensionsAndTestValues(t *testing.T) {
	t.Parallel()
	ui := ClientCapability{Path: []string{"extensions", "io.modelcontextprotocol/ui", "mimeTypes"}, Contains: "text/html;profile=mcp-app"}
	for _, tt := range []struct {
		caps string
		c    ClientCapability
		want bool
	}{
		{`{"sampling":{}}`, Capability("sampling"), true},
		{`{"sampling":null}`, Capability("sampling"), false},
		{`{"sampling":false}`, Capability("sampling"), false},
		{`{}`, Capability("sampling"), false},
		{`{"sampling":{"tools":{}}}`, Capability("sampling", "tools"), true},
		{`{"sampling":{}}`, Capability("sampling", "tools"), false},
		{`{"elicitation":{}}`, elicitationForm, true}, // {} stands for form mode
		{`{"elicitation":{"url":{}}}`, elicitationForm, false},
		{`{"elicitation":{}}`, elicitationURL, false},
		{`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, tasksCapability, true},
		{`{"extensions":{"io":{"modelcontextprotocol/tasks":{}}}}`, tasksCapability, false}, // a segment is one member name, dots and all
		{`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/plain", "text/html;profile=mcp-app"]}}}`, ui, true},
		{`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html"]}}}`, ui, false},
		{`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":[]}}}`, ui, false},
		{`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":"text/html;profile=mcp-app"}}}`, ui, false}, // not an array
		{`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":[{"x":"text/html;profile=mcp-app"}, "text/html;profile=mcp-\u0061pp"]}}}`, ui, true},
		{`{"extensions":{"io.modelcontextprotocol/ui":{}}}`, ui, false},
	} {
		assert.Equal(t, tt.want, hasClientCapability([]byte(tt.caps), tt.c), "%s in %s", tt.c, tt.caps)
	}
}

func TestClientCapabilityNamesAndData(t *testing.T) {
	t.Parallel()
	ui := ClientCapability{Path: []string{"extensions", "io.modelcontextprotocol/ui", "mimeTypes"}, Contains: "text/html;profile=mcp-app"}
	assert.Equal(t, "elicitation.url", elicitationURL.String())
	assert.Equal(t, `extensions["io.modelcontextprotocol/tasks"]`, tasksCapability.String())
	assert.Equal(t, `extensions["io.modelcontextprotocol/ui"].mimeTypes containing "text/html;profile=mcp-app"`, ui.String())
	assert.JSONEq(t, `{"requiredCapabilities":{"sampling":{},"elicitation":{"url":{}},"extensions":{"io.modelcontextprotocol/tasks":{},"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}`,
		string(requiredCapabilitiesData([]ClientCapability{Capability("sampling"), elicitationURL, tasksCapability, ui})))
	assert.JSONEq(t, `{"requiredCapabilities":{"x":{"list":["a","b"]}}}`,
		string(requiredCapabilitiesData([]ClientCapability{{Path: []string{"x", "list"}, Contains: "a"}, {Path: []string{"x", "list"}, Contains: "b"}})))
}

func TestClientCapabilityThatNamesNothingIsRefusedAtRegistration(t *testing.T) {
	t.Parallel()
	for _, c := range []ClientCapability{{}, Capability("sampling", "")} {
		assert.Panics(t, func() {
			var reg Registry
			reg.AddTools(Tool{Name: "t", Permission: "p", Call: func(_ context.Context, _ Caller, _ *Args) (ToolResult, error) { return ToolResult{}, nil },
				RequiredClientCapabilities: []ClientCapability{c}})
		}, "%v", c)
	}
}

func FuzzArrayHolds(f *testing.F) {
	for _, seed := range []string{`[]`, `["a"]`, `[ "a" , "b" ]`, `[1,{"a":["b"]},"b"]`, `"b"`, `{"b":1}`, `["\u0062"]`} {
		f.Add(seed, "b")
	}
	f.Add("[\"\xff\"]", "\ufffd") // invalid UTF-8 decodes to U+FFFD, as encoding/json does
	f.Add("[\"\xff\"]", "\xff")
	f.Fuzz(func(t *testing.T, doc, s string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return // the handler parses a request's JSON before anything reads it
		}
		want := false
		if arr, ok := v.([]any); ok {
			for _, e := range arr {
				if e == s {
					want = true
				}
			}
		}
		if got := arrayHolds([]byte(doc), s); got != want {
			t.Fatalf("arrayHolds(%s, %q) = %v, want %v", doc, s, got, want)
		}
	})
}
