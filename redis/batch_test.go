package mcpredis_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/redistest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// sends is a go-redis hook counting what a client writes: lone commands
// and pipelines, each one round trip, and the commands in them.
type sends struct{ lone, pipelines, piped, marked atomic.Int64 }

// mark is a value a caller's context carries, for a hook to find.
type mark struct{}

func (c *sends) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *sends) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.lone.Add(1)
		return next(ctx, cmd)
	}
}
func (c *sends) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.pipelines.Add(1)
		c.piped.Add(int64(len(cmds)))
		if ctx.Value(mark{}) != nil {
			c.marked.Add(1)
		}
		return next(ctx, cmds)
	}
}

// waitFor fails t unless cond holds within 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "%s: not within 10 s", what)
		time.Sleep(5 * time.Millisecond)
	}
}

// TestConcurrentCallsShareARoundTrip: calls made while a batch is on the
// wire go together in the next, one pipeline, and each caller gets its
// own answer. Redis is paused (SIGSTOP) so that the first call holds the
// wire while the others queue; then it resumes.
func TestConcurrentCallsShareARoundTrip(t *testing.T) {
	t.Parallel()
	cfg, srv, logs := config(t, mcpredis.FailOpen)
	cfg.Timeout = 30 * time.Second // the pause is the test's, not an outage
	s := mcpredis.NewTaskStore(cfg)
	ctx := t.Context()
	require.NoError(t, s.Create(ctx, working("t", time.Now(), time.Hour)))
	_, err := s.Get(ctx, "t") // the script loaded
	require.NoError(t, err)
	var count sends
	cfg.Client.(*redis.Client).AddHook(&count)

	ctx = context.WithValue(ctx, mark{}, true) // every caller's: the pipeline's hooks see it
	srv.Pause()
	const n = 40
	errs := make(chan error, n+1)
	get := func(id string) {
		got, err := s.Get(ctx, id)
		if err == nil && got.ID != id {
			err = errors.New("another caller's task: " + got.ID)
		}
		errs <- err
	}
	go get("t")
	waitFor(t, "the first call on the wire", func() bool { return count.lone.Load() == 1 })
	for i := range n {
		if i%2 == 0 {
			go get("t")
		} else {
			go func() { _, err := s.Get(ctx, "absent"); errs <- notFound(err) }()
		}
	}
	waitFor(t, "every other call queued", func() bool { return s.Waiting() == n })
	srv.Resume()
	for range n + 1 {
		require.NoError(t, <-errs)
	}
	assert.EqualValues(t, 1, count.lone.Load(), "the first call went alone")
	assert.EqualValues(t, 1, count.pipelines.Load(), "the others, in one pipeline")
	assert.EqualValues(t, n, count.piped.Load())
	assert.EqualValues(t, 1, count.marked.Load(), "the pipeline's context holds its callers' values")
	assert.Empty(t, logs.all())
}

// notFound turns ErrTaskNotFound, the answer expected, into nil.
func notFound(err error) error {
	if errors.Is(err, mcpmw.ErrTaskNotFound) {
		return nil
	}
	if err == nil {
		return errors.New("found a task that does not exist")
	}
	return err
}

// TestCallerDeadlineHeldWhileItsBatchWaits: a call whose deadline passes
// while it waits behind a batch that a hung Redis (SIGSTOP) never
// answers gets its error then, not the batch's: the call before it,
// whose deadline is far off, still waits. Nothing is logged: the caller
// gave up, which says nothing of Redis.
func TestCallerDeadlineHeldWhileItsBatchWaits(t *testing.T) {
	t.Parallel()
	cfg, srv, logs, s := storeWithTaskT(t)
	var count sends
	cfg.Client.(*redis.Client).AddHook(&count)

	srv.Pause()
	first := make(chan error, 1)
	go func() { _, err := s.Get(t.Context(), "t"); first <- err }()
	waitFor(t, "the first call on the wire", func() bool { return count.lone.Load() == 1 })

	const deadline = 200 * time.Millisecond
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), deadline)
			defer cancel()
			t0 := time.Now()
			_, err := s.Get(ctx, "t")
			assert.Less(t, time.Since(t0), deadline+slack, "the caller's deadline holds")
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.False(t, unavailable(err), "the caller gave up: no outage")
		}()
	}
	wg.Wait()
	select {
	case err := <-first:
		t.Fatalf("the first call returned while Redis was paused: %v", err)
	default:
	}
	srv.Resume()
	require.NoError(t, <-first, "the first call is answered once Redis resumes")
	assert.EqualValues(t, 0, count.pipelines.Load(), "the calls that gave up were never sent")
	assert.Empty(t, logs.all())
}

