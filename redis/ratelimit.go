package mcpredis

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/ratelimit"
	"github.com/redis/go-redis/v9"
)

// gcraSource is the rate limit's one script; see gcra.lua.
//
//go:embed gcra.lua
var gcraSource string

var gcra = newScript(gcraSource)

// A RateLimiter is an mcpmw.RateLimiter whose budgets live in Redis, so
// that every instance sharing the Redis and the Config.Prefix counts
// against one budget per key. Each check is one round trip: one script
// that reads Redis's clock (TIME), so the instances' clocks never matter,
// and decides and counts atomically (GCRA: a budget of requests that
// refills evenly over the window, one request every window/requests). It
// is sent once, never retried, within Config.Timeout; when Redis does not
// answer in time, Config.Failure decides. Checks of one key that come
// while one of its is on the wire go together as the next call, one
// script asking for as many requests as they are: exact still, and one
// round trip per key per turn however busy the key.
//
// A refused request gets Retry-After (whole seconds until the budget has
// room again, at least 1), X-RateLimit-Limit and X-RateLimit-Remaining: 0;
// an admitted one gets no header (that would be work on every answer, for
// a figure a client needs only when refused). While Redis cannot answer,
// FailOpen admits with no header; FailClosed refuses with Retry-After: 1.
//
// With Lease(k), an instance takes up to k requests of a key's budget per
// script call and admits from them locally for up to a second: fewer round
// trips, at the price of up to instances × k requests over the limit per
// window (see Lease).
//
// A RateLimiter is safe for concurrent use.
type RateLimiter struct {
	s        settings
	key      func(r *http.Request, clientIP string) string
	bucket   string // the prefix of this limit's keys: Prefix "rate:" requests ":" window ":"
	interval int64  // µs between two requests, once the burst is spent
	window   int64  // µs: the burst tolerance
	args     [2]any // interval and window as the script's first two arguments, boxed once rather than per check
	limit    []string
	health   health
	lease    *leases    // nil: no lease
	asks     *coalescer // without a lease: the checks of a key that come together, sent together
}

// PerIP returns a RateLimiter allowing each client IP (as resolved by
// mcpmw.Options.ClientIP) requests per window, across every instance that
// shares cfg's Redis and Prefix. Client IPs are keyed as ratelimit.PerIP
// keys them (ratelimit.IPKey: IPv6 addresses grouped by /64), and requests
// whose client IP is empty share one budget. PerIP panics on a setup mistake: no client, a client that does
// not honour deadlines (see Config.Client), requests below 1 or a window
// under a millisecond.
func PerIP(cfg Config, requests int, window time.Duration, opts ...LimitOption) *RateLimiter {
	return newRateLimiter("PerIP", cfg, requests, window, func(_ *http.Request, clientIP string) string {
		return ratelimit.IPKey(clientIP)
	}, opts)
}

// By returns a RateLimiter allowing requests per window for each key that
// key returns, across every instance that shares cfg's Redis and Prefix.
// As with ratelimit.By, an empty key is one more budget, shared by every
// request whose key is empty, and a key read from a header is unverified
// (the limiter runs before authentication). Limiters that share a Prefix,
// a limit and a key share a budget: that is how instances share one, but
// it also means two limiters of the same limit keyed differently (by IP
// and by token, say) should make their keys distinct, e.g. "token:"+hash.
// A key longer than 64 bytes goes into Redis as its SHA-256 (so a client
// that picks the key cannot make Redis keep one of a megabyte). By panics
// on a setup mistake, as PerIP does, or when key is nil.
func By(cfg Config, requests int, window time.Duration, key func(r *http.Request, clientIP string) string, opts ...LimitOption) *RateLimiter {
	if key == nil {
		panic("mcpredis: By: the key func is nil")
	}
	return newRateLimiter("By", cfg, requests, window, key, opts)
}

