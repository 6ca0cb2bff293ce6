package mcpmw

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// exchange is one request on its way through ServeHTTP: what each stage
// found (for the audit record), the event stream if one was opened, and
// whether the record was made and the answer written.
type exchange struct {
	h        *Handler
	w        http.ResponseWriter
	r        *http.Request
	start    time.Time
	clientIP string
	caller   Caller          // set once authentication succeeded
	authErr  error           // why authentication failed, if it did
	env      envelope        // the body's JSON-RPC envelope, as far as it was read
	args     json.RawMessage // a tools/call's arguments, as sent
	redact   *redaction      // the Sensitive pointers of the tool a tools/call names, if any
	target   string          // the tool, prompt or resource URI the request names, as sent (capped)
	req      *Request        // set once the request was parsed: &reqv
	reqv     Request
	info     callInfo        // what a method's context carries (see callKey)
	observed context.Context // what Observer.Serve returned, if it was called
	stream   *stream         // set when the method may stream: &streamv
	streamv  stream
	audited  bool // past admit: the request is audited
	recorded bool
	written  bool
}

// An answer is what the handler sends for one request: a JSON-RPC response
// (an error, a result, or nothing for a 202), its HTTP status and extra
// headers. Stages before the dispatcher build answers with their own
// status; a Dispatcher's Response becomes one through answerTo.
type answer struct {
	resp   *Response
	status int // 0: chosen from the response and the revision (see status)
	header http.Header
}

// refusal is an answer refusing a request with an HTTP status and a
// JSON-RPC error.
func refusal(status, code int, message string) *answer {
	return &answer{status: status, resp: ErrorResponse(code, message)}
}

// answerTo turns a Dispatcher's Response into the answer for req: 202 for
// a notification, 403 for a denial, and a 500 for a result that is not a
// JSON object (a middleware's mistake, logged).
func (h *Handler) answerTo(req *Request, resp *Response) answer {
	a := answer{resp: resp}
	switch {
	case req.IsNotification():
		if resp.Error == nil || errorStatus(resp.Error.Code, req.revision()) < 400 {
			a.status, a.resp = http.StatusAccepted, &Response{Outcome: OutcomeAccepted, Summary: resp.Summary, Target: resp.Target, Cause: resp.Cause}
		}
	case resp.Outcome == OutcomeDenied && resp.Error != nil:
		a.status, a.header = http.StatusForbidden, http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope"`}}
	case resp.Error == nil && !resp.encoded && (jsonwire.KindOf(resp.Result) != jsonwire.KindObject || !json.Valid(resp.Result)):
		a.resp = &Response{Error: &Error{Code: CodeInternalError, Message: "Internal error"}, Target: resp.Target,
			Cause: fmt.Errorf("the Response to %q has a Result that is not a JSON object", req.Method)}
	case resp.Error == nil && req.Method == "initialize" && h.sessionIDs:
		// Options.LegacySessionIDs: a random id, never stored or read.
		var b [16]byte
		_, _ = rand.Read(b[:])
		a.header = http.Header{"Mcp-Session-Id": {hex.EncodeToString(b[:])}}
	}
	return a
}

// errorStatus returns the HTTP status for an error code on a revision. The
// choices the specification leaves open are listed in the README.
func errorStatus(code int, v revision) int {
	switch code {
	case CodeParseError, CodeInvalidRequest, CodeHeaderMismatch, CodeMissingRequiredClientCapability, CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	case CodeMethodNotFound:
		return v.methodNotFoundStatus()
	case CodeInternalError:
		return http.StatusInternalServerError
	default:
		return http.StatusOK
	}
}

// revision is the revision the answer follows: the request's, or the
// legacy rules when the request was not read that far.
func (x *exchange) revision() revision {
	if x.req == nil {
		return rev20251125
	}
	return x.req.revision()
}

// status returns the HTTP status a is sent with.
func (x *exchange) status(a *answer) int {
	switch {
	case x.stream != nil && x.stream.isStarted():
		return http.StatusOK // already sent with the first event
	case a.status != 0:
		return a.status
	case a.resp != nil && a.resp.Error != nil:
		return errorStatus(a.resp.Error.Code, x.revision())
	default:
		return http.StatusOK
	}
}

