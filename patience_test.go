package mcpmw_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpmw/mcpmw"
)

// patience bounds every wait for something that must happen (see
// mcpmw.Patience).
const patience = mcpmw.Patience

// noLeaks checks, when t ends (after its subtests, and after the cleanups
// registered after this call), that every goroutine started since has
// ended. t must not be parallel, so that no other test's goroutines are
// counted; its subtests may be.
func noLeaks(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { verifyNoLeaks(t, ignore) })
}

// verifyNoLeaks fails t if goroutines that ignore does not name are still
// running after patience. goleak's own wait, under half a second, is short
// for a busy machine, where a closed server's goroutines may take longer
// to leave.
func verifyNoLeaks(t *testing.T, ignore goleak.Option) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		err := goleak.Find(ignore) // retries for a while itself before it reports
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Error(err)
			return
		}
	}
}
