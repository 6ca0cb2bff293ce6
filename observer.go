package mcpmw

import (
	"context"
	"net/http"
	"time"
)

// An Observer follows each request a Handler receives, for traces and
// metrics (the otel module implements it with OpenTelemetry). Unlike the
// Auditor it also sees the requests the handler refuses before auditing
// (rate-limited and non-POST ones), and it sees a request twice: when it is
// about to be dispatched, and when its answer is decided.
type Observer interface {
	// Serve is called for a request about to be dispatched to its method,
	// with the context the method would run with and the time the handler
	// started on the request; the context it returns is the one the
	// middleware and the method get (a tracer starts its span there, so
	// that the method's own spans are its children). It must be derived
	// from ctx, which carries what CallerFrom, Progress and Log read. A
	// request refused before dispatch gets no Serve.
	Serve(ctx context.Context, req *Request, start time.Time) context.Context
	// Done is called exactly once for every request, refused ones
	// included, with its record (made for the Auditor too, when the
	// request is audited), just before the answer is written. ctx is the
	// one Serve returned, or the HTTP request's when Serve was not called;
	// it is not cancelled when the client goes away. r is the HTTP request,
	// for its headers; req is the request as parsed, or nil when the body
	// was not read that far (so a request refused after parsing still
	// shows its params._meta, its trace context say). req's params are as
	// sent, sensitive arguments included (Tool.Sensitive): record from rec,
	// which has them redacted, never from req's arguments. Done must not block:
	// the answer waits for it.
	Done(ctx context.Context, r *http.Request, req *Request, rec CallRecord)
}
