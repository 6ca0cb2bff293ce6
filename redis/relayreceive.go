package mcpredis

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// receiveOwn reads the subscription to this instance's channel until
// Close. When Redis ends it itself (under Cluster, the slot of the channel
// moved to another node: SUNSUBSCRIBE), it subscribes again, where the
// slot is now.
func (r *Relay) receiveOwn(ps *redis.PubSub) {
	defer r.done.Done()
	for ps != nil && r.receive(ps.ChannelWithSubscriptions(), r.kind, r.channel) {
		ps = r.resubscribe(ps)
	}
}

// receive reads a subscription to channel until Close, handing each
// payload to every Receive func; kind is what Redis calls its
// confirmations. The first confirmation was read by NewRelay, so every
// one here is go-redis restoring the subscription after a break: payloads
// sent meanwhile found no receiver, and their senders were told so. It
// reports whether it stopped because Redis ended the subscription.
func (r *Relay) receive(ch <-chan any, kind, channel string) (ended bool) {
	unsubscribed := strings.Replace(kind, "subscribe", "unsubscribe", 1) // unsubscribe, sunsubscribe
	for {
		var msg any
		select {
		case <-r.stop:
			go drain(ch)
			return false
		case msg = <-ch:
		}
		switch msg := msg.(type) {
		case *redis.Subscription:
			switch {
			case msg.Kind == kind:
				r.restored(channel)
			case msg.Kind == unsubscribed && msg.Channel == channel:
				go drain(ch)
				return true
			}
		case *redis.Message:
			r.deliver([]byte(msg.Payload))
		}
	}
}

// restored logs that the subscription to channel is back.
func (r *Relay) restored(channel string) {
	r.s.logger.LogAttrs(context.Background(), slog.LevelInfo,
		"mcpredis: the relay's subscription is restored: this instance receives answers and cancellations again",
		slog.String("component", "mcpredis relay"), slog.String("channel", channel))
}

// resubscribe closes old, the subscription to this instance's channel
// that Redis ended, and subscribes again, asking until Redis confirms it;
// it returns the new subscription (which Close closes), or nil once Close
// is called.
func (r *Relay) resubscribe(old *redis.PubSub) *redis.PubSub {
	r.s.logger.LogAttrs(context.Background(), slog.LevelWarn,
		"mcpredis: Redis ended the relay's subscription (its slot moved to another node): subscribing again",
		slog.String("component", "mcpredis relay"), slog.String("channel", r.channel))
	_ = closeWithin(old, r.s.timeout)
	for {
		if cc, ok := r.s.client.(*redis.ClusterClient); ok {
			cc.ReloadState(context.Background()) // where the slot is now
		}
		if ps, err := r.subscribeOnce(); err == nil {
			r.mu.Lock()
			r.pubsub = ps // Close closes it, once this goroutine has returned
			r.mu.Unlock()
			r.restored(r.channel)
			return ps
		}
		select {
		case <-r.stop:
			return nil
		case <-time.After(subscribeRetryPause):
		}
	}
}

// subscribeOnce subscribes to this instance's channel and waits for Redis
// to confirm it, within Config.Timeout; an error (the node does not hold
// the slot yet: MOVED) closes what it made.
func (r *Relay) subscribeOnce() (*redis.PubSub, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.s.timeout)
	defer cancel()
	ps, err := subscribe(ctx, r.s.client, r.kind, r.channel)
	if err != nil {
		return nil, err
	}
	msg, err := ps.Receive(ctx)
	if _, ok := msg.(*redis.Subscription); err == nil && ok { // nothing else comes first
		return ps, nil
	}
	_ = ps.Close()
	if err == nil {
		err = fmt.Errorf("mcpredis: %s %s: Redis answered %v", r.kind, r.channel, msg)
	}
	return nil, err
}
