package mcpredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpmw/mcpmw"
)

// A Notifier is an mcpmw.Notifier that carries Events between instances
// through Redis pub/sub. Each Notifier holds one subscription (one
// connection) to its channel, whatever the number of Handlers and
// listeners in its process, and fans each event out to its subscribers
// there; the receiving Handler then checks each listener's permission and
// audience, as for a local event.
//
// Publish delivers to this process's subscribers at once, as a
// LocalNotifier does, and sends the event to the other instances with
// one PUBLISH; an instance never hears its own events twice. Pub/sub is
// at-most-once: an event published while an instance's subscription is
// broken, or not made yet, never reaches it. go-redis restores the
// subscription by itself; each time it does, and when the first came late
// (Redis was down at start), the Notifier calls the funcs given to
// SubscribeResync, so that listeners can be told their lists may have
// changed.
//
// A Notifier is safe for concurrent use. Close it when done.
type Notifier struct {
	s       settings
	channel string
	self    string // this Notifier's id: its own events come back from Redis with it
	local   *mcpmw.LocalNotifier
	stop    chan struct{} // closed by Close
	done    chan struct{} // closed when the receiving goroutine has returned
	health  health
	garbled atomic.Bool // an undecodable message was logged

	mu     sync.Mutex
	resync map[*func()]struct{}
	pubsub *redis.PubSub // nil until the receiving goroutine has made it
	closed bool
}

// wireEvent is an Event on the channel, with the id of the Notifier that
// published it.
type wireEvent struct {
	From       string    `json:"from"`
	Method     string    `json:"method"`
	URI        string    `json:"uri,omitempty"`
	Permission string    `json:"permission"`
	Audience   string    `json:"audience,omitempty"`
	Task       *wireTask `json:"task,omitempty"`
}

// wireTask is the task of a notifications/tasks event (mcpmw.Event.Task):
// what tasks/get shows of it, and the caller, endpoint and permission a
// listener must match. Times are Unix milliseconds, durations
// milliseconds, as the notification shows them.
type wireTask struct {
	ID         string                     `json:"id"`
	CallerID   string                     `json:"caller"`
	Endpoint   string                     `json:"endpoint"`
	Tool       string                     `json:"tool,omitempty"`
	Permission string                     `json:"perm"`
	Status     string                     `json:"status"`
	Message    string                     `json:"msg,omitempty"`
	Created    int64                      `json:"created"`
	Updated    int64                      `json:"updated"`
	TTL        int64                      `json:"ttl"`
	Poll       int64                      `json:"poll,omitempty"`
	Requests   map[string]json.RawMessage `json:"q,omitempty"`
	Result     json.RawMessage            `json:"result,omitempty"`
	Error      json.RawMessage            `json:"error,omitempty"`
}

// toWireTask is t as an event carries it; nil for nil.
func toWireTask(t *mcpmw.Task) *wireTask {
	if t == nil {
		return nil
	}
	return &wireTask{ID: t.ID, CallerID: t.CallerID, Endpoint: t.Endpoint, Tool: t.Tool, Permission: string(t.Permission),
		Status: string(t.Status), Message: t.StatusMessage, Created: t.Created.UnixMilli(), Updated: t.Updated.UnixMilli(),
		TTL: t.TTL.Milliseconds(), Poll: t.PollInterval.Milliseconds(), Requests: t.InputRequests, Result: t.Result, Error: t.Error}
}

// task is w as the receiving Handler reads it; nil for nil.
func (w *wireTask) task() *mcpmw.Task {
	if w == nil {
		return nil
	}
	return &mcpmw.Task{ID: w.ID, CallerID: w.CallerID, Endpoint: w.Endpoint, Tool: w.Tool, Permission: mcpmw.Permission(w.Permission),
		Status: mcpmw.TaskStatus(w.Status), StatusMessage: w.Message, Created: time.UnixMilli(w.Created), Updated: time.UnixMilli(w.Updated),
		TTL: time.Duration(w.TTL) * time.Millisecond, PollInterval: time.Duration(w.Poll) * time.Millisecond,
		InputRequests: w.Requests, Result: w.Result, Error: w.Error}
}

