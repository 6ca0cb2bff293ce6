package ratelimit

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestRetryAfterRoundsUp(t *testing.T) {
	t.Parallel()
	for ns, want := range map[int64]string{
		1:                         "1",
		int64(time.Second):        "1",
		int64(time.Second) + 1:    "2",
		20 * int64(time.Second):   "20",
		20*int64(time.Second) - 1: "20",
	} {
		assert.Equal(t, want, retryAfter(ns), "%d ns", ns)
	}
}

// TestSweepOnlyWhenGrowingPastTheMark: a shard sweeps only when a new
// bucket would reach its mark, so sweeping stays O(1) per request: never
// for a known bucket, never below the mark, and exactly at it; a bucket
// whose time is exactly now is full again and goes.
func TestSweepOnlyWhenGrowingPastTheMark(t *testing.T) {
	t.Parallel()
	s := shard{tats: map[string]int64{}, sweepAt: minSweep}
	const now, interval, burst = 1000, 10, 100
	for i := range minSweep - 1 {
		s.tats["old"+strconv.Itoa(i)] = now // full again: forgettable
	}
	require.Zero(t, s.take("old0", now, interval, burst), "a known bucket")
	assert.Len(t, s.tats, minSweep-1, "no sweep for a known bucket, even with forgettable ones around")
	assert.Equal(t, minSweep, s.sweepAt)
	s.tats["old0"] = now
	require.Zero(t, s.take("new1", now, interval, burst))
	assert.Len(t, s.tats, minSweep, "below the mark before it: no sweep")
	require.Zero(t, s.take("new2", now, interval, burst))
	assert.Equal(t, map[string]int64{"new1": now + interval, "new2": now + interval}, s.tats,
		"at the mark: the full buckets (time == now included) are forgotten before the new one is kept")
	assert.Equal(t, minSweep, s.sweepAt, "twice what was kept, at least minSweep")
}
