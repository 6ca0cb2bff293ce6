package ratelimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/ratelimit"
)

type everyone struct{}

func (everyone) Can(mcpmw.Permission) bool { return true }

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
	assert.Equal(t, []int{200, 200, 429, 200, 200}, got, "each token has its bucket; requests without one share another")
	assert.EqualValues(t, 4, audits.Load())
}

func TestByEmptyKeyIsOneSharedBucket(t *testing.T) {
	t.Parallel()
	noKey := ratelimit.By(2, time.Minute, func(*http.Request, string) string { return "" })
	h, audits := serve(noKey, nil)
	var got []int
	for i := range 4 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, discover("203.0.113."+strconv.Itoa(i+1)+":5", ""))
		got = append(got, w.Code)
	}
	assert.Equal(t, []int{200, 200, 429, 429}, got, "a key function that cannot decide does not exempt the request")
	assert.EqualValues(t, 2, audits.Load())
}

// TestPerIPLimitsRequestsWithoutAClientIP follows the proxy recipe (chi's
// ClientIPFromXFF and GetClientIP), which yields "" whenever chi cannot
// decide; those requests must still be limited.
func TestPerIPLimitsRequestsWithoutAClientIP(t *testing.T) {
	t.Parallel()
	h, audits := serve(ratelimit.PerIP(2, time.Minute), func(r *http.Request) string { return middleware.GetClientIP(r.Context()) })
	r := chi.NewRouter()
	r.Use(middleware.ClientIPFromXFF("10.0.0.0/8"))
	r.Handle("/mcp", h)
	undecided := []struct{ remote, xff string }{
		{"10.0.0.5:1", "10.1.2.3"},           // every hop trusted
		{"10.0.0.5:1", "not-an-ip"},          // an entry that does not parse
		{"10.0.0.5:1", ""},                   // no header from a trusted peer
		{"10.0.0.5:1", "192.0.2.1, garbage"}, // unparseable nearest hop
	}
	passed := 0
	for i := range 20 {
		u := undecided[i%len(undecided)]
		req := discover(u.remote, "")
		if u.xff != "" {
			req.Header.Set("X-Forwarded-For", u.xff)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		require.Contains(t, []int{200, 429}, w.Code)
		if w.Code == 200 {
			passed++
		}
	}
	assert.Equal(t, 2, passed, "20 requests without a client IP against a limit of 2")
	assert.EqualValues(t, 2, audits.Load())

	w := httptest.NewRecorder()
	req := discover("10.0.0.5:1", "")
	req.Header.Set("X-Forwarded-For", "198.51.100.9")
	r.ServeHTTP(w, req)
	assert.Equal(t, 200, w.Code, "a client chi can name keeps its own bucket")
}

func TestPerIPDefaultClientIPWithoutRemoteAddr(t *testing.T) {
	t.Parallel()
	h, _ := serve(ratelimit.PerIP(1, time.Minute), nil) // default ClientIP: the host of RemoteAddr
	var got []int
	for _, remote := range []string{"", "", "unix"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, discover(remote, ""))
		got = append(got, w.Code)
	}
	assert.Equal(t, []int{200, 429, 200}, got, "an empty RemoteAddr is one bucket, not none")
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

// TestPerIPRetryAfterIsWhenRoomReturns: the budget refills one request
// every window/requests, and Retry-After says when the next one fits, not
// a whole window.
func TestPerIPRetryAfterIsWhenRoomReturns(t *testing.T) {
	t.Parallel()
	h, _ := serve(ratelimit.PerIP(3, time.Minute), nil)
	for range 3 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, discover("192.0.2.40:1", ""))
		require.Equal(t, 200, w.Code)
		assert.Empty(t, w.Header().Get("X-RateLimit-Remaining"), "an admitted answer carries no rate-limit header")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, discover("192.0.2.40:1", ""))
	require.Equal(t, 429, w.Code)
	assert.Equal(t, "20", w.Header().Get("Retry-After"), "3 a minute: one more every 20 s")
	assert.Equal(t, "3", w.Header().Get("X-RateLimit-Limit"))
	assert.Equal(t, "0", w.Header().Get("X-RateLimit-Remaining"))
}

