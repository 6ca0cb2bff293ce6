package mcpmw_test

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcpmw/mcpmw"
)

// Task.Apply is the meaning of every TaskOp, which every store (the
// memory store, the redis module's script, a store of your own) copies:
// mcpmwtest.TestTaskStore compares a store with it, so its own meaning is
// pinned here, step by step.

func TestTaskApplyAsksOnlyWhatWasNeverAskedAndAnswersOnlyWhatIsOutstanding(t *testing.T) {
	t.Parallel()
	q := func(s string) json.RawMessage {
		return json.RawMessage(`{"method":"elicitation/create","params":{"message":"` + s + `"}}`)
	}
	a := json.RawMessage(`{"action":"accept"}`)
	now := time.Unix(1_700_000_000, 0)
	task := &mcpmw.Task{ID: "t", Owner: "i1", Status: mcpmw.TaskWorking, Updated: now}
	keys := func(m map[string]json.RawMessage) []string { return slices.Sorted(maps.Keys(m)) }

	assert.True(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskAsk, Owner: "i1", Requests: map[string]json.RawMessage{"q1": q("1"), "q2": q("2")}, Message: "two", Now: now.Add(time.Second)}))
	assert.Equal(t, mcpmw.TaskInputRequired, task.Status)
	assert.Equal(t, []string{"q1", "q2"}, keys(task.InputRequests))
	assert.Equal(t, now.Add(time.Second), task.Updated)

	assert.False(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: map[string]json.RawMessage{"never-asked": a}, Now: now.Add(2 * time.Second)}), "an answer to nothing outstanding changes nothing")
	assert.Empty(t, task.Answers)
	assert.Equal(t, mcpmw.TaskInputRequired, task.Status)

	assert.True(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: map[string]json.RawMessage{"q1": a, "never-asked": a}, Now: now.Add(3 * time.Second)}))
	assert.Equal(t, []string{"q1"}, keys(task.Answers), "only the outstanding question's answer is kept")
	assert.Equal(t, []string{"q2"}, keys(task.InputRequests))
	assert.Equal(t, mcpmw.TaskInputRequired, task.Status, "one question is still open")
	assert.Equal(t, now.Add(time.Second), task.Updated, "no change of status, no new Updated")

	assert.True(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: map[string]json.RawMessage{"q2": a}, Now: now.Add(4 * time.Second)}))
	assert.Nil(t, task.InputRequests)
	assert.Equal(t, mcpmw.TaskWorking, task.Status, "every question answered: working again")
	assert.Equal(t, now.Add(4*time.Second), task.Updated)

	assert.True(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskAsk, Owner: "i1", Requests: map[string]json.RawMessage{"q1": q("1 again"), "q3": q("3")}, Now: now.Add(5 * time.Second)}))
	assert.Equal(t, []string{"q3"}, keys(task.InputRequests), "a question answered before is never asked again")
	assert.JSONEq(t, string(a), string(task.Answers["q1"]), "and its answer stays")

	assert.False(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskAsk, Owner: "i2", Requests: map[string]json.RawMessage{"q9": q("9")}}), "only the owner asks")
	assert.NotContains(t, task.InputRequests, "q9")
}

func TestTaskApplyEndsOnceAndOnlyByItsOwner(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	task := &mcpmw.Task{ID: "t", Owner: "i1", Status: mcpmw.TaskWorking}
	assert.False(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "i2", Status: mcpmw.TaskCompleted, Now: now}))
	assert.False(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "i1", Status: mcpmw.TaskWorking, Now: now}), "finish needs a terminal status")
	assert.Equal(t, mcpmw.TaskWorking, task.Status)
	assert.True(t, task.Apply(mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "i1", Status: mcpmw.TaskFailed, Error: json.RawMessage(`{"code":1,"message":"x"}`), Token: "end-1", Now: now}))
	assert.Equal(t, mcpmw.TaskFailed, task.Status)
	assert.Equal(t, "end-1", task.EndedBy)
	assert.Nil(t, task.Result, "a failed task keeps its error, not a result")
	for _, u := range []mcpmw.TaskUpdate{
		{Op: mcpmw.TaskFinish, Owner: "i1", Status: mcpmw.TaskCompleted, Token: "end-2"},
		{Op: mcpmw.TaskCancel},
		{Op: mcpmw.TaskAsk, Owner: "i1", Requests: map[string]json.RawMessage{"q": json.RawMessage(`{}`)}},
	} {
		assert.False(t, task.Apply(u), "terminal stays terminal: %v", u.Op)
	}
	assert.Equal(t, "end-1", task.EndedBy)
}
