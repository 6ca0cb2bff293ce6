package mcpredis

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A relay is one instance's directed channel: the Redis side of handing a
// legacy answer (or a cancellation) to the instance that holds its waiter.
// Each instance has an id of its own, unguessable, and holds one
// subscription to the channel <prefix>instance:<id>, confirmed before
// newRelay returns, so that the instance can name itself in the ids of
// the requests it sends to clients before it serves any. Any instance can
// then send a payload to the instance an id names, with one PUBLISH whose
// receiver count says whether that instance exists.
//
// The relay carries opaque payloads: what they mean (an answer and the
// CallerID it must match, a cancellation) is the core's, which hears them
// through Receive, as a Handler hears a Notifier through Subscribe: the
// relay exists before the Handler that is given it, and one relay may
// serve several Handlers of a process. It is unexported until the core
// has the seams to use it (an answers seam: register a waiter, deliver an
// answer to its waiter; a cancels seam); the exported form would be
// NewRelay(ctx, Config) (*Relay, error) with the same methods.
//
// Under Redis Cluster the channel is a shard channel (SSUBSCRIBE,
// SPUBLISH; Redis 7.0 or newer): a PUBLISH there counts only the
// receivers connected to the node it was sent to, an SPUBLISH every
// receiver of the channel, since they all are on the node of its slot.
type relay struct {
	s       settings
	id      string // this instance's id: 22 base64url characters, 128 random bits
	channel string // <prefix>instance:<id>
	publish string // "publish", or "spublish" under Cluster
	kind    string // what Redis calls a confirmed subscription: "subscribe", or "ssubscribe" under Cluster
	pubsub  *redis.PubSub
	done    chan struct{} // closed when the receiving goroutine has returned
	health  health

	closeOnce sync.Once
	closeErr  error

	mu        sync.Mutex
	receivers map[*func([]byte)]struct{}
}

// relayStartTimeout bounds how long newRelay waits for its subscription
// when ctx sets no earlier deadline.
var relayStartTimeout = 5 * time.Second

// relayRetryPause is how long newRelay waits before asking again when
// Redis refuses the connection (not up yet).
const relayRetryPause = 50 * time.Millisecond

// instanceIDBytes is how many random bytes an instance id encodes.
const instanceIDBytes = 16

// newRelay returns this instance's relay once Redis has confirmed its
// subscription (see Receive for what it then does with a payload).
// newRelay waits until ctx is done or relayStartTimeout has passed,
// whichever comes first, asking again while Redis refuses the connection
// (still starting, say); past that it returns the last error, leaving
// nothing behind. It panics on a setup mistake in cfg, as PerIP does;
// Config.Failure plays no part here.
func newRelay(ctx context.Context, cfg Config) (*relay, error) {
	s := settle("newRelay", cfg)
	var b [instanceIDBytes]byte
	_, _ = rand.Read(b[:]) // never fails (Go 1.24)
	r := &relay{s: s, id: base64.RawURLEncoding.EncodeToString(b[:]), publish: "publish", kind: "subscribe", done: make(chan struct{}),
		receivers: map[*func([]byte)]struct{}{}}
	r.channel = r.channelOf(r.id)
	r.health = health{logger: s.logger, what: "relay", down1: "mcpredis: Redis does not answer: answers and cancellations for other instances are lost until it does"}

	ctx, cancel := context.WithTimeout(ctx, relayStartTimeout)
	defer cancel()
	if cc, ok := s.client.(*redis.ClusterClient); ok {
		r.publish, r.kind = "spublish", "ssubscribe"
		r.pubsub = cc.SSubscribe(ctx, r.channel)
	} else {
		r.pubsub = s.client.Subscribe(ctx, r.channel)
	}
	if err := r.confirmed(ctx); err != nil {
		_ = r.pubsub.Close()
		return nil, err
	}
	go r.receive(r.pubsub.ChannelWithSubscriptions())
	return r, nil
}

