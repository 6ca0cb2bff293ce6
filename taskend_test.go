package mcpmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// A task's end is stored once and recorded once, by whoever's end was
// stored, even when the store's reply to that write is lost; a task the
// store lost is stopped and recorded as lost; a store that is down
// answers 503 with Retry-After.

// forgetfulStore forgets a task on demand, as a Redis restarted without
// persistence, an eviction or a flush would.
type forgetfulStore struct {
	*mcpmw.MemoryTaskStore
	mu        sync.Mutex
	forgotten map[string]bool
}

func (s *forgetfulStore) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forgotten == nil {
		s.forgotten = map[string]bool{}
	}
	s.forgotten[id] = true
}

func (s *forgetfulStore) gone(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forgotten[id]
}

func (s *forgetfulStore) Get(ctx context.Context, id string) (*mcpmw.Task, error) {
	if s.gone(id) {
		return nil, mcpmw.ErrTaskNotFound
	}
	return s.MemoryTaskStore.Get(ctx, id)
}

func (s *forgetfulStore) Update(ctx context.Context, id string, u mcpmw.TaskUpdate) (*mcpmw.Task, bool, error) {
	if s.gone(id) {
		return nil, false, mcpmw.ErrTaskNotFound
	}
	return s.MemoryTaskStore.Update(ctx, id, u)
}

// endRecords returns the records of the ends of task id (not its
// creation, nor requests naming it).
func endRecords(recs []mcpmw.CallRecord, id string) []mcpmw.CallRecord {
	var out []mcpmw.CallRecord
	for _, r := range recs {
		if r.Target == id && r.Method == "tools/call" && r.Summary != "task created" {
			out = append(out, r)
		}
	}
	return out
}

func TestTaskTheStoreLostIsStoppedAndRecordedAsLost(t *testing.T) {
	t.Parallel()
	for _, parked := range []bool{false, true} {
		t.Run("parked="+strconv.FormatBool(parked), func(t *testing.T) {
			t.Parallel()
			store := &forgetfulStore{MemoryTaskStore: mcpmw.NewMemoryTaskStore()}
			var stopped atomic.Bool
			tool := askingTool()
			if !parked {
				tool = mcpmw.Tool{Name: "ask", Permission: "run", Task: mcpmw.TaskOptional,
					Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
						<-ctx.Done()
						stopped.Store(true)
						return mcpmw.ToolResult{}, ctx.Err()
					}}
			}
			e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: store, Lease: 30 * time.Millisecond}}, tool)
			id := e.create(t, "alice", "ask", "")
			if parked {
				e.until(t, id, "input_required")
			}
			store.forget(id)
			recs := waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool { return len(endRecords(rs, id)) > 0 })
			ends := endRecords(recs, id)
			require.Len(t, ends, 1)
			assert.Equal(t, mcpmw.OutcomeError, ends[0].Outcome)
			assert.Contains(t, ends[0].Summary, "task lost: the task store no longer has it")
			assert.NotContains(t, ends[0].Summary, "completed: ok")
			if !parked {
				assert.True(t, stopped.Load(), "the tool's context was cancelled: the run does not go on to its TTL")
			}
			assert.Contains(t, e.log.String(), "a task's store lost it")
		})
	}
}

// lossyStore applies the first update of op it is given, then answers
// with an error as if the reply had been lost to a deadline; every
// other call goes through.
type lossyStore struct {
	*mcpmw.MemoryTaskStore
	op   mcpmw.TaskOp
	lost atomic.Bool
	down atomic.Int32 // the calls after the lost reply that fail too (an outage)
}

func (s *lossyStore) Update(ctx context.Context, id string, u mcpmw.TaskUpdate) (*mcpmw.Task, bool, error) {
	if u.Op == s.op && s.lost.CompareAndSwap(false, true) {
		_, _, _ = s.MemoryTaskStore.Update(ctx, id, u)
		return nil, false, context.DeadlineExceeded
	}
	if s.lost.Load() && s.down.Add(-1) >= 0 {
		return nil, false, errors.New("connection refused")
	}
	return s.MemoryTaskStore.Update(ctx, id, u)
}

func (s *lossyStore) Get(ctx context.Context, id string) (*mcpmw.Task, error) {
	if s.lost.Load() && s.down.Add(-1) >= 0 {
		return nil, errors.New("connection refused")
	}
	return s.MemoryTaskStore.Get(ctx, id)
}

func TestTaskEndStoredButNotConfirmedIsRecordedOnce(t *testing.T) {
	t.Parallel()
	for _, down := range []int32{0, 3} {
		t.Run("failures after="+strconv.Itoa(int(down)), func(t *testing.T) {
			t.Parallel()
			store := &lossyStore{MemoryTaskStore: mcpmw.NewMemoryTaskStore(), op: mcpmw.TaskFinish}
			store.down.Store(down)
			release := make(chan struct{})
			close(release)
			e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: store, Lease: 60 * time.Millisecond}}, gatedTool("export", release, mcpmw.TaskOptional, nil))
			id := e.create(t, "alice", "export", "")
			recs := waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool { return len(endRecords(rs, id)) > 0 })
			time.Sleep(200 * time.Millisecond) // a second record would come now: the reaper's period is 30 ms
			ends := endRecords(e.rec.Records(), id)
			require.Len(t, ends, 1, "%+v", recs)
			assert.Equal(t, "task completed: ok", ends[0].Summary, "the end the store kept is the one recorded")
			task, err := store.MemoryTaskStore.Get(context.Background(), id)
			require.NoError(t, err)
			assert.Equal(t, mcpmw.TaskCompleted, task.Status)
			assert.NotEmpty(t, task.EndedBy)
		})
	}
}

