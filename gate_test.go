package mcpmw_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// What a denied caller learns, on every kind, is what SECURITY.md and the
// Permission doc say: that the name is registered (403, where an unknown
// one is -32602 or not found) and the permission, as the challenge's
// scope; under a template, that the URI falls under it, not whether the
// record exists. Nothing that depends on the entry runs or shows.
func TestWhatADeniedCallerLearns(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32 // every handler, argument check and completer of the entries
	count := func() { ran.Add(1) }
	completer := func(context.Context, mcpmw.Caller, mcpmw.CompletionRequest) (mcpmw.Completion, error) {
		count()
		return mcpmw.Completion{Values: []string{"leaked"}}, nil
	}
	const secret = "TOPSECRET" // in every description, title and schema
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "wipe", Title: secret, Description: secret, Permission: "admin", RequiredClientCapabilities: []mcpmw.ClientCapability{mcpmw.Capability("sampling")},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","description":"` + secret + `","x-mcp-header":"Region"}}}`),
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			count()
			return mcpmw.TextResult("x"), nil
		}})
	reg.AddPrompts(mcpmw.Prompt{Name: "audit_log", Description: secret, Permission: "admin",
		Arguments: []mcpmw.PromptArgument{{Name: "since", Description: secret, Required: true}},
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			count()
			return mcpmw.PromptResult{}, nil
		},
		Complete: map[string]mcpmw.Completer{"since": completer}})
	reg.AddResources(mcpmw.Resource{URI: "app://stats", Name: "stats", Description: secret, Permission: "admin",
		Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
			count()
			return nil, nil
		}})
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "vault://{id}", Name: "vault", Description: secret, Permission: "admin",
		Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
			count()
			return nil, mcpmw.ErrResourceNotFound
		},
		Complete: map[string]mcpmw.Completer{"id": completer}})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{Logger: newTextLogger(&syncBuffer{})})
	serve := func(r *http.Request) (*httptest.ResponseRecorder, answer) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w, decode(t, w)
	}
	asReader := []string{"Authorization", "Bearer reader"}
	completion := func(ref string) *http.Request {
		return completeReq(mcpmw.LatestVersion, `"ref":`+ref+`,"argument":{"name":"id","value":""}`, asReader...)
	}
	long := "vault://" + strings.Repeat("9", 5000)
	for _, tt := range []struct {
		name, kind, what string
		denied, unknown  *http.Request
		unknownCode      int
	}{
		// Wrong Mcp-Param-Region and no sampling capability: the gate
		// answers before either check.
		{"tool", "tool", "wipe",
			modern("1", "tools/call", `"name":"wipe","arguments":{"region":"eu"}`, append(asReader, "Mcp-Param-Region", "us")...),
			modern("1", "tools/call", `"name":"wip","arguments":{"region":"eu"}`, asReader...), mcpmw.CodeInvalidParams},
		{"prompt, without its required argument", "prompt", "audit_log",
			promptGet("audit_log", "", asReader...), promptGet("audit_lo", "", asReader...), mcpmw.CodeInvalidParams},
		{"direct resource", "resource", "app://stats",
			readReq(mcpmw.LatestVersion, "reader", "app://stats"), readReq(mcpmw.LatestVersion, "reader", "app://stat"), mcpmw.CodeInvalidParams},
		{"legacy direct resource", "resource", "app://stats",
			readReq(mcpmw.Version20251125, "reader", "app://stats"), readReq(mcpmw.Version20251125, "reader", "app://stat"), mcpmw.CodeResourceNotFound},
		{"record under a template", "resource", "vault://1",
			readReq(mcpmw.LatestVersion, "reader", "vault://1"), readReq(mcpmw.LatestVersion, "reader", "safe://1"), mcpmw.CodeInvalidParams},
		{"record that does not exist under a template", "resource", "vault://999999",
			readReq(mcpmw.LatestVersion, "reader", "vault://999999"), nil, 0},
		{"a long URI under a template, capped", "resource", "vault://" + strings.Repeat("9", 92) + "…",
			readReq(mcpmw.LatestVersion, "reader", long), nil, 0},
		{"completing a prompt", "prompt", "audit_log",
			completion(`{"type":"ref/prompt","name":"audit_log"}`), completion(`{"type":"ref/prompt","name":"audit_lo"}`), mcpmw.CodeInvalidParams},
		{"completing a template", "resource template", "vault://{id}",
			completion(`{"type":"ref/resource","uri":"vault://{id}"}`), completion(`{"type":"ref/resource","uri":"vault://{x}"}`), mcpmw.CodeInvalidParams},
	} {
		w, a := serve(tt.denied)
		assert.Equal(t, http.StatusForbidden, w.Code, tt.name)
		assert.Equal(t, `Bearer error="insufficient_scope", scope="admin"`, w.Header().Get("WWW-Authenticate"), "%s: the permission, as scope", tt.name)
		require.NotNil(t, a.Error, tt.name)
		assert.Equal(t, mcpmw.CodeInvalidParams, a.Error.Code, tt.name)
		assert.Equal(t, `Forbidden: the caller may not use `+tt.kind+` "`+tt.what+`"`, a.Error.Message, "%s: the kind and the name, nothing else", tt.name)
		assert.Nil(t, a.Error.Data, tt.name)
		assert.NotContains(t, w.Body.String(), secret, tt.name)
		if tt.unknown != nil {
			w, a = serve(tt.unknown)
			require.NotNil(t, a.Error, tt.name)
			assert.Equal(t, tt.unknownCode, a.Error.Code, "%s: an unknown name is told apart", tt.name)
			assert.NotEqual(t, http.StatusForbidden, w.Code, tt.name)
		}
	}
	assert.Zero(t, ran.Load(), "no handler, argument check or completer ran for a denied caller")

	// The gate's answer under a template is the same for a record that
	// exists and one that does not (the URI aside).
	w1, a1 := serve(readReq(mcpmw.LatestVersion, "reader", "vault://1"))
	w2, a2 := serve(readReq(mcpmw.LatestVersion, "reader", "vault://999999"))
	assert.Equal(t, w1.Code, w2.Code)
	assert.Equal(t, w1.Header(), w2.Header())
	assert.Equal(t, strings.Replace(a1.Error.Message, "vault://1", "vault://999999", 1), a2.Error.Message)
}
