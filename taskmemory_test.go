package mcpmw_test

import (
	"testing"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

func TestMemoryTaskStore(t *testing.T) {
	mcpmwtest.TestTaskStore(t, func(*testing.T) mcpmw.TaskStore { return mcpmw.NewMemoryTaskStore() })
}
