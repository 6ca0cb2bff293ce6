package mcpmw

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"strconv"
	"sync"
	"time"
)

// A task runs on the instance that accepted its call, in a goroutine of
// its own, detached from the request: the call's answer names the task,
// and the tool goes on. The store holds the task for every instance; the
// instance running it renews its lease, parks it in input_required when
// the tool asks, runs the tool again once the client has answered, and
// writes its end. tasks/update and tasks/cancel change the task in the
// store, on any instance, and then wake the instance running it: here
// directly, elsewhere through Options.Relay; without a Relay the running
// instance finds the change when it next reads the store (every
// PollInterval while it waits for answers, every Lease/3 otherwise).

// Task defaults (TaskOptions).
const (
	defaultTaskMaxRunning   = 64
	defaultTaskTTL          = time.Hour
	defaultTaskPollInterval = time.Second
	defaultTaskLease        = 10 * time.Second
	defaultTaskShutdown     = 10 * time.Second
)

// Causes of a task's context ending other than the client's cancel.
var (
	errTaskExpired  = errors.New("mcpmw: the task outlived its TTL")
	errTaskShutdown = errors.New("mcpmw: the instance running the task shut down")
	errTaskReaped   = errors.New("mcpmw: the task was failed by another instance (its lease ended)")
)

// taskRunner creates, runs and answers for the tasks of one Handler.
type taskRunner struct {
	store       TaskStore
	self        string // this instance's id: the Owner of the tasks it runs
	relay       Relay  // nil: wake-ups stay in this process
	slots       chan struct{}
	ttl         time.Duration
	poll        time.Duration
	lease       time.Duration
	shutdown    time.Duration
	shared      bool          // the store is not this process's: run the reaper
	toolTimeout time.Duration // Options.ToolTimeout, for tools without their own

	auditor  Auditor
	observer Observer
	logger   *slog.Logger
	ad       *advertisement

	mu      sync.Mutex
	running map[string]*runningTask // by task id, the tasks this instance runs
	closed  bool
	wg      sync.WaitGroup
	reaper  sync.Once
	stop    chan struct{} // closed by close: the reaper ends
}

// runningTask is a task this instance runs: how to wake it and stop it.
type runningTask struct {
	answered chan struct{} // capacity 1: the store may hold new answers (park reads it)
	poked    chan struct{} // capacity 1: the store may say cancel (renew reads it)
	cancel   context.CancelCauseFunc
}

// newTaskRunner returns the runner of a handler with options o (nil: the
// defaults), on relay (nil: none).
func newTaskRunner(o *TaskOptions, relay Relay, auditor Auditor, observer Observer, logger *slog.Logger, ad *advertisement, toolTimeout time.Duration) *taskRunner {
	var opts TaskOptions
	if o != nil {
		opts = *o
	}
	r := &taskRunner{
		store: opts.Store, relay: relay, auditor: auditor, observer: observer, logger: logger, ad: ad,
		ttl: orDefault(opts.TTL, defaultTaskTTL), poll: orDefault(opts.PollInterval, defaultTaskPollInterval),
		lease: orDefault(opts.Lease, defaultTaskLease), shutdown: orDefault(opts.Shutdown, defaultTaskShutdown),
		running: map[string]*runningTask{}, stop: make(chan struct{}), toolTimeout: toolTimeout,
	}
	if r.store == nil {
		r.store = NewMemoryTaskStore()
	} else if _, mem := r.store.(*MemoryTaskStore); !mem {
		r.shared = true
		r.store = guardedStore{r.store} // an application's: its panics become errors
	}
	n := opts.MaxRunning
	if n <= 0 {
		n = defaultTaskMaxRunning
	}
	r.slots = make(chan struct{}, n)
	if relay != nil {
		r.self = relay.ID()
	} else {
		r.self = randomID()
	}
	return r
}

// orDefault is d when v is not positive.
func orDefault(v, d time.Duration) time.Duration {
	if v <= 0 {
		return d
	}
	return v
}

// randomID returns 128 random bits, base64url: a task's id, or an
// instance's when no Relay names it.
func randomID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// taskCall is what a task's runs need of the call that created it,
// copied out of the request, which ends as the task starts.
type taskCall struct {
	entry     *entry
	caller    Caller
	args      json.RawMessage
	clientCap json.RawMessage
	requestID string
	client    [2]string // ClientName, ClientVersion
	timeout   time.Duration
	created   context.Context // the creating request's context, without its cancel: the run's span links to it
}