// NewNotifier returns a Notifier on cfg's Redis and starts its
// subscription to the channel <Prefix>events on a goroutine of its own:
// it sends nothing to Redis and waits for nothing (a Notifier made while
// Redis is down, or hung, subscribes once it answers). Every instance of
// a service gives the same Redis and Prefix. NewNotifier panics on a
// setup mistake in cfg, as PerIP does; Config.Failure plays no part here.
func NewNotifier(cfg Config) *Notifier {
	s := settle("NewNotifier", cfg)
	var id [16]byte
	_, _ = rand.Read(id[:])
	n := &Notifier{
		s:       s,
		channel: s.prefix + "events",
		self:    hex.EncodeToString(id[:]),
		local:   mcpmw.NewLocalNotifier(),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		resync:  map[*func()]struct{}{},
	}
	n.health = health{logger: s.logger, what: "notifier", down1: "mcpredis: Redis does not answer: events published here reach this instance only until it does"}
	go n.run()
	return n
}

// run makes the subscription, then reads it until Close.
func (n *Notifier) run() {
	defer close(n.done)
	if ps, prompt := n.subscribe(); ps != nil {
		n.receive(ps.ChannelWithSubscriptions(), prompt)
	}
}

// subscribe makes the subscription, and returns it, or nil once Close is
// called first. It reports whether Redis confirmed it at once: on the
// first connection, within Config.Timeout (no listener can have missed an
// event then, beyond those of the moment NewNotifier was called). When it
// did not, go-redis connects again by itself, and the confirmation comes
// later, to receive. A client that cannot subscribe at all yet (a Ring
// whose every shard is down) is asked again.
func (n *Notifier) subscribe() (*redis.PubSub, bool) {
	for first := true; ; first = false {
		ctx, cancel := context.WithTimeout(context.Background(), n.s.timeout)
		ps, err := subscribe(ctx, n.s.client, "subscribe", n.channel)
		if err == nil {
			prompt := false
			if first {
				msg, err := ps.Receive(ctx)
				_, confirmed := msg.(*redis.Subscription)
				prompt = err == nil && confirmed
			}
			cancel()
			n.mu.Lock()
			defer n.mu.Unlock()
			if n.closed {
				_ = ps.Close()
				return nil, false
			}
			n.pubsub = ps
			return ps, prompt
		}
		cancel()
		select {
		case <-n.stop:
			return nil, false
		case <-time.After(subscribeRetryPause):
		}
	}
}

// Publish delivers ev to this process's subscribers, then publishes it to
// the other instances within Config.Timeout (or ctx's deadline, if
// sooner). It returns ctx's error, delivering nothing, when ctx is already
// done, and the error of the PUBLISH that Redis did not answer: the event
// then reached this instance's listeners only. A PUBLISH that ctx ended
// first is not taken for an outage of Redis (nothing is logged).
func (n *Notifier) Publish(ctx context.Context, ev mcpmw.Event) error {
	if err := n.local.Publish(ctx, ev); err != nil {
		return err
	}
	payload, err := json.Marshal(wireEvent{From: n.self, Method: ev.Method, URI: ev.URI, Permission: string(ev.Permission), Audience: ev.Audience, Task: toWireTask(ev.Task)})
	if err != nil {
		return err // a task's raw JSON that is not JSON: reached this instance's listeners only
	}
	bounded, cancel := context.WithTimeout(ctx, n.s.timeout)
	defer cancel()
	if err := n.s.batch.do(bounded, n.channel, publishCmd(bounded, "publish", n.channel, payload)); err != nil {
		if n.health.judge(ctx, err) { // not when the caller gave up first
			return outage(err)
		}
		return err
	}
	n.health.answered()
	return nil
}

// Subscribe calls deliver with each Event published from now on, here or
// on another instance, until cancel is called; cancel may be called more
// than once. deliver must not block: for events from elsewhere it runs on
// the Notifier's receiving goroutine, for events published here on the
// publisher's.
func (n *Notifier) Subscribe(deliver func(mcpmw.Event)) (cancel func()) {
	return n.local.Subscribe(deliver)
}

