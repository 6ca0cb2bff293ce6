package mcpredis

import (
	"context"
	"time"
)

// ValidInstanceID is for the tests of package mcpredis_test.
var ValidInstanceID = validInstanceID

// NewRelayWithin is NewRelay, waiting at most wait (not 5 s) for its
// subscriptions.
func NewRelayWithin(ctx context.Context, cfg Config, wait time.Duration) (*Relay, error) {
	return newRelay(ctx, cfg, wait)
}

// NewTaskStoreAt returns a TaskStore as NewTaskStore does, whose instance
// reads its clock from now: an instance whose clock is off.
func NewTaskStoreAt(cfg Config, now func() time.Time) *TaskStore {
	s := NewTaskStore(cfg)
	s.now = now
	return s
}

// CannotServeYet is cannotServeYet, for an error Redis answered with msg.
func CannotServeYet(msg string) bool { return cannotServeYet(answered(msg)) }

// answered is an error as Redis answers one.
type answered string

func (e answered) Error() string { return string(e) }
func (answered) RedisError()     {}

// Waiting returns how many of s's calls wait for a batch (not on the
// wire yet).
func (s *TaskStore) Waiting() int { return s.s.batch.waiting() }

// Unbatched makes l send each check alone, as before batching, for the
// benchmarks' comparison.
func (l *RateLimiter) Unbatched() { l.s.batch.unbatched = true }

// Flushing returns how many of s's queues have a command on the wire.
func (s *TaskStore) Flushing() int {
	s.s.batch.mu.Lock()
	defer s.s.batch.mu.Unlock()
	return s.s.batch.running
}

// WaitIdle waits, at most an hour, until none of s's queues has a command
// on the wire.
func (s *TaskStore) WaitIdle() { s.s.batch.wait(time.Hour) }

// LeaseClock makes l's leases read the time from now.
func (l *RateLimiter) LeaseClock(now func() time.Time) { l.lease.now = now }

// Leases returns how many keys l's table of leases holds.
func (l *RateLimiter) Leases() int {
	l.lease.mu.Lock()
	defer l.lease.mu.Unlock()
	return len(l.lease.keys)
}

// Coalesced returns how many of l's checks wait to go with the next call
// of their key.
func (l *RateLimiter) Coalesced() int {
	l.asks.mu.Lock()
	defer l.asks.mu.Unlock()
	n := 0
	for _, g := range l.asks.keys {
		if g != nil {
			n += g.n
		}
	}
	return n
}

// Waiting returns how many of l's commands wait for a batch (not on the
// wire yet).
func (l *RateLimiter) Waiting() int { return l.s.batch.waiting() }
