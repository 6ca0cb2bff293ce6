package mcpredis

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// An outageError is an error that says Redis is unavailable for now: it
// did not answer within the deadline (down, paused, partitioned, too
// slow), or it answered that it cannot serve yet (loading its data, busy
// with a script, a failover under way). Asking again later may succeed,
// so a server can answer 503 with Retry-After rather than 500.
//
// Its method Unavailable lets a caller recognise it without importing this
// package, through errors.As and an interface:
//
//	var u interface{ Unavailable() bool }
//	if errors.As(err, &u) && u.Unavailable() { … 503 … }
//
// A call that failed because its caller gave up first (ctx done) is no
// outage, and is not wrapped.
type outageError struct{ err error }

func (e *outageError) Error() string { return e.err.Error() }
func (e *outageError) Unwrap() error { return e.err }

// Unavailable reports true: Redis is unavailable for now; retry later.
func (e *outageError) Unavailable() bool { return true }

// outage wraps err, an error that Redis's unavailability caused.
func outage(err error) error { return &outageError{err: err} }

// notYet lists the prefixes of the errors Redis answers while it cannot
// serve for a while: loading its data (LOADING), running a script too
// long (BUSY), a replica cut from its master (MASTERDOWN), a cluster
// without every slot (CLUSTERDOWN), keys of a slot being moved
// (TRYAGAIN), a failover that left the client on a replica (READONLY), or
// too few replicas for a write (NOREPLICAS).
var notYet = []string{"LOADING", "BUSY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "READONLY", "NOREPLICAS"}

// cannotServeYet reports whether err, an error Redis answered, says it
// cannot serve for now (see notYet).
func cannotServeYet(err redis.Error) bool {
	msg := err.Error()
	for _, p := range notYet {
		if rest, ok := strings.CutPrefix(msg, p); ok && (rest == "" || rest[0] == ' ') {
			return true
		}
	}
	return false
}

// answeredError returns err as the error Redis answered, when it is one.
func answeredError(err error) (redis.Error, bool) {
	var answered redis.Error
	ok := errors.As(err, &answered)
	return answered, ok
}

// judge notes what err, the error of a call made for ctx, says of Redis's
// health, and reports whether it is an outage (see outageError): an error
// Redis answered says it is up, and is an outage only when it says Redis
// cannot serve yet; one that ctx, the caller's, ended first says nothing
// of Redis; any other is Redis not answering.
func (h *health) judge(ctx context.Context, err error) bool {
	if answered, ok := answeredError(err); ok {
		h.answered()
		return cannotServeYet(answered)
	}
	if gaveUp(ctx) {
		return false
	}
	h.failed(err)
	return true
}
