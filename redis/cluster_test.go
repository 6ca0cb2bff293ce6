package mcpredis_test

import (
	"fmt"
	"net"
	"strconv"
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

// moveSlot moves slot, which holds no key, from the node at from to the
// node at to, as a resharding does (IMPORTING, MIGRATING, then NODE on
// every node), and waits until every node says to holds it.
func moveSlot(t *testing.T, addrs []string, slot int64, from, to string) {
	t.Helper()
	ctx := t.Context()
	node := func(addr string) *redis.Client { return newClient(t, addr) }
	id := func(addr string) string {
		t.Helper()
		v, err := node(addr).Do(ctx, "cluster", "myid").Text()
		require.NoError(t, err)
		return v
	}
	fromID, toID := id(from), id(to)
	n, err := node(from).ClusterCountKeysInSlot(ctx, int(slot)).Result()
	require.NoError(t, err)
	require.Zero(t, n, "the slot holds no key: nothing to MIGRATE")
	require.NoError(t, node(to).Do(ctx, "cluster", "setslot", slot, "importing", fromID).Err())
	require.NoError(t, node(from).Do(ctx, "cluster", "setslot", slot, "migrating", toID).Err())
	require.NoError(t, node(to).Do(ctx, "cluster", "setslot", slot, "node", toID).Err())
	require.NoError(t, node(from).Do(ctx, "cluster", "setslot", slot, "node", toID).Err())
	for _, addr := range addrs {
		if addr != from && addr != to {
			require.NoError(t, node(addr).Do(ctx, "cluster", "setslot", slot, "node", toID).Err())
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, addr := range addrs {
		for slotOwner(t, addr, slot) != to {
			require.True(t, time.Now().Before(deadline), "%s does not say %s holds slot %d within 10 s", addr, to, slot)
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// slotOwner returns the address of the master holding slot, as the node
// at addr sees it.
func slotOwner(t *testing.T, addr string, slot int64) string {
	t.Helper()
	shards, err := newClient(t, addr).ClusterShards(t.Context()).Result()
	require.NoError(t, err)
	for _, sh := range shards {
		for _, r := range sh.Slots {
			for _, n := range sh.Nodes {
				if r.Start <= slot && slot <= r.End && n.Role == "master" {
					return net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
				}
			}
		}
	}
	return ""
}

// TestRelayFollowsItsSlotToAnotherNode: under Cluster, when the slot of an
// instance's channel moves to another node, Redis ends its subscription
// (SUNSUBSCRIBE); the relay subscribes again on that node, logging both,
// and payloads reach it again.
func TestRelayFollowsItsSlotToAnotherNode(t *testing.T) {
	t.Parallel()
	addrs := redistest.StartCluster(t, 3)
	newCluster := func() *redis.ClusterClient {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	logs := &logLines{}
	a, aIn := newRelay(t, newCluster(), logs)
	b, _ := newRelay(t, newCluster(), nil)
	ok, err := b.Send(t.Context(), a.ID(), []byte("before"))
	require.NoError(t, err)
	require.True(t, ok)
	aIn.wait(t, 1)

	channel := "mcpmw:instance:" + a.ID()
	slot, err := newClient(t, addrs[0]).ClusterKeySlot(t.Context(), channel).Result()
	require.NoError(t, err)
	from := slotOwner(t, addrs[0], slot)
	to := addrs[0]
	if to == from {
		to = addrs[1]
	}
	moveSlot(t, addrs, slot, from, to)

	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := b.Send(t.Context(), a.ID(), []byte("after"))
		if err == nil && ok {
			break
		}
		require.True(t, time.Now().Before(deadline), "a does not hear its channel within 10 s of the slot's move (%v, %v)", ok, err)
		time.Sleep(50 * time.Millisecond)
	}
	assert.Equal(t, []string{"before", "after"}, aIn.wait(t, 2))
	assert.Equal(t, []string{
		"WARN mcpredis: Redis ended the relay's subscription (its slot moved to another node): subscribing again",
		"INFO mcpredis: the relay's subscription is restored: this instance receives answers and cancellations again",
	}, logs.all())
	subs, err := newClient(t, to).Do(t.Context(), "pubsub", "shardnumsub", channel).Slice()
	require.NoError(t, err)
	assert.Equal(t, []any{channel, int64(1)}, subs, "a is subscribed on the node that holds the slot now")
}
