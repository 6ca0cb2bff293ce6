package mcpmw_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// What a client sends to a task is kept only when the task asked for it,
// and within TaskOptions.MaxInputBytes: neither the store's work nor what
// it keeps for the task's TTL grows with the body of one request.

// spyStore records the updates and creations a store is given.
type spyStore struct {
	*mcpmw.MemoryTaskStore
	mu      sync.Mutex
	updates []mcpmw.TaskUpdate
	created []*mcpmw.Task
}

func (s *spyStore) Create(ctx context.Context, t *mcpmw.Task) error {
	s.mu.Lock()
	s.created = append(s.created, t.Clone())
	s.mu.Unlock()
	return s.MemoryTaskStore.Create(ctx, t)
}

func (s *spyStore) Update(ctx context.Context, id string, u mcpmw.TaskUpdate) (*mcpmw.Task, bool, error) {
	s.mu.Lock()
	s.updates = append(s.updates, u)
	s.mu.Unlock()
	return s.MemoryTaskStore.Update(ctx, id, u)
}

// answersGiven returns the Responses of every TaskAnswer the store was
// given.
func (s *spyStore) answersGiven() []map[string]json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]json.RawMessage
	for _, u := range s.updates {
		if u.Op == mcpmw.TaskAnswer {
			out = append(out, u.Responses)
		}
	}
	return out
}

// madeUpAnswers returns n members of made-up answers, each an object, as
// the start of an inputResponses object's members.
func madeUpAnswers(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(`"made-up-` + strconv.Itoa(i) + `":{"action":"accept"},`)
	}
	return b.String()
}

// askingTool is a TaskOptional tool that asks "q" and answers with it.
func askingTool() mcpmw.Tool {
	form := json.RawMessage(`{"type":"object","properties":{"v":{"type":"string"}}}`)
	return mcpmw.Tool{Name: "ask", Permission: "run", Task: mcpmw.TaskOptional,
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			a, err := mcpmw.Ask(ctx, "q", mcpmw.ElicitForm("Q?", form))
			if err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult(string(a)), nil
		}}
}

func TestTaskUpdatePassesTheStoreOnlyAnswersToQuestionsOutstanding(t *testing.T) {
	t.Parallel()
	store := &spyStore{MemoryTaskStore: mcpmw.NewMemoryTaskStore()}
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: store}}, askingTool())
	id := e.create(t, "alice", "ask", "")
	e.until(t, id, "input_required")

	junk := e.do(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{`+strings.TrimSuffix(madeUpAnswers(10000), ",")+`}`, taskCaps)
	require.Equal(t, 200, junk.Status, junk.Raw)
	assert.Empty(t, store.answersGiven(), "a request answering nothing asked never reaches the store")

	r := e.do(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{`+madeUpAnswers(10000)+`"q":{"action":"accept","content":{"v":"A"}}}`, taskCaps)
	require.Equal(t, 200, r.Status, r.Raw)
	given := store.answersGiven()
	require.Len(t, given, 1)
	assert.Equal(t, []string{"q"}, slices.Sorted(maps.Keys(given[0])), "the store is given the one answer to the one question outstanding, not 10,000 made-up ones")
	done := e.until(t, id, "completed")
	assert.Contains(t, done["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"], `"v":"A"`)
	task, err := store.Get(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, []string{"q"}, slices.Sorted(maps.Keys(task.Answers)), "the task keeps only what it asked for")
}

func TestTaskKeepsOnlyTheAnswersItsPrepareRead(t *testing.T) {
	t.Parallel()
	store := &spyStore{MemoryTaskStore: mcpmw.NewMemoryTaskStore()}
	ring, err := mcpmw.NewKeyRing(make([]byte, 32))
	require.NoError(t, err)
	form := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)
	e := newTaskEnv(t, &mcpmw.Options{StateKeys: ring, Tasks: &mcpmw.TaskOptions{Store: store}}, mcpmw.Tool{Name: "delete", Permission: "run", Task: mcpmw.TaskRequired,
		Prepare: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) error {
			_, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Sure?", form))
			return err
		},
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			a, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Sure?", form))
			if err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult(string(a)), nil
		}})
	r := e.do(t, "alice", "tools/call", `"name":"delete","arguments":{},"inputResponses":{`+madeUpAnswers(5000)+`"confirm":{"action":"accept","content":{"ok":true}}}`, taskCaps)
	require.Equal(t, "task", r.Result["resultType"], r.Raw)
	store.mu.Lock()
	require.Len(t, store.created, 1)
	kept := store.created[0].Answers
	store.mu.Unlock()
	assert.Equal(t, []string{"confirm"}, slices.Sorted(maps.Keys(kept)), "the task is created with the answer Prepare read, and none of the 5,000 it never asked for")
	done := e.until(t, r.Result["taskId"].(string), "completed")
	assert.Contains(t, done["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"], `"ok":true`, "and the run finds it")
}

