package mcpredis_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// TestTaskStoreMeansApply: the store does what mcpmw.Task.Apply says, op
// by op, against a real Redis; each subtest has an empty store of its own
// (a prefix of its own on one server).
func TestTaskStoreMeansApply(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailOpen)
	mcpmwtest.TestTaskStore(t, emptyStores(cfg))
}

// emptyStores returns stores on cfg's Redis, each of a prefix of its own,
// so empty.
func emptyStores(cfg mcpredis.Config) func(*testing.T) mcpmw.TaskStore {
	var n atomic.Int64
	return func(*testing.T) mcpmw.TaskStore {
		c := cfg
		c.Prefix = "kit" + strconv.FormatInt(n.Add(1), 10) + ":"
		return mcpredis.NewTaskStore(c)
	}
}

// taskStore returns a store on a fresh server, its client (for looking
// at the keys) and its log.
func taskStore(t *testing.T) (*mcpredis.TaskStore, *redis.Client, *logLines) {
	t.Helper()
	cfg, _, logs := config(t, mcpredis.FailOpen)
	return mcpredis.NewTaskStore(cfg), cfg.Client.(*redis.Client), logs
}

// working returns a working task owned by "i1", created at now with ttl.
func working(id string, now time.Time, ttl time.Duration) *mcpmw.Task {
	return &mcpmw.Task{ID: id, CallerID: "alice", Tool: "export", Status: mcpmw.TaskWorking,
		Created: now, Updated: now, TTL: ttl, PollInterval: time.Second, Owner: "i1", LeaseUntil: now.Add(10 * time.Second)}
}

const (
	leaseSet   = "mcpmw:{tasks}task-leases"
	taskPrefix = "mcpmw:{tasks}task:"
)

// keys returns the keys of the default prefix that Redis holds.
func keys(t *testing.T, c *redis.Client) []string {
	t.Helper()
	ks, err := c.Keys(t.Context(), "mcpmw:*").Result()
	require.NoError(t, err)
	return ks
}