// busy reports whether this instance runs as many tasks as it may, or
// is shutting down; when not, it takes a slot, which release gives back.
func (r *taskRunner) take() bool {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return false
	}
	select {
	case r.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

func (r *taskRunner) release() { <-r.slots }

// create stores the task of call, already given a slot, and starts it.
// The task is in the store before create returns: any instance's
// tasks/get finds it as soon as the client holds its id.
func (r *taskRunner) create(ctx context.Context, call *taskCall, answers map[string]json.RawMessage, state []byte) (*Task, error) {
	now := time.Now()
	t := &Task{
		ID: randomID(), CallerID: callerID(call.caller), Tool: call.entry.Name, Permission: call.entry.Permission,
		Status: TaskWorking, Created: now, Updated: now, TTL: r.ttl, PollInterval: r.poll,
		Owner: r.self, LeaseUntil: now.Add(r.lease), Answers: answers, State: state,
	}
	if err := r.store.Create(ctx, t); err != nil {
		return nil, err
	}
	rt := &runningTask{answered: make(chan struct{}, 1), poked: make(chan struct{}, 1)}
	runCtx, cancel := context.WithCancelCause(context.Background())
	runCtx, stopTTL := context.WithDeadlineCause(runCtx, t.Created.Add(t.TTL), errTaskExpired)
	rt.cancel = cancel
	r.mu.Lock()
	r.running[t.ID] = rt
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer r.release()
		defer stopTTL()
		defer func() {
			r.mu.Lock()
			delete(r.running, t.ID)
			r.mu.Unlock()
		}()
		r.run(runCtx, rt, t.Clone(), call)
	}()
	return t, nil
}

// wake tells the task id, if it runs here, that the store changed.
func (r *taskRunner) wake(id string) {
	r.mu.Lock()
	rt := r.running[id]
	r.mu.Unlock()
	if rt != nil {
		for _, c := range []chan struct{}{rt.answered, rt.poked} {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
}

// notify wakes the instance running t after a change made here: this
// one directly, another through the Relay (an outage loses the wake-up;
// the owner then finds the change when it next reads the store).
func (r *taskRunner) notify(ctx context.Context, t *Task) {
	if t.Owner == r.self {
		r.wake(t.ID)
		return
	}
	if r.relay != nil {
		payload, _ := json.Marshal(relayMessage{Task: t.ID}) // a string: never fails
		_, _ = r.relay.Send(ctx, t.Owner, payload)
	}
}

// run runs the tool of task t until it ends, renewing its lease,
// parking it while the client answers, and writes its end; the one
// record of its end follows.
func (r *taskRunner) run(ctx context.Context, rt *runningTask, t *Task, call *taskCall) {
	start := time.Now()
	ctx, end := r.observeStart(ctx, t, call, start)
	stopRenew := r.renew(ctx, rt, t.ID)
	defer stopRenew()
	resp := r.rounds(ctx, rt, t, call)
	status, result, errObj, msg := taskEnd(ctx, resp)
	u := TaskUpdate{Op: TaskFinish, Owner: r.self, Status: status, Result: result, Error: errObj, Message: msg, Now: time.Now()}
	store, cancel := context.WithTimeout(context.Background(), r.lease)
	defer cancel()
	_, changed, err := r.store.Update(store, t.ID, u)
	rec := r.endRecord(t, call, resp, status, start)
	audit := true
	switch {
	case errors.Is(err, ErrTaskNotFound):
		// Past its TTL, the store forgot it as the run ended (the TTL
		// stops the run): the end is recorded all the same.
	case err != nil:
		r.logger.LogAttrs(store, slog.LevelError, "mcpmw: a task's end could not be stored", slog.String("task", t.ID), slog.Any("error", err))
		audit = false // the lease ends, and an instance reaps it: that is the record
		rec.Summary = "task run ended, its end not stored: " + capEcho(err.Error())
	case !changed:
		audit = false // ended elsewhere (reaped): that instance made the record
		rec.Summary = "task run ended after the task was ended elsewhere"
	}
	if !audit {
		end = r.guarded(ctx, "observer", end)
		end(rec) // the run's observation ends all the same
		return
	}
	r.report(context.WithoutCancel(ctx), rec, end)
}

// guarded returns hook, recovering and logging its panic.
func (r *taskRunner) guarded(ctx context.Context, name string, hook func(CallRecord)) func(CallRecord) {
	return func(rec CallRecord) {
		defer func() {
			if v := recover(); v != nil {
				r.logger.LogAttrs(ctx, slog.LevelError, "mcpmw: "+name+" panicked on a task's end",
					slog.Any("panic", v), slog.Any("record", rec), slog.String("stack", string(debug.Stack())))
			}
		}()
		hook(rec)
	}
}

// report hands the record of a task's end to the Auditor, then to end
// (the Observer's), each guarded: on a task's goroutine no handler is
// above to recover a hook's panic, which must not take the process down.
func (r *taskRunner) report(ctx context.Context, rec CallRecord, end func(CallRecord)) {
	r.guarded(ctx, "auditor", func(rec CallRecord) { r.auditor.Audit(ctx, rec) })(rec)
	r.guarded(ctx, "observer", end)(rec)
}

// rounds runs the tool as often as it asks: each time it ends by asking,
// the task waits in input_required until every question is answered, and
// the tool runs again with the answers. It returns the tool's final
// answer, as a tools/call would get it.
func (r *taskRunner) rounds(ctx context.Context, rt *runningTask, t *Task, call *taskCall) *Response {
	answers, state := t.Answers, t.State
	for {
		rnd := round{revision: rev20260728, clientCap: call.clientCap, answers: answers, state: state}
		runCtx, rp := withTaskRound(ctx, call.caller, rnd)
		res, err := r.runOnce(runCtx, call)
		if ctx.Err() != nil {
			return nil // cancelled, expired, shut down: taskEnd says which
		}
		if !asksClient(err) || len(rp.asked) == 0 {
			return toolAnswer(rev20260728, call.entry, res, err, r.ad.serverMeta)
		}
		next, resp := r.park(ctx, rt, t.ID, rp)
		if resp != nil || next == nil {
			return resp
		}
		answers, state = next.Answers, next.State
	}
}

// runOnce runs the tool once, turning a panic into the error of a tool
// that failed (logged with its stack by the record's Cause): a task's
// goroutine has no handler above it to recover, and must not take the
// process down.
func (r *taskRunner) runOnce(ctx context.Context, call *taskCall) (res ToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("tool %q panicked: %v\n%s", call.entry.Name, v, debug.Stack())
		}
	}()
	return runTool(ctx, call.entry, call.caller, call.args, call.timeout)
}