func TestTaskAnswersAreBoundedInSize(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{MaxInputBytes: 100, Shutdown: time.Millisecond}}, askingTool())
	id := e.create(t, "alice", "ask", "")
	e.until(t, id, "input_required")
	big := e.do(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{"q":{"action":"accept","content":{"v":"`+strings.Repeat("x", 200)+`"}}}`, taskCaps)
	require.NotNil(t, big.Error, big.Raw)
	assert.Equal(t, mcpmw.CodeInvalidParams, big.Error.Code)
	assert.Contains(t, big.Error.Message, "more than the 100 a task keeps")
	assert.Equal(t, "input_required", e.get(t, "alice", id).Result["status"], "the task still waits for an answer it can keep")
	small := e.do(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{"q":{"action":"accept","content":{"v":"ok"}}}`, taskCaps)
	require.Nil(t, small.Error, small.Raw)
	e.until(t, id, "completed")
	rs := e.rec.Records()
	require.NotEmpty(t, rs)
	for _, r := range rs {
		if r.Method == "tasks/update" && r.ErrorCode == mcpmw.CodeInvalidParams {
			assert.Equal(t, id, r.Target, "the refusal is recorded against the task")
		}
	}
}

func TestTaskAnswersGivenBeforeTheTaskAreBoundedInSize(t *testing.T) {
	t.Parallel()
	ring, err := mcpmw.NewKeyRing(make([]byte, 32))
	require.NoError(t, err)
	form := json.RawMessage(`{"type":"object"}`)
	e := newTaskEnv(t, &mcpmw.Options{StateKeys: ring, Tasks: &mcpmw.TaskOptions{MaxInputBytes: 100}}, mcpmw.Tool{Name: "delete", Permission: "run", Task: mcpmw.TaskRequired,
		Prepare: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) error {
			_, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Sure?", form))
			return err
		},
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("done"), nil
		}})
	r := e.do(t, "alice", "tools/call", `"name":"delete","arguments":{},"inputResponses":{"confirm":{"action":"accept","content":{"why":"`+strings.Repeat("y", 200)+`"}}}`, taskCaps)
	require.NotNil(t, r.Error, r.Raw)
	assert.Equal(t, mcpmw.CodeInvalidParams, r.Error.Code)
	assert.Contains(t, r.Error.Message, "a task keeps")
	assert.Zero(t, e.store.(*mcpmw.MemoryTaskStore).Len(), "no task was created")
}

func TestTaskCountsAnAnswerItsPrepareReadTwiceOnce(t *testing.T) {
	t.Parallel()
	ring, err := mcpmw.NewKeyRing(make([]byte, 32))
	require.NoError(t, err)
	form := json.RawMessage(`{"type":"object"}`)
	answer := `{"action":"accept","content":{"why":"` + strings.Repeat("y", 60) + `"}}`
	limit := len("confirm") + len(answer) // one copy fits exactly; two would not
	e := newTaskEnv(t, &mcpmw.Options{StateKeys: ring, Tasks: &mcpmw.TaskOptions{MaxInputBytes: limit}}, mcpmw.Tool{Name: "delete", Permission: "run", Task: mcpmw.TaskRequired,
		Prepare: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) error {
			for range 2 { // read twice: one answer all the same
				if _, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Sure?", form)); err != nil {
					return err
				}
			}
			return nil
		},
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("done"), nil
		}})
	r := e.do(t, "alice", "tools/call", `"name":"delete","arguments":{},"inputResponses":{"confirm":`+answer+`}`, taskCaps)
	require.Equal(t, "task", r.Result["resultType"], "an answer read twice is kept, and counted, once: %s", r.Raw)
}

func TestTaskAnswersAreBoundedWithTheAnswersItHoldsAlready(t *testing.T) {
	t.Parallel()
	form := json.RawMessage(`{"type":"object","properties":{"v":{"type":"string"}}}`)
	answer := `{"action":"accept","content":{"v":"` + strings.Repeat("x", 40) + `"}}`
	limit := len("q1") + len(answer) + len("q2") + len(answer) - 1 // each fits; both do not
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{MaxInputBytes: limit, Shutdown: time.Millisecond}}, mcpmw.Tool{Name: "two", Permission: "run", Task: mcpmw.TaskRequired,
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			for _, k := range []string{"q1", "q2"} {
				if _, err := mcpmw.Ask(ctx, k, mcpmw.ElicitForm(k+"?", form)); err != nil {
					return mcpmw.ToolResult{}, err
				}
			}
			return mcpmw.TextResult("both"), nil
		}})
	id := e.create(t, "alice", "two", "")
	e.until(t, id, "input_required")
	first := e.do(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{"q1":`+answer+`}`, taskCaps)
	require.Nil(t, first.Error, first.Raw)
	deadline := time.Now().Add(mcpmw.Patience)
	for {
		got := e.get(t, "alice", id).Result
		if ir, _ := got["inputRequests"].(map[string]any); got["status"] == "input_required" && ir["q2"] != nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the task never asked q2")
		time.Sleep(5 * time.Millisecond)
	}
	second := e.do(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{"q2":`+answer+`}`, taskCaps)
	require.NotNil(t, second.Error, "q1's answer is held: q2's would take the task past %d bytes, %s", limit, second.Raw)
	assert.Equal(t, mcpmw.CodeInvalidParams, second.Error.Code)
	assert.Contains(t, second.Error.Message, "a task keeps")
}