// TestBatchesLeaveNoGoroutine: a batcher's goroutine lives while calls
// wait, and ends with the last; a limiter and a store, which have no
// Close, leave nothing behind, nor a relay or a Notifier once closed.
func TestBatchesLeaveNoGoroutine(t *testing.T) {
	cfg, _, _ := config(t, mcpredis.FailOpen)
	_ = cfg.Client.Ping(t.Context()).Err() // the client's own goroutines, before
	ignore := goleak.IgnoreCurrent()
	s := mcpredis.NewTaskStore(cfg)
	e := newEndpoint(mcpredis.PerIP(cfg, 1000, time.Minute))
	r, err := mcpredis.NewRelay(t.Context(), cfg)
	require.NoError(t, err)
	n := mcpredis.NewNotifier(cfg)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = s.Get(t.Context(), "t")
			e.discover("192.0.2.1:1")
			_ = r.Broadcast(t.Context(), []byte("x"))
			_ = n.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"})
		}()
	}
	wg.Wait()
	waitFor(t, "no queue on the wire", func() bool { return s.Flushing() == 0 })
	require.NoError(t, r.Close())
	require.NoError(t, n.Close())
	goleak.VerifyNone(t, ignore)
}

// TestOneCallQueuedBehindAnother: a single call that queued while another
// was on the wire is sent once that one is answered, as itself (within its
// caller's context), not as a pipeline of one; and whoever waits for the
// store's batches to end (Relay.Close, Notifier.Close do) is told when
// they have.
func TestOneCallQueuedBehindAnother(t *testing.T) {
	t.Parallel()
	cfg, srv, _, s := storeWithTaskT(t)
	var count sends
	cfg.Client.(*redis.Client).AddHook(&count)

	srv.Pause()
	errs := make(chan error, 2)
	go func() { _, err := s.Get(t.Context(), "t"); errs <- err }()
	waitFor(t, "the first call on the wire", func() bool { return s.Flushing() == 1 })
	go func() { _, err := s.Get(t.Context(), "t"); errs <- err }()
	waitFor(t, "the second call queued", func() bool { return s.Waiting() == 1 })
	idle := make(chan struct{})
	go func() { s.WaitIdle(); close(idle) }()
	time.Sleep(50 * time.Millisecond) // time for WaitIdle to return, were it wrong
	select {
	case <-idle:
		t.Fatal("WaitIdle returned while a call was on the wire")
	default:
	}
	srv.Resume()
	within(t, "the two calls", func() { require.NoError(t, <-errs); require.NoError(t, <-errs) })
	within(t, "WaitIdle", func() { <-idle })
	assert.Equal(t, int64(2), count.lone.Load(), "each call sent as itself")
	assert.Zero(t, count.pipelines.Load())
}

// storeWithTaskT is a task store with a 30 s Timeout (the tests' own
// deadlines are shorter) holding task "t", its scripts loaded, on a
// redis-server of its own.
func storeWithTaskT(t *testing.T) (mcpredis.Config, *redistest.Server, *logLines, *mcpredis.TaskStore) {
	t.Helper()
	cfg, srv, logs := config(t, mcpredis.FailOpen)
	cfg.Timeout = 30 * time.Second
	s := mcpredis.NewTaskStore(cfg)
	require.NoError(t, s.Create(t.Context(), working("t", time.Now(), time.Hour)))
	_, err := s.Get(t.Context(), "t") // the script loaded
	require.NoError(t, err)
	return cfg, srv, logs, s
}
