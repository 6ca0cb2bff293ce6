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
// instance running it renews its lease (tasklease.go), parks it in
// input_required when the tool asks, runs the tool again once the client
// has answered, and writes its end (taskend.go). tasks/update and
// tasks/cancel change the task in the store, on any instance, and then
// wake the instance running it: here directly, elsewhere through
// Options.Relay; without a Relay the running instance finds the change
// when it next reads the store (every PollInterval while it waits for
// answers, every Lease/3 otherwise).

// Task defaults (TaskOptions).
const (
	defaultTaskMaxRunning   = 64
	defaultTaskTTL          = time.Hour
	defaultTaskPollInterval = time.Second
	defaultTaskLease        = 10 * time.Second
	defaultTaskShutdown     = 10 * time.Second
	// defaultTaskMaxInputBytes bounds the answers one task keeps.
	defaultTaskMaxInputBytes = 256 << 10
	// minTaskLease is the shortest Lease: renewed every third of it, a
	// shorter one could not reach any store in time, and a zero period
	// would stop the renewing goroutine with a panic.
	minTaskLease = 10 * time.Millisecond
)

// Causes of a task's context ending other than the client's cancel.
var (
	errTaskExpired  = errors.New("mcpmw: the task outlived its TTL")
	errTaskShutdown = errors.New("mcpmw: the instance running the task shut down")
	errTaskReaped   = errors.New("mcpmw: the task was failed by another instance (its lease ended)")
	errTaskLost     = errors.New("mcpmw: the task store no longer has the task (restarted without persistence, evicted or flushed)")
)

// taskRunner creates, runs and answers for the tasks of one Handler.
type taskRunner struct {
	store       TaskStore
	self        string   // this instance's id: the Owner of the tasks it runs
	relay       Relay    // nil: wake-ups stay in this process
	notifier    Notifier // where status changes are told (tasknotify.go); nil: nowhere (no listen method)
	max         int      // TaskOptions.MaxRunning
	perCaller   int      // TaskOptions.MaxPerCaller
	maxInput    int      // TaskOptions.MaxInputBytes
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

	mu       sync.Mutex
	serving  bool                    // the extension is served (serve was called): only then does a call become a task
	running  map[string]*runningTask // by task id, the tasks this instance runs
	held     map[string]int          // by CallerID, the slots each caller holds
	taken    int                     // the slots held in all
	closed   bool                    // Close was called: no new task
	stopping bool                    // Close's grace is over: a task that starts now is cancelled at once
	wg       sync.WaitGroup          // one per slot taken, and the reaper
	reaper   sync.Once
	stop     chan struct{} // closed by close: the reaper ends
	halt     chan struct{} // closed when close's grace is over: ends stop being retried
}

// runningTask is a task this instance runs: how to wake it and stop it.
type runningTask struct {
	answered chan struct{} // capacity 1: the store may hold new answers (park reads it)
	poked    chan struct{} // capacity 1: the store may say cancel (renew reads it)
	cancel   context.CancelCauseFunc
	ended    chan struct{} // closed once the run has stopped and its end is stored (or given up)
}

// newTaskRunner returns the runner of a handler with options o (nil: the
// defaults), on relay (nil: none). It panics on options that cannot work.
func newTaskRunner(o *TaskOptions, relay Relay, self string, auditor Auditor, observer Observer, logger *slog.Logger, ad *advertisement, toolTimeout time.Duration) *taskRunner {
	var opts TaskOptions
	if o != nil {
		opts = *o
	}
	opts.check()
	r := &taskRunner{
		store: opts.Store, relay: relay, auditor: auditor, observer: observer, logger: logger, ad: ad,
		ttl: orDefault(opts.TTL, defaultTaskTTL), poll: orDefault(opts.PollInterval, defaultTaskPollInterval),
		lease: orDefault(opts.Lease, defaultTaskLease), shutdown: orDefault(opts.Shutdown, defaultTaskShutdown),
		running: map[string]*runningTask{}, held: map[string]int{}, stop: make(chan struct{}), halt: make(chan struct{}),
		toolTimeout: toolTimeout, max: opts.MaxRunning, perCaller: opts.MaxPerCaller, maxInput: opts.MaxInputBytes,
	}
	if r.store == nil {
		r.store = NewMemoryTaskStore()
	} else if _, mem := r.store.(*MemoryTaskStore); !mem {
		r.shared = true
		r.store = guardedStore{r.store} // an application's: its panics become errors
	}
	if r.max == 0 {
		r.max = defaultTaskMaxRunning
	}
	if r.perCaller == 0 {
		r.perCaller = max(r.max/4, 1)
	}
	if r.maxInput == 0 {
		r.maxInput = defaultTaskMaxInputBytes
	}
	r.self = self
	if r.self == "" {
		r.self = randomID()
	}
	return r
}

