package mcpmw_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpmw/mcpmw"
)

// An app-only tool (MCP Apps) is a tool ListedOnlyFor the UI capability.
// A tools/list from a client that does not declare it must cost what it
// cost before such tools existed: the same allocations, and time measured
// beside the plain list in one run.

// uiCapability is what a client declares when it renders apps.
var uiCapability = mcpmw.ClientCapability{Path: []string{"extensions", "io.modelcontextprotocol/ui", "mimeTypes"}, Contains: "text/html;profile=mcp-app"}

// withAppOnly is benchRegistry(tools, -1) with one app-only tool more.
func withAppOnly(tools int) *mcpmw.Registry {
	reg := benchRegistry(tools, -1)
	reg.AddTools(mcpmw.Tool{Name: "board_state", Permission: "read", ListedOnlyFor: []mcpmw.ClientCapability{uiCapability},
		Meta: map[string]any{"ui": map[string]any{"resourceUri": "ui://bench/board", "visibility": []string{"app"}}},
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("ok"), nil
		}})
	return reg
}

// newUIListCall is a tools/list from a client that renders apps.
func newUIListCall() *benchCall {
	c := newBenchCall("tools/list", "", "")
	c.body = []byte(strings.Replace(string(c.body), `"io.modelcontextprotocol/clientCapabilities":{}`,
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`, 1))
	c.tmpl.ContentLength = int64(len(c.body))
	return c
}

func TestToolsListAllocsUnchangedByAppOnlyTools(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not exact under the race detector")
	}
	allocs := func(reg *mcpmw.Registry, c *benchCall, want string) float64 {
		h := newBenchHandler(reg, benchCaller{})
		t.Cleanup(h.Close)
		w := newBenchWriter()
		h.ServeHTTP(w, c.request())
		if w.status != http.StatusOK || strings.Contains(string(w.body), `"board_state"`) != (want != "") {
			t.Fatalf("unexpected answer %d: %.300s", w.status, w.body)
		}
		return testing.AllocsPerRun(200, func() {
			w.reset()
			h.ServeHTTP(w, c.request())
		})
	}
	plain := allocs(benchRegistry(100, -1), newBenchCall("tools/list", "", ""), "")
	without := allocs(withAppOnly(99), newBenchCall("tools/list", "", ""), "")
	with := allocs(withAppOnly(99), newUIListCall(), "board_state")
	t.Logf("tools/list of 100 tools: %v allocations; with an app-only tool, for a client without the UI extension %v, with it %v", plain, without, with)
	if without != plain || with != plain {
		t.Errorf("an app-only tool changed what tools/list allocates: %v plain, %v for a client without the UI extension, %v with it", plain, without, with)
	}
}

// BenchmarkToolsListAppOnly lists 100 tools: plain; with an app-only tool
// among them, for a client without the UI extension and one with it. The
// three run in one process, for ratios.
func BenchmarkToolsListAppOnly(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		runBench(b, newBenchHandler(benchRegistry(100, -1), benchCaller{}), newBenchCall("tools/list", "", ""), `"name":"tool_00099"`)
	})
	b.Run("app-only/client=plain", func(b *testing.B) {
		runBench(b, newBenchHandler(withAppOnly(99), benchCaller{}), newBenchCall("tools/list", "", ""), `"name":"tool_00098"`)
	})
	b.Run("app-only/client=ui", func(b *testing.B) {
		runBench(b, newBenchHandler(withAppOnly(99), benchCaller{}), newUIListCall(), `"name":"board_state"`)
	})
}
