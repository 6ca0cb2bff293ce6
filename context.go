package mcpmw

import "context"

// What a method may ask of its context: who is calling (CallerFrom), what
// the handler admitted the request for (AdmittedTarget), its event stream
// (streamFrom, for Progress, Log and a legacy Ask), and how to answer a
// request whose client has gone (clientGone). The handler puts one
// callInfo in the context of every call; the getters read it, and are
// zero outside a request.

// ctxKey is the type of this package's context keys: a pointer to one
// boxes without allocating.
type ctxKey struct{ name string }

// callInfo is what the handler knows of the request a method serves, for
// the functions a method calls with its context: CallerFrom, Progress and
// Log, and the tools/call gate.
type callInfo struct {
	caller   Caller
	clientIP string  // as Options.ClientIP gave it: a task's end record names it
	method   *Method // what the handler routed the request to; nil for a notification of none
	target   *Target // what the handler admitted the request for, if anything
	params   bytesID // the Params of the request admitted
	stream   *stream // nil when the method may not stream
	round    round   // a tools/call's round of asking (ask.go), when hasRound
	hasRound bool
	format   *pageFormat // the Handler's list pages, for a List
}

var callKey = &ctxKey{"call"}

// callFrom returns the callInfo of the request whose method ctx serves,
// or nil.
func callFrom(ctx context.Context) *callInfo {
	info, _ := ctx.Value(callKey).(*callInfo)
	return info
}

// admits reports whether req is the request the handler admitted for
// info.target: of the same method, with the same Params (the very bytes,
// as a middleware replaces Params and never changes them in place).
func (info *callInfo) admits(req *Request) bool {
	return info.target != nil && req.Method == info.method.Name && idOf(req.Params) == info.params
}

// clientGone answers a request whose client went away, or cancelled it
// (legacy notifications/cancelled), while its handler ran on target:
// nobody reads the answer, but the record says why.
func clientGone(ctx context.Context, target string) *Response {
	resp := ErrorResponse(CodeInternalError, "Request cancelled")
	resp.Target, resp.Summary = target, "client went away: "+context.Cause(ctx).Error()
	if context.Cause(ctx) == errCancelledByClient {
		resp.Summary = "cancelled by the client (notifications/cancelled)"
	}
	return resp
}

// clientIPFrom returns the client IP of the request whose method ctx
// serves, or "".
func clientIPFrom(ctx context.Context) string {
	if info := callFrom(ctx); info != nil {
		return info.clientIP
	}
	return ""
}

// CallerFrom returns the Caller the handler authenticated for the request
// whose context is ctx, or nil outside a request.
func CallerFrom(ctx context.Context) Caller {
	if info := callFrom(ctx); info != nil {
		return info.caller
	}
	return nil
}

// streamFrom returns the stream of the request whose method ctx serves, or
// nil when it has none.
func streamFrom(ctx context.Context) *stream {
	if info := callFrom(ctx); info != nil {
		return info.stream
	}
	return nil
}
