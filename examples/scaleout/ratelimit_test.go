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
func TestRateLimitAcrossInstances(t *testing.T) {
	t.Parallel()
	const n = 30 // a minute's budget; it refills one request every 2 s
	c := startCluster(t, "chi-app", "RATE_LIMIT="+strconv.Itoa(n))

	const clients, each = 64, (4*n + 63) / 64
	b := burst(t, c.proxyURL, clients, each)
	statuses, retry := b.statuses, b.retries
	admitted := statuses[200]
	assert.Equal(t, clients*each, statuses[200]+statuses[429], "every answer is 200 or 429: %v", statuses)
	assert.GreaterOrEqual(t, admitted, n, "the whole budget is usable: %v", statuses)
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
	t.Logf("RATE_LIMIT=%d, %d clients, %d requests through the proxy: %d admitted, %d refused; sent per instance %v", n, clients, clients*each, admitted, statuses[429], served)
}
