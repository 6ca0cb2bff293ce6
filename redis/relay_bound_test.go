package mcpredis_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/internal/redistest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// pubsubClients returns the ids of the connections subscribed to
// something, as CLIENT LIST says.
func pubsubClients(t *testing.T, c *redis.Client) []string {
	t.Helper()
	list, err := c.Do(t.Context(), "client", "list", "type", "pubsub").Text()
	require.NoError(t, err)
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		if id, _, ok := strings.Cut(strings.TrimPrefix(line, "id="), " "); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestRelayPayloadBoundKeepsTheSubscription: against a Redis whose
// client-output-buffer-limit for pubsub is 128 KiB, a relay bounded to
// 32 KiB sends a payload of exactly that, and refuses one byte more, and
// a 200 KiB one, with ErrPayloadTooLarge, sending nothing: the receiving
// instance keeps its subscription (the same connections, no restoration)
// and hears what follows. The same 200 KiB sent by a relay bounded above
// Redis's limit is what the bound prevents: Redis cuts the receiver off,
// and the payload is lost.
func TestRelayPayloadBoundKeepsTheSubscription(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := newClient(t, srv.Addr)
	require.NoError(t, admin.ConfigSet(t.Context(), "client-output-buffer-limit", "pubsub 128kb 64kb 60").Err())
	logs := &logLines{}
	b, bIn := newRelay(t, newClient(t, srv.Addr), logs)
	a, err := mcpredis.NewRelay(t.Context(), mcpredis.Config{Client: newClient(t, srv.Addr), Logger: discard, Timeout: 2 * time.Second, MaxRelayBytes: 32 << 10})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	before := pubsubClients(t, admin)
	require.Len(t, before, 4, "two relays, two subscriptions each")

	exact := bytes.Repeat([]byte("x"), 32<<10)
	ok, err := a.Send(t.Context(), b.ID(), exact)
	require.NoError(t, err)
	assert.True(t, ok, "a payload of exactly the bound is sent")
	assert.Equal(t, []string{string(exact)}, bIn.wait(t, 1))

	for _, size := range []int{32<<10 + 1, 200 << 10} {
		payload := bytes.Repeat([]byte("y"), size)
		ok, err := a.Send(t.Context(), b.ID(), payload)
		assert.False(t, ok)
		if assert.ErrorIs(t, err, mcpredis.ErrPayloadTooLarge, "Send of %d bytes", size) {
			assert.Contains(t, err.Error(), "mcpredis: relay: payload too large: ")
			assert.Contains(t, err.Error(), "more than Config.MaxRelayBytes (32768)")
		}
		assert.ErrorIs(t, a.Broadcast(t.Context(), payload), mcpredis.ErrPayloadTooLarge, "Broadcast of %d bytes", size)
		var u interface{ Unavailable() bool }
		assert.False(t, errors.As(err, &u), "a payload too large is no outage")
	}
	ok, err = a.Send(t.Context(), b.ID(), []byte("small"))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "small", bIn.wait(t, 2)[1], "b hears what follows")
	assert.Equal(t, before, pubsubClients(t, admin), "the same subscriptions: none was cut")
	assert.Empty(t, logs.all(), "nothing restored")

	// Without the bound: Redis cuts b off, and the payload never arrives.
	loose, _ := newRelay(t, newClient(t, srv.Addr), nil)
	ok, err = loose.Send(t.Context(), b.ID(), bytes.Repeat([]byte("z"), 200<<10))
	require.NoError(t, err)
	assert.True(t, ok, "Redis counted b as a receiver")
	deadline := time.Now().Add(10 * time.Second)
	for count(logs.all(), "INFO mcpredis: the relay's subscription is restored: this instance receives answers and cancellations again") == 0 {
		require.True(t, time.Now().Before(deadline), "b's subscription was not cut and restored within 10 s")
		time.Sleep(20 * time.Millisecond)
	}
	assert.Len(t, bIn.all(), 2, "the payload was lost with b's connection")
}
