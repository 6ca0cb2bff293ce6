package mcpredis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// unavailable reports whether err says that Redis is unavailable for
// now, as the core reads it: through an interface, without importing
// this package.
func unavailable(err error) bool {
	var u interface{ Unavailable() bool }
	return errors.As(err, &u) && u.Unavailable()
}

// TestBusyRedisIsUnavailable: while Redis runs a script past its
// busy-reply-threshold it answers every other call BUSY: the store's
// error, the relay's and the Notifier's say Unavailable, naming what
// Redis answered, and all work again once the script is killed.
func TestBusyRedisIsUnavailable(t *testing.T) {
	t.Parallel()
	cfg, srv, _ := config(t, mcpredis.FailOpen)
	ctx := t.Context()
	s := mcpredis.NewTaskStore(cfg)
	r, err := mcpredis.NewRelay(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	n := mcpredis.NewNotifier(cfg)
	t.Cleanup(func() { _ = n.Close() })
	require.NoError(t, s.Create(ctx, working("t", time.Now(), time.Hour)))
	require.NoError(t, cfg.Client.ConfigSet(ctx, "busy-reply-threshold", "20").Err())

	spinner := newClient(t, srv.Addr)
	spun := make(chan error, 1)
	go func() {
		spinCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		spun <- spinner.Eval(spinCtx, "while true do end", nil).Err()
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err = s.Get(ctx, "t")
		if err != nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "Redis never busy within 10 s")
		time.Sleep(10 * time.Millisecond)
	}
	calls := map[string]error{"Get": err}
	_, _, calls["Update"] = s.Update(ctx, "t", mcpmw.TaskUpdate{Op: mcpmw.TaskCancel})
	_, calls["Send"] = r.Send(ctx, r.ID(), []byte("x"))
	calls["Broadcast"] = r.Broadcast(ctx, []byte("x"))
	calls["Publish"] = n.Publish(ctx, mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"})
	for name, err := range calls {
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), "BUSY", name)
			assert.True(t, unavailable(err), "%s: %v", name, err)
		}
	}
	assert.Contains(t, calls["Get"].Error(), "mcpredis: task store: get: Redis answered: BUSY")

	require.NoError(t, newClient(t, srv.Addr).ScriptKill(ctx).Err())
	assert.Error(t, <-spun, "the script was killed")
	_, err = s.Get(ctx, "t")
	assert.NoError(t, err, "Redis serves again")
}

// TestOutageIsUnavailable: every call of the store, the relay and the
// Notifier that Redis, stopped, does not answer says Unavailable.
func TestOutageIsUnavailable(t *testing.T) {
	t.Parallel()
	cfg, srv, _ := config(t, mcpredis.FailOpen)
	ctx := t.Context()
	r, err := mcpredis.NewRelay(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	n := mcpredis.NewNotifier(cfg)
	t.Cleanup(func() { _ = n.Close() })
	srv.Stop()
	_, err = r.Send(ctx, r.ID(), []byte("x"))
	assert.True(t, unavailable(err), "Send: %v", err)
	assert.True(t, unavailable(r.Broadcast(ctx, []byte("x"))), "Broadcast")
	assert.True(t, unavailable(n.Publish(ctx, mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"})), "Publish")
	var rerr redis.Error
	assert.False(t, errors.As(err, &rerr), "not an error Redis answered")
}

// TestCannotServeYet: the errors Redis answers while it cannot serve for a
// while, and only those, by their first word.
func TestCannotServeYet(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]bool{
		"LOADING Redis is loading the dataset in memory":                          true,
		"BUSY Redis is busy running a script. You can only call SCRIPT KILL":      true,
		"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set": true,
		"CLUSTERDOWN The cluster is down":                                         true,
		"TRYAGAIN Multiple keys request during rehashing of slot":                 true,
		"READONLY You can't write against a read only replica.":                   true,
		"NOREPLICAS Not enough good replicas to write.":                           true,
		"BUSY": true,
		"BUSYKEY Target key name already exists.": false,
		"ERR unknown command":                     false,
		"MOVED 3999 127.0.0.1:6381":               false,
		"NOSCRIPT No matching script.":            false,
		"OOM command not allowed":                 false,
		"LOADINGX":                                false,
	} {
		assert.Equal(t, want, mcpredis.CannotServeYet(msg), msg)
	}
}

// TestAnsweredErrorIsRedisAnswering: an error Redis answers (a script that
// fails) is Redis answering: after an outage it is logged as Redis being
// back, and it is not an outage itself.
func TestAnsweredErrorIsRedisAnswering(t *testing.T) {
	t.Parallel()
	cfg, srv, logs := config(t, mcpredis.FailOpen)
	s := mcpredis.NewTaskStore(cfg)
	srv.Stop()
	_, err := s.Get(t.Context(), "t")
	require.Error(t, err)
	srv.Restart()
	c := newClient(t, srv.Addr)
	require.NoError(t, c.HSet(t.Context(), taskPrefix+"t", "status", "working", "rlease", "soon").Err())
	_, _, err = s.Update(t.Context(), "t", mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: time.Now()})
	require.ErrorContains(t, err, "Redis answered")
	assert.False(t, unavailable(err))
	assert.Equal(t, []string{
		"WARN mcpredis: Redis does not answer: tasks cannot be created, read or changed until it does",
		"INFO mcpredis: Redis answers again",
	}, logs.all())
}
