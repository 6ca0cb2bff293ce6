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
