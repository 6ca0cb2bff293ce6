package mcpredis

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/internal/redistest"
)

// queued starts callers calls of b.do, each with its own key and a
// context made by ctx, while Redis is paused, so that every one after the
// first waits in a batch; it returns their errors once Redis resumes.
func queued(t *testing.T, srv *redistest.Server, b *batcher, callers int, ctx func() (context.Context, context.CancelFunc)) []error {
	t.Helper()
	srv.Pause()
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, cancel := ctx()
			defer cancel()
			key := fmt.Sprintf("k%d", i)
			errs[i] = b.do(c, key, redis.NewStatusCmd(c, "set", key, "v"))
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for b.waiting() < callers-1 {
		require.True(t, time.Now().Before(deadline), "the calls queued behind the first: %d of %d", b.waiting(), callers-1)
		time.Sleep(5 * time.Millisecond)
	}
	srv.Resume()
	wg.Wait()
	return errs
}

// TestBatchOfCallersWithoutDeadline: callers whose contexts have no
// deadline are batched with none either, rather than with the latest of
// none (the zero time, long past), which would fail them all at once.
func TestBatchOfCallersWithoutDeadline(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	b := newBatcher(c)
	errs := queued(t, srv, b, 8, func() (context.Context, context.CancelFunc) { return context.WithCancel(t.Context()) })
	for i, err := range errs {
		assert.NoError(t, err, "caller %d", i)
	}
	b.wait(time.Minute)
}

// TestBatchOfCallersSomeWithoutDeadline: one caller without a deadline is
// enough for its batch to have none: the others' deadlines (an hour) are
// theirs alone.
func TestBatchOfCallersSomeWithoutDeadline(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	b := newBatcher(c)
	var n sync.Mutex
	made := 0
	errs := queued(t, srv, b, 8, func() (context.Context, context.CancelFunc) {
		n.Lock()
		defer n.Unlock()
		if made++; made%2 == 0 {
			return context.WithCancel(t.Context())
		}
		return context.WithTimeout(t.Context(), time.Hour)
	})
	for i, err := range errs {
		assert.NoError(t, err, "caller %d", i)
	}
	b.wait(time.Minute)
}

// TestBatcherForgetsTheNodesItIsDoneWith: under Cluster, the batcher keeps
// a queue for each node while it has commands on the wire, and none once
// they are answered, so that its map holds the nodes in use only (a
// cluster that resharded leaves nothing behind).
func TestBatcherForgetsTheNodesItIsDoneWith(t *testing.T) {
	t.Parallel()
	addrs := redistest.StartCluster(t, 3)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	b := newBatcher(c)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			key := fmt.Sprintf("node%d", i)
			assert.NoError(t, b.do(ctx, key, redis.NewStatusCmd(ctx, "set", key, "v")))
		}()
	}
	wg.Wait()
	b.wait(time.Minute)
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Zero(t, b.running)
	assert.Empty(t, b.nodes, "no queue left for a node with nothing on the wire")
}

// panicOnce is a client hook that panics in the first command it sees.
type panicOnce struct{ done atomic.Bool }

func (*panicOnce) DialHook(next redis.DialHook) redis.DialHook { return next }
func (p *panicOnce) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if p.done.CompareAndSwap(false, true) {
			panic("hook")
		}
		return next(ctx, cmd)
	}
}
func (*panicOnce) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestBatcherHandedOnAfterAPanic: a command whose client hook panics (a
// bug, which a handler's recoverer survives) leaves its queue free: the
// next command is sent, rather than queued behind a send that never ends.
func TestBatcherHandedOnAfterAPanic(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	c.AddHook(&panicOnce{})
	b := newBatcher(c)
	assert.PanicsWithValue(t, "hook", func() { _ = b.do(t.Context(), "k", redis.NewStatusCmd(t.Context(), "set", "k", "v")) })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.NoError(t, b.do(ctx, "k", redis.NewStatusCmd(ctx, "set", "k", "v")), "the queue was left held by the command that panicked")
	b.wait(time.Minute)
	assert.Zero(t, b.running)
}
