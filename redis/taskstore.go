package mcpredis

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpmw/mcpmw"
)

// The task store's scripts; see each file.
var (
	//go:embed taskcreate.lua
	taskCreateSource string
	//go:embed taskupdate.lua
	taskUpdateSource string
	//go:embed taskdue.lua
	taskDueSource string
	//go:embed taskexpired.lua
	taskExpiredSource string
	//go:embed taskget.lua
	taskGetSource string

	taskCreate  = newScript(taskCreateSource)
	taskUpdate  = newScript(taskUpdateSource)
	taskDue     = newScript(taskDueSource)
	taskExpired = newScript(taskExpiredSource)
	taskGet     = newScript(taskGetSource)
)

// A TaskStore is an mcpmw.TaskStore in Redis (mcpmw.TaskOptions.Store),
// shared by every instance that gives the same Redis and Config.Prefix, so
// that any instance answers tasks/get, tasks/update and tasks/cancel for a
// task another runs, and fails a task whose instance died.
//
// Each task is one hash, <prefix>{tasks}task:<id>, that Redis forgets by
// itself at Created+TTL (PEXPIREAT; a TTL of zero or less keeps it for
// good, as the memory store does). Create and each Update are one script,
// so atomic and one round trip (Update is exactly mcpmw.Task.Apply, in
// Lua; a large answer takes a read first, see below); Get is one script
// too, which reads the hash (taskget.lua). The questions and answers of a task are a
// field each (q:<key>, a:<key>) and every JSON value is stored as the
// bytes it came as: the scripts never decode nor re-encode JSON. Times are
// Unix milliseconds, the resolution of the wire.
//
// The tasks that are not terminal are also members of a sorted set,
// <prefix>{tasks}task-leases, scored by the end of their lease: Create
// adds, a renewal moves, finishing or reaping removes, in the same script
// as the change, and Expired reads it. The set lives as long as its
// longest-lived task, and Expired drops the members whose task Redis has
// forgotten, so that after the TTL nothing stays.
//
// # Whose clock
//
// Leases end, tasks are reaped and forgotten on Redis's clock, as the
// rate limit counts, so that an instance whose clock is off neither reaps
// the live tasks of the others nor has its own reaped (nor keeps a dead
// task alive, nor cuts a TTL short). The times an instance gives are on
// its own clock (Task.LeaseUntil, Created+TTL, TaskUpdate.LeaseUntil,
// the now of Expired and the Now of TaskReap): each call sends the
// instance's clock too, and its script, which reads Redis's (TIME),
// moves each of those times by the difference, rounded to whole seconds.
// A clock within half a second of Redis's is thus taken as it is, and
// leases compare exactly as Task.Apply says; one that is minutes off is
// corrected to within half a second. The task as Get returns it keeps the
// times its instances gave (LeaseUntil is its owner's); the end of its
// lease on Redis's clock is the field rlease, which only the scripts read.
//
// Every key holds the hash tag {tasks}, so that under Redis Cluster the
// set and every task are in one slot, which each script needs (a script
// touches only the keys of one slot): the tasks of a Cluster all live on
// the node of that slot. A Prefix whose first '{' is followed by '}'
// would defeat the tag, and NewTaskStore refuses it.
//
// # What a client sends
//
// Redis runs one script at a time for every instance, so no script's work
// grows with what a client sends: an answer (tasks/update) is sent as it
// comes only when it holds at most 64 responses of 64 KiB in all;
// otherwise Update first reads which questions the task is waiting for
// (one HKEYS, as long as the task) and sends only the responses to those.
// Only an answer to an outstanding question is ever stored. Create
// refuses a task carrying more than 1,024 answers, and Expired lists at
// most 1,000 ids whatever its limit.
//
// # When Redis cannot answer
//
// Each call is sent once, never retried, within Config.Timeout (or ctx's
// deadline, if sooner). A call that Redis does not answer in time returns
// an error naming Redis, and the store's change of health is logged once
// each way, as for the rate limiter; Config.Failure plays no part (a task
// cannot be made up). Such an error, and one Redis answers when it cannot
// serve for a while (LOADING, BUSY, a failover under way), has a method
// Unavailable() bool that returns true (see the package doc), so that a
// server can answer 503 with Retry-After. The deadline covers sending the
// task too: a result of megabytes takes milliseconds on the wire, so raise
// Config.Timeout for tools whose results are that large. After Redis has
// lost its script cache (a restart) the first call of each script takes a
// second round trip, EVAL.
//
// A TaskStore is safe for concurrent use.
type TaskStore struct {
	s      settings
	tasks  string // the prefix of the tasks' keys: <prefix>{tasks}task:
	leases string // <prefix>{tasks}task-leases
	health health
	now    func() time.Time // this instance's clock: time.Now
}