// TestTaskStoreForgetsEverythingAfterTTL: once the TTL has passed, Redis
// holds no key of the store, whatever state its tasks were left in (an
// instance died with it running, it is waiting for answers, it is done),
// and Expired drops a forgotten task from the lease set while that set
// lives on for a task that is still there.
func TestTaskStoreForgetsEverythingAfterTTL(t *testing.T) {
	t.Parallel()
	s, c, _ := taskStore(t)
	ctx := t.Context()
	now := time.Now()
	const ttl = 300 * time.Millisecond
	dead := working("dead", now.Add(-time.Minute), time.Minute+ttl) // its lease ended long ago: Expired lists it
	dead.LeaseUntil = now.Add(-time.Second)
	asking := working("asking", now, ttl)
	asking.LeaseUntil = now.Add(time.Hour) // beyond its TTL: Expired never reaches it
	done := working("done", now, ttl)
	keeper := working("keeper", now, time.Hour) // outlives the others: the set must stay for it
	for _, task := range []*mcpmw.Task{dead, asking, done, keeper} {
		require.NoError(t, s.Create(ctx, task))
	}
	_, _, err := s.Update(ctx, "asking", mcpmw.TaskUpdate{Op: mcpmw.TaskAsk, Owner: "i1", Now: now,
		Requests: map[string]json.RawMessage{"k": json.RawMessage(`{"method":"elicitation/create"}`)}})
	require.NoError(t, err)
	_, _, err = s.Update(ctx, "done", mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "i1", Status: mcpmw.TaskCompleted, Result: json.RawMessage(`{}`), Now: now})
	require.NoError(t, err)
	ids, err := s.Expired(ctx, now, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"dead"}, ids)

	waitGone(t, s, "dead", "asking", "done")
	members, err := c.ZRange(ctx, leaseSet, 0, -1).Result()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"dead", "asking", "keeper"}, members, "forgotten tasks are still in the set until Expired or the set's own end")
	ids, err = s.Expired(ctx, time.Now(), 10)
	require.NoError(t, err)
	assert.Empty(t, ids, "a task Redis has forgotten is not listed")
	members, err = c.ZRange(ctx, leaseSet, 0, -1).Result()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"asking", "keeper"}, members, "Expired dropped the forgotten task it found")
	ids, err = s.Expired(ctx, time.Now().Add(2*time.Hour), 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"keeper"}, ids, "and the one whose lease ran past its TTL, once that lease has ended")
	assert.ElementsMatch(t, []string{taskPrefix + "keeper", leaseSet}, keys(t, c))

	// With the keeper gone, a new set lives as long as its one task.
	require.NoError(t, c.Del(ctx, taskPrefix+"keeper", leaseSet).Err())
	require.NoError(t, s.Create(ctx, working("short", time.Now(), ttl)))
	waitGone(t, s, "short")
	deadline := time.Now().Add(5 * time.Second)
	for len(keys(t, c)) > 0 {
		require.True(t, time.Now().Before(deadline), "keys left 5 s after the last TTL, with no Expired call: %v", keys(t, c))
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGone waits until Get finds none of ids, at most 5 s.
func waitGone(t *testing.T, s *mcpredis.TaskStore, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, id := range ids {
		for {
			_, err := s.Get(t.Context(), id)
			if errors.Is(err, mcpmw.ErrTaskNotFound) {
				break
			}
			require.NoError(t, err)
			require.True(t, time.Now().Before(deadline), "%s is still there 5 s on", id)
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestTaskStoreWithoutTTLKeepsTheTask: a TTL of zero is no expiry, as in
// the memory store; a task whose TTL has already passed when it is
// created is forgotten at once, leaving nothing in the lease set.
func TestTaskStoreWithoutTTLKeepsTheTask(t *testing.T) {
	t.Parallel()
	s, c, _ := taskStore(t)
	ctx := t.Context()
	require.NoError(t, s.Create(ctx, working("short", time.Now(), time.Hour)))
	require.NoError(t, s.Create(ctx, working("forever", time.Now(), 0)))
	for _, k := range []string{taskPrefix + "forever", leaseSet} {
		ttl, err := c.PTTL(ctx, k).Result()
		require.NoError(t, err)
		assert.Equal(t, time.Duration(-1), ttl, "%s has no expiry", k)
	}
	require.NoError(t, s.Create(ctx, working("later", time.Now(), 2*time.Hour)))
	ttl, err := c.PTTL(ctx, leaseSet).Result()
	require.NoError(t, err)
	assert.Equal(t, time.Duration(-1), ttl, "a task that lives for good keeps the set for good")

	require.NoError(t, s.Create(ctx, working("stale", time.Now().Add(-time.Hour), time.Minute)))
	_, err = s.Get(ctx, "stale")
	assert.ErrorIs(t, err, mcpmw.ErrTaskNotFound)
	_, err = c.ZScore(ctx, leaseSet, "stale").Result()
	assert.ErrorIs(t, err, redis.Nil, "a task forgotten at once is not in the lease set")
}

// TestTaskStoreLeaseSetLivesAsLongAsItsLongestTask: the set's expiry is
// the latest Created+TTL of the tasks added to it, set when it is made
// and moved only later.
func TestTaskStoreLeaseSetLivesAsLongAsItsLongestTask(t *testing.T) {
	t.Parallel()
	s, c, _ := taskStore(t)
	ctx := t.Context()
	now := time.Now()
	setEnd := func() time.Time {
		t.Helper()
		ms, err := c.Do(ctx, "pexpiretime", leaseSet).Int64()
		require.NoError(t, err)
		return time.UnixMilli(ms)
	}
	require.NoError(t, s.Create(ctx, working("a", now, time.Hour)))
	assert.Equal(t, now.Add(time.Hour).UnixMilli(), setEnd().UnixMilli(), "a new set ends with its task")
	later := time.Hour + 100*time.Millisecond // just after: Redis's clock read to the millisecond
	require.NoError(t, s.Create(ctx, working("b", now, later)))
	assert.Equal(t, now.Add(later).UnixMilli(), setEnd().UnixMilli(), "a later task moves the end")
	require.NoError(t, s.Create(ctx, working("c", now, 30*time.Minute)))
	assert.Equal(t, now.Add(later).UnixMilli(), setEnd().UnixMilli(), "an earlier one does not")
	done := working("d", now, 3*time.Hour)
	done.Status = mcpmw.TaskCompleted
	require.NoError(t, s.Create(ctx, done))
	assert.Equal(t, now.Add(later).UnixMilli(), setEnd().UnixMilli(), "a terminal task is not in the set")
	_, err := c.ZScore(ctx, leaseSet, "d").Result()
	assert.ErrorIs(t, err, redis.Nil)
}

// TestTaskStoreKeepsJSONAsItCame: questions, answers, the result and the
// error come back byte for byte (no re-encoding: big numbers, empty
// objects, escapes and spacing intact), under any key, and State as the
// bytes it was.
func TestTaskStoreKeepsJSONAsItCame(t *testing.T) {
	t.Parallel()
	s, _, _ := taskStore(t)
	ctx := t.Context()
	now := time.Now()
	odd := []string{"", "q:x", "a:y", "status", "ключ", "with space", "{tasks}"}
	raw := func(i int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{ "n": 12345678901234567890%d, "empty": {}, "list": [], "s": "\u00e9\n" }`, i))
	}
	task := working("json", now, time.Hour)
	task.State = []byte{0, 1, 2, 0xff, '\n'}
	task.Answers = map[string]json.RawMessage{}
	for i, k := range odd {
		task.Answers["carried"+k] = raw(i)
	}
	require.NoError(t, s.Create(ctx, task))
	got, err := s.Get(ctx, "json")
	require.NoError(t, err)
	assert.Equal(t, task.Answers, got.Answers)
	assert.Equal(t, task.State, got.State)

	requests := map[string]json.RawMessage{}
	for i, k := range odd {
		requests[k] = raw(100 + i)
	}
	got, changed, err := s.Update(ctx, "json", mcpmw.TaskUpdate{Op: mcpmw.TaskAsk, Owner: "i1", Requests: requests, State: []byte{}, Now: now})
	require.NoError(t, err)
	require.True(t, changed)
	assert.Equal(t, requests, got.InputRequests)
	assert.Nil(t, got.State, "an empty State is none")
	assert.Equal(t, mcpmw.TaskInputRequired, got.Status)

	answers := map[string]json.RawMessage{}
	for i, k := range odd {
		answers[k] = raw(200 + i)
	}
	got, _, err = s.Update(ctx, "json", mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: answers, Now: now})
	require.NoError(t, err)
	assert.Nil(t, got.InputRequests)
	assert.Equal(t, mcpmw.TaskWorking, got.Status)
	for k, v := range answers {
		assert.Equal(t, v, got.Answers[k], "answer %q", k)
	}
	result := json.RawMessage(`{"content":[],"structuredContent":{"big":9007199254740993,"o":{}}}`)
	got, _, err = s.Update(ctx, "json", mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "i1", Status: mcpmw.TaskCompleted, Result: result, Now: now})
	require.NoError(t, err)
	assert.Equal(t, result, got.Result)

	failed := working("failed", now, time.Hour)
	require.NoError(t, s.Create(ctx, failed))
	e := json.RawMessage(`{"code":-32603,"message":"x","data":{"n":1.000000000000000000001,"o":{}}}`)
	got, _, err = s.Update(ctx, "failed", mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: now.Add(time.Minute), Error: e})
	require.NoError(t, err)
	assert.Equal(t, e, got.Error)
}

// TestTaskStoreTimesToTheMillisecond: a lease ends before Now as
// Task.Apply reads the stored task, whose times are whole milliseconds:
// Now a fraction of a millisecond past the lease reaps, Now on it does
// not, for Update and for Expired alike.
func TestTaskStoreTimesToTheMillisecond(t *testing.T) {
	t.Parallel()
	s, _, _ := taskStore(t)
	ctx := t.Context()
	for _, base := range []time.Time{time.UnixMilli(1_900_000_000_123), time.UnixMilli(-5_000_000_000_001)} {
		id := "t" + strconv.FormatInt(base.UnixMilli()&0xffff, 10)
		task := working(id, time.Now(), time.Hour)
		task.LeaseUntil = base.Add(900 * time.Microsecond) // stored as base
		require.NoError(t, s.Create(ctx, task))
		got, err := s.Get(ctx, id)
		require.NoError(t, err)
		assert.True(t, got.LeaseUntil.Equal(base), "the lease, rounded down to the millisecond: %v", got.LeaseUntil)

		for _, c := range []struct {
			now  time.Time
			want bool
		}{{base, false}, {base.Add(time.Nanosecond), true}, {base.Add(time.Millisecond), true}} {
			ids, err := s.Expired(ctx, c.now, 10)
			require.NoError(t, err)
			assert.Equal(t, c.want, len(ids) == 1, "Expired at lease%+v", c.now.Sub(base))
			model := got.Clone()
			u := mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: c.now}
			assert.Equal(t, c.want, model.Apply(u), "Apply at lease%+v", c.now.Sub(base))
			if !c.want {
				_, changed, err := s.Update(ctx, id, u)
				require.NoError(t, err)
				assert.False(t, changed, "Update at lease%+v", c.now.Sub(base))
			}
		}
		reaped, changed, err := s.Update(ctx, id, mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: base.Add(time.Nanosecond)})
		require.NoError(t, err)
		assert.True(t, changed)
		assert.Equal(t, mcpmw.TaskFailed, reaped.Status)
		assert.Equal(t, base.UnixMilli(), reaped.Updated.UnixMilli(), "Updated is Now rounded down")
	}
}

// TestTaskStoreRacingUpdatesEndEachTaskOnce: 200 tasks, each hit at once
// by every kind of update from many goroutines: each task ends exactly
// once, as the update that ended it says, and the lease set is empty
// after (a renewal that lost to a finish does not put its task back).
func TestTaskStoreRacingUpdatesEndEachTaskOnce(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailOpen)
	cfg.Timeout = 10 * time.Second // 1,600 calls at once queue for the client's 20 connections
	s := mcpredis.NewTaskStore(cfg)
	ctx := t.Context()
	now := time.Now()
	const tasks = 200
	ask := map[string]json.RawMessage{"k": json.RawMessage(`{"method":"elicitation/create"}`)}
	updates := []mcpmw.TaskUpdate{
		{Op: mcpmw.TaskFinish, Owner: "i1", Status: mcpmw.TaskCompleted, Result: json.RawMessage(`{"by":"completed"}`), Message: "completed", Now: now},
		{Op: mcpmw.TaskFinish, Owner: "i1", Status: mcpmw.TaskFailed, Error: json.RawMessage(`{"by":"failed"}`), Message: "failed", Now: now},
		{Op: mcpmw.TaskFinish, Owner: "i1", Status: mcpmw.TaskCancelled, Message: "cancelled", Now: now},
		{Op: mcpmw.TaskReap, Error: json.RawMessage(`{"by":"reap"}`), Message: "reaped", Now: now.Add(time.Minute)},
		{Op: mcpmw.TaskFinish, Owner: "i2", Status: mcpmw.TaskCompleted, Result: json.RawMessage(`{"by":"i2"}`), Message: "i2", Now: now},
		{Op: mcpmw.TaskRenew, Owner: "i1", LeaseUntil: now.Add(time.Hour)},
		{Op: mcpmw.TaskAsk, Owner: "i1", Requests: ask, Message: "asking", Now: now},
		{Op: mcpmw.TaskCancel},
	}
	type job struct {
		id string
		u  mcpmw.TaskUpdate
	}
	var jobs []job
	for i := range tasks {
		id := fmt.Sprintf("race-%d", i)
		require.NoError(t, s.Create(ctx, working(id, now, time.Hour)))
		for _, u := range updates {
			jobs = append(jobs, job{id, u})
		}
	}
	rand.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	var mu sync.Mutex
	ended := map[string][]string{} // by task: the messages of the updates that ended it
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got, changed, err := s.Update(ctx, j.id, j.u)
			if !assert.NoError(t, err) {
				return
			}
			if changed && got.Status.Terminal() {
				mu.Lock()
				ended[j.id] = append(ended[j.id], j.u.Message)
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	for i := range tasks {
		id := fmt.Sprintf("race-%d", i)
		require.Len(t, ended[id], 1, "%s ended by %v", id, ended[id])
		got, err := s.Get(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, ended[id][0], got.StatusMessage, "%s reads as the update that ended it", id)
		assert.Nil(t, got.InputRequests, id)
	}
	n, err := cfg.Client.ZCard(ctx, leaseSet).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "no ended task is left in the lease set")
}

// TestTaskStoreRedisStoppedThenStarted: while Redis is down every call
// returns an error naming Redis within the deadline (never a task, nor
// ErrTaskNotFound), one line is logged when Redis stops answering and one
// when it answers again, and the store works again after the restart
// with no restart of its own.
func TestTaskStoreRedisStoppedThenStarted(t *testing.T) {
	t.Parallel()
	cfg, srv, logs := config(t, mcpredis.FailOpen) // a stopped server refuses at once: no deadline needed
	s := mcpredis.NewTaskStore(cfg)
	ctx := t.Context()
	require.NoError(t, s.Create(ctx, working("before", time.Now(), time.Hour)))

	srv.Stop()
	assertAllFail(t, s, cfg.Timeout)

	srv.Restart()
	deadline := time.Now().Add(5 * time.Second)
	for s.Create(ctx, working("after", time.Now(), time.Hour)) != nil {
		require.True(t, time.Now().Before(deadline), "the store did not work again within 5 s of the restart")
		time.Sleep(50 * time.Millisecond)
	}
	got, err := s.Get(ctx, "after")
	require.NoError(t, err)
	assert.Equal(t, "after", got.ID)
	_, err = s.Get(ctx, "before")
	assert.ErrorIs(t, err, mcpmw.ErrTaskNotFound, "the restarted server is empty")
	_, changed, err := s.Update(ctx, "after", mcpmw.TaskUpdate{Op: mcpmw.TaskCancel})
	require.NoError(t, err, "the scripts are loaded again")
	assert.True(t, changed)
	assert.Equal(t, []string{
		"WARN mcpredis: Redis does not answer: tasks cannot be created, read or changed until it does",
		"INFO mcpredis: Redis answers again",
	}, logs.all(), "one line per transition, none per call")
}

// TestTaskStoreRedisPausedDeadlineHolds: a server that accepts and never
// answers costs each call Config.Timeout, not the client's ReadTimeout.
// The task is created by a store whose deadline no busy machine misses.
func TestTaskStoreRedisPausedDeadlineHolds(t *testing.T) {
	t.Parallel()
	cfg, srv, logs := config(t, mcpredis.FailOpen)
	require.NoError(t, mcpredis.NewTaskStore(cfg).Create(t.Context(), working("t", time.Now(), time.Hour)))
	cfg.Timeout = 30 * time.Millisecond
	s := mcpredis.NewTaskStore(cfg)
	srv.Pause()
	assertAllFail(t, s, cfg.Timeout)
	srv.Resume()
	assert.Len(t, logs.all(), 1, "one line down: %v", logs.all())
}

// assertAllFail checks that each call of s fails within timeout, naming
// Redis.
func assertAllFail(t *testing.T, s *mcpredis.TaskStore, timeout time.Duration) {
	t.Helper()
	ctx := t.Context()
	calls := map[string]func() error{
		"Create": func() error { return s.Create(ctx, working("during", time.Now(), time.Hour)) },
		"Get": func() error {
			_, err := s.Get(ctx, "t")
			return err
		},
		"Update": func() error {
			_, _, err := s.Update(ctx, "t", mcpmw.TaskUpdate{Op: mcpmw.TaskCancel})
			return err
		},
		"Expired": func() error {
			_, err := s.Expired(ctx, time.Now(), 10)
			return err
		},
	}
	for range 3 {
		for name, call := range calls {
			t0 := time.Now()
			err := call()
			assert.Less(t, time.Since(t0), timeout+slack, "%s waits the deadline and no more", name)
			if assert.Error(t, err, name) {
				assert.NotErrorIs(t, err, mcpmw.ErrTaskNotFound, name)
				assert.Contains(t, err.Error(), "mcpredis: task store: "+strings.ToLower(name)+": Redis did not answer", name)
				assert.True(t, unavailable(err), "%s: an outage says Unavailable: %v", name, err)
			}
		}
	}
}

// TestTaskStoreCallerGaveUpIsNoOutage: a call whose context was already
// done fails, but says nothing of Redis's health.
func TestTaskStoreCallerGaveUpIsNoOutage(t *testing.T) {
	t.Parallel()
	s, _, logs := taskStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.Get(ctx, "t")
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, unavailable(err), "the caller gave up: Redis may well be up")
	assert.Empty(t, logs.all())
}

// TestTaskStoreUntrustedIDs: an id that is not 1 to 64 base64url
// characters is a task the store does not have: nothing is sent to
// Redis, and no key is made.
func TestTaskStoreUntrustedIDs(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailOpen)
	var rt roundTrips
	cfg.Client.(*redis.Client).AddHook(&rt)
	s := mcpredis.NewTaskStore(cfg)
	ctx := t.Context()
	// Each character just outside a range of the alphabet, and more.
	for _, id := range []string{"", "a`", "a{", "a@", "a[", "a/", "a:", "a b", "{tasks}", "a*", "../x", "é", "a\x00", "a\nb",
		"a.b", "a=", "a+", strings.Repeat("a", 65)} {
		_, err := s.Get(ctx, id)
		assert.ErrorIs(t, err, mcpmw.ErrTaskNotFound, "Get %q", id)
		_, _, err = s.Update(ctx, id, mcpmw.TaskUpdate{Op: mcpmw.TaskCancel})
		assert.ErrorIs(t, err, mcpmw.ErrTaskNotFound, "Update %q", id)
		err = s.Create(ctx, working(id, time.Now(), time.Hour))
		if assert.Error(t, err, "Create %q", id) {
			assert.Contains(t, err.Error(), "is not 1 to 64 base64url characters")
		}
	}
	assert.Zero(t, rt.n.Load(), "no command sent")
	for _, id := range []string{strings.Repeat("Az09-_", 10) + "abcd", "a", "z", "A", "Z", "0", "9", "-", "_"} {
		require.NoError(t, s.Create(ctx, working(id, time.Now(), time.Hour)), "Create %q", id)
		_, err := s.Get(ctx, id)
		require.NoError(t, err, "Get %q", id)
	}
}

// TestTaskStoreOneRoundTripEach: Create, Get and each Update are one
// command once the scripts are loaded (two, EVALSHA then EVAL, after
// Redis lost them); Expired is one when nothing has expired.
func TestTaskStoreOneRoundTripEach(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailOpen)
	client := cfg.Client.(*redis.Client)
	var rt roundTrips
	client.AddHook(&rt)
	s := mcpredis.NewTaskStore(cfg)
	ctx := t.Context()
	now := time.Now()
	// Load the scripts.
	require.NoError(t, s.Create(ctx, working("warm", now, time.Hour)))
	_, _, err := s.Update(ctx, "warm", mcpmw.TaskUpdate{Op: mcpmw.TaskCancel})
	require.NoError(t, err)
	_, err = s.Get(ctx, "warm")
	require.NoError(t, err)
	_, err = s.Expired(ctx, now.Add(time.Hour), 10)
	require.NoError(t, err)
	counted := func(what string, want int64, f func() error) {
		t.Helper()
		rt.n.Store(0)
		require.NoError(t, f(), what)
		assert.Equal(t, want, rt.n.Load(), what)
	}
	counted("Create", 1, func() error { return s.Create(ctx, working("t", now, time.Hour)) })
	counted("Get", 1, func() error { _, err := s.Get(ctx, "t"); return err })
	for _, u := range []mcpmw.TaskUpdate{
		{Op: mcpmw.TaskRenew, Owner: "i1", LeaseUntil: now.Add(time.Minute)},
		{Op: mcpmw.TaskAsk, Owner: "i1", Requests: map[string]json.RawMessage{"a": json.RawMessage(`{}`), "b": json.RawMessage(`{}`)}, Now: now},
		{Op: mcpmw.TaskAnswer, Responses: map[string]json.RawMessage{"a": json.RawMessage(`{}`), "b": json.RawMessage(`{}`)}, Now: now},
		{Op: mcpmw.TaskCancel},
		{Op: mcpmw.TaskFinish, Owner: "i1", Status: mcpmw.TaskCancelled, Now: now},
	} {
		counted(fmt.Sprintf("Update op %d", u.Op), 1, func() error { _, _, err := s.Update(ctx, "t", u); return err })
	}
	counted("Expired, none", 1, func() error { _, err := s.Expired(ctx, now, 10); return err })
	counted("Expired, some", 2, func() error { _, err := s.Expired(ctx, now.Add(time.Hour), 10); return err })
	counted("Expired, limit 0", 0, func() error { _, err := s.Expired(ctx, now.Add(time.Hour), 0); return err })

	require.NoError(t, client.ScriptFlush(ctx).Err())
	counted("Create after SCRIPT FLUSH", 2, func() error { return s.Create(ctx, working("u", now, time.Hour)) })
	counted("Create after that", 1, func() error { return s.Create(ctx, working("v", now, time.Hour)) })
	counted("Update after SCRIPT FLUSH", 2, func() error { _, _, err := s.Update(ctx, "u", mcpmw.TaskUpdate{Op: mcpmw.TaskCancel}); return err })
	counted("Get after SCRIPT FLUSH", 2, func() error { _, err := s.Get(ctx, "u"); return err })
	counted("Get after that", 1, func() error { _, err := s.Get(ctx, "u"); return err })
	counted("Get of no task", 1, func() error {
		if _, err := s.Get(ctx, "none"); !errors.Is(err, mcpmw.ErrTaskNotFound) {
			return fmt.Errorf("want ErrTaskNotFound: %v", err)
		}
		return nil
	})
}

// TestTaskStoreRenewalMovesTheLease: Expired reads a renewed lease, not
// the first one, and a renewal puts back in the lease set a running task
// that had gone missing from it (a hand edit, a lost write), so that it
// can still be reaped.
func TestTaskStoreRenewalMovesTheLease(t *testing.T) {
	t.Parallel()
	s, c, _ := taskStore(t)
	ctx := t.Context()
	now := time.Now()
	require.NoError(t, s.Create(ctx, working("r", now, time.Hour))) // lease: now+10s
	_, changed, err := s.Update(ctx, "r", mcpmw.TaskUpdate{Op: mcpmw.TaskRenew, Owner: "i1", LeaseUntil: now.Add(time.Minute)})
	require.NoError(t, err)
	require.True(t, changed)
	ids, err := s.Expired(ctx, now.Add(30*time.Second), 10)
	require.NoError(t, err)
	assert.Empty(t, ids, "the renewed lease runs on")
	ids, err = s.Expired(ctx, now.Add(2*time.Minute), 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"r"}, ids)

	require.NoError(t, c.ZRem(ctx, leaseSet, "r").Err())
	_, _, err = s.Update(ctx, "r", mcpmw.TaskUpdate{Op: mcpmw.TaskRenew, Owner: "i1", LeaseUntil: now.Add(time.Minute)})
	require.NoError(t, err)
	ids, err = s.Expired(ctx, now.Add(2*time.Minute), 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"r"}, ids)
}

// TestTaskStoreExpiredHonoursLimit: at most limit ids, the earliest
// leases first, and only those whose lease ended before now.
func TestTaskStoreExpiredHonoursLimit(t *testing.T) {
	t.Parallel()
	s, _, _ := taskStore(t)
	ctx := t.Context()
	now := time.UnixMilli(time.Now().UnixMilli()) // whole: "at now" is what is stored
	for i := range 5 {
		task := working("e"+strconv.Itoa(i), now, time.Hour)
		task.LeaseUntil = now.Add(time.Duration(i) * time.Second)
		require.NoError(t, s.Create(ctx, task))
	}
	ids, err := s.Expired(ctx, now.Add(10*time.Second), 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"e0", "e1"}, ids)
	ids, err = s.Expired(ctx, now.Add(2*time.Second), 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"e0", "e1"}, ids, "e2's lease ends at now, not before it")
	ids, err = s.Expired(ctx, now.Add(10*time.Second), -1)
	require.NoError(t, err)
	assert.Empty(t, ids)
}

// TestTaskStoreUnreadableTaskIsAnError: a field the store cannot read (a
// writer of another version, a hand edit) is an error naming it, not a
// task with a zero time.
func TestTaskStoreUnreadableTaskIsAnError(t *testing.T) {
	t.Parallel()
	s, c, _ := taskStore(t)
	ctx := t.Context()
	require.NoError(t, s.Create(ctx, working("t", time.Now(), time.Hour)))
	for _, field := range []string{"created", "updated", "lease", "ttl", "poll"} {
		require.NoError(t, c.HSet(ctx, taskPrefix+"t", field, "soon").Err())
		_, err := s.Get(ctx, "t")
		if assert.Error(t, err, field) {
			assert.Contains(t, err.Error(), `the task t in Redis: the field "`+field+`"`)
			assert.False(t, unavailable(err), "a task that cannot be read is no outage")
		}
		_, _, err = s.Update(ctx, "t", mcpmw.TaskUpdate{Op: mcpmw.TaskCancel})
		assert.Error(t, err, field)
		require.NoError(t, c.HSet(ctx, taskPrefix+"t", field, "1").Err())
	}
	require.NoError(t, c.HSet(ctx, taskPrefix+"t", "from-a-later-version", "x").Err())
	_, err := s.Get(ctx, "t")
	assert.NoError(t, err, "a field this version does not know is skipped")

	require.NoError(t, c.HSet(ctx, taskPrefix+"t", "rlease", "soon").Err())
	_, err = s.Get(ctx, "t")
	assert.NoError(t, err, "the lease on Redis's clock is the scripts' own")
	_, _, err = s.Update(ctx, "t", mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: time.Now()})
	if assert.Error(t, err, "a reap that cannot read the lease on Redis's clock") {
		assert.Contains(t, err.Error(), "mcpredis: task store: update: Redis answered")
		assert.False(t, unavailable(err), "a script that fails is no outage")
	}
}

