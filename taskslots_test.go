package mcpmw_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// Which calls become tasks, and what a task holds while it runs: one
// decision whether the extension is served, slots bounded per instance
// and per caller, given back however the task ends (or fails to start),
// and waited for by Close from before the task is stored.

func TestTaskToolAddedAfterNewNeverMakesATaskNobodyCanRead(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "plain", Permission: "run", Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.TextResult("plain"), nil
	}})
	rec := mcpmwtest.NewRecorder()
	h := mcpmw.New(&reg, taskUsers, rec, nil) // no task tool yet, Options.Tasks unset: the extension is not served
	t.Cleanup(h.Close)
	release := make(chan struct{})
	close(release)
	reg.AddTools(gatedTool("late-optional", release, mcpmw.TaskOptional, nil), gatedTool("late-required", release, mcpmw.TaskRequired, nil))

	opt := doTask(t, h, "alice", "tools/call", `"name":"late-optional","arguments":{}`, taskCaps)
	require.Equal(t, 200, opt.Status, opt.Raw)
	assert.Equal(t, "complete", opt.Result["resultType"], "a TaskOptional tool added after New runs as a plain call where tasks/get is not served: %s", opt.Raw)

	req := doTask(t, h, "alice", "tools/call", `"name":"late-required","arguments":{}`, taskCaps)
	require.NotNil(t, req.Error, req.Raw)
	assert.Equal(t, mcpmw.CodeInternalError, req.Error.Code, "a TaskRequired tool added after New is a server mistake, not a task nobody can read")
	last := rec.Records()[len(rec.Records())-1]
	assert.Equal(t, "tasks not served at this endpoint", last.Summary)

	get := doTask(t, h, "alice", "tasks/get", `"taskId":"x"`, taskCaps)
	require.NotNil(t, get.Error, get.Raw)
	assert.Equal(t, mcpmw.CodeMethodNotFound, get.Error.Code, "and tasks/* stay unserved")
}

func TestOneCallerCannotTakeEveryTaskSlot(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{MaxRunning: 4, MaxPerCaller: 2, Shutdown: time.Millisecond}}, askingTool())
	for range 2 {
		e.until(t, e.create(t, "alice", "ask", ""), "input_required") // parked: each keeps its slot
	}
	third := e.call(t, "alice", "ask", "")
	assert.Equal(t, "input_required", third.Result["resultType"], "alice's third call runs as a plain call (a round of its own), not a task: %s", third.Raw)
	assert.NotContains(t, third.Result, "taskId")
	bob := e.create(t, "bob", "ask", "")
	assert.Contains(t, []any{"working", "input_required"}, e.get(t, "bob", bob).Result["status"], "bob still gets a task while alice's wait for answers")
}

func TestTaskRequiredBeyondTheCallersShareIsRefusedSayingSo(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{MaxRunning: 8, MaxPerCaller: 1}}, gatedTool("req", release, mcpmw.TaskRequired, nil))
	e.create(t, "alice", "req", "")
	r := e.call(t, "alice", "req", "")
	require.NotNil(t, r.Error, r.Raw)
	assert.Equal(t, mcpmw.CodeInternalError, r.Error.Code)
	assert.Contains(t, r.Error.Message, "You already have 1 tasks running")
	e.create(t, "bob", "req", "")
}

func TestTaskPerCallerBoundDefaultsToAQuarterOfMaxRunning(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ max, want int }{{0, 16}, {8, 2}, {3, 1}, {1, 1}} {
		h := mcpmw.New(nil, taskUsers, mcpmwtest.NewRecorder(), &mcpmw.Options{Tasks: &mcpmw.TaskOptions{MaxRunning: tt.max}})
		assert.Equal(t, tt.want, mcpmw.TaskPerCaller(h), "MaxRunning %d", tt.max)
		h.Close()
	}
}

// failingCreates fails Create while fail is set.
type failingCreates struct {
	*mcpmw.MemoryTaskStore
	fail atomic.Bool
}

func (s *failingCreates) Create(ctx context.Context, t *mcpmw.Task) error {
	if s.fail.Load() {
		return errors.New("the store is full")
	}
	return s.MemoryTaskStore.Create(ctx, t)
}