func TestTaskEndRetriedWithinAShortTTL(t *testing.T) {
	t.Parallel()
	// Retries start at a tenth of the lease and stop only when the next
	// one would pass the TTL: a TTL a few leases long leaves room for them.
	store := &lossyStore{MemoryTaskStore: mcpmw.NewMemoryTaskStore(), op: mcpmw.TaskFinish}
	store.down.Store(3)
	release := make(chan struct{})
	close(release)
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: store, Lease: 300 * time.Millisecond, TTL: 3 * time.Second}}, gatedTool("export", release, mcpmw.TaskOptional, nil))
	id := e.create(t, "alice", "export", "")
	recs := waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool { return len(endRecords(rs, id)) > 0 })
	ends := endRecords(recs, id)
	require.Len(t, ends, 1)
	assert.Equal(t, "task completed: ok", ends[0].Summary, "the end was found stored after the store came back, well within the TTL")
}

// staleLeases is a shared store (not the memory store's own type, so
// the reaper runs) over a memory store.
type staleLeases struct{ *lossyStore }

func TestTaskReapStoredButNotConfirmedIsRecordedOnce(t *testing.T) {
	t.Parallel()
	store := &lossyStore{MemoryTaskStore: mcpmw.NewMemoryTaskStore(), op: mcpmw.TaskReap}
	store.down.Store(2)
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: staleLeases{store}, Lease: 60 * time.Millisecond}})
	now := time.Now()
	require.NoError(t, store.MemoryTaskStore.Create(context.Background(), &mcpmw.Task{ID: "orphan", CallerID: "alice", Endpoint: "/mcp", Tool: "export", Permission: "run",
		Status: mcpmw.TaskWorking, Created: now, Updated: now, TTL: time.Hour, Owner: "a-dead-instance", LeaseUntil: now}))
	waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool { return len(endRecords(rs, "orphan")) > 0 })
	time.Sleep(200 * time.Millisecond) // more passes of the reaper
	ends := endRecords(e.rec.Records(), "orphan")
	require.Len(t, ends, 1)
	assert.Contains(t, ends[0].Summary, "the instance running it (a-dead-instance) stopped")
	require.NotNil(t, ends[0].Caller, "the reaped task's record names its caller")
	assert.Equal(t, "alice", ends[0].Caller.(interface{ CallerID() string }).CallerID())
	assert.False(t, ends[0].Caller.Can("run"), "and lends it no permission")
	assert.WithinDuration(t, time.Now(), ends[0].Time, 5*time.Second, "the record says when the task ended, not when it started")
}

func TestTaskEndRecordSaysWhoAndWhen(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	e := newTaskEnv(t, nil, gatedTool("export", release, mcpmw.TaskOptional, nil))
	id := e.create(t, "alice", "export", "")
	time.Sleep(50 * time.Millisecond)
	close(release)
	recs := waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool { return len(endRecords(rs, id)) > 0 })
	var created mcpmw.CallRecord
	for _, r := range recs {
		if r.Target == id && r.Summary == "task created" {
			created = r
		}
	}
	end := endRecords(recs, id)[0]
	assert.Equal(t, "192.0.2.1", end.ClientIP, "the end names the address the task was created from")
	assert.Equal(t, created.Caller, end.Caller)
	assert.True(t, end.Time.After(created.Time.Add(50*time.Millisecond)), "the end's Time is when it ended (%v), past the creation (%v)", end.Time, created.Time)
	assert.GreaterOrEqual(t, end.Duration, 50*time.Millisecond, "its Duration is how long the task ran")
}

// failingReads fails every Get and Update with err.
type failingReads struct {
	*mcpmw.MemoryTaskStore
	err error
}

func (s failingReads) Get(context.Context, string) (*mcpmw.Task, error) { return nil, s.err }

func (s failingReads) Update(context.Context, string, mcpmw.TaskUpdate) (*mcpmw.Task, bool, error) {
	return nil, false, s.err
}

// outage is an error of a store that cannot reach its server, as
// mcpredis's are.
type outage struct{}

func (outage) Error() string     { return "dial tcp 127.0.0.1:6379: connect: connection refused" }
func (outage) Unavailable() bool { return true }

