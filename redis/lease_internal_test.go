package mcpredis

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLeaseLetGoAfterAPanic: a top-up whose check panics (a bug, which a
// handler's recoverer survives) still lets the key go: the next caller
// makes a call of its own rather than waiting for one that never ends.
func TestLeaseLetGoAfterAPanic(t *testing.T) {
	t.Parallel()
	calls := 0
	ls := newLeases(func(context.Context, string, int, int) ([]int64, error) {
		if calls++; calls == 1 {
			panic("boom")
		}
		return []int64{8, 0, 0, 0}, nil
	}, 8, time.Second)
	assert.PanicsWithValue(t, "boom", func() { _, _ = ls.take(t.Context(), "k") })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	v, err := ls.take(ctx, "k")
	require.NoError(t, err, "the key was left waiting for the call that panicked")
	assert.Positive(t, v[0], "admitted")
	assert.Equal(t, 2, calls)
	assert.Equal(t, 7, ls.keys["k"].left, "the second call's lease, less the request it admitted")
}

// TestLeasesSweptWhenTheTableIsFull: the ended leases are dropped when a
// new key finds the table at its sweep size, not one key later, and not
// before; one still asking Redis is kept.
func TestLeasesSweptWhenTheTableIsFull(t *testing.T) {
	t.Parallel()
	now := time.Now()
	ls := newLeases(nil, 8, time.Second) // no call: the table alone
	for i := range minSweep - 1 {
		ls.keys[strconv.Itoa(i)] = &lease{until: now.Add(-time.Second)}
	}
	ls.add("almost", now)
	assert.Len(t, ls.keys, minSweep, "swept below its size")
	ls.keys["almost"].until = now.Add(-time.Second)
	ls.keys["0"].asking = make(chan struct{})
	ls.add("full", now)
	assert.Len(t, ls.keys, 2, "the ended leases, less the one asking, are dropped")
	assert.Contains(t, ls.keys, "0")
	assert.Contains(t, ls.keys, "full")
	assert.Equal(t, minSweep, ls.sweep)

	// A table of leases still held grows: swept again at twice the size
	// it kept, so that a busy table is not swept at every new key.
	busy := newLeases(nil, 8, time.Second) // no call: the table alone
	for i := range minSweep {
		busy.keys[strconv.Itoa(i)] = &lease{until: now.Add(time.Second)}
	}
	busy.add("more", now)
	assert.Len(t, busy.keys, minSweep+1)
	assert.Equal(t, 2*minSweep, busy.sweep)
}