// SubscribeResync calls resync, until cancel is called, each time events
// published on the other instances may have been lost: when go-redis has
// restored the Notifier's subscription after a break (Redis restarted, a
// network failure, a failover), and when the first subscription came late
// (Redis was down, or slow, when the Notifier started: Redis did not
// confirm it within Config.Timeout), so that listeners that opened
// meanwhile hear that their lists may have changed. resync runs on the
// receiving goroutine, before any event that comes after the confirmed
// subscription, and must not block.
func (n *Notifier) SubscribeResync(resync func()) (cancel func()) {
	key := &resync
	n.mu.Lock()
	defer n.mu.Unlock()
	n.resync[key] = struct{}{}
	return func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		delete(n.resync, key)
	}
}

// Close ends the subscription and waits for the receiving goroutine to
// return: no event from another instance is delivered after it, and no
// resync func called. Publish still reaches this process's subscribers,
// and Redis. Close may be called more than once; the client stays open
// (it is the caller's). Close waits at most Config.Timeout for go-redis
// to close the subscription: one connecting meanwhile to a Redis that
// accepts and never answers holds it for the client's DialTimeout, and
// its goroutines end then, on their own. It also waits, as long again at
// most, for the publishes on their way (see Config.Timeout).
func (n *Notifier) Close() error {
	n.mu.Lock()
	already := n.closed
	n.closed = true
	ps := n.pubsub
	n.mu.Unlock()
	if already {
		<-n.done
		return nil
	}
	close(n.stop)
	<-n.done
	n.s.batch.wait(n.s.timeout) // publishes on their way: each ends by its deadline
	if ps == nil {
		return nil
	}
	return closeWithin(ps, n.s.timeout)
}

// receive reads the subscription until Close: events from other
// instances go to the subscribers; each subscription confirmation calls
// the resync funcs, and one after the first (subscribed: subscribe read
// that one) means go-redis has reconnected.
func (n *Notifier) receive(ch <-chan any, subscribed bool) {
	for {
		var msg any
		select {
		case <-n.stop:
			go drain(ch)
			return
		case msg = <-ch:
		}
		switch msg := msg.(type) {
		case *redis.Subscription:
			if msg.Kind != "subscribe" {
				continue
			}
			if subscribed {
				n.s.logger.LogAttrs(context.Background(), slog.LevelInfo,
					"mcpredis: subscription restored: events published meanwhile are lost; telling listeners their lists may have changed",
					slog.String("component", "mcpredis notifier"), slog.String("channel", n.channel))
			}
			subscribed = true
			n.resynced()
		case *redis.Message:
			n.deliver(msg.Payload)
		}
	}
}

// deliver decodes one event from another instance and hands it to the
// subscribers; its own, and what does not decode, it drops. The first
// undecodable message is logged (a publisher of another version, or not
// this package, shares the channel), and no later one: whoever can
// publish on the channel cannot fill the log.
func (n *Notifier) deliver(payload string) {
	var w wireEvent
	if err := json.Unmarshal([]byte(payload), &w); err != nil || w.From == "" {
		if err == nil {
			err = errors.New("no publisher id")
		}
		if n.garbled.CompareAndSwap(false, true) {
			n.s.logger.LogAttrs(context.Background(), slog.LevelWarn, "mcpredis: undecodable messages on the events channel are dropped (only the first is logged)",
				slog.String("component", "mcpredis notifier"), slog.String("channel", n.channel), slog.String("error", err.Error()))
		}
		return
	}
	if w.From == n.self {
		return // delivered here when it was published
	}
	_ = n.local.Publish(context.Background(), mcpmw.Event{Method: w.Method, URI: w.URI, Permission: mcpmw.Permission(w.Permission), Audience: w.Audience, Task: w.Task.task()})
}

// resynced calls every resync func.
func (n *Notifier) resynced() {
	n.mu.Lock()
	fs := make([]func(), 0, len(n.resync))
	for f := range n.resync {
		fs = append(fs, *f)
	}
	n.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

var _ mcpmw.Notifier = (*Notifier)(nil)
var _ mcpmw.Resyncer = (*Notifier)(nil)
