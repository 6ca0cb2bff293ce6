package mcpredis

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Config is what every part of the package is given: a client, where its
// keys go, what to do while Redis cannot answer, and how long to wait for
// it. Only Client is required.
type Config struct {
	// Client is the connection to Redis: a *redis.Client (one node, or
	// Sentinel through redis.NewFailoverClient), a *redis.ClusterClient, or
	// anything else implementing redis.UniversalClient. Every instance of a
	// service gives the same Redis (and the same Prefix), so that they
	// share one budget per client, hear each other's events and see each
	// other's tasks.
	//
	// The client must honour the per-call deadline, and the constructors
	// panic on one that cannot: a *redis.Client, *redis.ClusterClient or
	// *redis.Ring made without ContextTimeoutEnabled: true waits its
	// ReadTimeout, 3 s by default, for a server that has stopped
	// answering; a *redis.AutoPipeliner holds a queued call until its
	// batch is answered, whatever the call's deadline (give the client it
	// was made from). redis.ParseURL never sets ContextTimeoutEnabled (no
	// URL parameter does): set it on the Options it returns, as the
	// package example does. Another UniversalClient must bound each
	// command by its context's deadline in the same way.
	Client redis.UniversalClient

	// Prefix starts every key and channel name the package uses, so that
	// one Redis can serve several services, or several environments.
	// Default "mcpmw:". The package doc lists the keys and channels.
	Prefix string

	// Failure is what the rate limiter does while Redis is slow or
	// unreachable: FailOpen (the zero value) admits every request,
	// FailClosed refuses it with 429 and Retry-After.
	Failure FailurePolicy

	// Timeout bounds each call to Redis, a rate-limit check, a publish or
	// a task store call, from the moment it is sent: past it Redis counts
	// as unreachable for that call, and Failure applies (a task store
	// call returns an error). Default 50 ms, well above a healthy
	// round trip (well under a millisecond on a LAN) and well below what a
	// person notices.
	Timeout time.Duration

	// Logger receives one line each time Redis becomes unreachable and one
	// when it answers again, never one per request. Nil means
	// slog.Default().
	Logger *slog.Logger

	// MaxRelayBytes bounds the payload a Relay sends (a legacy client's
	// answer, relayed to the instance waiting for it): a larger one is
	// refused with an error wrapping ErrPayloadTooLarge. Redis drops a
	// subscriber whose output buffer passes client-output-buffer-limit
	// pubsub (32 MB at once, or 8 MB for a minute, by default), cutting
	// that instance off, so keep it well below the server's limit.
	// Default 1 MiB.
	MaxRelayBytes int
}

// A FailurePolicy says what the rate limiter does while Redis cannot
// answer within Config.Timeout.
type FailurePolicy int

const (
	// FailOpen admits every request while Redis cannot be reached: an
	// outage of Redis is not an outage of the service, at the price of no
	// limit meanwhile (each instance's in-flight work is still bounded by
	// its server's own limits).
	FailOpen FailurePolicy = iota
	// FailClosed refuses every request with 429 and Retry-After: 1 while
	// Redis cannot be reached: nothing gets past a limit that cannot be
	// checked.
	FailClosed
)

// String returns "open" or "closed", the words REDIS_FAIL uses.
func (p FailurePolicy) String() string {
	switch p {
	case FailOpen:
		return "open"
	case FailClosed:
		return "closed"
	}
	return fmt.Sprintf("FailurePolicy(%d)", int(p))
}

const (
	defaultPrefix   = "mcpmw:"
	defaultTimeout  = 50 * time.Millisecond
	defaultMaxRelay = 1 << 20
)

// settings is a Config with its defaults filled in and checked.
type settings struct {
	client   redis.UniversalClient
	prefix   string
	failure  FailurePolicy
	timeout  time.Duration
	logger   *slog.Logger
	maxRelay int
	batch    *batcher // every command of the part given these settings goes through it
}

