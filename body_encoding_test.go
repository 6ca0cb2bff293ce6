package mcpmw_test

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A compressed body is refused as an unsupported media type (RFC 9110
// §15.5.16), not misread as JSON that fails to parse.
func TestContentEncodingOtherThanIdentityIs415(t *testing.T) {
	t.Parallel()
	h, a, _ := newTestHandler(t, nil)
	for _, tt := range []struct {
		encoding string
		status   int
	}{
		{"gzip", 415},
		{"identity, gzip", 415},
		{"br", 415},
		{"identity", 200},
		{"IDENTITY", 200},
		{"", 200},
	} {
		r := modern("1", "tools/list", "")
		if tt.encoding != "" {
			r.Header.Set("Content-Encoding", tt.encoding)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, tt.status, w.Code, "%q: %s", tt.encoding, w.Body)
		if tt.status == 415 {
			assert.Equal(t, "identity", w.Header().Get("Accept-Encoding"))
			assert.Equal(t, -32600, decode(t, w).Error.Code)
			assert.Contains(t, w.Body.String(), "uncompressed")
		}
	}
	assert.Len(t, a.records(), 6, "each refusal is audited once")
}

// Two Content-Type headers are refused: readers disagree on which counts.
func TestTwoContentTypesAre415(t *testing.T) {
	t.Parallel()
	h, _, _ := newTestHandler(t, nil)
	r := modern("1", "tools/list", "")
	r.Header.Add("Content-Type", "text/plain")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, 415, w.Code)
	assert.Contains(t, w.Body.String(), "exactly one Content-Type")
}

// Two protocol members that differ only in case are refused: Go decoders
// in an application's middleware would read one, this handler the other.
func TestParamsMembersDifferingInCaseAreRefused(t *testing.T) {
	t.Parallel()
	h, _, _ := newTestHandler(t, nil)
	for _, params := range []string{
		`"name":"echo","Name":"write_it","arguments":{"message":"x"}`,
		`"name":"echo","arguments":{"message":"x"},"ARGUMENTS":{"message":"y"}`,
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, legacy("2025-11-25", "1", "tools/call", params))
		assert.Equal(t, 400, w.Code, w.Body.String())
		assert.Equal(t, -32602, decode(t, w).Error.Code)
		assert.Contains(t, w.Body.String(), "differ only in case")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1,"ProgressToken":2}}}`,
		"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"))
	assert.Equal(t, 400, w.Code, w.Body.String())
	assert.Contains(t, w.Body.String(), "differ only in case")
}