func TestTaskStoreThatFailsCreateGivesBackTheSlot(t *testing.T) {
	t.Parallel()
	store := &failingCreates{MemoryTaskStore: mcpmw.NewMemoryTaskStore()}
	store.fail.Store(true)
	release := make(chan struct{})
	close(release)
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: store, MaxRunning: 2, MaxPerCaller: 2}}, gatedTool("export", release, mcpmw.TaskOptional, nil))
	for i := range 5 {
		r := e.call(t, "alice", "export", "")
		require.Equal(t, "complete", r.Result["resultType"], "create %d failed: the call runs as a plain one: %s", i, r.Raw)
	}
	store.fail.Store(false)
	e.create(t, "alice", "export", "") // after 5 failures with 2 slots, a slot is still free
}

// blockingCreates holds every Create until release is closed.
type blockingCreates struct {
	*mcpmw.MemoryTaskStore
	entered chan struct{}
	release chan struct{}
}

func (s *blockingCreates) Create(ctx context.Context, t *mcpmw.Task) error {
	s.entered <- struct{}{}
	<-s.release
	return s.MemoryTaskStore.Create(ctx, t)
}

func TestCloseWaitsForATaskWhoseCreateIsInFlight(t *testing.T) {
	t.Parallel()
	store := &blockingCreates{MemoryTaskStore: mcpmw.NewMemoryTaskStore(), entered: make(chan struct{}, 1), release: make(chan struct{})}
	rec := mcpmwtest.NewRecorder()
	var reg mcpmw.Registry
	reg.AddTools(gatedTool("export", make(chan struct{}), mcpmw.TaskOptional, nil)) // never released: only Close ends it
	h := mcpmw.New(&reg, taskUsers, rec, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: store, Shutdown: 50 * time.Millisecond}})
	created := make(chan taskReply, 1)
	go func() { created <- doTask(t, h, "alice", "tools/call", `"name":"export","arguments":{}`, taskCaps) }()
	<-store.entered
	closed := make(chan struct{})
	go func() { h.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a task's Create was in flight")
	case <-time.After(100 * time.Millisecond): // past the grace: Close still waits for the create
	}
	close(store.release)
	r := <-created
	require.Equal(t, "task", r.Result["resultType"], r.Raw)
	<-closed
	task, err := store.Get(context.Background(), r.Result["taskId"].(string))
	require.NoError(t, err)
	assert.Equal(t, mcpmw.TaskFailed, task.Status, "the task stored as Close waited is ended, not left running: its end is stored before Close returns")
	assert.Equal(t, "the instance running the task shut down", task.StatusMessage)
}

func TestTaskIsBoundToItsEndpoint(t *testing.T) {
	t.Parallel()
	store := mcpmw.NewMemoryTaskStore()
	release := make(chan struct{})
	defer close(release)
	newEndpoint := func(name string) *mcpmw.Handler {
		var reg mcpmw.Registry
		reg.AddTools(gatedTool("export", release, mcpmw.TaskOptional, nil))
		h := mcpmw.New(&reg, taskUsers, mcpmwtest.NewRecorder(), &mcpmw.Options{Endpoint: name, Tasks: &mcpmw.TaskOptions{Store: store}})
		t.Cleanup(h.Close)
		return h
	}
	public, admin := newEndpoint("public"), newEndpoint("admin")
	r := doTask(t, public, "alice", "tools/call", `"name":"export","arguments":{}`, taskCaps)
	require.Equal(t, "task", r.Result["resultType"], r.Raw)
	id := r.Result["taskId"].(string)
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		params := `"taskId":` + strconv.Quote(id)
		if method == "tasks/update" {
			params += `,"inputResponses":{}`
		}
		other := doTask(t, admin, "alice", method, params, taskCaps)
		require.NotNil(t, other.Error, "%s at another endpoint sharing the store: %s", method, other.Raw)
		assert.Equal(t, mcpmw.CodeInvalidParams, other.Error.Code, "the same caller at another endpoint learns nothing of the task")
	}
	own := doTask(t, public, "alice", "tasks/get", `"taskId":`+strconv.Quote(id), taskCaps)
	assert.Equal(t, "working", own.Result["status"], own.Raw)
}

