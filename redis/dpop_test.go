package mcpredis_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// replayCache is oauth.ReplayCache, which a ReplayCache implements
// without this module importing the oauth module.
type replayCache interface {
	Once(ctx context.Context, key string, ttl time.Duration) (first bool, err error)
}

var _ replayCache = (*mcpredis.ReplayCache)(nil)

// TestReplayCacheOnce: a key is first once, under Prefix "dpop:", kept for
// its ttl (at least a millisecond); another key is first too.
func TestReplayCacheOnce(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailOpen)
	cfg.Prefix = "svc:"
	c := mcpredis.NewReplayCache(cfg)
	for _, tt := range []struct {
		key   string
		first bool
	}{{"a", true}, {"a", false}, {"b", true}, {"a", false}} {
		first, err := c.Once(t.Context(), tt.key, time.Minute)
		require.NoError(t, err)
		assert.Equal(t, tt.first, first, "key %q", tt.key)
	}
	ttl, err := cfg.Client.PTTL(t.Context(), "svc:dpop:a").Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 50*time.Second, "about the minute asked for")
	assert.LessOrEqual(t, ttl, time.Minute)

	first, err := c.Once(t.Context(), "short", time.Microsecond)
	require.NoError(t, err)
	assert.True(t, first, "a ttl under a millisecond is one")
	for _, ttl := range []time.Duration{0, -time.Second} {
		_, err := c.Once(t.Context(), "c", ttl)
		assert.ErrorContains(t, err, `mcpredis: DPoP replay cache: the ttl of "c" is`)
	}
	n, err := cfg.Client.Exists(t.Context(), "svc:dpop:c").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "nothing recorded for a bad ttl")
}

// TestReplayCacheAcrossInstances: two instances, each with its own client
// and cache, share one Redis: a proof one accepted the other refuses, and
// of many calls at once for the same keys, on both, exactly one per key
// is first.
func TestReplayCacheAcrossInstances(t *testing.T) {
	t.Parallel()
	cfg, srv, _ := config(t, mcpredis.FailOpen)
	one := mcpredis.NewReplayCache(cfg)
	other := mcpredis.NewReplayCache(mcpredis.Config{Client: newClient(t, srv.Addr), Logger: discard, Timeout: cfg.Timeout})

	first, err := one.Once(t.Context(), "proof", time.Minute)
	require.NoError(t, err)
	require.True(t, first)
	first, err = other.Once(t.Context(), "proof", time.Minute)
	require.NoError(t, err)
	assert.False(t, first, "a replay against another instance is refused")

	const keys = 50
	var firsts, errs atomic.Int64
	var wg sync.WaitGroup
	for _, c := range []*mcpredis.ReplayCache{one, other, one, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				first, err := c.Once(t.Context(), fmt.Sprint("k", k), time.Minute)
				if err != nil {
					errs.Add(1)
				}
				if first {
					firsts.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, errs.Load())
	assert.Equal(t, int64(keys), firsts.Load(), "each key first once, whichever instance")
}

// TestReplayCacheRedisStopped: while Redis is down (stopped, or paused so
// that it accepts and never answers), Once fails closed within
// Config.Timeout, with an error that names Redis and says Unavailable;
// one line is logged when Redis stops answering and one when it answers
// again; and the cache works again without a restart of its own.
func TestReplayCacheRedisStopped(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"stopped", "paused"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			cfg, srv, logs := config(t, mcpredis.FailOpen)
			warm := mcpredis.NewReplayCache(cfg) // a deadline no busy machine misses
			_, err := warm.Once(t.Context(), "warm", time.Minute)
			require.NoError(t, err)
			cfg.Timeout = 50 * time.Millisecond
			c := mcpredis.NewReplayCache(cfg)

			if how == "stopped" {
				srv.Stop()
			} else {
				srv.Pause()
			}
			for i := range 5 {
				t0 := time.Now()
				first, err := c.Once(t.Context(), fmt.Sprint("down", i), time.Minute)
				took := time.Since(t0)
				assert.False(t, first)
				require.Error(t, err, "fails closed")
				assert.True(t, unavailable(err), "an outage says Unavailable: %v", err)
				assert.ErrorContains(t, err, "mcpredis: DPoP replay cache: Redis did not answer")
				assert.Less(t, took, cfg.Timeout+slack, "no call waits past the deadline")
			}
			if how == "stopped" {
				srv.Restart()
			} else {
				srv.Resume()
			}
			answers := "INFO mcpredis: Redis answers again"
			deadline := time.Now().Add(30 * time.Second)
			for !slices.Contains(logs.all(), answers) {
				require.True(t, time.Now().Before(deadline), "Redis did not answer again within 30 s")
				_, _ = c.Once(t.Context(), "probe", time.Minute)
				time.Sleep(20 * time.Millisecond)
			}
			first, err := warm.Once(t.Context(), "after", time.Minute)
			require.NoError(t, err)
			assert.True(t, first)
			assert.Equal(t, []string{"WARN mcpredis: Redis does not answer: DPoP proofs are refused until it does", answers}, logs.all(),
				"one line per transition, none per call")
		})
	}
}

// TestReplayCacheCallersDeadline: a caller whose deadline is shorter
// than Config.Timeout gets its error at its deadline; that is no outage,
// and logs nothing.
func TestReplayCacheCallersDeadline(t *testing.T) {
	t.Parallel()
	cfg, srv, logs := config(t, mcpredis.FailOpen)
	cfg.Timeout = time.Hour
	c := mcpredis.NewReplayCache(cfg)
	_, err := c.Once(t.Context(), "warm", time.Minute)
	require.NoError(t, err)
	srv.Pause()
	defer srv.Resume()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = c.Once(ctx, "k", time.Minute)
	assert.Less(t, time.Since(t0), 50*time.Millisecond+slack, "the caller's deadline, not the hour")
	require.Error(t, err) // the context's error, or the socket's timeout at the same deadline
	assert.False(t, unavailable(err), "the caller gave up first: %v", err)
	assert.Empty(t, logs.all())
}

// TestReplayCacheLeavesNoGoroutine: calls that queued behind one another
// while Redis was paused, some given up by their callers, leave no
// goroutine once answered.
func TestReplayCacheLeavesNoGoroutine(t *testing.T) {
	cfg, srv, _ := config(t, mcpredis.FailOpen)
	_ = cfg.Client.Ping(t.Context()).Err() // the client's own goroutines, before
	ignore := goleak.IgnoreCurrent()
	c := mcpredis.NewReplayCache(cfg)
	srv.Pause()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), time.Duration(i%2)*20*time.Millisecond+10*time.Millisecond)
			defer cancel()
			if i < 8 {
				ctx = t.Context() // waits for Redis, within cfg.Timeout
			}
			_, _ = c.Once(ctx, fmt.Sprint("g", i), time.Minute)
		}()
	}
	time.Sleep(50 * time.Millisecond) // let them queue; the test holds either way
	srv.Resume()
	wg.Wait()
	c.WaitIdle()
	goleak.VerifyNone(t, ignore)
}
