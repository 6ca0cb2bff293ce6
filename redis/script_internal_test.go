package mcpredis

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEvalArgsInOneSlice: a script's arguments are built in a slice made
// once, exactly as long as they are (every rate-limit check builds one,
// of one key and four arguments).
func TestEvalArgsInOneSlice(t *testing.T) {
	argv := evalArgs("h", []string{"k"}, []any{int64(1), int64(2), 3, 4})
	assert.Equal(t, []any{"evalsha", "h", 1, "k", int64(1), int64(2), 3, 4}, argv)
	assert.Equal(t, len(argv), cap(argv))
}