// settle fills in cfg's defaults; it panics, naming what, on a setup
// mistake (the constructor is what names itself in the message).
func settle(ctor string, cfg Config) settings {
	s := settings{client: cfg.Client, prefix: cfg.Prefix, failure: cfg.Failure, timeout: cfg.Timeout, logger: cfg.Logger, maxRelay: cfg.MaxRelayBytes}
	switch {
	case s.client == nil:
		panic("mcpredis: " + ctor + ": Config.Client is nil")
	case s.failure != FailOpen && s.failure != FailClosed:
		panic(fmt.Sprintf("mcpredis: %s: Config.Failure is %v: want FailOpen or FailClosed", ctor, s.failure))
	case s.timeout < 0:
		panic(fmt.Sprintf("mcpredis: %s: Config.Timeout is %v: want a positive duration, or 0 for the default", ctor, s.timeout))
	case s.maxRelay < 0:
		panic(fmt.Sprintf("mcpredis: %s: Config.MaxRelayBytes is %d: want a positive size, or 0 for the default", ctor, s.maxRelay))
	}
	if why := ignoresDeadlines(s.client); why != "" {
		panic("mcpredis: " + ctor + ": Config.Client " + why +
			", so a stalled Redis would hold each request past Config.Timeout")
	}
	if s.prefix == "" {
		s.prefix = defaultPrefix
	}
	if s.timeout == 0 {
		s.timeout = defaultTimeout
	}
	if s.maxRelay == 0 {
		s.maxRelay = defaultMaxRelay
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	s.batch = newBatcher(s.client)
	return s
}

// ignoresDeadlines says why c cannot bound each call by its context's
// deadline, or returns "" when, as far as can be told, it does: go-redis's
// own clients say so in their options; an AutoPipeliner never does (a call
// it has queued waits for its batch, whatever its deadline); anything else
// is taken at its word.
func ignoresDeadlines(c redis.UniversalClient) string {
	const noCtxTimeout = "was made without ContextTimeoutEnabled: true (it waits its ReadTimeout, 3 s by default, for a server that has stopped answering)"
	switch c := c.(type) {
	case *redis.Client:
		if !c.Options().ContextTimeoutEnabled {
			return noCtxTimeout
		}
	case *redis.ClusterClient:
		if !c.Options().ContextTimeoutEnabled {
			return noCtxTimeout
		}
	case *redis.Ring:
		if !c.Options().ContextTimeoutEnabled {
			return noCtxTimeout
		}
	case *redis.AutoPipeliner:
		return "is a *redis.AutoPipeliner, whose queued calls wait for their batch whatever their deadline: give the client it was made from"
	}
	return ""
}

// noRetry is a command go-redis sends once: never again after a network
// error or a timeout, whatever the client's MaxRetries, because a script
// that ran but whose reply was lost would count the request twice, and a
// retry would outlive the deadline the caller set.
type noRetry struct{ redis.Cmder }

// NoRetry tells go-redis not to send the command again.
func (noRetry) NoRetry() bool { return true }

// gaveUp reports whether ctx, the caller's, is done or past its deadline
// (a socket's deadline, which is ctx's, may fire before ctx's own timer):
// a call that failed then was ended by its caller, not by Redis, and says
// nothing of Redis's health.
func gaveUp(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// health follows whether Redis answers, so that each change is logged
// once, not once per request.
type health struct {
	down   atomic.Bool
	logger *slog.Logger
	what   string // "rate limit", "notifier", "relay", "task store"
	down1  string // the message logged when Redis stops answering
}

// failed notes a call that Redis did not answer; the first after a
// success is logged.
func (h *health) failed(err error) {
	if !h.down.Load() && h.down.CompareAndSwap(false, true) {
		h.logger.LogAttrs(context.Background(), slog.LevelWarn, h.down1,
			slog.String("component", "mcpredis "+h.what), slog.String("error", err.Error()))
	}
}

// answered notes a call that Redis answered; the first after a failure is
// logged.
func (h *health) answered() {
	if h.down.Load() && h.down.CompareAndSwap(true, false) {
		h.logger.LogAttrs(context.Background(), slog.LevelInfo, "mcpredis: Redis answers again",
			slog.String("component", "mcpredis "+h.what))
	}
}
