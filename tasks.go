package mcpmw

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"
)

// Some tools take minutes: a report, an export, a migration. On 2026-07-28
// a client that declares the tasks extension (io.modelcontextprotocol/tasks)
// lets the server answer such a tools/call with a task instead: the
// answer names the task at once, the tool runs on in the background, and
// the client polls tasks/get for its status and result, answers its
// questions with tasks/update and stops it with tasks/cancel. Any
// instance answers those, because the task lives in a TaskStore that
// every instance shares (the redis module's, or your own), not in the
// instance that runs it.
//
// A tool opts in with Tool.Task; its Call is the same code either way.
// Run as a task, the tool's Ask puts the task in input_required with its
// questions, the client's tasks/update answers them, and the tool runs
// again from the top with the answers, as an input_required round of a
// plain call does (state kept with SetRoundState comes back too). Input
// the tool must have before any task exists (a confirmation, say) is
// asked by Tool.Prepare, in input_required rounds of the call itself.

// A TaskMode says whether the calls of a tool may become tasks.
type TaskMode uint8

const (
	// TaskNever (the default): every call is answered when it is done.
	TaskNever TaskMode = iota
	// TaskOptional: a call from a client that declared the tasks extension
	// becomes a task; any other call, one made while this instance
	// already runs TaskOptions.MaxRunning tasks (or the caller its
	// MaxPerCaller), and one whose task the store fails to create (an
	// outage, say: logged) is answered when done, as a server without
	// tasks would answer it.
	TaskOptional
	// TaskRequired: a call from a client that declared the extension
	// becomes a task; a 2026-07-28 call from one that did not is refused
	// with -32021 naming the extension, before anything runs. On the
	// legacy revisions, which have no tasks, the tool runs as a plain call.
	TaskRequired
)

// ExtensionTasks is the identifier of the tasks extension (SEP-2663), as
// clients declare it in their capabilities and the server in discover.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// A TaskStatus is where a task stands. A task starts working, may move
// between working and input_required, and ends in one of the three
// terminal statuses, which never change again.
type TaskStatus string

// The statuses of a task.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed" // the tool returned a result (IsError set or not)
	TaskFailed        TaskStatus = "failed"    // the call ended in a JSON-RPC error, or its instance stopped
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether s is completed, failed or cancelled.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// A Task is a task as a TaskStore keeps it: everything any instance needs
// to answer tasks/get, tasks/update and tasks/cancel, and nothing of the
// call's arguments (which stay with the instance running it: they may be
// sensitive).
type Task struct {
	ID       string // 128 random bits, base64url: the task's only name, so unguessable
	CallerID string // the creating caller's (Caller.ID): only it may see or touch the task
	// Endpoint is the endpoint that created the task (Options.Endpoint,
	// as a requestState is bound to it): another endpoint sharing the
	// store serves it to nobody, whatever its callers' ids.
	Endpoint string
	Tool     string // the tool called
	// Permission is the tool's: every tasks/get, tasks/update and
	// tasks/cancel checks that the caller still holds it.
	Permission Permission

	Status        TaskStatus
	StatusMessage string
	Created       time.Time
	Updated       time.Time     // the last change of status (lastUpdatedAt)
	TTL           time.Duration // from Created; the store may forget the task after it
	PollInterval  time.Duration // the polling interval suggested to the client

	// Owner is the id of the instance running the task, and LeaseUntil
	// how long that instance vouches for it: it renews the lease while
	// the task runs, and any instance fails a task whose lease has ended
	// (its instance died).
	Owner      string
	LeaseUntil time.Time
	// CancelRequested is set by tasks/cancel; the running instance sees
	// it, cancels the tool's context and ends the task cancelled.
	CancelRequested bool

	// InputRequests are the questions outstanding (input_required), by
	// key: each an InputRequest as {"method":...,"params":...}.
	InputRequests map[string]json.RawMessage
	// Answers are the client's answers so far, by key. A key is asked at
	// most once in a task's lifetime: a question whose key has been
	// answered is never asked again, and its answer is what Ask returns.
	Answers map[string]json.RawMessage
	// State is the tool's round state (SetRoundState) for its next run.
	State []byte

	Result json.RawMessage // completed: the tool's result, as tasks/get sends it
	Error  json.RawMessage // failed: the JSON-RPC error object
	// EndedBy is the Token of the update that ended the task (TaskFinish
	// or TaskReap): the one writer that finds its own token here makes
	// the record of the end, exactly once, even when the store's reply to
	// its write was lost.
	EndedBy string
}

// Clone returns a deep copy of t, so that a store never hands out what it
// keeps.
func (t *Task) Clone() *Task {
	c := *t
	c.InputRequests = maps.Clone(t.InputRequests)
	c.Answers = maps.Clone(t.Answers)
	c.State = append([]byte(nil), t.State...)
	if t.State == nil {
		c.State = nil
	}
	return &c
}

