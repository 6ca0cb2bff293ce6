package mcpredis_test

import (
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// TestChecksOfOneKeyShareACall: against a real Redis, paused (SIGSTOP)
// while one check of a key is on the wire, the checks of that key that
// come meanwhile wait and then go as one script call; Redis admits what
// the budget has room for, in the order they came, and refuses the rest
// with the Retry-After a lone check would get; the limit stays exact and
// every request is audited once. Another key's checks are not held with
// them.
func TestChecksOfOneKeyShareACall(t *testing.T) {
	t.Parallel()
	cfg, srv, logs := config(t, mcpredis.FailClosed)
	cfg.Timeout = 30 * time.Second // the pause is the test's, not an outage
	var rt roundTrips
	cfg.Client.(*redis.Client).AddHook(&rt)
	l := mcpredis.PerIP(cfg, 5, time.Hour) // one request every 720 s
	e := newEndpoint(l)
	const busy, other = "192.0.2.40:1", "192.0.2.41:1"
	require.Equal(t, []int{200}, e.codes(busy, 1), "the first loads the script")
	rt.n.Store(0)

	srv.Pause()
	defer srv.Resume()
	var wg sync.WaitGroup
	answers := make(chan *httptest.ResponseRecorder, 20)
	send := func(remote string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers <- e.discover(remote)
		}()
	}
	send(busy)
	waitFor(t, "the first check on the wire", func() bool { return rt.n.Load() == 1 })
	for i := range 12 {
		send(busy)
		waitFor(t, "the busy key's checks waiting", func() bool { return l.Coalesced() == i+1 })
	}
	send(other)
	waitFor(t, "the other key's check queued for Redis, not held", func() bool { return l.Waiting() == 1 })
	srv.Resume()
	wg.Wait()
	close(answers)

	codes, retryAfter := map[int]int{}, map[string]int{}
	for w := range answers {
		codes[w.Code]++
		if w.Code == 429 {
			retryAfter[w.Header().Get("Retry-After")]++
			assert.Equal(t, "0", w.Header().Get("X-RateLimit-Remaining"))
		}
	}
	assert.Equal(t, map[int]int{200: 1 + 3 + 1, 429: 9}, codes,
		"the busy key: 4 left of 5, one for the first check, 3 of the 12 that waited; the other key: its first")
	assert.Equal(t, map[string]int{"720": 9}, retryAfter, "the wait a lone check would have been told: one interval")
	assert.EqualValues(t, 3, rt.n.Load(), "a script call each for the busy key's first check, for the 12 together, and for the other key")
	assert.EqualValues(t, 1+5, e.audits.Load(), "every admitted request audited once (the limit's refusals never are)")
	assert.Equal(t, 0, l.Coalesced())
	assert.Empty(t, logs.all())

	require.Equal(t, []int{429}, e.codes(busy, 1), "the budget is spent: nothing was admitted beyond it")
}
