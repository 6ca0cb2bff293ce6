package mcpmw

import (
	"context"
	"fmt"
)

// A Dispatcher turns one parsed, validated request into a Response. It never
// touches HTTP: the Handler reads the request, checks it, runs the
// Dispatcher, makes the audit record and writes the answer.
//
// The handler's own Dispatcher serves the methods of its method table (the
// built-in ones and Options.Methods). Options.Middleware wraps it the chi
// way, to observe, rewrite or refuse requests before they reach a method:
//
//	func auditTenant(next mcpmw.Dispatcher) mcpmw.Dispatcher {
//		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
//			resp := next.Dispatch(ctx, req)
//			resp.Summary += " (tenant " + tenantOf(req.Caller) + ")"
//			return resp
//		})
//	}
//
// Middleware sees only requests for methods the table has, on revisions
// that have them, whose headers and target (a tool, with the caller's
// permission for it) have been checked. To serve a method of your own,
// register a Method.
type Dispatcher interface {
	Dispatch(ctx context.Context, req *Request) *Response
}

// DispatcherFunc is an adapter to allow the use of ordinary functions as
// Dispatchers.
type DispatcherFunc func(ctx context.Context, req *Request) *Response

// Dispatch calls f(ctx, req).
func (f DispatcherFunc) Dispatch(ctx context.Context, req *Request) *Response { return f(ctx, req) }

// chain wraps d in the middlewares, the first outermost, as chi does. It
// panics, naming the entry, on a nil middleware or one that returns no
// Dispatcher (nil, or a nil DispatcherFunc): every request would panic.
func chain(d Dispatcher, mws []func(Dispatcher) Dispatcher) Dispatcher {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] == nil {
			panic(fmt.Sprintf("mcpmw: Options.Middleware[%d] is nil", i))
		}
		if d = mws[i](d); isNilHook(d) {
			panic(fmt.Sprintf("mcpmw: Options.Middleware[%d] returned no Dispatcher (%T); return next to pass requests on", i, d))
		}
	}
	return d
}
