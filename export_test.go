package mcpmw

import (
	"testing"
	"time"
)

// SetEventWriteTimeout shortens the bound on each event's write for the
// rest of t, so that a test can outlast it in well under a second. t must
// not run in parallel: every stream in the process reads the bound.
func SetEventWriteTimeout(t testing.TB, d time.Duration) {
	old := eventWriteTimeout
	eventWriteTimeout = d
	t.Cleanup(func() { eventWriteTimeout = old })
}

// TaskBounds returns the TTL, poll interval, lease, shutdown grace and
// slots of h's task runner, as its TaskOptions defaulted them.
func TaskBounds(h *Handler) (ttl, poll, lease, shutdown time.Duration, slots int) {
	r := h.tasks
	return r.ttl, r.poll, r.lease, r.shutdown, r.max
}

// TaskPerCaller returns the slots one caller may hold on h, as its
// TaskOptions defaulted them.
func TaskPerCaller(h *Handler) int { return h.tasks.perCaller }
