package mcpredis_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// largest is a go-redis hook keeping the largest command a client sends,
// by its number of arguments and by its bytes: what Redis was handed to
// parse and to run.
type largest struct {
	mu          sync.Mutex
	args, bytes int
	name        string
}

func (l *largest) DialHook(next redis.DialHook) redis.DialHook { return next }
func (l *largest) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		n := 0
		for _, a := range cmd.Args() {
			switch a := a.(type) {
			case string:
				n += len(a)
			case []byte:
				n += len(a)
			default:
				n += 8
			}
		}
		l.mu.Lock()
		if len(cmd.Args()) > l.args {
			l.args, l.name = len(cmd.Args()), cmd.Name()
		}
		l.bytes = max(l.bytes, n)
		l.mu.Unlock()
		return next(ctx, cmd)
	}
}
func (l *largest) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (l *largest) reset() {
	l.mu.Lock()
	l.args, l.bytes, l.name = 0, 0, ""
	l.mu.Unlock()
}

func (l *largest) get() (args, bytes int, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.args, l.bytes, l.name
}

// askedTask creates a working task, id, that has asked the questions
// keys, and returns it as the store has it.
func askedTask(t *testing.T, s *mcpredis.TaskStore, id string, keys ...string) *mcpmw.Task {
	t.Helper()
	now := time.Now()
	require.NoError(t, s.Create(t.Context(), working(id, now, time.Hour)))
	reqs := map[string]json.RawMessage{}
	for _, k := range keys {
		reqs[k] = json.RawMessage(`{"method":"elicitation/create","params":{"message":"` + k + `?"}}`)
	}
	got, changed, err := s.Update(t.Context(), id, mcpmw.TaskUpdate{Op: mcpmw.TaskAsk, Owner: "i1", Requests: reqs, Message: "asking", Now: now})
	require.NoError(t, err)
	require.True(t, changed)
	return got
}

// madeUp returns n answers under keys no task asked, and the answers
// given too.
func madeUp(n int, given map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, n+len(given))
	for i := range n {
		out["made-up-"+strconv.Itoa(i)] = json.RawMessage(`{"action":"accept","content":{"x":"` + strings.Repeat("y", 10) + `"}}`)
	}
	for k, v := range given {
		out[k] = v
	}
	return out
}

// TestTaskStoreAnswerWorkBoundedByTheTask: an answer of 100,000 made-up
// keys besides the one asked never reaches Redis as it came: the largest
// command Redis is handed is as long as the task's own fields, so no
// script runs for longer because a client sent more, and only the answer
// to the question asked is stored. A few made-up keys go in one round
// trip, and are ignored there.
func TestTaskStoreAnswerWorkBoundedByTheTask(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailOpen)
	client := cfg.Client.(*redis.Client)
	var big largest
	client.AddHook(&big)
	s := mcpredis.NewTaskStore(cfg)
	ctx := t.Context()
	askedTask(t, s, "flood", "a", "b")
	answer := json.RawMessage(`{"action":"accept","content":{"v":"A"}}`)

	big.reset()
	got, changed, err := s.Update(ctx, "flood", mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: madeUp(100_000, map[string]json.RawMessage{"a": answer}), Now: time.Now()})
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, map[string]json.RawMessage{"a": answer}, got.Answers, "only the answer asked is kept")
	assert.Len(t, got.InputRequests, 1, "b is still outstanding")
	args, bytes, name := big.get()
	assert.Less(t, args, 40, "the largest command (%s) has as many arguments as the task uses, not as the client sent", name)
	assert.Less(t, bytes, 4<<10, "nor as many bytes")
	n, err := client.HLen(ctx, taskPrefix+"flood").Result()
	require.NoError(t, err)
	assert.Less(t, n, int64(20), "the task's hash holds no made-up answer")

	// A few, small: sent as they came, in one round trip, and ignored.
	big.reset()
	got, changed, err = s.Update(ctx, "flood", mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: madeUp(10, map[string]json.RawMessage{"b": answer}), Now: time.Now()})
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, map[string]json.RawMessage{"a": answer, "b": answer}, got.Answers)
	assert.Equal(t, mcpmw.TaskWorking, got.Status)
	args, _, _ = big.get()
	assert.Greater(t, args, 2*11, "ten made-up answers are sent as they came")
}

