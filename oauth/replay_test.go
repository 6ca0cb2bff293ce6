package oauth_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/oauth"
)

// TestMemoryReplayCacheOnce: a key is first once; another key is first
// too.
func TestMemoryReplayCacheOnce(t *testing.T) {
	t.Parallel()
	c := oauth.NewMemoryReplayCache(10)
	for _, tt := range []struct {
		key   string
		first bool
	}{{"a", true}, {"a", false}, {"b", true}, {"a", false}, {"b", false}} {
		first, err := c.Once(t.Context(), tt.key, time.Hour)
		require.NoError(t, err)
		assert.Equal(t, tt.first, first, "key %q", tt.key)
	}
	assert.Equal(t, 2, c.Len())
}

// TestMemoryReplayCacheFull: a full cache of live entries refuses a new
// key with ErrReplayCacheFull rather than forget one, and still knows the
// keys it holds.
func TestMemoryReplayCacheFull(t *testing.T) {
	t.Parallel()
	c := oauth.NewMemoryReplayCache(3)
	for i := range 3 {
		first, err := c.Once(t.Context(), fmt.Sprint(i), time.Hour)
		require.NoError(t, err)
		require.True(t, first)
	}
	first, err := c.Once(t.Context(), "new", time.Hour)
	assert.ErrorIs(t, err, oauth.ErrReplayCacheFull)
	assert.False(t, first)
	first, err = c.Once(t.Context(), "0", time.Hour)
	require.NoError(t, err, "a key it holds is told, full or not")
	assert.False(t, first)
	assert.Equal(t, 3, c.Len())
}

// TestMemoryReplayCacheConcurrent: of many goroutines spending the same
// keys at once, exactly one gets each key first.
func TestMemoryReplayCacheConcurrent(t *testing.T) {
	t.Parallel()
	c := oauth.NewMemoryReplayCache(1000)
	const keys, goroutines = 100, 8
	var firsts atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				first, err := c.Once(t.Context(), fmt.Sprint(k), time.Hour)
				if err == nil && first {
					firsts.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(keys), firsts.Load())
}

func TestNewMemoryReplayCachePanics(t *testing.T) {
	t.Parallel()
	assert.PanicsWithValue(t, "oauth: NewMemoryReplayCache(0): want at least 1 entry", func() { oauth.NewMemoryReplayCache(0) })
	assert.NotPanics(t, func() { oauth.NewMemoryReplayCache(1) })
}
