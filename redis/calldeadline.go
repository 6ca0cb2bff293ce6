package mcpredis

import (
	"context"
	"time"
)

// callDeadline is the deadline of one call made for several callers (a batch's
// pipeline, a coalesced check): the latest of theirs, or none when one of
// them has none, so that the call lasts as long as its longest-waiting
// caller may wait. Each caller still gives up at its own deadline.
type callDeadline struct {
	at        time.Time
	unbounded bool // a caller has no deadline: neither has the call
}

// add counts the deadline of ctx, a caller's.
func (l *callDeadline) add(ctx context.Context) {
	d, ok := ctx.Deadline()
	l.unbounded = l.unbounded || !ok
	if d.After(l.at) {
		l.at = d
	}
}

// context returns the call's context: values' values (the first caller's,
// for the client's hooks: a trace), none of its cancellation, and l's
// deadline.
func (l *callDeadline) context(values context.Context) (context.Context, context.CancelFunc) {
	values = context.WithoutCancel(values)
	if l.unbounded {
		return context.WithCancel(values)
	}
	return context.WithDeadline(values, l.at)
}
