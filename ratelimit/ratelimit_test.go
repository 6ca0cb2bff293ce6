package ratelimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/ratelimit"
)

type everyone struct{}

func (everyone) Can(mcpmw.Capability) bool { return true }

// serve builds a handler with limiter l and counts audit records.
func serve(l mcpmw.RateLimiter, ip func(*http.Request) string) (http.Handler, *atomic.Int64) {
	var audits atomic.Int64
	h := mcpmw.New(&mcpmw.Registry{}, mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return everyone{}, nil }),
		mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) { audits.Add(1) }),
		&mcpmw.Options{RateLimit: l, ClientIP: ip})
	return h, &audits
}

func discover(remote, token string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	r.RemoteAddr = remote
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "server/discover")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

func TestPerIP(t *testing.T) {
	t.Parallel()
	h, audits := serve(ratelimit.PerIP(3, time.Minute), nil)
	codes := func(remote string, n int) []int {
		var out []int
		for range n {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, discover(remote, ""))
			out = append(out, w.Code)
			if w.Code == http.StatusTooManyRequests {
				assert.NotEmpty(t, w.Header().Get("Retry-After"))
				assert.Equal(t, "0", w.Header().Get("X-RateLimit-Remaining"))
				assert.Contains(t, w.Body.String(), `"code":-32600`)
			}
		}
		return out
	}
	assert.Equal(t, []int{200, 200, 200, 429, 429}, codes("198.51.100.7:1111", 5))
	assert.Equal(t, []int{200}, codes("198.51.100.8:2222", 1), "another IP has its own bucket")
	assert.Equal(t, []int{200, 200, 200, 429}, codes("[2001:db8::1]:1", 4))
	assert.Equal(t, []int{429}, codes("[2001:db8::2]:1", 1), "IPv6 addresses share their /64")
	assert.EqualValues(t, 7, audits.Load(), "rate-limited requests are never audited")
}

func TestByTokenAndAll(t *testing.T) {
	t.Parallel()
	byToken := ratelimit.By(2, time.Minute, func(r *http.Request, _ string) string {
		return r.Header.Get("Authorization")
	})
	h, audits := serve(ratelimit.All(ratelimit.PerIP(100, time.Minute), byToken), nil)
	got := []int{}
	for _, token := range []string{"a", "a", "a", "b", ""} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, discover("203.0.113.1:5", token))
		got = append(got, w.Code)
	}
	assert.Equal(t, []int{200, 200, 429, 200, 200}, got, "each token has its bucket; no token, no token limit")
	assert.EqualValues(t, 4, audits.Load())
}

func TestPerIPUsesClientIPHook(t *testing.T) {
	t.Parallel()
	h, _ := serve(ratelimit.PerIP(1, time.Minute), func(r *http.Request) string { return r.Header.Get("X-Real-IP") })
	do := func(realIP string) int {
		r := discover("10.0.0.1:1", "")
		r.Header.Set("X-Real-IP", realIP)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	require.Equal(t, 200, do("192.0.2.10"))
	assert.Equal(t, 200, do("192.0.2.11"), "keyed by the hook's IP, not the proxy's")
	assert.Equal(t, 429, do("192.0.2.10"))
}