func TestTaskRequestsDuringAStoreOutageAre503WithRetryAfter(t *testing.T) {
	t.Parallel()
	for name, err := range map[string]error{
		"unavailable": fmt.Errorf("mcpredis: task store: %w", outage{}),
		"deadline":    fmt.Errorf("mcpredis: task store: %w", context.DeadlineExceeded),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: failingReads{mcpmw.NewMemoryTaskStore(), err}}})
			for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
				params := `"taskId":"some-task"`
				if method == "tasks/update" {
					params += `,"inputResponses":{}`
				}
				w := rawTask(t, e.h, "alice", method, params)
				assert.Equal(t, 503, w.Code, "%s: %s", method, w.Body)
				assert.Equal(t, "1", w.Header().Get("Retry-After"), method)
				assert.Contains(t, w.Body.String(), "retry after the interval in the Retry-After header")
				assert.Contains(t, w.Body.String(), `"code":-32603`)
			}
			rec := e.rec.Records()
			require.Len(t, rec, 3, "one record each")
			for _, r := range rec {
				assert.Equal(t, 503, r.Status)
			}
		})
	}
}

func TestTaskStoreErrorThatIsNotAnOutageIs500(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: failingReads{mcpmw.NewMemoryTaskStore(), errors.New("the store's own bug")}}})
	w := rawTask(t, e.h, "alice", "tasks/get", `"taskId":"x"`)
	assert.Equal(t, 500, w.Code, w.Body.String())
	assert.Empty(t, w.Header().Get("Retry-After"))
	assert.Contains(t, w.Body.String(), `"message":"Internal error"`)
}

// rawTask sends a 2026-07-28 request as doTask does, and returns the
// recorder, headers and all.
func rawTask(t *testing.T, h http.Handler, token, method, params string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, taskRequest(token, method, params, taskCaps))
	return w
}

func TestTaskApplyLeaseEndingExactlyNowIsNotReaped(t *testing.T) {
	t.Parallel()
	now := time.Now()
	task := &mcpmw.Task{Status: mcpmw.TaskWorking, LeaseUntil: now}
	assert.False(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: now}), "a lease ending now has not ended")
	assert.Equal(t, mcpmw.TaskWorking, task.Status)
	assert.True(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: now.Add(time.Nanosecond), Token: "t1"}))
	assert.Equal(t, mcpmw.TaskFailed, task.Status)
	assert.Equal(t, "t1", task.EndedBy, "the reap's token is kept")
}

func TestTaskApplyNeverAsksAnAnsweredKeyAgain(t *testing.T) {
	t.Parallel()
	q := json.RawMessage(`{"method":"elicitation/create","params":{}}`)
	task := &mcpmw.Task{Status: mcpmw.TaskWorking, Owner: "i1"}
	require.True(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskAsk, Owner: "i1", Requests: map[string]json.RawMessage{"a": q}}))
	require.True(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: map[string]json.RawMessage{"a": json.RawMessage(`{"x":1}`), "b": json.RawMessage(`{}`)}}))
	assert.Equal(t, []string{"a"}, slices.Sorted(maps.Keys(task.Answers)), "an answer to what was never asked is not kept")
	require.True(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskAsk, Owner: "i1", Requests: map[string]json.RawMessage{"a": q, "c": q}}))
	assert.Equal(t, []string{"c"}, slices.Sorted(maps.Keys(task.InputRequests)), "a is answered: asked again, it is not outstanding again")
	assert.Equal(t, `{"x":1}`, string(task.Answers["a"]), "and its answer stands")
	assert.Equal(t, mcpmw.TaskInputRequired, task.Status)
}

// renewlessStore fails every lease renewal with an error that is not an
// outage of the task (a Redis blip, say) while failing is set.
type renewlessStore struct {
	*mcpmw.MemoryTaskStore
	failing atomic.Bool
	failed  atomic.Int32
}

func (s *renewlessStore) Update(ctx context.Context, id string, u mcpmw.TaskUpdate) (*mcpmw.Task, bool, error) {
	if u.Op == mcpmw.TaskRenew && s.failing.Load() {
		s.failed.Add(1)
		return nil, false, errors.New("i/o timeout")
	}
	return s.MemoryTaskStore.Update(ctx, id, u)
}

func TestTaskWhoseLeaseCannotBeRenewedForAWhileRunsOnAndSaysSo(t *testing.T) {
	t.Parallel()
	store := &renewlessStore{MemoryTaskStore: mcpmw.NewMemoryTaskStore()}
	store.failing.Store(true)
	release := make(chan struct{})
	// Renewed every third of the lease: one failed renewal leaves a third
	// of it before the reaper may fail the task; two would leave none (the
	// next renewal comes as the lease ends, racing the reaper).
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: store, Lease: 3 * time.Second}}, gatedTool("slow", release, mcpmw.TaskRequired, nil))
	id := e.create(t, "alice", "slow", "")
	require.Eventually(t, func() bool { return store.failed.Load() >= 1 }, mcpmw.Patience, time.Millisecond)
	store.failing.Store(false)
	assert.Equal(t, "working", e.get(t, "alice", id).Result["status"], "a renewal that failed is not a reason to stop the run")
	close(release)
	e.until(t, id, "completed")
	assert.Contains(t, e.log.String(), "a task's lease could not be renewed")
	assert.Contains(t, e.log.String(), "i/o timeout")
}