func TestTaskStoreSetupMistakesPanic(t *testing.T) {
	t.Parallel()
	ok := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = ok.Close() })
	assert.PanicsWithValue(t, "mcpredis: NewTaskStore: Config.Client is nil", func() { mcpredis.NewTaskStore(mcpredis.Config{}) })
	for _, prefix := range []string{"{}", "a{}:", "a{}b{c}"} {
		assert.Panics(t, func() { mcpredis.NewTaskStore(mcpredis.Config{Client: ok, Prefix: prefix}) }, prefix)
	}
	for _, prefix := range []string{"a:", "{app}:", "a{:", "a}{:", "a}{b}", "{x}{}"} {
		assert.NotPanics(t, func() { mcpredis.NewTaskStore(mcpredis.Config{Client: ok, Prefix: prefix}) }, prefix)
	}
}

// TestTaskStoreOpsThatChangeLittle: the corners of Task.Apply the kit
// does not reach, each checked against Apply itself: an ask of keys all
// used before changes State only; an answer of no outstanding key changes
// nothing, not even a working task's message; a finish keeps only the
// payload of its own status; a reap without an error clears the old one.
func TestTaskStoreOpsThatChangeLittle(t *testing.T) {
	t.Parallel()
	s, _, _ := taskStore(t)
	ctx := t.Context()
	now := time.UnixMilli(time.Now().UnixMilli())
	q := json.RawMessage(`{"method":"elicitation/create"}`)
	for _, c := range []struct {
		name string
		task func(*mcpmw.Task)
		u    mcpmw.TaskUpdate
	}{
		{"ask of answered keys only", func(m *mcpmw.Task) {
			m.StatusMessage = "running"
			m.Answers = map[string]json.RawMessage{"a": json.RawMessage(`{}`)}
		}, mcpmw.TaskUpdate{Op: mcpmw.TaskAsk, Owner: "i1", Requests: map[string]json.RawMessage{"a": q}, State: []byte("s"), Message: "asking", Now: now.Add(time.Second)}},
		{"answer of no outstanding key", func(m *mcpmw.Task) { m.StatusMessage = "running" },
			mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: map[string]json.RawMessage{"x": json.RawMessage(`{}`)}, Now: now.Add(time.Second)}},
		{"answer of one of two", func(m *mcpmw.Task) {
			m.Status, m.StatusMessage = mcpmw.TaskInputRequired, "asking"
			m.InputRequests = map[string]json.RawMessage{"a": q, "b": q}
		}, mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: map[string]json.RawMessage{"a": json.RawMessage(`{}`)}, Now: now.Add(time.Second)}},
		{"failed with a result too", func(m *mcpmw.Task) { m.Result = json.RawMessage(`{"old":1}`) },
			mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "i1", Status: mcpmw.TaskFailed, Result: json.RawMessage(`{"r":1}`), Error: json.RawMessage(`{"e":1}`), Now: now}},
		{"completed with an error too", func(m *mcpmw.Task) { m.Error = json.RawMessage(`{"old":1}`) },
			mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "i1", Status: mcpmw.TaskCompleted, Result: json.RawMessage(`{"r":1}`), Error: json.RawMessage(`{"e":1}`), Now: now}},
		{"cancelled with both", func(m *mcpmw.Task) { m.Result, m.Error = json.RawMessage(`{"old":1}`), json.RawMessage(`{"old":2}`) },
			mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "i1", Status: mcpmw.TaskCancelled, Result: json.RawMessage(`{"r":1}`), Error: json.RawMessage(`{"e":1}`), Now: now}},
		{"reaped without an error", func(m *mcpmw.Task) {
			m.Result, m.Error = json.RawMessage(`{"old":1}`), json.RawMessage(`{"old":2}`)
			m.Status, m.InputRequests = mcpmw.TaskInputRequired, map[string]json.RawMessage{"a": q}
		}, mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: now.Add(time.Hour)}},
		{"an op this version does not know", func(*mcpmw.Task) {}, mcpmw.TaskUpdate{Op: 99, Owner: "i1", Now: now}},
	} {
		id := strings.NewReplacer(" ", "-").Replace(c.name)
		model := working(id, now, time.Hour)
		c.task(model)
		require.NoError(t, s.Create(ctx, model.Clone()), c.name)
		wantChanged := model.Apply(c.u)
		got, changed, err := s.Update(ctx, id, c.u)
		require.NoError(t, err, c.name)
		assert.Equal(t, wantChanged, changed, c.name)
		normalize := func(x *mcpmw.Task) *mcpmw.Task {
			x = x.Clone()
			x.Created, x.Updated, x.LeaseUntil = x.Created.UTC(), x.Updated.UTC(), x.LeaseUntil.UTC()
			return x
		}
		assert.Equal(t, normalize(model), normalize(got), c.name)
	}
}

