package mcpredis_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/redistest"
	"github.com/mcpmw/mcpmw/mcpmwtest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// TestCluster: under Redis Cluster each check's one key goes to the node
// of its slot (keys of many slots, so every node holds some), events
// reach a Notifier whose subscription is on another node, and a relay's
// send counts its receiver wherever the sender's connection is (a
// PUBLISH would count only the receivers on the node it reached).
func TestCluster(t *testing.T) {
	t.Parallel()
	addrs := redistest.StartCluster(t, 3)
	newCluster := func() *redis.ClusterClient {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	cfg := mcpredis.Config{Client: newCluster(), Failure: mcpredis.FailClosed, Logger: discard, Timeout: time.Second}
	e := newEndpoint(mcpredis.PerIP(cfg, 2, time.Minute))
	for i := range 30 {
		ip := fmt.Sprintf("198.51.100.%d:1", i)
		require.Equal(t, []int{200, 200, 429}, e.codes(ip, 3), ip)
	}
	keys := 0
	for _, addr := range addrs {
		n, err := newClient(t, addr).DBSize(t.Context()).Result()
		require.NoError(t, err)
		assert.Positive(t, n, "node %s holds some budgets", addr)
		keys += int(n)
	}
	assert.Equal(t, 30, keys, "one key per budget")

	a := mcpredis.NewNotifier(mcpredis.Config{Client: newCluster(), Logger: discard, Timeout: time.Second})
	b := mcpredis.NewNotifier(mcpredis.Config{Client: newCluster(), Logger: discard, Timeout: time.Second})
	t.Cleanup(func() { _, _ = a.Close(), b.Close() })
	got := newEvents()
	b.Subscribe(got.deliver)
	ev := mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}
	deadline := time.Now().Add(10 * time.Second)
	for { // b's subscription may not be in place yet: publish until it hears
		require.NoError(t, a.Publish(t.Context(), ev))
		got.mu.Lock()
		n := len(got.got)
		got.mu.Unlock()
		if n > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no event across the cluster within 10 s")
		time.Sleep(50 * time.Millisecond)
	}
	assert.Equal(t, ev, got.wait(t, 1)[0])

	var relays []*mcpredis.Relay
	var inboxes []*inbox
	for range 6 {
		r, in := newRelay(t, newCluster(), nil)
		relays, inboxes = append(relays, r), append(inboxes, in)
	}
	for i, from := range relays {
		for j, to := range relays {
			if i != j {
				ok, err := from.Send(t.Context(), to.ID(), []byte(from.ID()))
				require.NoError(t, err)
				require.True(t, ok, "relay %d to relay %d: the receiver is counted", i, j)
			}
		}
	}
	for i, in := range inboxes {
		assert.Len(t, in.wait(t, len(relays)-1), len(relays)-1, "relay %d heard from every other", i)
	}
}

// TestTaskStoreUnderCluster: under Redis Cluster the store does what
// Task.Apply says (every script's keys are in one slot, or Redis would
// refuse it with CROSSSLOT), and all its keys are on one node.
func TestTaskStoreUnderCluster(t *testing.T) {
	t.Parallel()
	addrs := redistest.StartCluster(t, 3)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	cfg := mcpredis.Config{Client: c, Logger: discard, Timeout: 2 * time.Second}
	t.Run("kit", func(t *testing.T) { mcpmwtest.TestTaskStore(t, emptyStores(cfg)) })
	s := mcpredis.NewTaskStore(cfg)
	now := time.Now()
	for i := range 20 {
		require.NoError(t, s.Create(t.Context(), working(fmt.Sprintf("c%d", i), now, time.Hour)))
	}
	ids, err := s.Expired(t.Context(), now.Add(time.Minute), 100)
	require.NoError(t, err)
	assert.Len(t, ids, 20)
	holding := 0
	for _, addr := range addrs {
		ks, err := newClient(t, addr).Keys(t.Context(), "mcpmw:*").Result()
		require.NoError(t, err)
		if len(ks) > 0 {
			holding++
			assert.Len(t, ks, 21, "the 20 tasks and the lease set, together on %s", addr)
		}
	}
	assert.Equal(t, 1, holding, "one node holds the store's keys")
}