// check panics, naming the field, on options no runner can work with: a
// negative bound or duration, or a lease too short to be renewed. It runs
// in New, so that a mistake stops the program at start rather than a
// task's goroutine later.
func (o *TaskOptions) check() {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"TTL", o.TTL}, {"PollInterval", o.PollInterval}, {"Lease", o.Lease}, {"Shutdown", o.Shutdown}} {
		if d.v < 0 {
			panic(fmt.Sprintf("mcpmw: TaskOptions.%s is %v; it must be positive, or zero for the default", d.name, d.v))
		}
	}
	if o.Lease > 0 && o.Lease < minTaskLease {
		panic(fmt.Sprintf("mcpmw: TaskOptions.Lease is %v; it must be at least %v (it is renewed every third of it), or zero for the default", o.Lease, minTaskLease))
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"MaxRunning", o.MaxRunning}, {"MaxPerCaller", o.MaxPerCaller}, {"MaxInputBytes", o.MaxInputBytes}} {
		if n.v < 0 {
			panic(fmt.Sprintf("mcpmw: TaskOptions.%s is %d; it must be positive, or zero for the default", n.name, n.v))
		}
	}
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
// copied out of the request, which ends as the task starts: nothing that
// holds the request (its body, its context) stays behind.
type taskCall struct {
	entry     *entry
	caller    Caller
	args      json.RawMessage
	clientCap json.RawMessage
	requestID string
	clientIP  string
	client    [2]string // ClientName, ClientVersion
	timeout   time.Duration
}

// A refusal to take a slot.
const (
	slotTaken     = iota + 1 // none free: the instance runs as many tasks as it may, or is shutting down
	slotPerCaller            // the caller holds as many as one caller may
)

// take takes a slot for a task of caller cid, and reports 0; or, when
// none may be taken, why not (slotTaken, slotPerCaller). A slot is held
// from before the task is stored until its run has ended, so that Close
// waits for a task whose Create is still in flight.
func (r *taskRunner) take(cid string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed || r.taken >= r.max:
		return slotTaken
	case r.held[cid] >= r.perCaller:
		return slotPerCaller
	}
	r.taken++
	r.held[cid]++
	r.wg.Add(1)
	return 0
}

// release gives back the slot of a task of caller cid.
func (r *taskRunner) release(cid string) {
	defer r.wg.Done()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.taken--
	if r.held[cid]--; r.held[cid] == 0 {
		delete(r.held, cid)
	}
}

// register notes that task id runs here as rt, and cancels it at once
// when Close has stopped waiting for tasks.
func (r *taskRunner) register(id string, rt *runningTask) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running[id] = rt
	if r.stopping {
		rt.cancel(errTaskShutdown) // Close has stopped waiting: this one fails at once
	}
}

// unregister notes that task id no longer runs here.
func (r *taskRunner) unregister(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.running, id)
}

// lookup returns the task id running here, or nil.
func (r *taskRunner) lookup(id string) *runningTask {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running[id]
}

// create stores the task of call, made at the endpoint at, with the first
// answers and state of its Prepare's rounds; its slot is taken. The task
// is in the store before create returns: any instance's tasks/get finds it
// as soon as the client holds its id. Then its run starts, observed from
// here (ctx is the creating request's: a tracer links the run to it, and
// the run keeps only what the observer returns).
func (r *taskRunner) create(ctx context.Context, call *taskCall, at string, answers map[string]json.RawMessage, state []byte) (*Task, error) {
	now := time.Now()
	t := &Task{
		ID: randomID(), CallerID: callerID(call.caller), Endpoint: at, Tool: call.entry.Name, Permission: call.entry.Permission,
		Status: TaskWorking, Created: now, Updated: now, TTL: r.ttl, PollInterval: r.poll,
		Owner: r.self, LeaseUntil: now.Add(r.lease), Answers: answers, State: state,
	}
	if err := r.store.Create(ctx, t); err != nil {
		return nil, err
	}
	rt := &runningTask{answered: make(chan struct{}, 1), poked: make(chan struct{}, 1), ended: make(chan struct{})}
	runCtx, cancel := context.WithCancelCause(context.Background())
	runCtx, stopTTL := context.WithDeadlineCause(runCtx, t.Created.Add(t.TTL), errTaskExpired)
	rt.cancel = cancel
	runCtx, end := r.observeStart(runCtx, ctx, t, call, now)
	r.register(t.ID, rt)
	go func() {
		defer r.release(t.CallerID)
		defer stopTTL()
		defer r.unregister(t.ID)
		defer close(rt.ended)
		r.run(runCtx, rt, t.Clone(), call, now, end)
	}()
	return t, nil
}

