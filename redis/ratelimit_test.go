package mcpredis_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpredis "github.com/mcpmw/mcpmw/redis"
)

func TestPerIPBurstThenRefusedWithHeaders(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	e := newEndpoint(mcpredis.PerIP(cfg, 3, time.Minute))
	assert.Equal(t, []int{200, 200, 200}, e.codes("198.51.100.7:1", 3))
	w := e.discover("198.51.100.7:1")
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Contains(t, w.Body.String(), `"code":-32600`)
	assert.Equal(t, "20", w.Header().Get("Retry-After"), "3 a minute refill one every 20 s, less the milliseconds since: rounded up")
	assert.Equal(t, "3", w.Header().Get("X-RateLimit-Limit"))
	assert.Equal(t, "0", w.Header().Get("X-RateLimit-Remaining"))
	assert.EqualValues(t, 3, e.audits.Load(), "refused requests are never audited")

	admitted := e.discover("198.51.100.8:1")
	assert.Equal(t, 200, admitted.Code)
	assert.Empty(t, admitted.Header().Get("Retry-After"), "an admitted answer carries no rate-limit header")
	assert.Empty(t, admitted.Header().Get("X-RateLimit-Remaining"))
}

func TestPerIPRetryAfterRoundsUp(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	e := newEndpoint(mcpredis.PerIP(cfg, 2, 3*time.Minute)) // one every 90 s
	require.Equal(t, []int{200, 200}, e.codes("203.0.113.1:1", 2))
	w := e.discover("203.0.113.1:1")
	require.Equal(t, 429, w.Code)
	assert.Equal(t, "90", w.Header().Get("Retry-After"), "89.99… s left: rounded up, never down to a time that is still refused")
}

func TestPerIPRefills(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	e := newEndpoint(mcpredis.PerIP(cfg, 2, 400*time.Millisecond)) // one every 200 ms
	require.Equal(t, []int{200, 200, 429}, e.codes("192.0.2.1:1", 3))
	time.Sleep(250 * time.Millisecond)
	assert.Equal(t, []int{200, 429}, e.codes("192.0.2.1:1", 2), "one request's worth refilled after an interval, not the whole burst")
	time.Sleep(450 * time.Millisecond)
	assert.Equal(t, []int{200, 200, 429}, e.codes("192.0.2.1:1", 3), "the whole burst after a window")
}

func TestPerIPKeysApart(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	e := newEndpoint(mcpredis.PerIP(cfg, 1, time.Minute))
	assert.Equal(t, []int{200, 429}, e.codes("198.51.100.1:1", 2))
	assert.Equal(t, []int{200}, e.codes("198.51.100.2:1", 1), "another IP has its own budget")
	assert.Equal(t, []int{200, 429}, e.codes("[2001:db8::1]:1", 2))
	assert.Equal(t, []int{429}, e.codes("[2001:db8::2]:1", 1), "IPv6 addresses share their /64")
	assert.Equal(t, []int{200}, e.codes("[2001:db8:0:1::1]:1", 1), "another /64 is another budget")
	assert.Equal(t, []int{429}, e.codes("[::ffff:198.51.100.1]:1", 1), "an IPv4-mapped address is its IPv4 address")
	assert.Equal(t, []int{200, 429, 429}, e.codes("", 3), "requests without a client IP share one budget")

	other := cfg
	other.Prefix = "other:"
	assert.Equal(t, []int{200}, newEndpoint(mcpredis.PerIP(other, 1, time.Minute)).codes("198.51.100.1:1", 1), "another prefix is another budget")
	assert.Equal(t, []int{200}, newEndpoint(mcpredis.PerIP(cfg, 2, time.Minute)).codes("198.51.100.1:1", 1), "another limit is another budget")
	assert.Equal(t, []int{429}, newEndpoint(mcpredis.PerIP(cfg, 1, time.Minute)).codes("198.51.100.1:1", 1), "the same limit and prefix is the same budget, from any limiter")
}

