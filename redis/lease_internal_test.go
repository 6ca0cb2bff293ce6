package mcpredis

import (
	"context"
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
	ls := newLeases(8, time.Second)
	calls := 0
	check := func(context.Context, string, int, int) ([]int64, error) {
		if calls++; calls == 1 {
			panic("boom")
		}
		return []int64{8, 0, 0, 0}, nil
	}
	assert.PanicsWithValue(t, "boom", func() { _, _ = ls.take(t.Context(), "k", check) })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	v, err := ls.take(ctx, "k", check)
	require.NoError(t, err, "the key was left waiting for the call that panicked")
	assert.Positive(t, v[0], "admitted")
	assert.Equal(t, 2, calls)
	assert.Equal(t, 7, ls.keys["k"].left, "the second call's lease, less the request it admitted")
}
