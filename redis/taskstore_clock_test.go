package mcpredis_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// off returns a clock that reads d past the true time.
func off(d time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(d) }
}

// TestTaskStoreLeasesOnRedisClock: three instances share one Redis, one
// of them 10 minutes slow and one 10 minutes fast, each giving times on
// its own clock: a lease ends, a task is reaped and a task is forgotten on
// Redis's clock, so no instance reaps a live task nor keeps a dead one
// alive, and a task outlives no TTL and is cut short by none.
func TestTaskStoreLeasesOnRedisClock(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailOpen)
	c := cfg.Client.(*redis.Client)
	ctx := t.Context()
	clocks := map[string]func() time.Time{"true": time.Now, "slow": off(-10 * time.Minute), "fast": off(10 * time.Minute)}
	stores := map[string]*mcpredis.TaskStore{}
	for name, now := range clocks {
		stores[name] = mcpredis.NewTaskStoreAt(cfg, now)
	}
	// create makes a task on the instance named, with a lease that ends
	// lease from now on its clock.
	create := func(id, on string, lease time.Duration) *mcpmw.Task {
		t.Helper()
		task := working(id, clocks[on](), time.Hour)
		task.Owner, task.LeaseUntil = on, task.Created.Add(lease)
		require.NoError(t, stores[on].Create(ctx, task))
		return task
	}
	// reaped reports what the instance named does with id when it reaps:
	// whether Expired lists it, and whether TaskReap fails it.
	reaped := func(id, by string) (listed, failed bool) {
		t.Helper()
		now := clocks[by]()
		ids, err := stores[by].Expired(ctx, now, 100)
		require.NoError(t, err)
		for _, x := range ids {
			listed = listed || x == id
		}
		_, failed, err = stores[by].Update(ctx, id, mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: now, Message: "reaped"})
		require.NoError(t, err)
		return listed, failed
	}

	slowLive := create("slow-live", "slow", 10*time.Second)
	for _, by := range []string{"true", "fast"} {
		listed, failed := reaped("slow-live", by)
		assert.False(t, listed || failed, "a slow instance's live task, reaped by the %s one: listed %v, failed %v", by, listed, failed)
	}
	got, err := stores["true"].Get(ctx, "slow-live")
	require.NoError(t, err)
	assert.Equal(t, slowLive.LeaseUntil.UnixMilli(), got.LeaseUntil.UnixMilli(), "LeaseUntil reads as its owner gave it")

	create("true-live", "true", 10*time.Second)
	listed, failed := reaped("true-live", "fast")
	assert.False(t, listed || failed, "a live task, reaped by a fast instance: listed %v, failed %v", listed, failed)

	create("fast-dead", "fast", -time.Second) // its lease ended a second ago, on its clock
	listed, failed = reaped("fast-dead", "true")
	assert.True(t, listed && failed, "a fast instance's dead task is reaped at once: listed %v, failed %v", listed, failed)

	create("renewed", "true", -time.Second)
	_, changed, err := stores["slow"].Update(ctx, "renewed", mcpmw.TaskUpdate{Op: mcpmw.TaskRenew, Owner: "true", LeaseUntil: clocks["slow"]().Add(10 * time.Second)})
	require.NoError(t, err)
	require.True(t, changed)
	listed, failed = reaped("renewed", "true")
	assert.False(t, listed || failed, "a lease renewed by a slow instance runs on: listed %v, failed %v", listed, failed)

	// A TTL of an hour, given by an instance two hours slow: kept an
	// hour, on Redis's clock; and by one two hours fast.
	for _, skew := range []time.Duration{-2 * time.Hour, 2 * time.Hour} {
		id := "ttl" + strconv.Itoa(int(skew.Hours()))
		task := working(id, off(skew)(), time.Hour)
		require.NoError(t, mcpredis.NewTaskStoreAt(cfg, off(skew)).Create(ctx, task))
		ttl, err := c.PTTL(ctx, taskPrefix+id).Result()
		require.NoError(t, err)
		assert.InDelta(t, time.Hour.Seconds(), ttl.Seconds(), 60, "a TTL of an hour given by a clock %v off", skew)
	}
}

// TestTaskStoreClockWithinHalfASecondTakenAsItIs: an instance's clock is
// moved onto Redis's in whole seconds: one within half a second of
// Redis's is taken as it is (so two instances a few milliseconds apart
// compare leases exactly as Task.Apply does), one 700 ms off is moved by
// a second.
func TestTaskStoreClockWithinHalfASecondTakenAsItIs(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailOpen)
	c := cfg.Client.(*redis.Client)
	ctx := t.Context()
	for _, x := range []struct {
		off, moved time.Duration
	}{
		{0, 0}, {300 * time.Millisecond, 0}, {-300 * time.Millisecond, 0},
		{700 * time.Millisecond, -time.Second}, {-700 * time.Millisecond, time.Second},
	} {
		id := "off" + strconv.Itoa(int(x.off.Milliseconds()))
		s := mcpredis.NewTaskStoreAt(cfg, off(x.off))
		task := working(id, off(x.off)(), time.Hour)
		require.NoError(t, s.Create(ctx, task))
		score, err := c.ZScore(ctx, leaseSet, id).Result()
		require.NoError(t, err)
		assert.Equal(t, task.LeaseUntil.Add(x.moved).UnixMilli(), int64(score), "created by a clock %v off", x.off)
		_, _, err = s.Update(ctx, id, mcpmw.TaskUpdate{Op: mcpmw.TaskRenew, Owner: "i1", LeaseUntil: task.LeaseUntil.Add(time.Minute)})
		require.NoError(t, err)
		score, err = c.ZScore(ctx, leaseSet, id).Result()
		require.NoError(t, err)
		assert.Equal(t, task.LeaseUntil.Add(time.Minute+x.moved).UnixMilli(), int64(score), "renewed by a clock %v off", x.off)

		// Its own reaps, moved as much, compare exactly as Task.Apply does.
		lease := time.UnixMilli(task.LeaseUntil.Add(time.Minute).UnixMilli()) // as stored: whole ms
		for _, c := range []struct {
			now  time.Time
			want bool
		}{{lease, false}, {lease.Add(time.Millisecond), true}} {
			ids, err := s.Expired(ctx, c.now, 100)
			require.NoError(t, err)
			assert.Equal(t, c.want, slices.Contains(ids, id), "Expired at lease%+v, by a clock %v off", c.now.Sub(lease), x.off)
			_, changed, err := s.Update(ctx, id, mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: c.now})
			require.NoError(t, err)
			assert.Equal(t, c.want, changed, "TaskReap at lease%+v, by a clock %v off", c.now.Sub(lease), x.off)
		}
	}
}

// TestTaskStoreReapsATaskStoredBeforeRedisClock: a task stored by a
// version that kept no lease on Redis's clock (no rlease field) is reaped
// by the lease it has.
func TestTaskStoreReapsATaskStoredBeforeRedisClock(t *testing.T) {
	t.Parallel()
	s, c, _ := taskStore(t)
	ctx := t.Context()
	now := time.Now()
	require.NoError(t, s.Create(ctx, working("old", now, time.Hour)))
	require.NoError(t, c.HDel(ctx, taskPrefix+"old", "rlease").Err())
	_, changed, err := s.Update(ctx, "old", mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: now.Add(5 * time.Second)})
	require.NoError(t, err)
	assert.False(t, changed, "its lease runs on")
	_, changed, err = s.Update(ctx, "old", mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: now.Add(11 * time.Second)})
	require.NoError(t, err)
	assert.True(t, changed, "its lease has ended")
}
