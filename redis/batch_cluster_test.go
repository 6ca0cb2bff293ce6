package mcpredis_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/internal/redistest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// TestClusterNodeHeldBackAlone: under Cluster each node has a queue of its
// own, so a node that stops answering (CLIENT PAUSE) holds back its own
// commands only: a check whose key lives on another node is answered
// while the paused node's check still waits. The pause (2 s) stays within
// the client's ReadTimeout (3 s), which go-redis keeps as a bound beside
// the context's deadline.
func TestClusterNodeHeldBackAlone(t *testing.T) {
	t.Parallel()
	addrs := redistest.StartCluster(t, 3)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = cc.Close() })
	cfg := mcpredis.Config{Client: cc, Failure: mcpredis.FailClosed, Logger: discard, Timeout: 30 * time.Second}
	e := newEndpoint(mcpredis.PerIP(cfg, 1000, time.Minute))

	// Two client IPs whose budgets live on different nodes.
	node := func(ip string) *redis.Client {
		n, err := cc.MasterForKey(t.Context(), "mcpmw:rate:1000:60000ms:"+ip)
		require.NoError(t, err)
		return n
	}
	paused, other := "198.51.100.1", ""
	for i := 2; other == ""; i++ {
		require.Less(t, i, 256, "no two IPs on different nodes")
		if ip := fmt.Sprintf("198.51.100.%d", i); node(ip) != node(paused) {
			other = ip
		}
	}
	require.Equal(t, []int{200}, e.codes(paused+":1", 1), "the script loaded on both nodes")
	require.Equal(t, []int{200}, e.codes(other+":1", 1))

	require.NoError(t, newClient(t, node(paused).Options().Addr).Do(t.Context(), "client", "pause", "2000", "all").Err())
	held := make(chan int, 1)
	go func() { held <- e.discover(paused + ":1").Code }()
	time.Sleep(100 * time.Millisecond) // the paused node's check on the wire (or not yet: the same outcome)
	assert.Equal(t, []int{200}, e.codes(other+":1", 1), "the other node answers")
	select {
	case code := <-held:
		t.Fatalf("the paused node's check was answered first (%d): one queue for both nodes", code)
	default:
	}
	assert.Equal(t, 200, <-held, "answered once the pause ends")
}