// park records what round rp asked and waits until the client has
// answered all of it. It returns the task then, or nil when the task
// ended meanwhile (ctx tells why), or the answer to a store that fails.
func (r *taskRunner) park(ctx context.Context, rt *runningTask, id string, rp *round) (*Task, *Response) {
	reqs := make(map[string]json.RawMessage, len(rp.asked))
	keys := make([]string, 0, len(rp.asked))
	for k, q := range rp.asked {
		reqs[k] = appendInputRequest(nil, q)
		keys = append(keys, k)
	}
	sort.Strings(keys)
	state := rp.state
	if rp.nextSet {
		state = rp.next
	}
	u := TaskUpdate{Op: TaskAsk, Owner: r.self, Requests: reqs, State: state, Now: time.Now(),
		Message: "waiting for the client's answer to " + strconv.Quote(capEcho(keys[0]))}
	if len(keys) > 1 {
		u.Message += " and " + strconv.Itoa(len(keys)-1) + " more"
	}
	t, changed, err := r.store.Update(ctx, id, u)
	if err != nil {
		return nil, internalError(id, err, "the task's questions could not be stored")
	}
	if !changed {
		return nil, nil // no longer ours, or ended
	}
	tick := time.NewTicker(r.poll)
	defer tick.Stop()
	for t.Status == TaskInputRequired {
		select {
		case <-ctx.Done():
			return nil, nil
		case <-rt.answered:
		case <-tick.C:
		}
		next, err := r.store.Get(ctx, id)
		if err != nil {
			continue // an outage: try again at the next tick, within the TTL
		}
		t = next
	}
	if t.Status.Terminal() {
		return nil, nil
	}
	return t, nil
}

