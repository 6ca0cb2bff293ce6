package mcpmw_test

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
