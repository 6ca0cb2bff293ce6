package mcpredis_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// BenchmarkReplayCacheOnce is what the shared replay cache adds to a DPoP
// request: one SET NX PX round trip to a local redis-server, alone
// (serial) and among concurrent callers, whose commands share round
// trips (parallel).
func BenchmarkReplayCacheOnce(b *testing.B) {
	cfg, _, _ := config(b, mcpredis.FailOpen)
	c := mcpredis.NewReplayCache(cfg)
	var n atomic.Int64
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Once(b.Context(), strconv.FormatInt(n.Add(1), 36), time.Minute); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.Once(b.Context(), strconv.FormatInt(n.Add(1), 36), time.Minute); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
