package mcpredis_test

import (
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw/internal/redistest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// BenchmarkRateLimitParallel is the limiter under 64 concurrent callers
// (32 per core on the 2-core CI machine): each of its own IP ("ips=64"),
// or all of one IP ("ips=1", as the example app meets wrk's 64 clients,
// and as a busy client or tenant is met), batched (each flush as soon as
// the last batch is answered) and each check alone, as before batching.
// The checks of one key that come while one of its is on the wire go
// together as one script call (the coalescer), batched or not. Compare
// ns/op within one run. (Waiting 20 or 50 µs for company before a flush
// measured no better than flushing at once, and was dropped.)
func BenchmarkRateLimitParallel(b *testing.B) {
	for _, mode := range limiterModes {
		for _, ips := range []int64{64, 1} {
			b.Run(mode.name+"/ips="+strconv.FormatInt(ips, 10), func(b *testing.B) {
				l := benchLimiter(b, mode.set)
				var callers atomic.Int64
				b.SetParallelism(32)
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					ip := "192.0.2." + strconv.FormatInt(callers.Add(1)%ips, 10)
					r := httptest.NewRequest("POST", "/mcp", nil)
					w := httptest.NewRecorder()
					for pb.Next() {
						if l.Limit(w, r, ip) {
							b.Error("refused")
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkRateLimitSerial is one caller at a time: what batching costs
// when there is nobody to batch with (a hand-off to the flushing
// goroutine and back), against each check alone.
func BenchmarkRateLimitSerial(b *testing.B) {
	for _, mode := range limiterModes {
		b.Run(mode.name, func(b *testing.B) {
			l := benchLimiter(b, mode.set)
			r := httptest.NewRequest("POST", "/mcp", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				if l.Limit(w, r, "192.0.2.1") {
					b.Fatal("refused")
				}
			}
		})
	}
}

// limiterModes are the two ways a benchmark runs the limiter: batched (the
// default) and each check alone, as before batching.
var limiterModes = []struct {
	name string
	set  func(*mcpredis.RateLimiter)
}{
	{"batched", func(*mcpredis.RateLimiter) {}},
	{"alone", (*mcpredis.RateLimiter).Unbatched},
}

// benchLimiter is a limit never reached, on a redis-server of its own,
// set as mode says.
func benchLimiter(b *testing.B, mode func(*mcpredis.RateLimiter)) *mcpredis.RateLimiter {
	b.Helper()
	srv := redistest.Start(b)
	l := mcpredis.PerIP(mcpredis.Config{Client: newClient(b, srv.Addr), Logger: discard, Timeout: time.Second}, 1<<30, time.Minute)
	mode(l)
	return l
}
