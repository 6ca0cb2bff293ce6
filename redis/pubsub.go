package mcpredis

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// What the Notifier and the Relay share of pub/sub, whatever the client:
// one node, Cluster or Ring.

// subscribeRetryPause is how long a subscription that could not be made at
// all waits before it is asked again.
const subscribeRetryPause = 100 * time.Millisecond

// subscribe subscribes to channel through c, with command (subscribe, or
// ssubscribe for a shard channel), connecting within ctx. It returns the
// subscription even when that first connection failed (go-redis connects
// again when it is read), and an error only when c could make none: a
// *redis.Ring whose every shard is down panics there, and that is
// recovered as an error.
func subscribe(ctx context.Context, c redis.UniversalClient, command, channel string) (ps *redis.PubSub, err error) {
	defer func() {
		if v := recover(); v != nil {
			ps, err = nil, fmt.Errorf("mcpredis: %s %s: %v", command, channel, v)
		}
	}()
	if command == "ssubscribe" {
		return c.SSubscribe(ctx, channel), nil
	}
	return c.Subscribe(ctx, channel), nil
}

// publishCmd returns the command (publish, or spublish for a shard
// channel) that sends payload to channel, routed by the channel's name:
// a *redis.Ring sends a PUBLISH, which it takes for keyless, to a shard
// at random, where the subscriber to the channel, on the shard its name
// picks, would never hear it.
func publishCmd(ctx context.Context, command, channel string, payload []byte) *redis.IntCmd {
	cmd := redis.NewIntCmd(ctx, command, channel, payload)
	cmd.SetFirstKeyPos(1)
	return cmd
}

// closeWithin closes ps, waiting at most wait: go-redis holds a
// subscription's lock while it connects, so closing one that is
// connecting to a Redis that accepts and never answers waits for the
// client's DialTimeout (5 s by default), twice. It returns ps.Close's
// error, or nil once wait has passed (the close then ends on its own).
func closeWithin(ps *redis.PubSub, wait time.Duration) error {
	closed := make(chan error, 1)
	go func() { closed <- ps.Close() }()
	select {
	case err := <-closed:
		return err
	case <-time.After(wait):
		return nil
	}
}

// drain reads ch until go-redis closes it, so that none of its goroutines
// waits to hand over a message that nobody reads any more.
func drain(ch <-chan any) {
	for range ch {
	}
}
