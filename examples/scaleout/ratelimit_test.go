package scaleout

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRateLimitAcrossInstances: RATE_LIMIT=N is one budget per client IP
// across the three instances (the proxy's address is every request's
// client IP here): 64 concurrent clients sending 4N requests through the
// round-robin proxy get between N and N+2 admitted, and what the budget
// regained meanwhile (one request every 2 s: a burst that a busy machine
// slows down regains more), the rest 429 with Retry-After; the proxy sends
// each instance a third of them.
//
// With RATE_LIMIT_LEASE=5 each instance takes 5 requests of the budget per
// Redis call: the same bound above (what a lease takes is counted in
// Redis), and below it up to 2 leases fewer, the tokens the two other
// instances may still hold when one of them is refused.
func TestRateLimitAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, lease := range []int{0, 5} {
		t.Run("RATE_LIMIT_LEASE="+strconv.Itoa(lease), func(t *testing.T) {
			t.Parallel()
			rateLimitAcrossInstances(t, lease)
		})
	}
}

func rateLimitAcrossInstances(t *testing.T, lease int) {
	const n = 30 // a minute's budget; it refills one request every 2 s
	c := startCluster(t, "chi-app", "RATE_LIMIT="+strconv.Itoa(n), "RATE_LIMIT_LEASE="+strconv.Itoa(lease))

	const clients, each = 64, (4*n + 63) / 64
	b := burst(t, c.proxyURL, clients, each)
	statuses, retry := b.statuses, b.retries
	admitted := statuses[200]
	assert.Equal(t, clients*each, statuses[200]+statuses[429], "every answer is 200 or 429: %v", statuses)
	assert.GreaterOrEqual(t, admitted, n-2*lease, "the whole budget is usable, but for 2 leases: %v", statuses)
	assert.LessOrEqual(t, admitted, n+2+b.refills(n), "one budget for the three instances, not three: %v in %v\n%s", statuses, b.took, c.logs())
	for v := range retry {
		secs, err := strconv.Atoi(v)
		assert.NoError(t, err, "Retry-After %q", v)
		assert.Positive(t, secs)
	}

	served := c.proxy.Served()
	for i := range c.instances {
		assert.InDelta(t, clients*each/3, served[i], 2, "the proxy rotates: %v", served)
	}
	total := 0
	for _, in := range c.instances {
		for _, records := range in.records(t) {
			total += records
		}
	}
	assert.Equal(t, admitted, total, "each admitted request audited once, no 429 ever")
	t.Logf("RATE_LIMIT=%d RATE_LIMIT_LEASE=%d, %d clients, %d requests through the proxy: %d admitted, %d refused; sent per instance %v", n, lease, clients, clients*each, admitted, statuses[429], served)
}
