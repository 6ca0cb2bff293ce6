package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestServerTimeouts checks the example bounds slow clients: a stalled body
// or a client that never reads must not hold a connection for ever, and a
// tool must have time to answer before the write deadline.
func TestServerTimeouts(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer("127.0.0.1:0", http.NotFoundHandler(), defaultExportDelay)
	assert.GreaterOrEqual(t, srv.ReadHeaderTimeout, time.Second)
	assert.GreaterOrEqual(t, srv.ReadTimeout, srv.ReadHeaderTimeout, "the whole request takes at least as long as its headers")
	assert.GreaterOrEqual(t, srv.WriteTimeout, 30*time.Second, "room for a slow tool's answer")
	slow := newHTTPServer("127.0.0.1:0", http.NotFoundHandler(), maxExportDelay)
	assert.GreaterOrEqual(t, slow.WriteTimeout, maxExportDelay+30*time.Second, "a plain call of notes_export at the longest EXPORT_DELAY still has time to answer")
	assert.GreaterOrEqual(t, srv.IdleTimeout, time.Second)
	assert.LessOrEqual(t, srv.ReadTimeout, time.Minute, "a stalled body is cut off within a minute")
}
