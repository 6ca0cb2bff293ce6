// Package ratelimit provides mcpmw.RateLimiter implementations that count
// in this process's memory. It lives apart from package mcpmw so that the
// core package holds no limiter state nor policy of its own; for a limit
// shared by several instances, see the redis module (package mcpredis),
// whose limiters behave the same way with their counts in Redis.
//
// Every limiter here is GCRA (the generic cell rate algorithm): a budget of
// requests per window that refills evenly, one request every
// window/requests, rather than all at once when a window ends. A client
// may spend the whole budget at once, and then one more request each
// interval; it never gets more than requests in any window, and never has
// to wait a whole window for the next one.
package ratelimit

import (
	"fmt"
	"hash/maphash"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpmw/mcpmw"
)

// PerIP returns a RateLimiter that allows each client IP (as resolved by
// mcpmw.Options.ClientIP) requests per window, in this process's memory.
// IPv6 addresses are grouped by /64 (see IPKey), so one host cannot dodge
// the limit by rotating addresses within its prefix. A refused request
// gets Retry-After (the whole seconds until its budget has room, at least
// 1), X-RateLimit-Limit and X-RateLimit-Remaining: 0; an admitted one
// gets no header, since a client needs them only when refused.
//
// Requests whose client IP is empty (ClientIP could not tell: chi's
// GetClientIP returns "" when every hop is trusted, an X-Forwarded-For entry
// does not parse, or its middleware is not installed) all share one bucket,
// the way By treats an empty key: failing closed, so that a request cannot
// escape the limit by hiding its address.
//
// Many users behind one egress IP (an office NAT, a corporate proxy) share
// one bucket. Where callers authenticate with a token, limit per token as
// well with By. For a limit shared by several instances, use the redis
// module's PerIP. PerIP panics when requests is below 1 or window is not
// positive.
func PerIP(requests int, window time.Duration) mcpmw.RateLimiter {
	return newLimiter("PerIP", requests, window, func(_ *http.Request, clientIP string) string { return IPKey(clientIP) })
}

// By returns a RateLimiter that allows requests per window for each key that
// key returns. An empty key is one more bucket, shared by every request
// whose key is empty: a key function that cannot decide must not exempt the
// request from the limit (fail closed). To leave some requests unlimited,
// say so outside the key, in a mcpmw.RateLimiterFunc that returns false for
// them before it calls this limiter. Because the limiter runs before
// authentication, a key derived from a header (such as a hash of the bearer
// token) is unverified: combine it with PerIP so that forged keys still
// share their IP's bucket. By panics as PerIP does, or when key is nil.
func By(requests int, window time.Duration, key func(r *http.Request, clientIP string) string) mcpmw.RateLimiter {
	if key == nil {
		panic("ratelimit: By: the key func is nil")
	}
	return newLimiter("By", requests, window, key)
}

// All combines limiters: a request is refused when any of them refuses it.
// Every limiter counts the request, in order, until one refuses.
func All(limiters ...mcpmw.RateLimiter) mcpmw.RateLimiter {
	return mcpmw.RateLimiterFunc(func(w http.ResponseWriter, r *http.Request, clientIP string) bool {
		for _, l := range limiters {
			if l.Limit(w, r, clientIP) {
				return true
			}
		}
		return false
	})
}

// IPKey returns the bucket key PerIP uses for a client IP: an IPv6
// address is its /64 prefix, an IPv4-mapped IPv6 address its IPv4
// address, an IPv4 address itself, and anything else (an empty string, a
// name) itself. Only IPv6 costs a parse.
func IPKey(ip string) string {
	for i := 0; i < len(ip); i++ {
		switch ip[i] {
		case '.':
			return ip
		case ':':
			parsed := net.ParseIP(ip)
			if parsed == nil {
				return ip
			}
			if v4 := parsed.To4(); v4 != nil {
				return v4.String()
			}
			return parsed.Mask(net.CIDRMask(64, 128)).String()
		}
	}
	return ip
}

// emptyKey is the bucket of requests whose key is empty. No IP address or
// header value can equal it: header values never hold a NUL byte.
const emptyKey = "\x00mcpmw/ratelimit: empty key"

// shardCount spreads the buckets over this many locks, so that concurrent
// requests of different clients seldom wait for each other.
const shardCount = 32

// minSweep is the fewest buckets a shard holds before it looks for full
// ones to forget.
const minSweep = 64

// limiter is GCRA over sharded maps: each bucket is the theoretical
// arrival time (TAT) of its next request, in nanoseconds since epoch on
// the monotonic clock. A bucket whose TAT has passed is full again, the
// same as no bucket, so it can be forgotten.
type limiter struct {
	key      func(r *http.Request, clientIP string) string
	interval int64 // ns between two requests once the burst is spent
	burst    int64 // ns: requests × interval
	limit    []string
	epoch    time.Time
	seed     maphash.Seed
	shards   [shardCount]shard
}

type shard struct {
	mu      sync.Mutex
	tats    map[string]int64
	sweepAt int      // sweep for full buckets when a new one would make this many
	_       [40]byte // one shard per cache line: no false sharing between locks
}

func newLimiter(ctor string, requests int, window time.Duration, key func(*http.Request, string) string) *limiter {
	if requests < 1 {
		panic(fmt.Sprintf("ratelimit: %s: requests is %d: want at least 1", ctor, requests))
	}
	if window <= 0 {
		panic(fmt.Sprintf("ratelimit: %s: window is %v: want a positive duration", ctor, window))
	}
	interval := max(int64(window)/int64(requests), 1)
	l := &limiter{key: key, interval: interval, burst: interval * int64(requests),
		limit: []string{strconv.Itoa(requests)}, epoch: time.Now(), seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i] = shard{tats: map[string]int64{}, sweepAt: minSweep}
	}
	return l
}

// Limit implements mcpmw.RateLimiter.
func (l *limiter) Limit(w http.ResponseWriter, r *http.Request, clientIP string) bool {
	k := l.key(r, clientIP)
	if k == "" {
		k = emptyKey
	}
	s := &l.shards[maphash.String(l.seed, k)%shardCount]
	wait := s.take(k, int64(time.Since(l.epoch)), l.interval, l.burst)
	if wait == 0 {
		return false
	}
	h := w.Header()
	h["Retry-After"] = []string{retryAfter(wait)}
	h["X-Ratelimit-Limit"] = l.limit
	h["X-Ratelimit-Remaining"] = zero
	return true
}

var zero = []string{"0"}

// retryAfter is Retry-After for a wait of ns nanoseconds: whole seconds,
// rounded up, so that a client retrying then is admitted (never 0: the
// wait is positive).
func retryAfter(ns int64) string {
	return strconv.FormatInt((ns+int64(time.Second)-1)/int64(time.Second), 10)
}

// take counts one request of bucket k at now and returns 0, or, when the
// bucket has no room, how long until it has (and counts nothing).
func (s *shard) take(k string, now, interval, burst int64) (wait int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tat, found := s.tats[k]
	tat = max(tat, now)
	if allowAt := tat + interval - burst; allowAt > now {
		return allowAt - now
	}
	if !found && len(s.tats) >= s.sweepAt {
		s.sweep(now)
	}
	s.tats[k] = tat + interval
	return 0
}

// sweep forgets the buckets that are full again, and sets the size at
// which to look again: twice what is left, so that sweeping costs O(1)
// per request however many clients come and go.
func (s *shard) sweep(now int64) {
	for k, tat := range s.tats {
		if tat <= now {
			delete(s.tats, k)
		}
	}
	s.sweepAt = max(2*len(s.tats), minSweep)
}
