package ratelimit_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw/ratelimit"
)

// nopWriter is a ResponseWriter whose header map is reused, so that the
// benchmark counts the limiter's allocations only.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}

// BenchmarkPerIP is the limiter's cost per request: admitted (one client,
// a limit never reached), refused (the refusal's headers), and admitted
// under parallel load from 1000 client IPs.
func BenchmarkPerIP(b *testing.B) {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	b.Run("admitted", func(b *testing.B) {
		l := ratelimit.PerIP(1<<30, time.Minute)
		w := &nopWriter{h: http.Header{}}
		b.ReportAllocs()
		for b.Loop() {
			l.Limit(w, r, "198.51.100.7")
		}
	})
	b.Run("refused", func(b *testing.B) {
		l := ratelimit.PerIP(1, time.Hour)
		w := &nopWriter{h: http.Header{}}
		l.Limit(w, r, "198.51.100.7")
		b.ReportAllocs()
		for b.Loop() {
			l.Limit(w, r, "198.51.100.7")
		}
	})
	b.Run("parallel-1000-ips", func(b *testing.B) {
		l := ratelimit.PerIP(1<<30, time.Minute)
		ips := make([]string, 1000)
		for i := range ips {
			ips[i] = "10.0." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			w := &nopWriter{h: http.Header{}}
			i := 0
			for pb.Next() {
				l.Limit(w, r, ips[i%len(ips)])
				i++
			}
		})
	})
}
