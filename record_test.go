package mcpmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// The record's protocol version is the revision the request speaks; for a
// legacy request naming no served revision, the header's value (capped).
func TestRecordProtocolVersion(t *testing.T) {
	t.Parallel()
	h, a, _ := newTestHandler(t, nil)
	for _, tt := range []struct {
		name string
		req  func() (int, string)
	}{
		{"initialize without the header", func() (int, string) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`))
			return w.Code, "2025-06-18"
		}},
		{"unserved legacy header", func() (int, string) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, legacy("2024-11-05", "1", "tools/list", ""))
			return w.Code, "2024-11-05"
		}},
		{"2026-07-28", func() (int, string) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, modern("1", "tools/list", ""))
			return w.Code, "2026-07-28"
		}},
	} {
		before := len(a.records())
		_, want := tt.req()
		recs := a.records()
		require.Len(t, recs, before+1, tt.name)
		assert.Equal(t, want, recs[before].ProtocolVersion, tt.name)
	}
}

// errReader fails every Read: a body the client never finished sending.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset mid-body") }

// What the log line says of a failed request, the audit record says too: a
// bare "Internal error" is no account of what happened. Each case is a
// Response with a Cause (logged) and no Summary of its own.
func TestRecordSummaryCarriesTheLoggedCause(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.Add(mcpmw.Tool{Name: "odd_content", Permission: "read",
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.ToolResult{Content: []mcpmw.Content{{Type: "video"}}}, nil
		}})
	reg.AddResources(mcpmw.Resource{URI: "e://empty", Name: "empty", Permission: "read",
		Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) { return nil, nil }})
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "t://{id}", Name: "t", Permission: "read",
		Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
			return nil, nil
		},
		List: func(context.Context, mcpmw.Caller) ([]mcpmw.Resource, error) {
			return nil, errors.New("tenant db unreachable")
		}})
	reg.AddPrompts(mcpmw.Prompt{Name: "silent", Permission: "read",
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{}, nil
		}})
	// A middleware that breaks the two methods only it serves.
	broken := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, r *mcpmw.Request) *mcpmw.Response {
			if r.Method == "tools/list" {
				return nil
			}
			if r.Method == "prompts/list" {
				return &mcpmw.Response{Result: json.RawMessage(`[1]`)}
			}
			return next.Dispatch(ctx, r)
		})
	}
	h, a, logs := resourceHandler(t, &reg, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{broken}})
	long := "t://" + strings.Repeat("x", 5000)
	body := httptest.NewRequest(http.MethodPost, "/mcp", errReader{})
	body.Header.Set("Content-Type", "application/json")
	body.Header.Set("Authorization", "Bearer reader")
	for _, tt := range []struct {
		name string
		req  *http.Request
		want string
	}{
		{"a Read with no contents and no error", readReq(mcpmw.LatestVersion, "reader", "e://empty"), "read failed: Read returned no contents and no error"},
		{"a template's Read with no contents, at a long URI", readReq(mcpmw.LatestVersion, "reader", long), "read failed: Read returned no contents and no error"},
		{"a template's List failing", listReq(mcpmw.LatestVersion, "reader", "resources/list", ""), `Internal error: resource template "t://{id}": List: tenant db unreachable`},
		{"a prompt with no messages", modern("1", "prompts/get", `"name":"silent"`, "Mcp-Name", "silent", "Authorization", "Bearer reader"), "prompt failed: no messages: Get must return at least one"},
		{"a tool result that cannot be encoded", listReq(mcpmw.LatestVersion, "reader", "tools/call", `"name":"odd_content"`), `tool failed: its result cannot be sent: content block type "video"`},
		{"a middleware returning no Response", listReq(mcpmw.LatestVersion, "reader", "tools/list", ""), `Internal error: dispatcher returned a nil Response for "tools/list"`},
		{"a middleware returning a result that is no object", listReq(mcpmw.LatestVersion, "reader", "prompts/list", ""), `Internal error: the Response to "prompts/list" has a Result that is not a JSON object`},
		{"a body that cannot be read", body, "Could not read the request body: connection reset mid-body"},
	} {
		before, logged := len(a.records()), len(logs.String())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, tt.req)
		recs := a.records()
		require.Len(t, recs, before+1, tt.name)
		assert.Contains(t, recs[before].Summary, tt.want, tt.name)
		line := logs.String()[logged:]
		assert.Contains(t, line, "mcpmw: request failed", "%s: the cause is logged", tt.name)
		assert.NotContains(t, line, strings.Repeat("x", 101), "%s: a client's URI is capped in the log line", tt.name)
		assert.NotContains(t, w.Body.String(), "tenant db", tt.name)
	}
}
