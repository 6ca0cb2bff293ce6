package typed

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

// node is recursive; NewTool refuses it (it has no JSON Schema), but the
// walk for tags must end on it all the same.
type node struct {
	Secret string `json:"secret" mcpmw:"sensitive"`
	Next   *node  `json:"next"`
	Kids   []node `json:"kids"`
}

func TestSensitivePointersEndOnRecursiveTypes(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"/secret"}, sensitivePointers("tree", reflect.TypeFor[node]()))
}
