package mcpmw_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// sseMessages parses an event stream strictly: every line must be "event:
// message", a "data: " line holding one whole JSON message, or the blank
// line ending an event. It returns the messages.
func sseMessages(t *testing.T, body string) []map[string]any {
	t.Helper()
	require.True(t, strings.HasSuffix(body, "\n\n"), "the stream ends with a complete event: %q", body)
	var out []map[string]any
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		lines := strings.Split(ev, "\n")
		require.Len(t, lines, 2, "an event is one event line and one data line: %q", ev)
		assert.Equal(t, "event: message", lines[0])
		data, ok := strings.CutPrefix(lines[1], "data: ")
		require.True(t, ok, "not a data line: %q", lines[1])
		require.NotContains(t, data, "\r", "a CR ends an SSE line too")
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &m), "each data line is one JSON message: %q", data)
		out = append(out, m)
	}
	return out
}

// TestIndentedResultsKeepTheStreamFramed is defect 9 of issue 8: a
// middleware's Result holding indented JSON (LF and CRLF line breaks) was
// copied as it was into the data line after a notification, and the client
// lost the answer.
func TestIndentedResultsKeepTheStreamFramed(t *testing.T) {
	t.Parallel()
	const indented = "{\n  \"resources\": [\r\n    {\n      \"uri\": \"file:///a.txt\",\n      \"name\": \"a\\nb\"\n    }\n  ],\n  \"_meta\": {\n    \"k\": 1\n  }\n}\n"
	listResources := mcpmw.Method{Name: "resources/list", Capability: "resources", Streams: true,
		Handle: func(ctx context.Context, _ *mcpmw.Request) *mcpmw.Response {
			if err := mcpmw.Progress(ctx, 1, 2, "listing"); err != nil {
				return mcpmw.ErrorResponse(mcpmw.CodeInternalError, err.Error())
			}
			return &mcpmw.Response{Result: json.RawMessage(indented)}
		}}
	h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{listResources}})
	for _, tt := range []struct {
		name string
		req  *http.Request
	}{
		{"2026-07-28", req(`{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{"_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/list")},
		{"legacy", legacy("2025-11-25", "3", "resources/list", `"_meta":{"progressToken":"t"}`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, tt.req)
			require.Equal(t, 200, w.Code)
			require.Equal(t, "text/event-stream", w.Header().Get("Content-Type"))
			msgs := sseMessages(t, w.Body.String())
			require.Len(t, msgs, 2, "the progress notification, then the answer: %q", w.Body.String())
			assert.Equal(t, "notifications/progress", msgs[0]["method"])
			assert.EqualValues(t, 3, msgs[1]["id"])
			res, _ := msgs[1]["result"].(map[string]any)
			require.NotNil(t, res, "the final answer is intact: %v", msgs[1])
			assert.Equal(t, []any{map[string]any{"uri": "file:///a.txt", "name": "a\nb"}}, res["resources"])
			assert.EqualValues(t, 1, res["_meta"].(map[string]any)["k"])
		})
	}
}