func TestByKeysAndEmptyKey(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	byToken := mcpredis.By(cfg, 1, time.Minute, func(r *http.Request, _ string) string { return r.Header.Get("Authorization") })
	e := newEndpoint(byToken)
	assert.Equal(t, []int{200, 429}, e.codes("192.0.2.1:1", 2), "no token: one shared budget")
	assert.Equal(t, []int{429}, e.codes("192.0.2.2:1", 1), "whatever the IP")
}

// TestByLongKeysBoundedInRedis: a key longer than 64 bytes (here a
// megabyte, as a client could put in a header) goes into Redis as its
// SHA-256: the key Redis keeps is short, a key of exactly 64 bytes is
// kept as it is, and each key still has a budget of its own.
func TestByLongKeysBoundedInRedis(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	c := cfg.Client.(*redis.Client)
	e := newEndpoint(mcpredis.By(cfg, 1, time.Minute, func(r *http.Request, _ string) string { return r.RemoteAddr[:1] + strings.Repeat("k", 1<<20) }))
	assert.Equal(t, []int{200, 429}, e.codes("1.0.0.1:1", 2), "one budget per key")
	assert.Equal(t, []int{200, 429}, e.codes("2.0.0.1:1", 2), "another key, another budget")
	exact := newEndpoint(mcpredis.By(cfg, 1, time.Minute, func(*http.Request, string) string { return strings.Repeat("x", 64) }))
	assert.Equal(t, []int{200, 429}, exact.codes("1.0.0.1:1", 2))
	ks, err := c.Keys(t.Context(), "mcpmw:rate:*").Result()
	require.NoError(t, err)
	require.Len(t, ks, 3)
	for _, k := range ks {
		assert.Less(t, len(k), 100, "a key of %d bytes", len(k))
	}
	assert.Contains(t, ks, "mcpmw:rate:1:60000ms:"+strings.Repeat("x", 64), "64 bytes: kept as it is")
}

func TestSetupMistakesPanic(t *testing.T) {
	t.Parallel()
	deadlineless := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = deadlineless.Close() })
	ok := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = ok.Close() })
	key := func(*http.Request, string) string { return "" }
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	t.Cleanup(func() { _, _ = cluster.Close(), ring.Close() })
	for _, c := range []struct {
		name, want string
		f          func()
	}{
		{"no client", "PerIP: Config.Client is nil", func() { mcpredis.PerIP(mcpredis.Config{}, 1, time.Minute) }},
		{"client", "Config.Client was made without ContextTimeoutEnabled", func() { mcpredis.PerIP(mcpredis.Config{Client: deadlineless}, 1, time.Minute) }},
		{"cluster", "Config.Client was made without ContextTimeoutEnabled", func() { mcpredis.PerIP(mcpredis.Config{Client: cluster}, 1, time.Minute) }},
		{"ring", "Config.Client was made without ContextTimeoutEnabled", func() { mcpredis.PerIP(mcpredis.Config{Client: ring}, 1, time.Minute) }},
		{"failure", "Config.Failure is FailurePolicy(7)", func() { mcpredis.PerIP(mcpredis.Config{Client: ok, Failure: 7}, 1, time.Minute) }},
		{"timeout", "Config.Timeout is -1s", func() { mcpredis.PerIP(mcpredis.Config{Client: ok, Timeout: -time.Second}, 1, time.Minute) }},
		{"relay bound", "Config.MaxRelayBytes is -1: want a positive size, or 0 for the default", func() { mcpredis.PerIP(mcpredis.Config{Client: ok, MaxRelayBytes: -1}, 1, time.Minute) }},
		{"requests", "PerIP: requests is 0", func() { mcpredis.PerIP(mcpredis.Config{Client: ok}, 0, time.Minute) }},
		{"window", "By: window is 999µs", func() { mcpredis.By(mcpredis.Config{Client: ok}, 1, 999*time.Microsecond, key) }},
		{"key", "By: the key func is nil", func() { mcpredis.By(mcpredis.Config{Client: ok}, 1, time.Minute, nil) }},
	} {
		name, f := c.name, c.f
		func() {
			defer func() {
				msg, _ := recover().(string)
				assert.True(t, strings.HasPrefix(msg, "mcpredis: "), name)
				assert.Contains(t, msg, c.want, name)
			}()
			f()
			t.Errorf("%s: no panic", name)
		}()
	}
}
