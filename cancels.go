package mcpmw

import (
	"context"
	"errors"
	"sync"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// On the legacy revisions a client cancels a call by POSTing
// notifications/cancelled naming the call's request id. Without sessions
// the two requests are joined only for the same caller, as the Caller's
// CallerID says: inflight keeps the running legacy calls of identified
// callers for that, in this process; with Options.Relay, relayedCalls
// (relay.go) hands the cancellation to every instance. The call stage registers
// every request whose method can block (Handler.call), whatever the
// method: tools/call, prompts/get and resources/read waiting in Ask, an
// application's own Methods, a Completer or a template's List.
//
// Callers are never compared with ==: an application's Caller may be a
// struct holding a map or a slice in an interface field, on which ==
// panics, and two pointers to equal sessions are one caller to the
// application but two to ==. Only the identity the application states
// counts, and no application code runs while inflight's lock is held.

// runningCalls is the seam where a legacy notifications/cancelled meets
// the call it names: the call stage registers every running legacy call
// of a method that can block (add), and the notification cancels those
// with its request id and its caller's CallerID (cancelCalls). inflight,
// below, is the in-process implementation: it reaches the calls running
// on this instance only. relayedCalls (relay.go, with Options.Relay)
// reaches the instance running the call, whichever received the
// notification; nothing else changes.
type runningCalls interface {
	// add registers req as running, when its caller has a CallerID, and
	// returns the context the call runs in (which cancelCalls ends, with
	// errCancelledByClient as its cause) and the func that unregisters
	// it, which the caller must call when the call is over.
	add(ctx context.Context, req *Request) (context.Context, func())
	// cancelCalls cancels the calls registered under key and reports how
	// many there were.
	cancelCalls(ctx context.Context, key flightKey) int
}

// errCancelledByClient is the cause of a call's context when the client
// cancelled it with notifications/cancelled.
var errCancelledByClient = errors.New("mcpmw: cancelled by the client")

// inflight indexes running legacy calls by request id: the in-process
// runningCalls.
type inflight struct {
	mu    sync.Mutex
	calls map[flightKey][]*flight
}

// flightKey joins a call and its cancellation: the same request id from the
// same caller.
type flightKey struct {
	callerID  string
	requestID string
	endpoint  string // endpointName.key: a request id is the client's, and names a call at one endpoint only
}

type flight struct {
	cancel context.CancelCauseFunc
}

// callerID returns c's CallerID, or "" when c has none (such a caller's
// calls cannot be cancelled by another request).
func callerID(c Caller) string {
	if id, ok := c.(interface{ CallerID() string }); ok {
		return id.CallerID()
	}
	return ""
}

// add registers req as running, when its caller is identified, and returns
// its cancellable context and the func that unregisters it.
func (f *inflight) add(ctx context.Context, req *Request) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	id := callerID(req.Caller)
	if id == "" {
		return ctx, func() { cancel(nil) }
	}
	key := flightKey{callerID: id, requestID: requestKey(req.ID), endpoint: req.endpoint.key()}
	fl := &flight{cancel: cancel}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = make(map[flightKey][]*flight)
	}
	f.calls[key] = append(f.calls[key], fl)
	return ctx, func() {
		f.remove(key, fl)
		cancel(nil)
	}
}

// remove unregisters fl.
func (f *inflight) remove(key flightKey, fl *flight) {
	f.mu.Lock()
	defer f.mu.Unlock()
	list := f.calls[key]
	for i, other := range list {
		if other == fl {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(f.calls, key)
	} else {
		f.calls[key] = list
	}
}

// cancelled returns the handler of notifications/cancelled: it cancels
// the calls with the named request id whose caller has the same CallerID
// as the notification's.
func cancelled(calls runningCalls) func(context.Context, *Request) *Response {
	return func(ctx context.Context, req *Request) *Response { return cancelCallsOf(ctx, calls, req) }
}

// cancelCallsOf cancels the calls the notification req names.
func cancelCallsOf(ctx context.Context, calls runningCalls, req *Request) *Response {
	id := req.Param("requestId")
	if k := jsonwire.KindOf(id); k != jsonwire.KindString && k != jsonwire.KindNumber {
		return accepted("cancellation without a requestId")
	}
	who := callerID(req.Caller)
	if who == "" {
		return accepted("cancellation of " + capEcho(string(id)) + ": the caller has no CallerID, so no call of its can be named")
	}
	if n := calls.cancelCalls(ctx, flightKey{callerID: who, requestID: requestKey(id), endpoint: req.endpoint.key()}); n == 0 {
		return accepted("cancellation of " + capEcho(string(id)) + ": no such call running here")
	}
	return accepted("cancelled " + capEcho(string(id)))
}

// requestKey returns the form of a JSON-RPC id that two requests naming the
// same id share: a string by its decoded value ("a" and "\u0061" are one
// id), a number by its text, each tagged so that "1" and 1 stay apart.
func requestKey(id []byte) string {
	if s, ok := jsonwire.Unquote(id); ok {
		return "s" + s
	}
	return "n" + string(id)
}

// cancelCalls cancels the calls registered under key and reports how many.
func (f *inflight) cancelCalls(_ context.Context, key flightKey) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fl := range f.calls[key] {
		fl.cancel(errCancelledByClient)
	}
	return len(f.calls[key])
}
