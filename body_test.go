package mcpmw_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	h, audit, _ := newTestHandler(t, &mcpmw.Options{MaxBodyBytes: 1024})
	big := `"name":"echo","arguments":{"message":"` + strings.Repeat("a", 2000) + `"}`
	for _, chunked := range []bool{false, true} {
		r := modern("1", "tools/call", big)
		if chunked {
			r.ContentLength = -1 // as with Transfer-Encoding: chunked
			r.Body = io.NopCloser(strings.NewReader(strings.Repeat(" ", 10) + `{"jsonrpc":"2.0"` + strings.Repeat(" ", 2000) + "}"))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code, "chunked=%v", chunked)
		a := decode(t, w)
		require.NotNil(t, a.Error)
		assert.Contains(t, a.Error.Message, "1024 bytes")
	}
	require.Len(t, audit.records(), 2)
	for _, rec := range audit.records() {
		assert.Equal(t, 413, rec.Status)
		assert.Equal(t, mcpmw.OutcomeError, rec.Outcome)
	}
}

func TestMediaTypes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		contentType, accept string
		want                int
	}{
		{"application/json", "", 200},
		{"application/json; charset=utf-8", "application/json", 200},
		{"Application/JSON", "text/event-stream", 200},
		{"application/json", "text/html, */*;q=0.1", 200},
		{"application/json", "application/*", 200},
		{"application/json", "TEXT/EVENT-STREAM;q=1", 200},
		{"text/plain", "", http.StatusUnsupportedMediaType},
		{"application/jsonx", "", http.StatusUnsupportedMediaType},
		{"application/json;;", "", http.StatusUnsupportedMediaType},
		{"", "", http.StatusUnsupportedMediaType},
		{"application/json", "text/html", http.StatusNotAcceptable},
		{"application/json", "image/png, text/html", http.StatusNotAcceptable},
	} {
		h, audit, _ := newTestHandler(t, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, modern("1", "server/discover", "", "Content-Type", tt.contentType, "Accept", tt.accept))
		assert.Equal(t, tt.want, w.Code, "%q / %q", tt.contentType, tt.accept)
		assert.Len(t, audit.records(), 1)
	}
}

// brokenBody fails after its first bytes, as a connection that drops mid-body.
type brokenBody struct{ sent bool }

func (b *brokenBody) Read(p []byte) (int, error) {
	if b.sent {
		return 0, io.ErrUnexpectedEOF
	}
	b.sent = true
	return copy(p, `{"jsonrpc":"2.0",`), nil
}

func (*brokenBody) Close() error { return nil }

func TestBodyReadError(t *testing.T) {
	t.Parallel()
	for _, length := range []int64{200, -1} { // declared length, and chunked
		h, audit, logs := newTestHandler(t, nil)
		r := modern("1", "server/discover", "")
		r.Body, r.ContentLength = &brokenBody{}, length
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, http.StatusBadRequest, w.Code, "length %d", length)
		a := decode(t, w)
		require.NotNil(t, a.Error)
		assert.Equal(t, mcpmw.CodeInvalidRequest, a.Error.Code)
		assert.Equal(t, "Could not read the request body", a.Error.Message)
		require.Len(t, audit.records(), 1)
		assert.Equal(t, mcpmw.OutcomeError, audit.records()[0].Outcome)
		assert.Contains(t, logs.String(), "unexpected EOF", "the cause is logged, not sent")
	}
}

// sizedBody is a tools/call echo padded with trailing whitespace to exactly
// size bytes, sent with its Content-Length or, when chunked, without one.
func sizedBody(t *testing.T, size int, chunked bool) *http.Request {
	t.Helper()
	r := modern("1", "tools/call", `"name":"echo","arguments":{"message":"hi"}`)
	body, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	require.LessOrEqual(t, len(body), size, "test bug: the request alone is over size")
	body = append(body, strings.Repeat(" ", size-len(body))...)
	r.Body, r.ContentLength = io.NopCloser(strings.NewReader(string(body))), int64(len(body))
	if chunked {
		r.ContentLength = -1 // as with Transfer-Encoding: chunked
	}
	return r
}

func TestBodyOfExactlyMaxBodyBytesIsAccepted(t *testing.T) {
	t.Parallel()
	for _, chunked := range []bool{false, true} {
		h, audit, _ := newTestHandler(t, &mcpmw.Options{MaxBodyBytes: 1024})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, sizedBody(t, 1024, chunked))
		require.Equal(t, http.StatusOK, w.Code, "chunked=%v: %s", chunked, w.Body)
		a := decode(t, w)
		require.Nil(t, a.Error, "chunked=%v", chunked)
		assert.Equal(t, "hi", a.Result["content"].([]any)[0].(map[string]any)["text"], "chunked=%v", chunked)
		require.Len(t, audit.records(), 1)
		assert.Equal(t, mcpmw.OutcomeOK, audit.records()[0].Outcome)
	}
}

func TestBodyOneByteOverMaxBodyBytesIsRefused(t *testing.T) {
	t.Parallel()
	for _, chunked := range []bool{false, true} {
		h, audit, _ := newTestHandler(t, &mcpmw.Options{MaxBodyBytes: 1024})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, sizedBody(t, 1025, chunked))
		require.Equal(t, http.StatusRequestEntityTooLarge, w.Code, "chunked=%v: %s", chunked, w.Body)
		a := decode(t, w)
		require.NotNil(t, a.Error, "chunked=%v", chunked)
		assert.Equal(t, mcpmw.CodeInvalidRequest, a.Error.Code)
		assert.Contains(t, a.Error.Message, "1024 bytes")
		require.Len(t, audit.records(), 1)
		assert.Equal(t, 413, audit.records()[0].Status)
		assert.Equal(t, mcpmw.OutcomeError, audit.records()[0].Outcome)
	}
}

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
