package mcpredis

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpmw/mcpmw"
)

// A Relay is one instance's directed channel, and the channel all
// instances share: the Redis side of mcpmw.Relay (Options.Relay), which
// hands a legacy answer to the instance that holds its waiter and a
// cancellation to every instance.
// Each instance has an id of its own, unguessable, and holds one
// subscription to the channel <prefix>instance:<id>, confirmed before
// NewRelay returns, so that the instance can name itself in the ids of
// the requests it sends to clients before it serves any, and one to
// <prefix>instances, which every instance hears. Any instance can then
// send a payload to the instance an id names, with one PUBLISH whose
// receiver count says whether that instance exists, or to all of them
// (Broadcast).
//
// The relay carries opaque payloads: what they mean (an answer and the
// CallerID it must match, a cancellation) is the core's, which hears them
// through Receive, as a Handler hears a Notifier through Subscribe: the
// Relay exists before the Handler that is given it, and one Relay may
// serve several Handlers of a process.
//
// Under Redis Cluster the channel is a shard channel (SSUBSCRIBE,
// SPUBLISH; Redis 7.0 or newer): a PUBLISH there counts only the
// receivers connected to the node it was sent to, an SPUBLISH every
// receiver of the channel, since they all are on the node of its slot.
// When that slot moves to another node (resharding), Redis ends the
// subscription (SUNSUBSCRIBE), and the relay subscribes again, on the
// node that holds the slot now; payloads sent meanwhile find no receiver,
// and their senders are told so. The shared channel is an ordinary one,
// which a Cluster delivers to the subscribers on every node. Under a
// *redis.Ring each channel lives on the shard its name picks, for the
// subscription and for each send alike.
//
// A payload is at most Config.MaxRelayBytes (1 MiB by default): Redis
// drops a subscriber whose output buffer passes its
// client-output-buffer-limit for pubsub (32 MB at once, or 8 MB for a
// minute, by default), and with it every payload on its way to that
// instance, so Send and Broadcast refuse a larger one, with an error
// wrapping ErrPayloadTooLarge, before anything is sent.
type Relay struct {
	s       settings
	id      string         // this instance's id: 22 base64url characters, 128 random bits
	channel string         // <prefix>instance:<id>
	publish string         // "publish", or "spublish" under Cluster
	kind    string         // what Redis calls a confirmed subscription: "subscribe", or "ssubscribe" under Cluster
	shared  string         // <prefix>instances
	all     *redis.PubSub  // the subscription to shared
	stop    chan struct{}  // closed by Close
	done    sync.WaitGroup // the receiving goroutines
	health  health

	closeOnce sync.Once
	closeErr  error

	mu        sync.Mutex
	pubsub    *redis.PubSub // the subscription to channel: a new one after Redis ended it
	receivers map[*func([]byte)]struct{}
}

// ErrPayloadTooLarge is what Send and Broadcast return, wrapped, for a
// payload of more than Config.MaxRelayBytes: nothing was sent.
var ErrPayloadTooLarge = errors.New("mcpredis: relay: payload too large")

// relayStartTimeout bounds how long NewRelay waits for its subscription
// when ctx sets no earlier deadline.
const relayStartTimeout = 5 * time.Second

// relayRetryPause is how long NewRelay waits before asking again when
// Redis refuses the connection (not up yet).
const relayRetryPause = 50 * time.Millisecond

// instanceIDBytes is how many random bytes an instance id encodes.
const instanceIDBytes = 16

// NewRelay returns this instance's Relay once Redis has confirmed its
// subscriptions (see Receive for what it then does with a payload).
// NewRelay waits until ctx is done or relayStartTimeout has passed,
// whichever comes first, asking again while Redis refuses the connection
// (still starting, say); past that it returns the last error, leaving
// nothing behind. It panics on a setup mistake in cfg, as PerIP does;
// Config.Failure plays no part here.
func NewRelay(ctx context.Context, cfg Config) (*Relay, error) {
	return newRelay(ctx, cfg, relayStartTimeout)
}

// newRelay is NewRelay, waiting at most wait for the subscriptions.
func newRelay(ctx context.Context, cfg Config, wait time.Duration) (*Relay, error) {
	s := settle("NewRelay", cfg)
	var b [instanceIDBytes]byte
	_, _ = rand.Read(b[:]) // never fails (Go 1.24)
	r := &Relay{s: s, id: base64.RawURLEncoding.EncodeToString(b[:]), publish: "publish", kind: "subscribe",
		stop: make(chan struct{}), receivers: map[*func([]byte)]struct{}{}}
	r.channel, r.shared = r.channelOf(r.id), s.prefix+"instances"
	r.health = health{logger: s.logger, what: "relay", down1: "mcpredis: Redis does not answer: answers and cancellations for other instances are lost until it does"}
	if _, ok := s.client.(*redis.ClusterClient); ok {
		r.publish, r.kind = "spublish", "ssubscribe"
	}

	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	own, err := subscribe(ctx, s.client, r.kind, r.channel)
	if err != nil {
		return nil, err
	}
	all, err := subscribe(ctx, s.client, "subscribe", r.shared)
	if err != nil {
		_ = own.Close()
		return nil, err
	}
	if err := errors.Join(confirmed(ctx, own, r.channel), confirmed(ctx, all, r.shared)); err != nil {
		_ = own.Close()
		_ = all.Close()
		return nil, err
	}
	r.pubsub, r.all = own, all
	r.done.Add(2)
	go r.receiveOwn(own)
	go func() {
		defer r.done.Done()
		r.receive(all.ChannelWithSubscriptions(), "subscribe", r.shared)
	}()
	return r, nil
}

