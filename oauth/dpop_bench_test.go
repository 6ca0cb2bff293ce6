package oauth_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw/oauth"
)

// fresh is a ReplayCache that finds every proof new, so that a benchmark
// can send one proof again and again and measure the checks alone.
type fresh struct{}

func (fresh) Once(context.Context, string, time.Duration) (bool, error) { return true, nil }

// BenchmarkDPoPCheck is the cost of one proof's verification, every
// check but the replay cache's lookup (BenchmarkMemoryReplayCacheOnce;
// mcpredis's is one round trip), by the client's key type. Each DPoP
// request pays it: every proof is new, so none is cached.
func BenchmarkDPoPCheck(b *testing.B) {
	for _, alg := range []string{"ES256", "EdDSA", "RS256"} {
		b.Run(alg, func(b *testing.B) {
			c := newClient(b, alg)
			v := verifier(&oauth.DPoPOptions{Replay: fresh{}})
			r := request(mcpURL, c.sign(b, c.header(), claims(mcpURL, token, clock), nil))
			b.ReportAllocs()
			for b.Loop() {
				if err := v.Check(r, token, c.jkt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMemoryReplayCacheOnce is the in-memory replay cache's cost per
// proof: a new key each time, dropped as the next comes.
func BenchmarkMemoryReplayCacheOnce(b *testing.B) {
	c := oauth.NewMemoryReplayCache(oauth.DefaultReplayEntries)
	keys := make([]string, 1<<12)
	for i := range keys {
		keys[i] = strconv.Itoa(i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := c.Once(ctx, keys[i%len(keys)], time.Nanosecond); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