// TestTaskStoreKeepsEveryMember: every exported member of mcpmw.Task, each
// set to a value other than its zero, comes back from Create then Get, so
// that a member added to Task later fails here until the hash keeps it.
func TestTaskStoreKeepsEveryMember(t *testing.T) {
	t.Parallel()
	s, _, _ := taskStore(t)
	now := time.UnixMilli(time.Now().UnixMilli())
	task := &mcpmw.Task{ID: "every"}
	v := reflect.ValueOf(task).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch f.Interface().(type) {
		case string, mcpmw.TaskStatus, mcpmw.Permission:
			if name != "ID" {
				f.SetString("v-" + name)
			}
		case time.Time:
			f.Set(reflect.ValueOf(now.Add(time.Duration(i) * time.Second)))
		case time.Duration:
			f.Set(reflect.ValueOf(time.Duration(i) * time.Minute))
		case bool:
			f.SetBool(true)
		case map[string]json.RawMessage:
			f.Set(reflect.ValueOf(map[string]json.RawMessage{name: json.RawMessage(`{"` + name + `":1}`)}))
		case []byte, json.RawMessage:
			f.SetBytes([]byte(`{"` + name + `":1}`))
		default:
			t.Fatalf("mcpmw.Task.%s is a %s, which this test does not know: teach it, and the store", name, f.Type())
		}
	}
	require.NoError(t, s.Create(t.Context(), task))
	got, err := s.Get(t.Context(), "every")
	require.NoError(t, err)
	for _, p := range []*time.Time{&got.Created, &got.Updated, &got.LeaseUntil} {
		*p = p.In(now.Location())
	}
	assert.Equal(t, task, got)
}