// finish closes the stream to further notifications, makes the audit
// record, then writes the answer: every answer a client receives has its
// record.
func (x *exchange) finish(a answer) {
	if x.stream != nil {
		x.stream.seal()
	}
	x.audit(&a)
	x.write(&a)
}

// audit makes the request's record, once, and hands it to the Auditor
// (when the request got past admit) and to the Observer (always), each
// called once whatever happens inside the other.
func (x *exchange) audit(a *answer) {
	if x.recorded {
		return
	}
	x.recorded = true
	rec := x.record(a)
	if a.resp != nil && a.resp.Cause != nil {
		x.h.logger.LogAttrs(x.r.Context(), slog.LevelError, "mcpmw: request failed", slog.String("method", rec.Method), slog.String("tool", rec.Tool), slog.Any("error", a.resp.Cause))
	}
	if x.audited {
		x.callAuditor(rec)
	}
	if x.h.observer != nil {
		x.callObserver(rec)
	}
}

// callAuditor calls the Auditor with a context that outlives the client.
func (x *exchange) callAuditor(rec CallRecord) {
	defer x.recoverHook("auditor", rec)
	x.h.auditor.Audit(context.WithoutCancel(x.r.Context()), rec)
}

// callObserver tells the Observer the request is done, with the context
// its Serve returned, if it was called.
func (x *exchange) callObserver(rec CallRecord) {
	defer x.recoverHook("observer", rec)
	ctx := x.observed
	if ctx == nil {
		ctx = x.r.Context()
	}
	x.h.observer.Done(context.WithoutCancel(ctx), x.r, x.req, rec)
}

// recoverHook logs a panic of an application hook, which must reach
// neither the client nor the other hooks.
func (x *exchange) recoverHook(hook string, rec CallRecord) {
	if v := recover(); v != nil {
		msg := "mcpmw: auditor panicked; the audit record was lost"
		if hook != "auditor" {
			msg = "mcpmw: " + hook + " panicked"
		}
		x.h.logger.LogAttrs(x.r.Context(), slog.LevelError, msg,
			slog.Any("panic", v), slog.Any("record", rec), slog.String("stack", string(debug.Stack())))
	}
}

// recoverPanic turns a panic anywhere after the rate limit into a 500 (when
// nothing was written yet), a log line and exactly one audit record.
func (x *exchange) recoverPanic() {
	v := recover()
	if v == nil {
		return
	}
	x.h.logger.LogAttrs(x.r.Context(), slog.LevelError, "mcpmw: panic while serving a request",
		slog.Any("panic", v), slog.String("method", capEcho(x.env.method)), slog.String("stack", string(debug.Stack())))
	a := refusal(0, CodeInternalError, "Internal error")
	a.resp.Summary = "panic: " + capEcho(fmt.Sprint(v))
	if x.stream != nil {
		x.stream.seal()
	}
	x.audit(a)
	x.writeAfterPanic(a)
	if v == http.ErrAbortHandler {
		panic(v)
	}
}

// writeAfterPanic writes the answer to a request that panicked. The panic
// may have come from the ResponseWriter itself (a tool's first progress
// event writes the headers), so writing can panic again: then nothing can
// be sent, and the connection is aborted rather than left half-written.
func (x *exchange) writeAfterPanic(a *answer) {
	defer func() {
		if v := recover(); v != nil {
			x.h.logger.LogAttrs(x.r.Context(), slog.LevelError, "mcpmw: the response writer panicked again; aborting the connection",
				slog.Any("panic", v), slog.String("method", capEcho(x.env.method)))
			panic(http.ErrAbortHandler)
		}
	}()
	x.write(a)
}

// callInfo is what the handler knows of the request a method serves, for
// the functions a method calls with its context: CallerFrom, Progress and
// Log, and the tools/call gate.
type callInfo struct {
	caller   Caller
	target   *Target // what the handler admitted the request for, if anything
	stream   *stream // nil when the method may not stream
	round    round   // a tools/call's round of asking (ask.go), when hasRound
	hasRound bool
}

var callKey = &ctxKey{"call"}

func callFrom(ctx context.Context) *callInfo {
	info, _ := ctx.Value(callKey).(*callInfo)
	return info
}

// admittedTarget returns the target the handler checked the caller's
// permission and the request's headers for, or nil.
func admittedTarget(ctx context.Context) *Target {
	if info := callFrom(ctx); info != nil {
		return info.target
	}
	return nil
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