// A TaskOp is the kind of change a TaskUpdate makes.
type TaskOp uint8

// The changes a task undergoes. Each is applied atomically by the store,
// and none changes a terminal task.
const (
	// TaskRenew extends the lease of the owner running the task
	// (Owner, LeaseUntil).
	TaskRenew TaskOp = iota + 1
	// TaskAsk parks the owner's task in input_required on Requests
	// (keys never used before in the task; others are ignored), keeping
	// State for the tool's next run.
	TaskAsk
	// TaskAnswer takes the client's Responses to outstanding questions
	// (any other key is ignored: unknown, already answered); once none is
	// outstanding, the task is working again.
	TaskAnswer
	// TaskCancel records the client's request to cancel.
	TaskCancel
	// TaskFinish ends the owner's task with Status (completed, with
	// Result; failed, with Error; cancelled).
	TaskFinish
	// TaskReap fails a task whose lease ended before Now: its instance
	// stopped without finishing it.
	TaskReap
)

// A TaskUpdate is one change to a task; Apply says exactly what each Op
// does, and a TaskStore applies it atomically.
type TaskUpdate struct {
	Op         TaskOp
	Owner      string                     // TaskRenew, TaskAsk, TaskFinish: applied only while the task's Owner is this
	LeaseUntil time.Time                  // TaskRenew
	Requests   map[string]json.RawMessage // TaskAsk
	State      []byte                     // TaskAsk
	Responses  map[string]json.RawMessage // TaskAnswer
	Status     TaskStatus                 // TaskFinish
	Result     json.RawMessage            // TaskFinish, completed
	Error      json.RawMessage            // TaskFinish, failed
	Message    string                     // TaskAsk, TaskFinish, TaskReap: the new statusMessage
	Now        time.Time                  // when: Updated on a change of status; TaskReap's deadline
	// Token names this update among every other, for TaskFinish and
	// TaskReap: the task keeps it as EndedBy, so that a writer whose
	// store call failed (a reply lost to a deadline, say) can read the
	// task back and learn whether its end was the one stored.
	Token string
}

// Apply makes the change u to t, in place, and reports whether it
// changed anything. It is the meaning of every TaskOp: the memory store
// calls it under its lock, the redis module's store does the same in one
// script, and a store of your own can call it inside a transaction
// (mcpmwtest.TestTaskStore checks a store against it). Its work is
// bounded by what the task holds, not by what u brings: a TaskAnswer
// looks up only the questions outstanding.
func (t *Task) Apply(u TaskUpdate) bool {
	if t.Status.Terminal() {
		return false // terminal stays terminal
	}
	switch u.Op {
	case TaskRenew:
		return t.renew(u)
	case TaskAsk:
		return t.ask(u)
	case TaskAnswer:
		return t.answer(u)
	case TaskCancel:
		if t.CancelRequested {
			return false
		}
		t.CancelRequested = true
		return true
	case TaskFinish:
		return t.finish(u)
	case TaskReap:
		return t.reap(u)
	}
	return false
}

// renew extends the owner's lease.
func (t *Task) renew(u TaskUpdate) bool {
	if t.Owner != u.Owner {
		return false
	}
	t.LeaseUntil = u.LeaseUntil
	return true
}

// ask parks the owner's task on the questions of u never asked before.
func (t *Task) ask(u TaskUpdate) bool {
	if t.Owner != u.Owner {
		return false
	}
	for k, v := range u.Requests {
		_, answered := t.Answers[k]
		_, outstanding := t.InputRequests[k]
		if answered || outstanding {
			continue
		}
		if t.InputRequests == nil {
			t.InputRequests = map[string]json.RawMessage{}
		}
		t.InputRequests[k] = v
	}
	t.State = u.State
	if len(t.InputRequests) > 0 {
		t.Status, t.StatusMessage, t.Updated = TaskInputRequired, u.Message, u.Now
	}
	return true
}

// answer takes the responses of u to the questions outstanding, looking
// up each question (never each response: a client may send many), and
// sets the task working again once none is left.
func (t *Task) answer(u TaskUpdate) bool {
	changed := false
	for k := range t.InputRequests {
		v, ok := u.Responses[k]
		if !ok {
			continue
		}
		delete(t.InputRequests, k)
		if t.Answers == nil {
			t.Answers = map[string]json.RawMessage{}
		}
		t.Answers[k], changed = v, true
	}
	if changed && len(t.InputRequests) == 0 {
		t.InputRequests = nil
		t.Status, t.StatusMessage, t.Updated = TaskWorking, "", u.Now
	}
	return changed
}