// Receive hands each payload sent to this instance from now on to
// deliver, until cancel is called; cancel may be called more than once.
// deliver runs on the relay's receiving goroutine, one payload at a time,
// and must not block, nor modify payload: every func is handed the same
// bytes. A payload that arrives while no func is registered
// is dropped: the sender was told it arrived (the instance exists), as it
// would be told of an answer to a call that has just ended.
func (r *relay) Receive(deliver func(payload []byte)) (cancel func()) {
	if deliver == nil {
		panic("mcpredis: relay.Receive: the deliver func is nil")
	}
	key := &deliver
	r.mu.Lock()
	defer r.mu.Unlock()
	r.receivers[key] = struct{}{}
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.receivers, key)
	}
}

// confirmed waits for Redis to confirm the subscription, asking again
// while the connection fails, until ctx is done.
func (r *relay) confirmed(ctx context.Context) error {
	for {
		msg, err := r.pubsub.Receive(ctx)
		if err == nil {
			if _, ok := msg.(*redis.Subscription); ok { // of the one channel it subscribed to
				return nil
			}
			continue // nothing else comes before the confirmation; skipped all the same
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mcpredis: the relay's subscription to %s was not confirmed in time: %w", r.channel, err)
		case <-time.After(relayRetryPause):
		}
	}
}

// ID returns this instance's id, the one Send is given to reach it.
func (r *relay) ID() string { return r.id }

// channelOf returns the channel of the instance id names.
func (r *relay) channelOf(id string) string { return r.s.prefix + "instance:" + id }

// validInstanceID reports whether id can be an instance's id: 22
// base64url characters that decode to 16 bytes in canonical form. An id
// comes from a client (inside a request id it answers), so nothing else
// goes into a channel name.
func validInstanceID(id string) bool {
	if len(id) != base64.RawURLEncoding.EncodedLen(instanceIDBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.Strict().DecodeString(id) // 22 characters: 16 bytes, the last 4 bits zero
	return err == nil
}

// Send hands payload to the instance whose id is instance, with one
// PUBLISH sent once within Config.Timeout (or ctx's deadline, if sooner).
// It reports whether that instance received it: false with a nil error
// when no instance has that id (it has stopped, its subscription is
// broken, or it never existed; an id that is not an instance id at all is
// not sent), which the core answers as an unknown id. A PUBLISH that
// Redis did not answer in time returns its error; the payload may or may
// not have arrived. One that ctx ended first is not taken for an outage
// of Redis (nothing is logged).
func (r *relay) Send(ctx context.Context, instance string, payload []byte) (bool, error) {
	if !validInstanceID(instance) {
		return false, nil
	}
	bounded, cancel := context.WithTimeout(ctx, r.s.timeout)
	defer cancel()
	cmd := redis.NewIntCmd(bounded, r.publish, r.channelOf(instance), payload)
	_ = r.s.client.Process(bounded, noRetry{cmd})
	n, err := cmd.Result()
	if err != nil {
		if !gaveUp(ctx) { // a caller that gave up first is no outage
			r.health.failed(err)
		}
		return false, err
	}
	r.health.answered()
	return n > 0, nil
}

// Close ends the subscription and waits for the receiving goroutine to
// return: nothing is handed to a Receive func after it. Send still works. Close
// may be called more than once; the client stays open (it is the
// caller's).
func (r *relay) Close() error {
	r.closeOnce.Do(func() { r.closeErr = r.pubsub.Close() })
	<-r.done
	return r.closeErr
}

// receive reads the subscription until it is closed, handing each payload
// to every Receive func. The first confirmation was read by newRelay, so
// every one here is go-redis restoring the subscription after a break:
// payloads sent meanwhile found no receiver, and their senders were told
// so.
func (r *relay) receive(ch <-chan any) {
	defer close(r.done)
	for msg := range ch {
		switch msg := msg.(type) {
		case *redis.Subscription:
			if msg.Kind == r.kind {
				r.s.logger.LogAttrs(context.Background(), slog.LevelInfo,
					"mcpredis: the relay's subscription is restored: this instance receives answers and cancellations again",
					slog.String("component", "mcpredis relay"), slog.String("channel", r.channel))
			}
		case *redis.Message:
			r.deliver([]byte(msg.Payload))
		}
	}
}

// deliver hands payload to every Receive func, called outside the lock.
func (r *relay) deliver(payload []byte) {
	r.mu.Lock()
	fs := make([]func([]byte), 0, len(r.receivers))
	for f := range r.receivers {
		fs = append(fs, *f)
	}
	r.mu.Unlock()
	for _, f := range fs {
		f(payload)
	}
}