func TestTaskOptionsThatCannotWorkStopNew(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		o    mcpmw.TaskOptions
		want string
	}{
		{"lease of 1ns", mcpmw.TaskOptions{Lease: 1}, "TaskOptions.Lease is 1ns; it must be at least 10ms"},
		{"lease of 2ns", mcpmw.TaskOptions{Lease: 2}, "TaskOptions.Lease is 2ns"},
		{"lease just short", mcpmw.TaskOptions{Lease: 10*time.Millisecond - 1}, "TaskOptions.Lease is 9.999999ms"},
		{"negative TTL", mcpmw.TaskOptions{TTL: -time.Second}, "TaskOptions.TTL is -1s; it must be positive"},
		{"negative poll", mcpmw.TaskOptions{PollInterval: -1}, "TaskOptions.PollInterval is -1ns"},
		{"negative shutdown", mcpmw.TaskOptions{Shutdown: -1}, "TaskOptions.Shutdown is -1ns"},
		{"negative lease", mcpmw.TaskOptions{Lease: -1}, "TaskOptions.Lease is -1ns"},
		{"negative slots", mcpmw.TaskOptions{MaxRunning: -1}, "TaskOptions.MaxRunning is -1"},
		{"negative per caller", mcpmw.TaskOptions{MaxPerCaller: -1}, "TaskOptions.MaxPerCaller is -1"},
		{"negative input", mcpmw.TaskOptions{MaxInputBytes: -1}, "TaskOptions.MaxInputBytes is -1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				v := recover()
				require.NotNil(t, v, "New accepted %+v", tt.o)
				assert.Contains(t, v, tt.want)
			}()
			o := tt.o
			mcpmw.New(nil, taskUsers, mcpmwtest.NewRecorder(), &mcpmw.Options{Tasks: &o})
		})
	}
	h := mcpmw.New(nil, taskUsers, mcpmwtest.NewRecorder(), &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Lease: 10 * time.Millisecond}})
	h.Close() // the shortest lease is accepted
}

func TestTaskThatEndsGivesBackOnlyItsOwnSlot(t *testing.T) {
	t.Parallel()
	first, rest := make(chan struct{}), make(chan struct{})
	defer close(rest)
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{MaxRunning: 8, MaxPerCaller: 2}},
		gatedTool("first", first, mcpmw.TaskRequired, nil), gatedTool("rest", rest, mcpmw.TaskRequired, nil))
	id := e.create(t, "alice", "first", "")
	e.create(t, "alice", "rest", "")
	close(first)
	e.until(t, id, "completed")
	deadline := time.Now().Add(mcpmw.Patience)
	for r := e.call(t, "alice", "rest", ""); r.Error != nil; r = e.call(t, "alice", "rest", "") {
		require.Contains(t, r.Error.Message, "You already have 2 tasks running", r.Raw)
		require.True(t, time.Now().Before(deadline), "the ended task's slot never came back")
		time.Sleep(5 * time.Millisecond)
	}
	r := e.call(t, "alice", "rest", "")
	require.NotNil(t, r.Error, "alice holds 2 again (one left running, one new): a third is refused, %s", r.Raw)
	assert.Contains(t, r.Error.Message, "You already have 2 tasks running")
}

func TestTaskIsBoundToTheRequestedPathOfAnUnnamedEndpoint(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{}}, gatedTool("export", release, mcpmw.TaskOptional, nil))
	// One Handler with no Options.Endpoint behind two prefixes a router
	// strips (as http.StripPrefix does): the same URL path, two requested
	// paths, two endpoints.
	mountedAt := func(prefix string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.RequestURI = prefix + r.RequestURI
			e.h.ServeHTTP(w, r)
		})
	}
	public, admin := mountedAt("/public"), mountedAt("/admin")
	r := doTask(t, public, "alice", "tools/call", `"name":"export","arguments":{}`, taskCaps)
	require.Equal(t, "task", r.Result["resultType"], r.Raw)
	id := r.Result["taskId"].(string)
	other := doTask(t, admin, "alice", "tasks/get", `"taskId":`+strconv.Quote(id), taskCaps)
	require.NotNil(t, other.Error, other.Raw)
	assert.Equal(t, mcpmw.CodeInvalidParams, other.Error.Code)
	own := doTask(t, public, "alice", "tasks/get", `"taskId":`+strconv.Quote(id), taskCaps)
	assert.Equal(t, "working", own.Result["status"], own.Raw)
	direct := e.get(t, "alice", id)
	require.NotNil(t, direct.Error, "nor at its unprefixed path: %s", direct.Raw)
}
