package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoteTextNeverAudited drives the app over the network, on HTTP/1.1 and
// on HTTP/2 with TLS, with note_create calls whose text is a marker:
// accepted on both wires, refused by the permission gate, of the wrong
// type, over-long, repeated, with an escaped member name. Every note_create
// record holds "text":"[redacted]", and neither the audit output nor the
// app's log ever holds the text; the notes are stored as sent.
func TestNoteTextNeverAudited(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"HTTP/1.1", "HTTP/2"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			app := newTestApp(testConfig())
			srv := httptest.NewUnstartedServer(app.h)
			if proto == "HTTP/2" {
				srv.EnableHTTP2 = true
				srv.StartTLS()
			} else {
				srv.Start()
			}
			t.Cleanup(srv.Close)
			const marker = "meet-me-at-the-MARKER-7d41"
			q := strconv.Quote
			created := 0
			for _, tc := range []struct {
				name   string
				req    request
				status int
				stored bool
			}{
				{"created", modernCall(writerToken, `"1"`, "note_create", `{"text":`+q(marker)+`}`), 200, true},
				{"created, legacy", legacyCall(writerToken, v1125, `"2"`, "note_create", `{"text":`+q(marker)+`}`), 200, true},
				{"escaped member name", legacyCall(writerToken, v1125, `"3"`, "note_create", `{"\u0074ext":`+q(marker)+`}`), 200, true},
				{"reader refused", modernCall(readerToken, `"4"`, "note_create", `{"text":`+q(marker)+`}`), 403, false},
				{"not a string", modernCall(writerToken, `"5"`, "note_create", `{"text":[`+q(marker)+`]}`), 200, false},
				{"over-long", modernCall(writerToken, `"6"`, "note_create", `{"text":`+q(marker+strings.Repeat("x", 2500))+`}`), 200, false},
				{"repeated", modernCall(writerToken, `"7"`, "note_create", `{"text":"a","text":`+q(marker)+`}`), 400, false},
			} {
				resp, err := srv.Client().Do(tc.req.clientRequest(t, srv.URL+"/mcp"))
				require.NoError(t, err, tc.name)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				assert.Equal(t, proto, resp.Proto[:len(proto)], tc.name)
				require.Equal(t, tc.status, resp.StatusCode, "%s: %s", tc.name, body)
				assert.NotContains(t, string(body), marker, "%s: the answer", tc.name)
				if tc.stored {
					created++
				}
			}

			lines := strings.Split(strings.TrimSpace(app.audit.String()), "\n")
			require.Len(t, lines, 7, "one record per request")
			for _, line := range lines {
				assert.Contains(t, line, `"tool":"note_create"`)
				assert.Contains(t, line, `"text":"[redacted]"`, "every note_create record says a text was given, not which")
			}
			assert.NotContains(t, app.audit.String(), marker, "the audit output")
			assert.NotContains(t, app.log.String(), marker, "the app's log")

			// Nothing the tool receives changes: the notes hold the text.
			resp, err := srv.Client().Do(modernCall(readerToken, `"list"`, "notes_list", `{}`).clientRequest(t, srv.URL+"/mcp"))
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, created, strings.Count(string(body), marker)/2, "each stored note is listed, in its text and its structured content: %s", body)
		})
	}
}