// NewTaskStore returns a TaskStore on cfg's Redis. It panics on a setup
// mistake in cfg, as PerIP does, or when cfg.Prefix defeats the hash tag
// (see TaskStore).
func NewTaskStore(cfg Config) *TaskStore {
	s := settle("NewTaskStore", cfg)
	if i := strings.IndexByte(s.prefix, '{'); i >= 0 && strings.HasPrefix(s.prefix[i+1:], "}") {
		panic(fmt.Sprintf("mcpredis: NewTaskStore: Config.Prefix %q holds an empty hash tag {}: "+
			"under Redis Cluster the tasks and their lease set would land in different slots", s.prefix))
	}
	return &TaskStore{
		s:      s,
		tasks:  s.prefix + "{tasks}task:",
		leases: s.prefix + "{tasks}task-leases",
		health: health{logger: s.logger, what: "task store",
			down1: "mcpredis: Redis does not answer: tasks cannot be created, read or changed until it does"},
		now: time.Now,
	}
}

// clock returns this instance's clock, in Unix ms, for a script to move
// the times it is given onto Redis's clock.
func (s *TaskStore) clock() int64 { return s.now().UnixMilli() }

// maxTaskIDLen bounds a task id: the core's are 22 characters (128 bits);
// the bound leaves room for other schemes (a UUID is 36) and keeps keys
// short.
const maxTaskIDLen = 64