// renew renews the lease of task id every third of the lease while it
// runs, and cancels the run when the store says the client asked to
// cancel or the task ended elsewhere. It returns the func that stops it.
func (r *taskRunner) renew(ctx context.Context, rt *runningTask, id string) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(r.lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			case <-rt.poked:
				r.checkCancel(ctx, rt, id)
				continue
			}
			u := TaskUpdate{Op: TaskRenew, Owner: r.self, LeaseUntil: time.Now().Add(r.lease)}
			t, changed, err := r.store.Update(ctx, id, u)
			switch {
			case err != nil:
				r.logger.LogAttrs(ctx, slog.LevelWarn, "mcpmw: a task's lease could not be renewed", slog.String("task", id), slog.Any("error", err))
			case t.CancelRequested:
				rt.cancel(errCancelledByClient)
			case !changed:
				rt.cancel(errTaskReaped)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// checkCancel cancels the run of task id when the store says the client
// asked to.
func (r *taskRunner) checkCancel(ctx context.Context, rt *runningTask, id string) {
	if t, err := r.store.Get(ctx, id); err == nil && (t.CancelRequested || t.Status.Terminal()) {
		rt.cancel(errCancelledByClient)
	}
}

// withTaskRound returns the context one run of a task's tool runs in:
// ctx, with the caller for CallerFrom and the round for Ask, and no
// stream (a task's Progress and Log go nowhere: no request waits).
func withTaskRound(ctx context.Context, caller Caller, rnd round) (context.Context, *round) {
	info := &callInfo{caller: caller, round: rnd, hasRound: true}
	return context.WithValue(ctx, callKey, info), &info.round
}

// taskEnd says how a task whose run ended with resp (nil when ctx ended
// it) ends: its status, its result or its error, and its message.
func taskEnd(ctx context.Context, resp *Response) (TaskStatus, json.RawMessage, json.RawMessage, string) {
	if resp == nil {
		switch context.Cause(ctx) {
		case errCancelledByClient, errTaskReaped:
			return TaskCancelled, nil, nil, "cancelled by the client"
		case errTaskShutdown:
			return TaskFailed, nil, taskError(CodeInternalError, "The instance running the task shut down before it finished; call the tool again."), "the instance running the task shut down"
		default:
			return TaskFailed, nil, taskError(CodeInternalError, "The task did not finish within its time to live and was stopped."), "the task outlived its TTL"
		}
	}
	if resp.Error != nil {
		return TaskFailed, nil, appendError(nil, resp.Error), capEcho(resp.Error.Message)
	}
	msg := "done"
	if resp.Outcome == OutcomeError {
		msg = "the tool reported an error"
	}
	return TaskCompleted, resp.Result, nil, msg
}

// taskError encodes a JSON-RPC error object.
func taskError(code int, message string) json.RawMessage {
	return appendError(nil, &Error{Code: code, Message: message})
}

// endRecord is the record of a task's end: the tool's outcome, the task
// as Target, the run's time.
func (r *taskRunner) endRecord(t *Task, call *taskCall, resp *Response, status TaskStatus, start time.Time) CallRecord {
	rec := CallRecord{
		Time: start, Caller: call.caller, Method: "tools/call", RequestID: call.requestID,
		Target: t.ID, Tool: t.Tool, ProtocolVersion: LatestVersion,
		ClientName: call.client[0], ClientVersion: call.client[1], Status: 200,
		Outcome: OutcomeOK, Summary: "task " + string(status),
	}
	switch {
	case resp == nil && status == TaskCancelled:
		rec.Outcome = OutcomeError
		rec.Summary = "task cancelled by the client"
	case resp == nil:
		rec.Outcome, rec.ErrorCode = OutcomeError, CodeInternalError
		rec.Summary = "task failed: " + capEcho(taskEndCause(status))
	case resp.Error != nil:
		rec.Outcome, rec.ErrorCode = OutcomeError, resp.Error.Code
		rec.Summary = "task failed: " + capEcho(resp.Error.Message)
		if resp.Summary != "" {
			rec.Summary = "task failed: " + resp.Summary
		}
		if resp.Cause != nil {
			r.logger.LogAttrs(context.Background(), slog.LevelError, "mcpmw: task failed", slog.String("task", t.ID), slog.String("tool", t.Tool), slog.Any("error", resp.Cause))
		}
	case resp.Outcome == OutcomeError:
		rec.Outcome = OutcomeError
		rec.Summary = "task completed: " + resp.Summary
	default:
		rec.Summary = "task completed: " + resp.Summary
	}
	rec.Duration = time.Since(start)
	return rec
}

// taskEndCause names why a run that gave no answer failed.
func taskEndCause(status TaskStatus) string {
	if status == TaskFailed {
		return "stopped before it finished (shut down, or past its TTL)"
	}
	return string(status)
}

// observeStart tells a TaskObserver that t's run starts, and returns the
// context the run goes on in and the func that ends its observation.
func (r *taskRunner) observeStart(ctx context.Context, t *Task, call *taskCall, start time.Time) (context.Context, func(CallRecord)) {
	obs, ok := r.observer.(TaskObserver)
	if !ok {
		return ctx, func(CallRecord) {}
	}
	runCtx := ctx
	func() {
		defer func() {
			if v := recover(); v != nil {
				r.logger.LogAttrs(ctx, slog.LevelError, "mcpmw: observer panicked as a task started", slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
				runCtx = ctx
			}
		}()
		runCtx = obs.StartTask(ctx, call.created, t, start)
	}()
	return runCtx, func(rec CallRecord) { obs.EndTask(runCtx, rec) }
}

// A TaskObserver is an Observer that also sees the runs of tasks: a
// task's run outlives the request that created it (which Serve and Done
// saw, its record naming the task), so it is observed apart.
type TaskObserver interface {
	Observer
	// StartTask is called when the run of task t starts, with the
	// context the run goes on in and the creating request's context
	// (without its cancellation: a tracer links the run's span to the
	// creating call's). The context it returns is the run's.
	StartTask(ctx, created context.Context, t *Task, start time.Time) context.Context
	// EndTask is called once when the run has ended and its end is
	// stored, with the run's context and the record of its end (made for
	// the Auditor too).
	EndTask(ctx context.Context, rec CallRecord)
}

// serve returns the tasks extension's methods and starts, once, the loop
// that fails the tasks of a shared store whose instance died (their lease
// ended), on every instance, whether or not it runs tasks of its own: with
// the memory store every task runs here, and its lease is renewed or it
// has ended, so none is started.
func (r *taskRunner) serve() []Method {
	r.startReaper()
	return r.methods()
}

// startReaper starts the reaper of a shared store, once.
func (r *taskRunner) startReaper() {
	if !r.shared {
		return
	}
	r.reaper.Do(func() {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			tick := time.NewTicker(r.lease / 2)
			defer tick.Stop()
			for {
				select {
				case <-r.stop:
					return
				case <-tick.C:
					r.reap()
				}
			}
		}()
	})
}

// reap fails the tasks whose lease has ended, and makes the record of
// each end it wrote (another instance reaping the same task writes none:
// the store lets one end a task).
func (r *taskRunner) reap() {
	ctx, cancel := context.WithTimeout(context.Background(), r.lease/2)
	defer cancel()
	now := time.Now()
	ids, err := r.store.Expired(ctx, now, 100)
	if err != nil {
		return // an outage: the next tick tries again
	}
	for _, id := range ids {
		u := TaskUpdate{Op: TaskReap, Now: now, Message: "the instance running the task stopped",
			Error: taskError(CodeInternalError, "The instance running the task stopped before it finished; call the tool again.")}
		t, changed, err := r.store.Update(ctx, id, u)
		if err != nil || !changed {
			continue
		}
		r.report(ctx, CallRecord{Time: now, Method: "tools/call", Target: t.ID, Tool: t.Tool, ProtocolVersion: LatestVersion,
			Status: 200, Outcome: OutcomeError, ErrorCode: CodeInternalError, Summary: "task failed: the instance running it (" + capEcho(t.Owner) + ") stopped"},
			func(CallRecord) {})
	}
}

// close stops taking tasks, lets those running finish for the shutdown
// grace, then cancels the rest, which fail saying the instance shut
// down, and waits for their ends to be stored.
func (r *taskRunner) close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	r.mu.Unlock()
	close(r.stop)
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(r.shutdown):
	}
	r.mu.Lock()
	for _, rt := range r.running {
		rt.cancel(errTaskShutdown)
	}
	r.mu.Unlock()
	<-done
}

