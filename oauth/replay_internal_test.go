package oauth

import (
	"testing"
	"time"
)

// TestMemoryReplayCacheExpiry: an entry is dropped once its ttl has
// passed, and not before: its key is then first again, and its room is
// free for another.
func TestMemoryReplayCacheExpiry(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	c := NewMemoryReplayCache(2)
	c.now = func() time.Time { return now }
	once := func(key string, ttl time.Duration) (bool, error) { return c.Once(t.Context(), key, ttl) }
	mustFirst := func(key string, ttl time.Duration, want bool) {
		t.Helper()
		first, err := once(key, ttl)
		if err != nil || first != want {
			t.Fatalf("Once(%q) at +%v = %v, %v; want %v", key, now.Sub(time.Unix(1_800_000_000, 0)), first, err, want)
		}
	}
	mustFirst("short", time.Second, true)
	mustFirst("long", time.Minute, true)
	if _, err := once("third", time.Minute); err != ErrReplayCacheFull {
		t.Fatalf("a third key in a full cache: %v, want ErrReplayCacheFull", err)
	}
	now = now.Add(time.Second - time.Nanosecond)
	mustFirst("short", time.Second, false) // not yet expired
	now = now.Add(time.Nanosecond)
	mustFirst("third", time.Minute, true) // "short" expired, its room reused
	if c.Len() != 2 {
		t.Fatalf("Len = %d, want 2", c.Len())
	}
	if _, err := once("short", time.Second); err != ErrReplayCacheFull { // full again: "short" is new, and refused
		t.Fatalf("an expired key in a full cache: %v, want ErrReplayCacheFull", err)
	}
}