// Receive hands each payload sent to this instance from now on to
// deliver, until cancel is called; cancel may be called more than once.
// deliver runs on the relay's receiving goroutine, one payload at a time,
// and must not block, nor modify payload: every func is handed the same
// bytes. A payload that arrives while no func is registered
// is dropped: the sender was told it arrived (the instance exists), as it
// would be told of an answer to a call that has just ended.
func (r *Relay) Receive(deliver func(payload []byte)) (cancel func()) {
	if deliver == nil {
		panic("mcpredis: Relay.Receive: the deliver func is nil")
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

// confirmed waits for Redis to confirm ps's subscription to channel,
// asking again while the connection fails, until ctx is done.
func confirmed(ctx context.Context, ps *redis.PubSub, channel string) error {
	for {
		msg, err := ps.Receive(ctx)
		if err == nil {
			if _, ok := msg.(*redis.Subscription); ok { // of the one channel it subscribed to
				return nil
			}
			continue // nothing else comes before the confirmation; skipped all the same
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mcpredis: the relay's subscription to %s was not confirmed in time: %w", channel, err)
		case <-time.After(relayRetryPause):
		}
	}
}

// ID returns this instance's id, the one Send is given to reach it.
func (r *Relay) ID() string { return r.id }

// channelOf returns the channel of the instance id names.
func (r *Relay) channelOf(id string) string { return r.s.prefix + "instance:" + id }

// validInstanceID reports whether id can be an instance's id: 22
// base64url characters that decode to 16 bytes in canonical form. An id
// comes from a client (inside a request id it answers), so nothing else
// goes into a channel name.
func validInstanceID(id string) bool {
	if len(id) != base64.RawURLEncoding.EncodedLen(instanceIDBytes) {
		return false
	}
	// 22 characters: 16 bytes, the last 4 bits zero. The length of what
	// they decode to counts too: Go's base64 skips CR and LF, even Strict.
	b, err := base64.RawURLEncoding.Strict().DecodeString(id)
	return err == nil && len(b) == instanceIDBytes
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
func (r *Relay) Send(ctx context.Context, instance string, payload []byte) (bool, error) {
	if !validInstanceID(instance) {
		return false, nil
	}
	n, err := r.publishTo(ctx, r.publish, r.channelOf(instance), payload)
	return n > 0, err
}

// Broadcast hands payload to every instance, this one included, with one
// PUBLISH sent once within Config.Timeout (or ctx's deadline, if sooner).
// Like Send, it refuses a payload of more than Config.MaxRelayBytes.
func (r *Relay) Broadcast(ctx context.Context, payload []byte) error {
	_, err := r.publishTo(ctx, "publish", r.shared, payload)
	return err
}

// publishTo sends payload to channel with command (publish or spublish),
// once within Config.Timeout, and returns how many received it; a payload
// over Config.MaxRelayBytes is not sent.
func (r *Relay) publishTo(ctx context.Context, command, channel string, payload []byte) (int64, error) {
	if len(payload) > r.s.maxRelay {
		return 0, fmt.Errorf("%w: %d bytes, more than Config.MaxRelayBytes (%d)", ErrPayloadTooLarge, len(payload), r.s.maxRelay)
	}
	bounded, cancel := context.WithTimeout(ctx, r.s.timeout)
	defer cancel()
	cmd := publishCmd(bounded, command, channel, payload)
	if err := r.s.batch.do(bounded, channel, cmd); err != nil {
		if r.health.judge(ctx, err) { // not when the caller gave up first
			return 0, outage(err)
		}
		return 0, err
	}
	r.health.answered()
	return cmd.Val(), nil
}

// Close ends the subscriptions and waits for the receiving goroutines to
// return: nothing is handed to a Receive func after it. Send still works.
// Close may be called more than once; the client stays open (it is the
// caller's). Like Notifier.Close, it waits at most Config.Timeout for
// go-redis to close each subscription, and as long for the sends on
// their way.
func (r *Relay) Close() error {
	r.closeOnce.Do(func() {
		close(r.stop)
		r.done.Wait()
		r.s.batch.wait(r.s.timeout) // sends on their way: each ends by its deadline
		r.mu.Lock()
		own := r.pubsub // the last one made: the goroutine that made them has returned
		r.mu.Unlock()
		r.closeErr = errors.Join(closeWithin(own, r.s.timeout), closeWithin(r.all, r.s.timeout))
	})
	return r.closeErr
}

// deliver hands payload to every Receive func, called outside the lock.
func (r *Relay) deliver(payload []byte) {
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

var _ mcpmw.Relay = (*Relay)(nil)
