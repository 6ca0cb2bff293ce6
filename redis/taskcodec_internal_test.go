package mcpredis

import (
	"strconv"
	"strings"
	"testing"

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
	for _, tc := range []struct {
		name   string
		packed string
		allocs float64
	}{{"small", small, 1 + 2}, {"large", large, 2}} { // small: its question's map (2) besides
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
			assert.Len(t, task.Result, 602)
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
