package mcpredis_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// clock is a time the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// leased returns an endpoint limited to requests an hour (nothing refills
// while a test runs) on cfg, leasing tokens at a time, its clock and the
// round trips of its client.
func leased(t *testing.T, cfg mcpredis.Config, requests, tokens int) (*endpoint, *clock, *roundTrips) {
	t.Helper()
	c, ok := cfg.Client.(*redis.Client)
	require.True(t, ok)
	c = newClient(t, c.Options().Addr) // a client of its own: an instance
	var rt roundTrips
	c.AddHook(&rt)
	cfg.Client = c
	l := mcpredis.PerIP(cfg, requests, time.Hour, mcpredis.Lease(tokens))
	clk := &clock{t: time.Now()}
	if tokens > 1 {
		l.LeaseClock(clk.now)
	}
	return newEndpoint(l), clk, &rt
}

// TestLeaseSpentLocally: a lease of 8 takes 8 requests of the budget in
// one script call, and the next are admitted with no round trip until 2
// are left (its last quarter): the request that finds them tops the lease
// up to 8, never more, while the others would spend those 2. The budget
// in Redis counts every token taken, so another instance finds them
// gone; once Redis refuses, what is left is spent, then the refusal is
// kept as long as Redis said.
func TestLeaseSpentLocally(t *testing.T) {
	t.Parallel()
	cfg, _, logs := config(t, mcpredis.FailClosed)
	e, _, rt := leased(t, cfg, 20, 8)
	plain := newEndpoint(mcpredis.PerIP(cfg, 20, time.Hour))
	const ip = "192.0.2.30:1"

	assert.Equal(t, []int{200}, e.codes(ip, 1), "the lease taken (and the script loaded)")
	rt.n.Store(0)
	assert.Equal(t, []int{200, 200, 200, 200, 200}, e.codes(ip, 5))
	assert.Zero(t, rt.n.Load(), "spent locally, down to 2 left")
	assert.Equal(t, []int{200}, e.codes(ip, 1))
	assert.EqualValues(t, 1, rt.n.Load(), "topped up: 6 more")
	assert.Equal(t, []int{200, 200, 200, 200, 200, 200, 429}, plain.codes(ip, 7), "8 + 6 of 20 taken")
	assert.Equal(t, []int{200, 200, 200, 200, 200, 200, 200, 429}, e.codes(ip, 8), "the 7 left, then refused")
	assert.EqualValues(t, 2, rt.n.Load(), "one top-up more, refused")
	w := e.discover(ip)
	assert.Equal(t, 429, w.Code, "the refusal is kept")
	assert.Equal(t, "180", w.Header().Get("Retry-After"), "as long as Redis said: 3 minutes, when one request of an hour's 20 refills")
	assert.EqualValues(t, 2, rt.n.Load(), "while it holds, no round trip")
	assert.Empty(t, logs.all())
}

// TestLeaseUnspentGivenBack: a lease's unspent tokens go back to the
// budget with the instance's next call for the key, once the lease has
// ended (its clock moved past a second).
func TestLeaseUnspentGivenBack(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	e, clk, rt := leased(t, cfg, 10, 5)
	plain := newEndpoint(mcpredis.PerIP(cfg, 10, time.Hour))
	const ip = "192.0.2.31:1"

	assert.Equal(t, []int{200}, e.codes(ip, 1), "takes 5, spends 1")
	clk.add(time.Second)
	n := rt.n.Load()
	assert.Equal(t, []int{200}, e.codes(ip, 1), "the lease ended: 4 given back, 5 taken, 1 spent")
	assert.EqualValues(t, n+1, rt.n.Load())
	// Taken: 1 + 5 of the 10. Without the 4 given back, the plain
	// instance would find none.
	assert.Equal(t, []int{200, 200, 200, 200, 429}, plain.codes(ip, 5))
	assert.Equal(t, []int{200, 200, 200, 200, 429}, e.codes(ip, 5), "the second lease's 4")
}

// TestLeaseCallersShareOneCall: concurrent callers of one key wait for
// the call on its way, and share its lease, rather than each making one;
// nothing is admitted beyond the budget.
func TestLeaseCallersShareOneCall(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	const budget, tokens, callers, each = 600, 10, 64, 10
	e, _, rt := leased(t, cfg, budget, tokens)
	var codes sync.Map
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range e.codes("192.0.2.32:1", each) {
				n, _ := codes.LoadOrStore(c, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
			}
		}()
	}
	wg.Wait()
	admitted, _ := codes.Load(200)
	refused, _ := codes.Load(429)
	require.NotNil(t, admitted)
	require.NotNil(t, refused)
	assert.EqualValues(t, budget, admitted.(*atomic.Int64).Load(), "the whole budget, no more")
	assert.EqualValues(t, callers*each-budget, refused.(*atomic.Int64).Load())
	// Top-ups of about 8 (the lease is topped up at 2 left), the first
	// load of the script, one refusal kept for the rest: a lease that ended
	// unspent (a second on a busy machine) costs one call more.
	assert.Less(t, rt.n.Load(), int64(budget/(tokens-tokens/4)+20), "about one call per top-up")
}

