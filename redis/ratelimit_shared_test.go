package mcpredis_test

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcpmw/mcpmw/internal/redistest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// TestThreeInstancesShareOneBudget: three instances (each its own client,
// pool and Handler) under 64 concurrent clients of one IP admit N requests
// of a limit of N per minute, plus at most what refills while the test
// runs (one every 1.2 s): never N per instance.
//
// With a lease of 5 the same holds: what a lease takes is counted in
// Redis, and under this load every lease is spent.
func TestThreeInstancesShareOneBudget(t *testing.T) {
	t.Parallel()
	for _, lease := range []int{0, 5} {
		t.Run("lease "+strconv.Itoa(lease), func(t *testing.T) {
			t.Parallel()
			threeInstancesShareOneBudget(t, lease)
		})
	}
}

func threeInstancesShareOneBudget(t *testing.T, lease int) {
	srv := redistest.Start(t)
	const limit, clients, perClient = 50, 64, 10
	var instances []*endpoint
	for range 3 {
		cfg := mcpredis.Config{Client: newClient(t, srv.Addr), Timeout: 2 * time.Second, Logger: discard, Failure: mcpredis.FailClosed}
		instances = append(instances, newEndpoint(mcpredis.PerIP(cfg, limit, time.Minute, mcpredis.Lease(lease))))
	}
	var admitted, refused, other atomic.Int64
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perClient {
				e := instances[next.Add(1)%3] // strict rotation, like a round-robin balancer
				switch e.discover("203.0.113.50:4000").Code {
				case 200:
					admitted.Add(1)
				case 429:
					refused.Add(1)
				default:
					other.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	refills := int64(took / (time.Minute / limit))
	assert.Zero(t, other.Load())
	assert.EqualValues(t, clients*perClient, admitted.Load()+refused.Load())
	assert.GreaterOrEqual(t, admitted.Load(), int64(limit), "the whole budget is spent")
	assert.LessOrEqual(t, admitted.Load(), int64(limit)+min(refills, 3), "N, plus what refilled in %s, across 3 instances", took)
	var audits int64
	for _, e := range instances {
		audits += e.audits.Load()
	}
	assert.Equal(t, admitted.Load(), audits, "every admitted request audited once, no refused one")
}
