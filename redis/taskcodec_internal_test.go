package mcpredis

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpmw/mcpmw"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pack packs field, value pairs as taskget.lua does.
func pack(pairs ...string) string {
	var b strings.Builder
	for _, p := range pairs {
		b.WriteString(strconv.Itoa(len(p)) + ":" + p)
	}
	return b.String()
}

// TestDecodeTaskInOneAllocation: a task whose packed fields fit in 512
// bytes is decoded in one allocation, its strings packed's own and its
// bytes one copy beside it; a larger one takes one more, for its bytes.
func TestDecodeTaskInOneAllocation(t *testing.T) {
	small := pack("caller", "alice", "status", "completed", "result", `{"content":[]}`, "q:a", `{"x":1}`, "created", "1700000000000")
	large := pack("caller", "alice", "result", `"`+strings.Repeat("x", 600)+`"`)
	fits := pack("caller", "alice", "result", `"`+strings.Repeat("x", 483)+`"`) // 512 bytes: the most that fits
	require.Len(t, fits, len(taskAndBytes{}.bytes))
	for _, tc := range []struct {
		name   string
		packed string
		allocs float64
		result int // the length of its result
	}{{"small", small, 1 + 2, 14}, {"large", large, 2, 602}, {"fits", fits, 1, 485}} { // small: its question's map (2) besides
		task, err := decodeTask("t", tc.packed)
		require.NoError(t, err)
		assert.Equal(t, "alice", task.CallerID)
		if tc.name == "small" {
			assert.Equal(t, `{"content":[]}`, string(task.Result))
			assert.Equal(t, `{"x":1}`, string(task.InputRequests["a"]))
			assert.Equal(t, "completed", string(task.Status))
			assert.Equal(t, int64(1700000000000), task.Created.UnixMilli())
			task.Result[0] = '[' // its own bytes: packed stays as it was
			assert.Equal(t, small, tc.packed)
		} else {
			assert.Len(t, task.Result, tc.result, tc.name)
		}
		if !raceEnabled {
			assert.Equal(t, tc.allocs, testing.AllocsPerRun(100, func() { _, _ = decodeTask("t", tc.packed) }), tc.name)
		}
	}
}

// TestDecodeTaskRefusesWhatIsNotPacked: a reply that is not
// <length>:<bytes> pairs is an error naming where, never a task.
func TestDecodeTaskRefusesWhatIsNotPacked(t *testing.T) {
	for _, bad := range []string{"6:caller", "6:caller5", "x:caller5:alice", ":caller", "6caller5:alice", "-1:caller5:alice", "6:caller9:alice"} {
		_, err := decodeTask("t", bad)
		assert.ErrorContains(t, err, "mcpredis: task store: the task t in Redis: a reply that is not <length>:<bytes> pairs", bad)
	}
	task, err := decodeTask("t", pack("caller", "", "tool", "x"))
	require.NoError(t, err, "an empty value is one")
	assert.Equal(t, "x", task.Tool)
}

// TestTaskFieldsInOneSlice: a task with every field, questions and
// answers is stored from a slice made once, exactly as long as it needs.
func TestTaskFieldsInOneSlice(t *testing.T) {
	task := &mcpmw.Task{ID: "t", CallerID: "alice", Tool: "export", Status: mcpmw.TaskInputRequired, EndedBy: "x", CancelRequested: true,
		State: []byte(`{}`), Result: []byte(`{}`), Error: []byte(`{}`),
		InputRequests: map[string]json.RawMessage{"a": json.RawMessage(`{}`), "b": json.RawMessage(`{}`)},
		Answers:       map[string]json.RawMessage{"a": json.RawMessage(`{}`)}}
	f := taskFields(task)
	assert.Len(t, f, 2*(18+2+1))
	assert.Equal(t, len(f), cap(f), "grown, or made too large")
	assert.Contains(t, f, "q:b")
	assert.Contains(t, f, "a:a")
}