// finish ends the owner's task with u's status.
func (t *Task) finish(u TaskUpdate) bool {
	if t.Owner != u.Owner || !u.Status.Terminal() {
		return false
	}
	t.end(u.Status, u)
	switch u.Status {
	case TaskCompleted:
		t.Result = u.Result
	case TaskFailed:
		t.Error = u.Error
	}
	return true
}

// reap fails a task whose lease ended before u.Now. A lease ending
// exactly at u.Now has not ended yet.
func (t *Task) reap(u TaskUpdate) bool {
	if !t.LeaseUntil.Before(u.Now) {
		return false
	}
	t.end(TaskFailed, u)
	t.Error = u.Error
	return true
}

// end makes t terminal with status, as u says: when, why, and by whom
// (u.Token, so that the writer of the end can tell it wrote it).
func (t *Task) end(status TaskStatus, u TaskUpdate) {
	t.Status, t.StatusMessage, t.Updated = status, u.Message, u.Now
	t.InputRequests, t.Result, t.Error = nil, nil, nil
	t.EndedBy = u.Token
}

// ErrTaskNotFound is what a TaskStore returns for a task it does not
// have: never created, or forgotten after its TTL.
var ErrTaskNotFound = errors.New("mcpmw: task not found")

// A TaskStore keeps the tasks of every instance of a service, so that any
// instance answers tasks/get, tasks/update and tasks/cancel for a task
// another runs. An error that says the store is unavailable for now (an
// error in its chain with an Unavailable() bool method reporting true, or
// context.DeadlineExceeded) is answered 503 with Retry-After; any other,
// 500. An error after a write does not mean the write was not made: the
// handler reads the task back (EndedBy) before it concludes. NewMemoryTaskStore is the default, for one instance; the
// redis module's (mcpredis.NewTaskStore) is shared by all. Implement it to
// keep tasks in your own job system: each method is one atomic step, and
// mcpmwtest.TestTaskStore checks an implementation. A TaskStore must be
// safe for concurrent use.
type TaskStore interface {
	// Create stores a new task. When it returns, Get finds the task on
	// every instance: the handler answers the call with the task only
	// then. An id already taken is an error.
	Create(ctx context.Context, t *Task) error
	// Get returns the task, or ErrTaskNotFound.
	Get(ctx context.Context, id string) (*Task, error)
	// Update applies u to the task as Task.Apply does, atomically, and
	// returns the task after it and whether u changed it; ErrTaskNotFound
	// when there is no such task.
	Update(ctx context.Context, id string, u TaskUpdate) (t *Task, changed bool, err error)
	// Expired returns the ids of at most limit tasks that are not terminal
	// and whose lease ended before now.
	Expired(ctx context.Context, now time.Time, limit int) ([]string, error)
}

// TaskOptions configure tasks (Options.Tasks). The zero value, and nil,
// mean the defaults below.
type TaskOptions struct {
	// Store keeps the tasks. Nil means a store in this process's memory
	// (NewMemoryTaskStore), right for one instance; give every instance
	// of a service the same shared store.
	Store TaskStore
	// MaxRunning bounds the tasks this instance runs at once, those
	// waiting in input_required for the client's answers included (each
	// holds its slot, its goroutine and its call's arguments until it is
	// answered, cancelled or outlives its TTL). Beyond it a TaskOptional
	// call is answered when done, and a TaskRequired call is refused with
	// -32603 saying so. Zero means 64.
	MaxRunning int
	// MaxPerCaller bounds the slots of MaxRunning one caller (CallerID)
	// holds at once on this instance, so that one caller's tasks left
	// waiting for answers cannot starve every other caller. Beyond it the
	// caller's calls are treated as beyond MaxRunning. Zero means a
	// quarter of MaxRunning (at least 1).
	MaxPerCaller int
	// MaxInputBytes bounds the client's answers one task keeps (keys and
	// values, over its life). A task keeps only answers to what it asked:
	// anything else a client sends is dropped before the store sees it.
	// An answer that would pass the bound is refused with -32602. Zero
	// means 256 KiB.
	MaxInputBytes int
	// TTL is how long a task is kept from its creation, result included;
	// a task still running then is stopped and fails. Zero means 1 hour.
	TTL time.Duration
	// PollInterval is the polling interval suggested to clients
	// (pollIntervalMs). Zero means 1 second.
	PollInterval time.Duration
	// Lease is how long an instance vouches for a task it runs; it renews
	// it every third of that. Any instance fails a task whose lease has
	// ended, checking every Lease/2: a task whose instance died reads
	// failed within 1.5 leases of the death. Zero means 10 seconds (so
	// within 15 s).
	Lease time.Duration
	// Shutdown is how long Handler.Close lets running tasks finish before
	// it fails them (the instance shut down). Zero means 10 seconds.
	Shutdown time.Duration
}
