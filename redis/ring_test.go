package mcpredis_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/redistest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// TestRelayAndNotifierOnARing: on a *redis.Ring of two shards, each
// channel lives on the shard its name picks, for the subscription and for
// every send alike: every payload reaches the instance it names (a
// PUBLISH sent to a shard at random would miss half), every broadcast
// every instance, and every event every other Notifier.
func TestRelayAndNotifierOnARing(t *testing.T) {
	t.Parallel()
	one, two := redistest.Start(t), redistest.Start(t)
	newRing := func() *redis.Ring {
		r := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"one": one.Addr, "two": two.Addr}, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	var relays []*mcpredis.Relay
	var inboxes []*inbox
	for range 4 {
		r, in := newRelay(t, newRing(), nil)
		relays, inboxes = append(relays, r), append(inboxes, in)
	}
	for i, from := range relays {
		for j, to := range relays {
			if i != j {
				ok, err := from.Send(t.Context(), to.ID(), []byte(from.ID()))
				require.NoError(t, err)
				assert.True(t, ok, "relay %d to relay %d: the receiver is counted", i, j)
			}
		}
		require.NoError(t, from.Broadcast(t.Context(), []byte("all")))
	}
	for i, in := range inboxes {
		assert.Len(t, in.wait(t, 2*len(relays)-1), 2*len(relays)-1, "relay %d heard every other, and every broadcast", i)
	}

	cfg := mcpredis.Config{Logger: discard, Timeout: 2 * time.Second}
	cfg.Client = newRing()
	a := mcpredis.NewNotifier(cfg)
	cfg.Client = newRing()
	b := mcpredis.NewNotifier(cfg)
	t.Cleanup(func() { _, _ = a.Close(), b.Close() })
	// Both subscriptions are on the shard the channel's name picks.
	numsub := func(s *redistest.Server) int64 {
		counts, err := newClient(t, s.Addr).PubSubNumSub(t.Context(), "mcpmw:events").Result()
		require.NoError(t, err)
		return counts["mcpmw:events"]
	}
	deadline := time.Now().Add(10 * time.Second)
	for numsub(one)+numsub(two) < 2 {
		require.True(t, time.Now().Before(deadline), "the Notifiers not subscribed within 10 s")
		time.Sleep(20 * time.Millisecond)
	}
	assert.Contains(t, []int64{0, 2}, numsub(one), "one shard holds the channel")
	got := newEvents()
	b.Subscribe(got.deliver)
	const n = 20
	for range n {
		require.NoError(t, a.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
	}
	assert.Len(t, got.wait(t, n), n, "every event reached the other Notifier")
}

// TestRingWithEveryShardDown: a *redis.Ring whose every shard is down
// panics when asked to subscribe; NewRelay returns that as an error, and
// a Notifier made then asks again until a shard is up, then subscribes
// (and resyncs).
func TestRingWithEveryShardDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"one": srv.Addr}, ContextTimeoutEnabled: true, HeartbeatFrequency: 20 * time.Millisecond})
	t.Cleanup(func() { _ = ring.Close() })
	cfg := mcpredis.Config{Client: ring, Logger: discard, Timeout: 2 * time.Second}
	srv.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for !ringDown(ring) {
		require.True(t, time.Now().Before(deadline), "the ring does not see its shard down within 10 s")
		time.Sleep(20 * time.Millisecond)
	}

	_, err := mcpredis.NewRelay(t.Context(), cfg)
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "mcpredis: subscribe mcpmw:instance:")
	}
	n := mcpredis.NewNotifier(cfg)
	t.Cleanup(func() { _ = n.Close() })
	resynced := make(chan struct{}, 1)
	n.SubscribeResync(func() { resynced <- struct{}{} })
	time.Sleep(100 * time.Millisecond) // asking, and asked again
	srv.Restart()
	select {
	case <-resynced:
	case <-time.After(10 * time.Second):
		t.Fatal("the Notifier did not subscribe within 10 s of its shard coming up")
	}
}

// ringDown reports whether ring has no shard up: it then refuses every
// command without sending it.
func ringDown(ring *redis.Ring) bool {
	err := ring.Get(context.Background(), "k").Err()
	return err != nil && strings.Contains(err.Error(), "all ring shards are down")
}
