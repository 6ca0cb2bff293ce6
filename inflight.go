package mcpmw

import (
	"context"
	"errors"
	"reflect"
	"sync"
)

// On the legacy revisions a client cancels a call by POSTing
// notifications/cancelled naming the call's request id. Without sessions
// the two requests can only be joined in this process, and only for the
// same caller: inflight keeps the running legacy calls for that.

// errCancelledByClient is the cause of a call's context when the client
// cancelled it with notifications/cancelled.
var errCancelledByClient = errors.New("mcpmw: cancelled by the client")

// inflight indexes running legacy calls by request id.
type inflight struct {
	mu    sync.Mutex
	calls map[string][]*flight
}

type flight struct {
	caller Caller
	cancel context.CancelCauseFunc
}

// add registers req as running and returns its cancellable context and the
// func that unregisters it.
func (f *inflight) add(ctx context.Context, req *Request) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	fl := &flight{caller: req.Caller, cancel: cancel}
	key := string(req.ID)
	f.mu.Lock()
	if f.calls == nil {
		f.calls = make(map[string][]*flight)
	}
	f.calls[key] = append(f.calls[key], fl)
	f.mu.Unlock()
	return ctx, func() {
		f.mu.Lock()
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
		f.mu.Unlock()
		cancel(nil)
	}
}

// cancel handles notifications/cancelled: it cancels the calls with the
// named request id whose caller is the same as the notification's.
func (f *inflight) cancel(req *Request) *Response {
	id := req.Param("requestId")
	if k := kindOf(id); k != kindString && k != kindNumber {
		return accepted("cancellation without a requestId")
	}
	n := 0
	f.mu.Lock()
	for _, fl := range f.calls[string(id)] {
		if sameCaller(fl.caller, req.Caller) {
			fl.cancel(errCancelledByClient)
			n++
		}
	}
	f.mu.Unlock()
	if n == 0 {
		return accepted("cancellation of " + capEcho(string(id)) + ": no such call running here")
	}
	return accepted("cancelled " + capEcho(string(id)))
}

// sameCaller reports whether a and b are the same caller: equal by
// CallerID when both have one, otherwise by ==, when their type allows it.
func sameCaller(a, b Caller) bool {
	type identified interface{ CallerID() string }
	if ia, ok := a.(identified); ok {
		if ib, ok := b.(identified); ok {
			return ia.CallerID() == ib.CallerID()
		}
		return false
	}
	if reflect.TypeOf(a) != reflect.TypeOf(b) || !reflect.TypeOf(a).Comparable() {
		return false
	}
	return a == b
}
