package oauth

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// A ReplayCache remembers keys for a while, so that a DPoP proof is
// accepted once (RFC 9449 §11.1). It names standard types only, so that an
// implementation (mcpredis's, shared by every instance through Redis)
// needs nothing of this module's dependencies.
type ReplayCache interface {
	// Once records key for ttl and reports whether it is new: true the
	// first time, false while an earlier record lasts. An error means it
	// cannot tell (the cache is full, or unreachable), and the proof is
	// then refused. It must return by ctx's deadline.
	Once(ctx context.Context, key string, ttl time.Duration) (first bool, err error)
}

// DefaultReplayEntries is the size of the in-memory replay cache a
// DPoPVerifier makes when given none: at 100 DPoP requests a second and
// the default window (a proof is remembered up to 11 minutes), 66,000
// entries are live at once. An entry costs about 150 bytes.
const DefaultReplayEntries = 100_000

// ErrReplayCacheFull is the error of MemoryReplayCache.Once when every
// entry is live: the proof is refused rather than an entry forgotten early,
// which would let its proof be replayed.
var ErrReplayCacheFull = errors.New("oauth: the DPoP replay cache is full")

// A MemoryReplayCache is a ReplayCache in this process's memory, bounded
// in entries: each is dropped when its ttl has passed, and when every
// entry is live, Once refuses with ErrReplayCacheFull rather than forget
// one (which would let that proof be replayed). It protects one instance:
// behind a load balancer, a proof replayed against another instance is
// new there; share one cache (mcpredis.NewReplayCache) to refuse it.
//
// A MemoryReplayCache is safe for concurrent use.
type MemoryReplayCache struct {
	max int
	now func() time.Time

	mu      sync.Mutex
	expires map[string]time.Time
	order   byExpiry // the keys, soonest expiry first
}

// NewMemoryReplayCache returns a cache of at most max entries; it panics
// when max is below 1.
func NewMemoryReplayCache(max int) *MemoryReplayCache {
	if max < 1 {
		panic(fmt.Sprintf("oauth: NewMemoryReplayCache(%d): want at least 1 entry", max))
	}
	return &MemoryReplayCache{max: max, now: time.Now, expires: map[string]time.Time{}}
}

// Once implements ReplayCache. It does not block, so ctx is not read.
func (c *MemoryReplayCache) Once(_ context.Context, key string, ttl time.Duration) (bool, error) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.order) > 0 && !c.order[0].at.After(now) {
		e := heap.Pop(&c.order).(expiry)
		delete(c.expires, e.key)
	}
	if _, ok := c.expires[key]; ok {
		return false, nil
	}
	if len(c.expires) >= c.max {
		return false, ErrReplayCacheFull
	}
	at := now.Add(ttl)
	c.expires[key] = at
	heap.Push(&c.order, expiry{at: at, key: key})
	return true, nil
}

// Len returns how many entries the cache holds, expired ones not yet
// dropped included.
func (c *MemoryReplayCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.expires)
}

// expiry is when one key expires.
type expiry struct {
	at  time.Time
	key string
}

// byExpiry is a min-heap of expiries (container/heap).
type byExpiry []expiry

func (h byExpiry) Len() int           { return len(h) }
func (h byExpiry) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h byExpiry) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *byExpiry) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *byExpiry) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = expiry{}
	*h = old[:len(old)-1]
	return e
}