// TestLeaseSetupMistakesPanic: a lease below 0 or above the limit is a
// setup mistake.
func TestLeaseSetupMistakesPanic(t *testing.T) {
	t.Parallel()
	cfg := mcpredis.Config{Client: redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})}
	t.Cleanup(func() { _ = cfg.Client.Close() })
	assert.PanicsWithValue(t, "mcpredis: PerIP: Lease(-1): want from 0 (no lease) to requests (10)", func() { mcpredis.PerIP(cfg, 10, time.Minute, mcpredis.Lease(-1)) })
	assert.PanicsWithValue(t, "mcpredis: By: Lease(11): want from 0 (no lease) to requests (10)", func() {
		mcpredis.By(cfg, 10, time.Minute, func(*http.Request, string) string { return "" }, mcpredis.Lease(11))
	})
	assert.NotPanics(t, func() { mcpredis.PerIP(cfg, 10, time.Minute, mcpredis.Lease(10)) })
}

// TestLeaseTakesWhatIsLeft: a lease takes up to its tokens, and the
// rest of the budget when less is left.
func TestLeaseTakesWhatIsLeft(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	e, _, rt := leased(t, cfg, 6, 4)
	assert.Equal(t, []int{200}, e.codes("192.0.2.33:1", 1), "a lease of 4")
	n := rt.n.Load()
	assert.Equal(t, []int{200, 200, 200, 200, 200, 429}, e.codes("192.0.2.33:1", 6), "a top-up of the 2 left of 6, then none")
	assert.EqualValues(t, n+2, rt.n.Load(), "the top-up, then one refused (the last token then spent)")
}

// TestLeasesOfEndedKeysSwept: the table of leases holds the keys of about
// the last second: once it has grown to 1,024, the leases that have ended
// are dropped; a refusal is kept while it holds.
func TestLeasesOfEndedKeysSwept(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	l := mcpredis.PerIP(cfg, 10, time.Hour, mcpredis.Lease(5))
	clk := &clock{t: time.Now()}
	l.LeaseClock(clk.now)
	e := newEndpoint(l)
	for i := range 1000 {
		require.Equal(t, 200, e.discover(fmt.Sprintf("10.0.%d.%d:1", i/256, i%256)).Code)
	}
	assert.Equal(t, 1000, l.Leases(), "each key holds 4 tokens")
	clk.add(time.Second)
	for i := range 100 {
		require.Equal(t, 200, e.discover(fmt.Sprintf("10.1.%d.%d:1", i/256, i%256)).Code)
	}
	assert.Equal(t, 100, l.Leases(), "the ended ones dropped once the table reached 1,024")

	spent := mcpredis.PerIP(cfg, 2, time.Hour, mcpredis.Lease(2))
	e = newEndpoint(spent)
	assert.Equal(t, []int{200, 200, 429}, e.codes("10.2.0.1:1", 3))
	assert.Equal(t, 1, spent.Leases(), "the refusal, kept")
	assert.Equal(t, []int{200}, e.codes("10.2.0.2:1", 1))
	assert.Equal(t, 2, spent.Leases(), "and the lease of 2 with 1 left")
}

// TestLeaseOfOneIsNoLease: Lease(1) checks each request in Redis, refusals
// included, exactly as no lease does.
func TestLeaseOfOneIsNoLease(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	e, _, rt := leased(t, cfg, 2, 1)
	assert.Equal(t, []int{200}, e.codes("192.0.2.34:1", 1))
	n := rt.n.Load()
	assert.Equal(t, []int{200, 429, 429}, e.codes("192.0.2.34:1", 3))
	assert.EqualValues(t, n+3, rt.n.Load(), "a round trip each")
}

// TestLeaseEndedGivesBackBeforeTakingMore: the tokens of a lease that has
// ended are given back with the next call, and taken again from the
// budget like any others, not kept as if the lease still held: once
// another instance has spent the rest of the budget, the 4 given back are
// all there is, and the next lease holds those 4.
func TestLeaseEndedGivesBackBeforeTakingMore(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	e, clk, _ := leased(t, cfg, 10, 5)
	plain := newEndpoint(mcpredis.PerIP(cfg, 10, time.Hour))
	const ip = "192.0.2.35:1"

	assert.Equal(t, []int{200}, e.codes(ip, 1), "takes 5, spends 1")
	assert.Equal(t, []int{200, 200, 200, 200, 200, 429}, plain.codes(ip, 6), "the other instance spends the other 5")
	clk.add(time.Second)
	assert.Equal(t, []int{200, 200, 200, 200, 429}, e.codes(ip, 5), "the lease ended: its 4 given back, taken again, spent")
}

// TestLeaseSpentToNothingIsForgotten: a key whose lease took the last
// token of the budget and spent it at once holds nothing, and its entry
// goes at once, not at the next sweep.
func TestLeaseSpentToNothingIsForgotten(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	l := mcpredis.PerIP(cfg, 3, time.Hour, mcpredis.Lease(2))
	e := newEndpoint(l)
	const ip = "192.0.2.36:1"

	assert.Equal(t, []int{200, 200}, e.codes(ip, 2), "a lease of 2, both spent")
	assert.Equal(t, 1, l.Leases())
	assert.Equal(t, []int{200}, e.codes(ip, 1), "the last of 3, taken and spent by one call")
	assert.Zero(t, l.Leases(), "nothing held, nothing refused: forgotten")
}