// wake tells the task id, if it runs here, that the store changed.
func (r *taskRunner) wake(id string) {
	if rt := r.lookup(id); rt != nil {
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
		payload, _ := json.Marshal(relayMessage{Task: t.ID, To: t.Owner}) // strings: never fails
		_, _ = r.relay.Send(ctx, instanceOfHandler(t.Owner), payload)
	}
}

// run runs the tool of task t until it ends, renewing its lease and
// parking it while the client answers, then stores its end and makes its
// one record (taskend.go).
func (r *taskRunner) run(ctx context.Context, rt *runningTask, t *Task, call *taskCall, start time.Time, end func(CallRecord)) {
	stopRenew := r.renew(ctx, rt, t.ID)
	defer stopRenew() // the lease is renewed until the end is stored
	resp := r.rounds(ctx, rt, t, call)
	r.finish(ctx, t, call, resp, start, end)
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
			return nil // cancelled, expired, shut down, lost: taskEnd says which
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
	switch {
	case errors.Is(err, ErrTaskNotFound):
		rt.cancel(errTaskLost)
		return nil, nil
	case err != nil:
		return nil, internalError(id, err, "the task's questions could not be stored")
	case !changed:
		return nil, nil // no longer ours, or ended
	}
	if t.Status == TaskInputRequired {
		r.tell(ctx, t)
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
		switch {
		case errors.Is(err, ErrTaskNotFound):
			rt.cancel(errTaskLost)
			return nil, nil
		case err != nil:
			continue // an outage: try again at the next tick, within the TTL
		}
		t = next
	}
	if t.Status.Terminal() {
		return nil, nil
	}
	return t, nil
}

// withTaskRound returns the context one run of a task's tool runs in:
// ctx, with the caller for CallerFrom and the round for Ask, and no
// stream (a task's Progress and Log go nowhere: no request waits).
func withTaskRound(ctx context.Context, caller Caller, rnd round) (context.Context, *round) {
	info := &callInfo{caller: caller, round: rnd, hasRound: true}
	return context.WithValue(ctx, callKey, info), &info.round
}

// observeStart tells a TaskObserver that t's run starts, and returns the
// context the run goes on in and the func that ends its observation.
// created is the creating request's context, which the run does not keep.
func (r *taskRunner) observeStart(ctx, created context.Context, t *Task, call *taskCall, start time.Time) (context.Context, func(CallRecord)) {
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
		runCtx = obs.StartTask(ctx, context.WithoutCancel(created), t, start)
	}()
	return runCtx, func(rec CallRecord) { obs.EndTask(runCtx, rec) }
}

// A TaskObserver is an Observer that also sees the runs of tasks: a
// task's run outlives the request that created it (which Serve and Done
// saw, its record naming the task), so it is observed apart.
type TaskObserver interface {
	Observer
	// StartTask is called when the run of task t starts, as the creating
	// request is answered, with the context the run goes on in and the
	// creating request's context (without its cancellation: a tracer
	// links the run's span to the creating call's). The context it
	// returns is the run's: keep in it only what the run needs, since
	// the run may last the task's TTL.
	StartTask(ctx, created context.Context, t *Task, start time.Time) context.Context
	// EndTask is called once when the run has ended and its end is
	// stored, with the run's context and the record of its end (made for
	// the Auditor too).
	EndTask(ctx context.Context, rec CallRecord)
}

// serve returns the tasks extension's methods, and from then on calls
// may become tasks: whether the extension is served is decided once, in
// New, and every call asks that one decision. It starts, once, the loop
// that fails the tasks of a shared store whose instance died (their lease
// ended), on every instance, whether or not it runs tasks of its own:
// with the memory store every task runs here, and its lease is renewed or
// it has ended, so none is started.
func (r *taskRunner) serve() Extension {
	func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.serving = true
	}()
	r.startReaper()
	return r.extension()
}

// served reports whether the extension is served.
func (r *taskRunner) served() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.serving
}

// close stops taking tasks, lets those running (or being stored) finish
// for the shutdown grace, then cancels the rest, which fail saying the
// instance shut down, and waits for their ends to be stored.
func (r *taskRunner) close() {
	if !r.markClosed() {
		return
	}
	close(r.stop)
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(r.shutdown):
	}
	r.stopAll()
	close(r.halt)
	<-done
}

// markClosed marks the runner closed, and reports whether it was open.
func (r *taskRunner) markClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	was := r.closed
	r.closed = true
	return !was
}

// stopAll cancels every task running here, and any that starts from now.
func (r *taskRunner) stopAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopping = true
	for _, rt := range r.running {
		rt.cancel(errTaskShutdown)
	}
}
