package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpmw/mcpmw"
)

// notesTimeout bounds each call of the notes store to Redis: past it the
// tool answers isError, naming the outage, rather than wait.
const notesTimeout = 500 * time.Millisecond

// redisNotes keeps notes in Redis, per tenant, so that every instance
// sharing REDIS_URL sees the same notes. A tenant's notes are one sorted
// set, <prefix>notes:{<tenant>}, each member a note's JSON scored by its
// id, and its last id is a counter, <prefix>notes:{<tenant>}:next; the
// braces keep both in one slot under Redis Cluster. Ids count per tenant.
// Each method is one round trip (two, once, after Redis lost the add
// script), sent once within notesTimeout: the client retries nothing.
type redisNotes struct {
	client  redis.UniversalClient
	prefix  string
	timeout time.Duration
	maxLen  int
	health  storeHealth
}

func newRedisNotes(client redis.UniversalClient, prefix string, logger *slog.Logger) *redisNotes {
	return &redisNotes{client: client, prefix: prefix, timeout: notesTimeout, maxLen: maxNotes, health: storeHealth{logger: logger}}
}

// addNote stores a note unless the tenant has the most it may keep: the
// count, the new id and the note in one step. KEYS[1] is the tenant's
// notes, KEYS[2] its last id; ARGV[1] is the most it keeps, ARGV[2] the note's
// JSON without its id. It returns the id, or 0 when the tenant is full.
var addNote = redis.NewScript(`
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
local id = redis.call('INCR', KEYS[2])
redis.call('ZADD', KEYS[1], id, '{"id":' .. id .. ',' .. string.sub(ARGV[2], 2))
return id
`)

// key returns the key of tenant's notes.
func (s *redisNotes) key(tenant string) string { return s.prefix + "notes:{" + tenant + "}" }

// call runs one call to Redis within the store's deadline and notes
// whether Redis answered. A caller that gave up first (its client went
// away) gets its own error: that is no outage.
func (s *redisNotes) call(ctx context.Context, f func(ctx context.Context) error) error {
	bounded, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	err := f(bounded)
	if err != nil {
		if gone := gaveUp(ctx); gone != nil {
			return gone
		}
	}
	return s.health.check(err, s.timeout)
}

// gaveUp returns ctx's error once it is done or past its deadline (the
// socket's deadline, which is ctx's, may fire before ctx's own timer).
func gaveUp(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

func (s *redisNotes) add(ctx context.Context, tenant, author, text string) (note, error) {
	n := note{Text: text, Author: author, Created: time.Now().UTC()}
	body, err := json.Marshal(struct {
		Text    string    `json:"text"`
		Author  string    `json:"author"`
		Created time.Time `json:"created"`
	}{n.Text, n.Author, n.Created})
	if err != nil {
		return note{}, err // strings and a time always encode
	}
	var id int64
	err = s.call(ctx, func(ctx context.Context) error {
		var err error
		id, err = addNote.Run(ctx, s.client, []string{s.key(tenant), s.key(tenant) + ":next"}, s.maxLen, body).Int64()
		return err
	})
	if err != nil {
		return note{}, err
	}
	if id == 0 {
		return note{}, fmt.Errorf("the tenant already has %d notes, the most this demo keeps", s.maxLen)
	}
	n.ID = int(id)
	return n, nil
}

func (s *redisNotes) latest(ctx context.Context, tenant string, limit int) ([]note, error) {
	return s.members(ctx, func(ctx context.Context) *redis.StringSliceCmd {
		return s.client.ZRevRange(ctx, s.key(tenant), 0, int64(limit)-1)
	})
}

func (s *redisNotes) all(ctx context.Context, tenant string) ([]note, error) {
	return s.members(ctx, func(ctx context.Context) *redis.StringSliceCmd {
		return s.client.ZRange(ctx, s.key(tenant), 0, -1)
	})
}

func (s *redisNotes) count(ctx context.Context, tenant string) (int, error) {
	var n int64
	err := s.call(ctx, func(ctx context.Context) error {
		var err error
		n, err = s.client.ZCard(ctx, s.key(tenant)).Result()
		return err
	})
	return int(n), err
}

func (s *redisNotes) get(ctx context.Context, tenant string, id int) (note, bool, error) {
	byID := strconv.Itoa(id)
	got, err := s.members(ctx, func(ctx context.Context) *redis.StringSliceCmd {
		return s.client.ZRangeByScore(ctx, s.key(tenant), &redis.ZRangeBy{Min: byID, Max: byID})
	})
	if err != nil || len(got) == 0 {
		return note{}, false, err
	}
	return got[0], true, nil
}

func (s *redisNotes) remove(ctx context.Context, tenant string, id int) (bool, error) {
	var n int64
	err := s.call(ctx, func(ctx context.Context) error {
		var err error
		byID := strconv.Itoa(id)
		n, err = s.client.ZRemRangeByScore(ctx, s.key(tenant), byID, byID).Result()
		return err
	})
	return n > 0, err
}

// members runs one command returning notes' JSON and decodes them.
func (s *redisNotes) members(ctx context.Context, cmd func(ctx context.Context) *redis.StringSliceCmd) ([]note, error) {
	var raw []string
	err := s.call(ctx, func(ctx context.Context) error {
		var err error
		raw, err = cmd(ctx).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]note, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal([]byte(r), &out[i]); err != nil {
			return nil, fmt.Errorf("a note in Redis is not a note's JSON: %w", err)
		}
	}
	return out, nil
}

// A storeError is a call of the notes store that Redis did not answer. Its
// text is what the notes tools answer (isError), and the resources and
// prompts (-32603): the outage and its cause, without the server's
// address.
type storeError struct {
	err     error
	timeout time.Duration
}

func (e *storeError) Error() string {
	return "the notes store (Redis) is not answering: " + e.cause() + "; try again shortly"
}

func (e *storeError) Unwrap() error { return e.err }

// cause says briefly why: no answer in time, the connection's failure
// without the address it names, or Redis's own error reply.
func (e *storeError) cause() string {
	var op *net.OpError
	switch {
	case errors.Is(e.err, context.DeadlineExceeded), errors.Is(e.err, os.ErrDeadlineExceeded):
		return "no answer within " + e.timeout.String()
	case errors.As(e.err, &op) && op.Err != nil:
		return op.Err.Error() // "connect: connection refused"
	}
	return e.err.Error()
}

// storeHealth follows whether Redis answers the notes store, so that each
// change is logged once, not once per call.
type storeHealth struct {
	down   atomic.Bool
	logger *slog.Logger
}

// check returns err as a *storeError (nil when Redis answered), logging
// the first failure after a success and the first success after a
// failure.
func (h *storeHealth) check(err error, timeout time.Duration) error {
	if err == nil {
		if h.down.CompareAndSwap(true, false) {
			h.logger.LogAttrs(context.Background(), slog.LevelInfo, "chi-app: the notes store (Redis) answers again")
		}
		return nil
	}
	if h.down.CompareAndSwap(false, true) {
		h.logger.LogAttrs(context.Background(), slog.LevelWarn,
			"chi-app: the notes store (Redis) is not answering: the notes tools answer isError until it does", slog.String("error", err.Error()))
	}
	return &storeError{err: err, timeout: timeout}
}

// asError is err as a resource or prompt returns it: a *storeError keeps
// its text (-32603 naming the outage), anything else is the library's
// plain internal error.
func asError(err error) error {
	var se *storeError
	if errors.As(err, &se) {
		return &mcpmw.Error{Code: mcpmw.CodeInternalError, Message: se.Error()}
	}
	return err
}
