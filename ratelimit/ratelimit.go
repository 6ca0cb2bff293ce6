// Package ratelimit provides mcpmw.RateLimiter implementations backed by
// github.com/go-chi/httprate. It lives apart from package mcpmw so that the
// core package imports nothing beyond the standard library.
package ratelimit

import (
	"net/http"
	"time"

	"github.com/go-chi/httprate"
	"github.com/mcpmw/mcpmw"
)

// PerIP returns a RateLimiter that allows each client IP (as resolved by
// mcpmw.Options.ClientIP) requests per window, counted in a sliding window
// in this process's memory. IPv6 addresses are grouped by /64, so one host
// cannot dodge the limit by rotating addresses within its prefix. Refused
// requests get Retry-After and X-RateLimit-* headers.
//
// Requests whose client IP is empty (ClientIP could not tell: chi's
// GetClientIP returns "" when every hop is trusted, an X-Forwarded-For entry
// does not parse, or its middleware is not installed) all share one bucket,
// the way By treats an empty key: failing closed, so that a request cannot
// escape the limit by hiding its address.
//
// Many users behind one egress IP (an office NAT, a corporate proxy) share
// one bucket. Where callers authenticate with a token, limit per token as
// well with By. For a limit shared by several instances, pass
// httprate.WithLimitCounter with a shared counter (e.g. httprate-redis).
func PerIP(requests int, window time.Duration, opts ...httprate.Option) mcpmw.RateLimiter {
	return By(requests, window, func(_ *http.Request, clientIP string) string {
		return httprate.CanonicalizeIP(clientIP)
	}, opts...)
}

// By returns a RateLimiter that allows requests per window for each key that
// key returns. An empty key is one more bucket, shared by every request
// whose key is empty: a key function that cannot decide must not exempt the
// request from the limit (fail closed). To leave some requests unlimited,
// say so outside the key, in a mcpmw.RateLimiterFunc that returns false for
// them before it calls this limiter. Because the limiter runs before
// authentication, a key derived from a header (such as a hash of the bearer
// token) is unverified: combine it with PerIP so that forged keys still
// share their IP's bucket.
func By(requests int, window time.Duration, key func(r *http.Request, clientIP string) string, opts ...httprate.Option) mcpmw.RateLimiter {
	l := httprate.NewRateLimiter(requests, window, opts...)
	return mcpmw.RateLimiterFunc(func(w http.ResponseWriter, r *http.Request, clientIP string) bool {
		k := key(r, clientIP)
		if k == "" {
			k = emptyKey
		}
		return l.OnLimit(w, r, k)
	})
}

// emptyKey is the bucket of requests whose key is empty. No IP address or
// header value can equal it: header values never hold a NUL byte.
const emptyKey = "\x00mcpmw/ratelimit: empty key"

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