// guardedStore turns a panic of an application's TaskStore into an
// error: a task's goroutines (its run, its lease, the reaper) call the
// store with no handler above them to recover.
type guardedStore struct{ s TaskStore }

// storePanicked is the error of a TaskStore that panicked with v.
func storePanicked(v any) error {
	return fmt.Errorf("mcpmw: the TaskStore panicked: %v", v)
}

func (g guardedStore) Create(ctx context.Context, t *Task) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = storePanicked(v)
		}
	}()
	return g.s.Create(ctx, t)
}

func (g guardedStore) Get(ctx context.Context, id string) (t *Task, err error) {
	defer func() {
		if v := recover(); v != nil {
			t, err = nil, storePanicked(v)
		}
	}()
	t, err = g.s.Get(ctx, id)
	if t == nil && err == nil {
		err = errNoTask
	}
	return t, err
}

func (g guardedStore) Update(ctx context.Context, id string, u TaskUpdate) (t *Task, changed bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			t, changed, err = nil, false, storePanicked(v)
		}
	}()
	t, changed, err = g.s.Update(ctx, id, u)
	if t == nil && err == nil {
		err = errNoTask
	}
	return t, changed, err
}

// errNoTask is the error of a TaskStore that returned neither a task nor
// an error.
var errNoTask = errors.New("mcpmw: the TaskStore returned neither a task nor an error")

func (g guardedStore) Expired(ctx context.Context, now time.Time, limit int) (ids []string, err error) {
	defer func() {
		if v := recover(); v != nil {
			ids, err = nil, storePanicked(v)
		}
	}()
	return g.s.Expired(ctx, now, limit)
}
