package mcpmw

import "time"

// SetEventWriteTimeout shortens the bound on each event's write on the
// streams h serves, so that a test can outlast it in a second or two. It is
// h's own setting, which no other Handler reads: call it before h serves
// (its requests read it unguarded), never while it does.
func SetEventWriteTimeout(h *Handler, d time.Duration) {
	h.eventWriteTimeout = d
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

// Patience bounds every wait of a correctness test for something that must
// happen (an answer, a record, a goroutine's end): so generous that a busy
// machine never runs out of it, since it only turns a hang into a failure.
// A wait for something that must not happen takes a short window instead,
// which load can only lengthen. No test measures speed with it.
const Patience = 30 * time.Second