// validTaskID reports whether id can name a task: 1 to maxTaskIDLen
// base64url characters. An id comes from a client (tasks/get, ...), so
// nothing else goes into a key: any other id is a task the store does not
// have.
func validTaskID(id string) bool {
	if id == "" || len(id) > maxTaskIDLen {
		return false
	}
	for i := range len(id) {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// Create stores t, with one script, and returns once Redis has it: a Get
// on any instance then finds it. An id that is taken, or that is not 1 to
// 64 base64url characters, is an error.
func (s *TaskStore) Create(ctx context.Context, t *mcpmw.Task) error {
	if !validTaskID(t.ID) {
		return fmt.Errorf("mcpredis: task store: create: the task id %q is not 1 to %d base64url characters", t.ID, maxTaskIDLen)
	}
	if len(t.Answers) > maxCreateAnswers {
		return fmt.Errorf("mcpredis: task store: create: the task %s carries %d answers, more than the %d a store keeps: "+
			"a task keeps only the answers to questions it asked", t.ID, len(t.Answers), maxCreateAnswers)
	}
	forget, lease := "", ""
	if t.TTL > 0 {
		forget = msString(t.Created.Add(t.TTL))
	}
	if !t.Status.Terminal() {
		lease = msString(t.LeaseUntil)
	}
	args := append([]any{t.ID, forget, lease, s.clock()}, taskFields(t)...)
	bounded, cancel := context.WithTimeout(ctx, s.s.timeout)
	defer cancel()
	created, err := runAs(bounded, taskCreate, s.s.batch, redis.NewIntCmd, []string{s.tasks + t.ID, s.leases}, args...).Result()
	if err = s.outcome(ctx, "create", err); err != nil {
		return err
	}
	if created == 0 {
		return fmt.Errorf("mcpredis: task store: create: the task id %q is taken", t.ID)
	}
	return nil
}

// Get returns the task, with one script (taskget.lua: the hash, packed in
// one string), or mcpmw.ErrTaskNotFound.
func (s *TaskStore) Get(ctx context.Context, id string) (*mcpmw.Task, error) {
	if !validTaskID(id) {
		return nil, mcpmw.ErrTaskNotFound
	}
	bounded, cancel := context.WithTimeout(ctx, s.s.timeout)
	defer cancel()
	packed, err := runAs(bounded, taskGet, s.s.batch, redis.NewStringCmd, []string{s.tasks + id}).Result()
	if err = s.outcome(ctx, "get", err); err != nil {
		return nil, err
	}
	if packed == "" {
		return nil, mcpmw.ErrTaskNotFound
	}
	return decodeTask(id, packed)
}

// Update applies u to the task as mcpmw.Task.Apply does, in one script
// (so atomically, whatever other instances do meanwhile), and returns the
// task after it and whether u changed it; mcpmw.ErrTaskNotFound when
// there is no such task.
func (s *TaskStore) Update(ctx context.Context, id string, u mcpmw.TaskUpdate) (*mcpmw.Task, bool, error) {
	if !validTaskID(id) {
		return nil, false, mcpmw.ErrTaskNotFound
	}
	bounded, cancel := context.WithTimeout(ctx, s.s.timeout)
	defer cancel()
	var pairs map[string]json.RawMessage
	switch u.Op {
	case mcpmw.TaskAsk:
		pairs = u.Requests
	case mcpmw.TaskAnswer:
		var err error
		if pairs, err = s.answersToSend(ctx, bounded, id, u.Responses); err != nil {
			return nil, false, err
		}
	}
	args := make([]any, 0, 13+2*len(pairs))
	args = append(args, int(u.Op), id, u.Owner, u.LeaseUntil.UnixMilli(), u.State, string(u.Status),
		[]byte(u.Result), []byte(u.Error), u.Message, u.Now.UnixMilli(), ceilMilli(u.Now), s.clock(), u.Token)
	for k, v := range pairs {
		args = append(args, k, []byte(v))
	}
	reply, err := taskUpdate.run(bounded, s.s.batch, []string{s.tasks + id, s.leases}, args...).Slice()
	if err = s.outcome(ctx, "update", err); err != nil {
		return nil, false, err
	}
	if reply == nil {
		return nil, false, mcpmw.ErrTaskNotFound
	}
	var changed int64
	var packed string
	ok := len(reply) == 2
	if ok {
		changed, ok = reply[0].(int64)
	}
	if ok {
		packed, ok = reply[1].(string)
	}
	if !ok {
		return nil, false, fmt.Errorf("mcpredis: task store: update: the script answered %.200v, not {changed, fields}", reply)
	}
	t, err := decodeTask(id, packed)
	return t, changed == 1, err
}

// Expired returns the ids of at most limit tasks (and never more than
// maxExpired) that are not terminal and whose lease ended before now, the
// earliest leases first: one script that reads the lease set on Redis's
// clock (now moved as the TaskStore's doc says), and, when it finds some,
// one script that keeps those Redis still has and drops the others from
// the set. A task renewed or ended between the two is still listed:
// reaping it (TaskReap) then changes nothing, as for one renewed just
// after Expired.
func (s *TaskStore) Expired(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, nil
	}
	bounded, cancel := context.WithTimeout(ctx, s.s.timeout)
	defer cancel()
	ids, err := runAs(bounded, taskDue, s.s.batch, redis.NewStringSliceCmd, []string{s.leases}, ceilMilli(now), s.clock(), min(limit, maxExpired)).Result()
	if err = s.outcome(ctx, "expired", err); err != nil || len(ids) == 0 {
		return nil, err
	}
	keys := make([]string, 0, 1+len(ids))
	args := make([]any, 0, len(ids))
	keys = append(keys, s.leases)
	for _, id := range ids {
		keys, args = append(keys, s.tasks+id), append(args, id)
	}
	kept, err := runAs(bounded, taskExpired, s.s.batch, redis.NewStringSliceCmd, keys, args...).Result()
	if err = s.outcome(ctx, "expired", err); err != nil {
		return nil, err
	}
	return kept, nil
}

// outcome notes what err, the result of a call made for ctx, says of
// Redis's health, and returns it wrapped, naming Redis and the call. A
// nil reply (redis.Nil) is an answer. An error that Redis answered (a
// script failing) says Redis is up; one that ctx, the caller's, ended
// first says nothing of it. An error of Redis's being unavailable (it did
// not answer in time, or answered that it cannot serve yet) is an
// outageError.
func (s *TaskStore) outcome(ctx context.Context, call string, err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		s.health.answered()
		return nil
	}
	what := "did not answer"
	if _, ok := answeredError(err); ok {
		what = "answered"
	}
	wrapped := fmt.Errorf("mcpredis: task store: %s: Redis %s: %w", call, what, err)
	if s.health.judge(ctx, err) {
		return outage(wrapped)
	}
	return wrapped
}

var _ mcpmw.TaskStore = (*TaskStore)(nil)
