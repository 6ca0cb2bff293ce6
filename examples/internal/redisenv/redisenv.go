// Package redisenv reads the Redis settings that the example app and the
// conformance fixture share from their environment:
//
//	REDIS_URL   redis://[user:password@]host:port/db (rediss:// for TLS,
//	            unix:///path/to/socket): what crosses instances goes
//	            through this Redis; unset, each process keeps it to itself
//	REDIS_FAIL  open (the default) or closed: what the rate limit does
//	            while Redis cannot be reached
//	REDIS_TIMEOUT  how long each call to Redis may take (a Go duration,
//	            mcpredis.Config.Timeout): unset, mcpredis's 50ms; raise it
//	            for a Redis that is far away or a machine that is busy
//
// and, with them, the other setting every instance must share,
// MCP_STATE_KEY (StateKeys). It only parses and checks; Config makes the
// client, and Relay and TaskStore what the examples build on it.
package redisenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpmw/mcpmw"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// Settings are what REDIS_URL, REDIS_FAIL and REDIS_TIMEOUT say. The zero
// value is no Redis at all.
type Settings struct {
	opts *redis.Options // nil: REDIS_URL is unset

	// Failure is REDIS_FAIL: FailOpen unless it says closed.
	Failure mcpredis.FailurePolicy
	// Timeout is REDIS_TIMEOUT: 0 (mcpredis's default) unless it is set.
	Timeout time.Duration
}

// FromEnv reads REDIS_URL, REDIS_FAIL and REDIS_TIMEOUT through getenv.
// Its errors name the variable and never quote REDIS_URL, which may hold a
// password. REDIS_FAIL and REDIS_TIMEOUT are checked even without
// REDIS_URL, where they have no effect: a typo is an error wherever it is.
func FromEnv(getenv func(string) string) (Settings, error) {
	var s Settings
	switch v := getenv("REDIS_FAIL"); v {
	case "", "open":
		s.Failure = mcpredis.FailOpen
	case "closed":
		s.Failure = mcpredis.FailClosed
	default:
		return s, fmt.Errorf("REDIS_FAIL=%q: want open (the default: admit every request while Redis cannot be reached) or closed (refuse them with 429)", v)
	}
	if v := getenv("REDIS_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return s, fmt.Errorf("REDIS_TIMEOUT=%q: want a positive duration such as 200ms (unset: 50ms)", v)
		}
		s.Timeout = d
	}
	v := getenv("REDIS_URL")
	if v == "" {
		return s, nil
	}
	opts, err := redis.ParseURL(v)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL, password and all
		}
		return s, fmt.Errorf("REDIS_URL: %w (want redis://[user:password@]host:port/db)", err)
	}
	// Every call to Redis must end at its own deadline, not at the
	// client's 3 s read timeout (mcpredis refuses a client without it),
	// and is sent once: a retried script could count a request, or store
	// a note, twice.
	opts.ContextTimeoutEnabled = true
	opts.MaxRetries = -1
	s.opts = opts
	return s, nil
}

// Enabled reports whether REDIS_URL was set.
func (s Settings) Enabled() bool { return s.opts != nil }

// Addr is the Redis server's address, for a log line: never the URL,
// which may hold a password.
func (s Settings) Addr() string {
	if s.opts == nil {
		return ""
	}
	return s.opts.Addr
}

// Config returns the mcpredis configuration of a new client of the Redis
// that REDIS_URL names, its keys and channels under prefix; the caller
// closes Config.Client when done. It panics when REDIS_URL was unset.
func (s Settings) Config(prefix string, logger *slog.Logger) mcpredis.Config {
	if s.opts == nil {
		panic("redisenv: Config without REDIS_URL")
	}
	opts := *s.opts
	return mcpredis.Config{Client: redis.NewClient(&opts), Prefix: prefix, Failure: s.Failure, Timeout: s.Timeout, Logger: logger}
}

// Relay returns this instance's mcpredis.Relay on cfg, once Redis has
// confirmed its subscriptions (within 5 seconds), and the func that closes
// it. When Redis cannot be reached at start, it logs the error and returns
// nil: the process serves on, and legacy answers and cancellations then
// reach only the instance that received them, as without REDIS_URL.
func Relay(cfg mcpredis.Config, logger *slog.Logger) (mcpmw.Relay, func()) {
	r, err := mcpredis.NewRelay(context.Background(), cfg)
	if err != nil {
		logger.LogAttrs(context.Background(), slog.LevelError,
			"redisenv: no relay: legacy answers and cancellations reach only the instance that received them", slog.Any("error", err))
		return nil, func() {}
	}
	return r, func() { _ = r.Close() }
}

// StateKeys reads MCP_STATE_KEY, the key ring that seals requestState
// (mcpmw.ParseKeyRing: comma-separated hex keys, the first sealing): nil
// when unset, so that the handler draws a random key for its process. Every
// instance of a service must be given the same ring. The error never
// quotes the key.
func StateKeys(getenv func(string) string) (*mcpmw.KeyRing, error) {
	v := getenv("MCP_STATE_KEY")
	if v == "" {
		return nil, nil
	}
	keys, err := mcpmw.ParseKeyRing(v)
	if err != nil {
		return nil, fmt.Errorf("MCP_STATE_KEY: %w", err)
	}
	return keys, nil
}

// TaskStore returns the mcpmw.TaskStore that every instance on cfg
// shares, for mcpmw.TaskOptions.Store, so that any instance answers
// tasks/get, tasks/update and tasks/cancel for a task another runs, and
// fails the tasks of an instance that died.
func TaskStore(cfg mcpredis.Config) mcpmw.TaskStore {
	return mcpredis.NewTaskStore(cfg)
}
