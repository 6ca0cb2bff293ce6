package ratelimit

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestFullBucketsAreForgotten: a client that came once and whose budget
// is whole again holds no memory for ever: a stream of new IPs (one each,
// as a host rotating addresses sends) leaves the maps no larger than what
// one window of them needs.
func TestFullBucketsAreForgotten(t *testing.T) {
	t.Parallel()
	const rounds, perRound = 10, 2000
	l := newLimiter("PerIP", 1, 5*time.Millisecond, func(_ *http.Request, ip string) string { return ip })
	w := httptest.NewRecorder()
	for round := range rounds {
		for i := range perRound {
			l.Limit(w, nil, strconv.Itoa(round)+"."+strconv.Itoa(i))
		}
		time.Sleep(8 * time.Millisecond) // every bucket is full again
	}
	total := 0
	for i := range l.shards {
		total += len(l.shards[i].tats)
	}
	assert.Less(t, total, 3*perRound, "%d buckets kept of the %d made: a shard sweeps once it has twice what it kept", total, rounds*perRound)
}
