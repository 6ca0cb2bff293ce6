package oauth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// tokenKey is the cache key of a token: the SHA-256 of its bytes, so that
// no cache holds a token itself.
type tokenKey [sha256.Size]byte

func keyOf(token string) tokenKey { return sha256.Sum256([]byte(token)) }

// cached is a verified or introspected token, kept until a point in time
// no later than its exp, and, for a JWT, while its key stays in the key
// set.
type cached struct {
	tok        *Token
	until      time.Time
	kid, thumb string // the signing key's kid and thumbprint; empty for introspection
}

// tokenCache holds at most size tokens. When it is full, expired entries
// are dropped first, then arbitrary ones (Go's map order): a flood of
// fresh tokens can push out others, which then cost one verification
// more, never a wrong answer.
type tokenCache struct {
	mu      sync.RWMutex
	size    int
	entries map[tokenKey]cached
}

func newTokenCache(size int) *tokenCache {
	return &tokenCache{size: size, entries: make(map[tokenKey]cached)}
}

// get returns the entry of k if it is still good at now.
func (c *tokenCache) get(k tokenKey, now time.Time) (cached, bool) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	if !ok || !now.Before(e.until) {
		return cached{}, false
	}
	return e, true
}

// put keeps e under k, making room if need be.
func (c *tokenCache) put(k tokenKey, e cached, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; !ok && len(c.entries) >= c.size {
		c.evict(now)
	}
	c.entries[k] = e
}

// drop forgets k.
func (c *tokenCache) drop(k tokenKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, k)
}

// evict drops the expired entries, and if none was, one entry in eight
// (at least one), under mu.
func (c *tokenCache) evict(now time.Time) {
	before := len(c.entries)
	for k, e := range c.entries {
		if !now.Before(e.until) {
			delete(c.entries, k)
		}
	}
	if len(c.entries) < before {
		return
	}
	n := max(1, before/8)
	for k := range c.entries {
		if n == 0 {
			break
		}
		delete(c.entries, k)
		n--
	}
}