func TestPerIPRefillsEvenly(t *testing.T) {
	t.Parallel()
	h, _ := serve(ratelimit.PerIP(2, 200*time.Millisecond), nil) // one every 100 ms
	codes := func(n int) []int {
		var out []int
		for range n {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, discover("192.0.2.41:1", ""))
			out = append(out, w.Code)
		}
		return out
	}
	require.Equal(t, []int{200, 200, 429}, codes(3))
	time.Sleep(120 * time.Millisecond)
	assert.Equal(t, []int{200, 429}, codes(2), "one interval refills one request, not the burst")
	time.Sleep(220 * time.Millisecond)
	assert.Equal(t, []int{200, 200, 429}, codes(3), "a whole window refills the burst, and no more")
}

// TestPerIPExactUnderConcurrency: 64 concurrent clients of one IP get the
// budget exactly (plus what refills meanwhile: one every 1.2 s).
func TestPerIPExactUnderConcurrency(t *testing.T) {
	t.Parallel()
	l := ratelimit.PerIP(50, time.Minute)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if !l.Limit(httptest.NewRecorder(), nil, "198.51.100.60") {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	refilled := int64(time.Since(start) / (time.Minute / 50))
	assert.GreaterOrEqual(t, admitted.Load(), int64(50))
	assert.LessOrEqual(t, admitted.Load(), 50+refilled)
}

// TestPerIPAdmitsWithoutAllocating: the limiter sits in front of every
// request, so an admitted one costs no allocation (httprate's cost 9: a
// header value and a canonicalised name for each of three headers set on
// every answer, and their numbers formatted).
func TestPerIPAdmitsWithoutAllocating(t *testing.T) {
	l := ratelimit.PerIP(1<<30, time.Minute)
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		if l.Limit(w, r, "198.51.100.61") {
			t.Fatal("refused")
		}
	}))
	assert.Empty(t, w.Header())
}

func TestSetupMistakesPanic(t *testing.T) {
	t.Parallel()
	key := func(*http.Request, string) string { return "" }
	assert.PanicsWithValue(t, "ratelimit: PerIP: requests is 0: want at least 1", func() { ratelimit.PerIP(0, time.Minute) })
	assert.PanicsWithValue(t, "ratelimit: By: window is 0s: want a positive duration", func() { ratelimit.By(1, 0, key) })
	assert.PanicsWithValue(t, "ratelimit: By: the key func is nil", func() { ratelimit.By(1, time.Minute, nil) })
}

func TestIPKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"198.51.100.7":         "198.51.100.7",
		"2001:db8::1":          "2001:db8::",
		"2001:db8:0:1:2:3:4:5": "2001:db8:0:1::",
		"::ffff:198.51.100.7":  "198.51.100.7",
		"not:an:ip":            "not:an:ip",
		"":                     "",
		"unix":                 "unix",
	} {
		assert.Equal(t, want, ratelimit.IPKey(in), in)
	}
}

// TestAllStopsAtTheFirstRefusal: a request the per-IP limit refuses spends
// nothing of the per-token budget behind it, so a flood from one address
// cannot drain a token that is also used from another; and the limiter
// that refused writes the headers, alone.
func TestAllStopsAtTheFirstRefusal(t *testing.T) {
	t.Parallel()
	token := func(r *http.Request, _ string) string { return r.Header.Get("Authorization") }
	var asked atomic.Int64
	counting := mcpmw.RateLimiterFunc(func(http.ResponseWriter, *http.Request, string) bool { asked.Add(1); return false })
	l := ratelimit.All(ratelimit.PerIP(1, time.Hour), ratelimit.By(2, time.Hour, token), counting)
	limited := func(ip string) bool {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Authorization", "Bearer t")
		w := httptest.NewRecorder()
		refused := l.Limit(w, r, ip)
		if refused {
			assert.Equal(t, []string{"1"}, w.Header().Values("X-RateLimit-Limit"), "the per-IP limit refused, and only it wrote")
		}
		return refused
	}
	require.False(t, limited("192.0.2.70"), "the token's first request")
	for range 5 {
		require.True(t, limited("192.0.2.70"), "the address's budget is spent")
	}
	assert.Equal(t, int64(1), asked.Load(), "no limiter after the one that refused is asked")
	assert.False(t, limited("192.0.2.71"), "the token's second request: the refused ones spent nothing of it")
	assert.Equal(t, int64(2), asked.Load())
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer t")
	w := httptest.NewRecorder()
	assert.True(t, l.Limit(w, r, "192.0.2.72"), "a third address, and the token's budget is spent")
	assert.Equal(t, []string{"2"}, w.Header().Values("X-RateLimit-Limit"), "the per-token limit refused")
}
