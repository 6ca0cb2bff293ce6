package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/internal/redistest"
)

// patience bounds every wait for something that must happen: so generous
// that a busy machine never runs out of it, since it only turns a hang
// into a failure.
const patience = 30 * time.Second

// slack is what a deadline test lets a call take past its deadline on a
// busy machine under -race: the deadline is the point, not the
// microseconds. Each test that uses it raises the other bound it tells the
// deadline apart from (go-redis's read timeout, an export's delay) far
// above it, so that a slow machine cannot be mistaken for that bound.
const slack = patience / 3

// busyRedisTimeout is the REDIS_TIMEOUT of the app in tests that check
// answers, not deadlines: mcpredis's 50 ms is missed now and then on a
// busy machine, and a task whose Create misses it runs as a plain call.
const busyRedisTimeout = "2s"

// redisReadTimeout is the socket read timeout of the tests' clients:
// every call of the notes store ends at its own deadline, long before.
const redisReadTimeout = 2 * patience

// redisStore returns a notes store on srv keeping at most maxLen notes per
// tenant, logging to logs.
func redisStore(t *testing.T, srv *redistest.Server, maxLen int, logs *lockedBuffer) *redisNotes {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, MaxRetries: -1, ReadTimeout: redisReadTimeout})
	t.Cleanup(func() { _ = client.Close() })
	s := newRedisNotes(client, "test:", slog.New(slog.NewTextHandler(logs, nil)))
	s.maxLen = maxLen
	return s
}

// TestNotesStores: the Redis store keeps notes as the memory store does:
// per tenant, newest first or oldest first, found and removed by id, at
// most maxLen per tenant.
func TestNotesStores(t *testing.T) {
	t.Parallel()
	for name, newStore := range map[string]func(t *testing.T) notes{
		"memory": func(*testing.T) notes {
			mem := newMemNotes()
			mem.maxLen = 3
			return mem
		},
		"redis": func(t *testing.T) notes { return redisStore(t, redistest.Start(t), 3, &lockedBuffer{}) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := newStore(t) // the Redis one skips without redis-server
			ctx := t.Context()
			var added []note
			for _, text := range []string{"one", "two", "three"} {
				n, err := store.add(ctx, "a", "writer", text)
				require.NoError(t, err)
				assert.Equal(t, text, n.Text)
				assert.Equal(t, "writer", n.Author)
				assert.WithinDuration(t, time.Now(), n.Created, time.Minute)
				added = append(added, n)
			}
			_, err := store.add(ctx, "a", "writer", "four")
			assert.EqualError(t, err, "the tenant already has 3 notes, the most this demo keeps")
			b, err := store.add(ctx, "b", "other", "b's")
			require.NoError(t, err, "the limit is per tenant")

			same := func(t *testing.T, want, got []note) {
				t.Helper()
				require.Len(t, got, len(want))
				for i := range want {
					assert.Equal(t, want[i].ID, got[i].ID)
					assert.Equal(t, want[i].Text, got[i].Text)
					assert.Equal(t, want[i].Author, got[i].Author)
					assert.True(t, want[i].Created.Equal(got[i].Created), "%v, %v", want[i].Created, got[i].Created)
				}
			}
			all, err := store.all(ctx, "a")
			require.NoError(t, err)
			same(t, added, all)
			latest, err := store.latest(ctx, "a", 2)
			require.NoError(t, err)
			same(t, []note{added[2], added[1]}, latest)
			latest, err = store.latest(ctx, "b", 20)
			require.NoError(t, err)
			same(t, []note{b}, latest)
			n, err := store.count(ctx, "a")
			require.NoError(t, err)
			assert.Equal(t, 3, n)

			got, ok, err := store.get(ctx, "a", added[1].ID)
			require.NoError(t, err)
			require.True(t, ok)
			same(t, added[1:2], []note{got})
			for tenant, id := range map[string]int{"a": 999, "c": added[1].ID} {
				_, ok, err = store.get(ctx, tenant, id)
				require.NoError(t, err)
				assert.False(t, ok, "tenant %s, note %d", tenant, id)
			}
			require.NotEqual(t, b.ID, added[2].ID)
			_, ok, err = store.get(ctx, "b", added[2].ID)
			require.NoError(t, err)
			assert.False(t, ok, "another tenant's note")

			ok, err = store.remove(ctx, "a", added[1].ID)
			require.NoError(t, err)
			assert.True(t, ok)
			ok, err = store.remove(ctx, "a", added[1].ID)
			require.NoError(t, err)
			assert.False(t, ok, "removed already")
			all, err = store.all(ctx, "a")
			require.NoError(t, err)
			same(t, []note{added[0], added[2]}, all)
			_, err = store.add(ctx, "a", "writer", "room again")
			require.NoError(t, err)
		})
	}
}

// TestRedisNotesOutage: while Redis is down or hung every call fails
// within its deadline (well before the client's read timeout,
// redisReadTimeout) with a *storeError naming the outage, the outage is
// logged once each way, and the store works again once Redis does. A
// caller that gives up is not an outage.
func TestRedisNotesOutage(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	logs := &lockedBuffer{}
	store := redisStore(t, srv, maxNotes, logs)
	store.timeout = 200 * time.Millisecond
	ctx := t.Context()
	_, err := store.add(ctx, "a", "writer", "before")
	require.NoError(t, err)

	calls := map[string]func() error{
		"add":    func() error { _, err := store.add(ctx, "a", "writer", "x"); return err },
		"latest": func() error { _, err := store.latest(ctx, "a", 5); return err },
		"all":    func() error { _, err := store.all(ctx, "a"); return err },
		"count":  func() error { _, err := store.count(ctx, "a"); return err },
		"get":    func() error { _, _, err := store.get(ctx, "a", 1); return err },
		"remove": func() error { _, err := store.remove(ctx, "a", 1); return err },
	}
	// go-redis dials again until the deadline while the server refuses:
	// either cause may come first.
	const refused, late = "connect: connection refused", "no answer within 200ms"
	outage := func(causes ...string) {
		t.Helper()
		for name, call := range calls {
			t0 := time.Now()
			err := call()
			assert.Less(t, time.Since(t0), store.timeout+slack, name)
			var se *storeError
			require.ErrorAs(t, err, &se, name)
			var messages []string
			for _, c := range causes {
				messages = append(messages, "the notes store (Redis) is not answering: "+c+"; try again shortly")
			}
			assert.Contains(t, messages, err.Error(), name)
			assert.NotContains(t, err.Error(), srv.Addr, "the message never names the server")
		}
	}
	srv.Stop()
	outage(refused, late)
	srv.Restart()
	srv.Pause()
	outage(late)
	srv.Resume()

	n, err := store.add(ctx, "a", "writer", "after")
	require.NoError(t, err, "works again, without a restart")
	assert.Equal(t, 1, n.ID, "the restarted server is empty")
	text := logs.String()
	assert.Equal(t, 1, strings.Count(text, "chi-app: the notes store (Redis) is not answering: the notes tools answer isError until it does"), text)
	assert.Equal(t, 1, strings.Count(text, "chi-app: the notes store (Redis) answers again"), text)

	srv.Pause()
	defer srv.Resume()
	gone, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = store.count(gone, "a")
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	var se *storeError
	assert.False(t, errors.As(err, &se), "the caller gave up first: no outage")
	assert.Equal(t, 1, strings.Count(logs.String(), "is not answering"), "nor logged as one")
}