func newRateLimiter(ctor string, cfg Config, requests int, window time.Duration, key func(*http.Request, string) string, opts []LimitOption) *RateLimiter {
	s := settle(ctor, cfg)
	if requests < 1 {
		panic(fmt.Sprintf("mcpredis: %s: requests is %d: want at least 1", ctor, requests))
	}
	if window < time.Millisecond {
		panic(fmt.Sprintf("mcpredis: %s: window is %v: want at least a millisecond", ctor, window))
	}
	win := window.Microseconds()
	l := &RateLimiter{
		s:        s,
		key:      key,
		bucket:   s.prefix + "rate:" + strconv.Itoa(requests) + ":" + strconv.FormatInt(window.Milliseconds(), 10) + "ms:",
		interval: max(win/int64(requests), 1),
		window:   win,
		limit:    []string{strconv.Itoa(requests)},
	}
	l.window = l.interval * int64(requests) // exactly requests fit in a burst
	l.args = [2]any{l.interval, l.window}
	l.health = health{logger: s.logger, what: "rate limit", down1: "mcpredis: Redis does not answer: the rate limit fails " + s.failure.String() + " until it does"}
	var o limitOptions
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case o.lease < 0 || o.lease > requests:
		panic(fmt.Sprintf("mcpredis: %s: Lease(%d): want from 0 (no lease) to requests (%d)", ctor, o.lease, requests))
	case o.lease > 1:
		l.lease = newLeases(l.check, o.lease, min(maxLeaseTime, window))
	default:
		l.asks = newCoalescer(l.check, l.interval, l.window)
	}
	return l
}

// emptyKey is the budget of requests whose key is empty; see
// ratelimit.By.
const emptyKey = "\x00empty"

// maxKeyLen bounds a key as it goes into Redis: a longer one (read from a
// header, say, so a client's choice) goes in as its SHA-256, so that no
// client makes Redis keep, or hash, a key of a size of its choosing. A
// hashed key is longer than maxKeyLen, so no key kept as it is can take
// its budget.
const maxKeyLen = 64

// Limit implements mcpmw.RateLimiter: it asks Redis, once, whether the
// request's key has room, and sets the refusal's headers.
func (l *RateLimiter) Limit(w http.ResponseWriter, r *http.Request, clientIP string) bool {
	k := l.key(r, clientIP)
	switch {
	case k == "":
		k = emptyKey
	case len(k) > maxKeyLen:
		sum := sha256.Sum256([]byte(k))
		k = "sha256:" + hex.EncodeToString(sum[:])
	}
	var v []int64
	if l.lease != nil {
		v = l.lease.held(k) // decided here, with no round trip (and no deadline to set)
	}
	if v == nil {
		var err error
		if v, err = l.ask(r, k); err != nil {
			l.health.failed(err)
			if l.s.failure == FailOpen {
				return false
			}
			w.Header()["Retry-After"] = retryOneSecond
			return true
		}
		l.health.answered()
	}
	if v[0] > 0 {
		return false
	}
	h := w.Header()
	h["Retry-After"] = []string{strconv.FormatInt(max((v[2]+999_999)/1_000_000, 1), 10)}
	h["X-Ratelimit-Limit"] = l.limit
	h["X-Ratelimit-Remaining"] = zero
	return true
}

var (
	retryOneSecond = []string{"1"}
	zero           = []string{"0"}
)

// ask asks Redis about k, within Config.Timeout: with a lease, for one.
func (l *RateLimiter) ask(r *http.Request, k string) ([]int64, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), l.s.timeout)
	defer cancel()
	if l.lease != nil {
		return l.lease.take(ctx, k)
	}
	return l.asks.take(ctx, k)
}

// A checkFunc runs the limiter's script on key's bucket once
// (RateLimiter.check): what a lease and the coalescer call.
type checkFunc func(ctx context.Context, key string, want, back int) ([]int64, error)

// check runs the script on k's bucket, once within ctx: it takes up to
// want requests of the budget, having given back first the unspent ones
// of ended leases.
func (l *RateLimiter) check(ctx context.Context, k string, want, back int) ([]int64, error) {
	v, err := runAs(ctx, gcra, l.s.batch, redis.NewIntSliceCmd, []string{l.bucket + k}, l.args[0], l.args[1], want, back).Result()
	if err == nil && len(v) != 4 {
		err = errors.New("mcpredis: the rate-limit script answered " + strconv.Itoa(len(v)) + " values, not 4")
	}
	return v, err
}

var _ mcpmw.RateLimiter = (*RateLimiter)(nil)
