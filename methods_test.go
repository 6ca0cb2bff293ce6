package mcpmw_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// discover declares the capabilities of the registered methods in name
// order, whatever order they were registered in, so that the encoded
// answer is the same on every instance.
func TestDiscoverDeclaresCapabilitiesInNameOrder(t *testing.T) {
	t.Parallel()
	h := mcpmw.New(&mcpmw.Registry{}, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{
		answering("resources/list", "resources", func() *mcpmw.Response { return mcpmw.ResultResponse(map[string]any{}) }),
		answering("prompts/list", "prompts", func() *mcpmw.Response { return mcpmw.ResultResponse(map[string]any{}) }),
		answering("completion/complete", "completions", func() *mcpmw.Response { return mcpmw.ResultResponse(map[string]any{}) }),
	}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "server/discover", ""))
	assert.Contains(t, w.Body.String(), `"capabilities":{"completions":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`)
}

// A Target without a Kind is named "target" in the denial; a permission
// that is no valid OAuth scope token is left out of the challenge.
func TestTargetDenialWording(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		target    mcpmw.Target
		message   string
		challenge string
	}{
		{mcpmw.Target{Name: "doc", Permission: "admin"}, `the caller may not use target "doc"`, `Bearer error="insufficient_scope", scope="admin"`},
		{mcpmw.Target{Kind: "prompt", Name: "doc", Permission: "read write"}, `the caller may not use prompt "doc"`, `Bearer error="insufficient_scope"`},
		{mcpmw.Target{Kind: "prompt", Name: "doc", Permission: `a"b`}, `the caller may not use prompt "doc"`, `Bearer error="insufficient_scope"`},
		{mcpmw.Target{Kind: "prompt", Name: "doc", Permission: `a\b`}, `the caller may not use prompt "doc"`, `Bearer error="insufficient_scope"`},
		{mcpmw.Target{Kind: "prompt", Name: "doc", Permission: "a\x7fb"}, `the caller may not use prompt "doc"`, `Bearer error="insufficient_scope"`},
		{mcpmw.Target{Kind: "prompt", Name: "doc", Permission: "!edge~"}, `the caller may not use prompt "doc"`, `Bearer error="insufficient_scope", scope="!edge~"`},
	} {
		target := tt.target
		h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{{
			Name: "prompts/get", Capability: "prompts",
			Target: func(*mcpmw.Request) (*mcpmw.Target, *mcpmw.Response) { return &target, nil },
			Handle: func(context.Context, *mcpmw.Request) *mcpmw.Response { return mcpmw.ResultResponse(map[string]any{}) },
		}}})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, modern("1", "prompts/get", `"name":"doc"`, "Mcp-Name", "doc"))
		require.Equal(t, 403, w.Code, w.Body.String())
		assert.True(t, strings.Contains(w.Body.String(), strings.ReplaceAll(tt.message, `"`, `\"`)), w.Body.String())
		assert.Equal(t, tt.challenge, w.Header().Get("WWW-Authenticate"))
	}
}

// Two methods of one capability may not set one settings key to two values
// in the same revision (what would discover declare?); the same value, or
// values in different revisions, are fine.
func TestMethodSettingsConflicts(t *testing.T) {
	t.Parallel()
	handle := func(context.Context, *mcpmw.Request) *mcpmw.Response { return mcpmw.ResultResponse(map[string]any{}) }
	build := func(a, b mcpmw.Method) func() {
		return func() { mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{a, b}}) }
	}
	one := mcpmw.Method{Name: "x/one", Capability: "experimental", Settings: map[string]any{"mode": "fast"}, Handle: handle}
	other := mcpmw.Method{Name: "x/two", Capability: "experimental", Settings: map[string]any{"mode": "slow"}, Handle: handle}
	same := mcpmw.Method{Name: "x/two", Capability: "experimental", Settings: map[string]any{"mode": "fast"}, Handle: handle}
	assert.PanicsWithValue(t, `mcpmw: method "x/two" sets experimental.mode to slow, another method of experimental to fast`, build(one, other))
	assert.NotPanics(t, build(one, same))

	modernOnly, legacyOnly := one, other
	modernOnly.Revisions = []string{mcpmw.LatestVersion}
	legacyOnly.Revisions = []string{mcpmw.Version20251125}
	assert.NotPanics(t, build(modernOnly, legacyOnly), "each revision declares its own")
}