// TestTaskStoreAnswersSentAsTheyComeOnlyWhenFewAndSmall: the bounds
// themselves: 64 answers of 64 KiB in all go as they come; one more
// answer, or one more byte, and only the task's questions' answers are
// sent. Either way the task ends the same.
func TestTaskStoreAnswersSentAsTheyComeOnlyWhenFewAndSmall(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailOpen)
	client := cfg.Client.(*redis.Client)
	var big largest
	client.AddHook(&big)
	s := mcpredis.NewTaskStore(cfg)
	answer := json.RawMessage(`{"action":"accept"}`)
	// responses returns n answers, "a" among them, of size bytes in all.
	responses := func(n, size int) map[string]json.RawMessage {
		r := madeUp(n-1, map[string]json.RawMessage{"a": answer})
		total := 0
		for k, v := range r {
			total += len(k) + len(v)
		}
		r["made-up-0"] = json.RawMessage(`"` + strings.Repeat("x", size-total+len(r["made-up-0"])-2) + `"`)
		return r
	}
	for i, c := range []struct {
		n, size int
		sent    bool
	}{
		{64, 64 << 10, true},
		{65, 64 << 10, false},
		{64, 64<<10 + 1, false},
	} {
		id := "bound" + strconv.Itoa(i)
		askedTask(t, s, id, "a")
		big.reset()
		got, changed, err := s.Update(t.Context(), id, mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: responses(c.n, c.size), Now: time.Now()})
		require.NoError(t, err)
		assert.True(t, changed, "%+v", c)
		assert.Equal(t, map[string]json.RawMessage{"a": answer}, got.Answers, "%+v", c)
		_, bytes, _ := big.get()
		assert.Equal(t, c.sent, bytes >= c.size, "%d answers, %d bytes: sent as they came (%d bytes at most)", c.n, c.size, bytes)
	}
}

// TestTaskStoreAnswerOfAnUnknownOrEndedTask: the read that filters a large
// answer finds nothing to send for a task that is not there (not found)
// or that asks nothing (unchanged).
func TestTaskStoreAnswerOfAnUnknownOrEndedTask(t *testing.T) {
	t.Parallel()
	s, _, _ := taskStore(t)
	ctx := t.Context()
	flood := madeUp(1000, nil)
	_, _, err := s.Update(ctx, "none", mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: flood, Now: time.Now()})
	assert.ErrorIs(t, err, mcpmw.ErrTaskNotFound)
	require.NoError(t, s.Create(ctx, working("quiet", time.Now(), time.Hour)))
	got, changed, err := s.Update(ctx, "quiet", mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: flood, Now: time.Now()})
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Nil(t, got.Answers)
}

// TestTaskStoreCreateBoundsItsAnswers: a task is created with at most 1,024
// answers (those to questions asked before it became a task); more is
// refused, naming the bound, and nothing is stored.
func TestTaskStoreCreateBoundsItsAnswers(t *testing.T) {
	t.Parallel()
	s, c, _ := taskStore(t)
	ctx := t.Context()
	many := working("many", time.Now(), time.Hour)
	many.Answers = madeUp(1024, nil)
	require.NoError(t, s.Create(ctx, many))
	got, err := s.Get(ctx, "many")
	require.NoError(t, err)
	assert.Len(t, got.Answers, 1024)

	tooMany := working("too-many", time.Now(), time.Hour)
	tooMany.Answers = madeUp(1025, nil)
	err = s.Create(ctx, tooMany)
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "mcpredis: task store: create: the task too-many carries 1025 answers, more than the 1024 a store keeps")
	}
	n, err := c.Exists(ctx, taskPrefix+"too-many").Result()
	require.NoError(t, err)
	assert.Zero(t, n)
}

// TestTaskStoreExpiredListsAtMostAThousand: whatever the limit asked, one
// Expired lists at most 1,000 ids, so its scripts stay short.
func TestTaskStoreExpiredListsAtMostAThousand(t *testing.T) {
	t.Parallel()
	s, c, _ := taskStore(t)
	ctx := t.Context()
	now := time.Now()
	pipe := c.Pipeline()
	for i := range 1001 {
		pipe.ZAdd(ctx, leaseSet, redis.Z{Score: float64(now.Add(-time.Minute).UnixMilli()), Member: "t" + strconv.Itoa(i)})
		pipe.HSet(ctx, taskPrefix+"t"+strconv.Itoa(i), "status", "working")
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	ids, err := s.Expired(ctx, now, 1_000_000)
	require.NoError(t, err)
	assert.Equal(t, 1000, len(ids))
	ids, err = s.Expired(ctx, now, 999)
	require.NoError(t, err)
	assert.Equal(t, 999, len(ids))
}
