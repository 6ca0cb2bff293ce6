package mcpmw

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// The end of a request, in the order it happens: the stream is sealed,
// the record made (once) and handed to the Observer and, past admit, to
// the Auditor, then the answer is written: every answer a client receives
// has its record. A panic anywhere after admit ends the same way
// (recoverPanic).

// finish ends a request with its answer a.
func (x *exchange) finish(a answer) {
	x.seal()
	x.report(&a)
	x.write(&a)
}

// seal closes the stream, if there is one, to further notifications: the
// answer is decided, and the record about to be made must stay true.
func (x *exchange) seal() {
	if x.stream != nil {
		x.stream.seal()
	}
}

// report makes the request's record, once, logs the server-side cause of
// a failure, and hands the record to the Observer (always) and to the
// Auditor (when the request got past admit), each called once whatever
// happens inside the other.
func (x *exchange) report(a *answer) {
	if x.recorded {
		return
	}
	x.recorded = true
	rec := x.record(a)
	if a.resp != nil && a.resp.Cause != nil {
		x.h.logger.LogAttrs(x.r.Context(), slog.LevelError, "mcpmw: request failed", slog.String("method", rec.Method), slog.String("tool", rec.Tool), slog.Any("error", a.resp.Cause))
	}
	if x.h.observer != nil {
		x.observe(rec)
	}
	if x.audited {
		x.audit(rec)
	}
}

// record builds the audit record of the request from what the stages
// found and the answer it gets. It is the one place a CallRecord is made.
func (x *exchange) record(a *answer) CallRecord {
	rec := CallRecord{
		Time:      x.start,
		ClientIP:  x.clientIP,
		Caller:    x.caller,
		AuthError: x.authErr,
		Method:    capEcho(x.env.method),
		RequestID: capEcho(string(x.env.id)),
		Status:    x.status(a),
	}
	if req := x.req; req != nil {
		rec.ProtocolVersion = req.Version
		if rec.ProtocolVersion == "" { // a legacy request naming no served revision
			rec.ProtocolVersion = capEcho(strings.TrimSpace(x.r.Header.Get(headerProtocolVersion)))
		}
		rec.ClientName, rec.ClientVersion = req.ClientName, req.ClientVersion
		rec.Arguments, rec.Target = x.args, x.target
	} else if x.env.response { // readEnvelope let only a legacy or absent header through
		rec.ProtocolVersion = capEcho(strings.TrimSpace(x.r.Header.Get(headerProtocolVersion)))
	}
	resp := a.resp
	if resp == nil {
		resp = &Response{}
	}
	rec.Outcome, rec.Summary = resp.Outcome, resp.Summary
	if resp.Target != "" {
		rec.Target = resp.Target
	}
	if m := x.info.method; m != nil && m.arguments != nil { // a method whose target is a tool
		rec.Tool = rec.Target
		rec.Arguments = x.recordArguments(rec.Target)
	}
	if resp.task != "" {
		rec.Target = resp.task
	}
	if resp.Error != nil {
		rec.ErrorCode = resp.Error.Code
	}
	if rec.Summary == "" {
		rec.Summary = defaultSummary(resp)
	}
	if rec.Outcome == "" {
		rec.Outcome = OutcomeOK
		if resp.Error != nil {
			rec.Outcome = OutcomeError
		}
	}
	rec.Duration = time.Since(x.start)
	return rec
}

// defaultSummary is the summary of a Response that gives none: its error
// message, then the server-side cause the log line gets, so that the
// record knows what the log knows ("Internal error" alone says nothing).
// Both are capped.
func defaultSummary(resp *Response) string {
	var s string
	if resp.Error != nil {
		s = capEcho(resp.Error.Message)
	}
	if resp.Cause != nil {
		if s != "" {
			s += ": "
		}
		s += capEcho(resp.Cause.Error())
	}
	return s
}

// recordArguments are a tools/call's arguments as the record shows them:
// the values the client named tool's Sensitive pointers reach redacted,
// and those of tool answered too when a middleware pointed the call at
// another tool. It costs nothing for a tool without sensitive arguments.
func (x *exchange) recordArguments(answered string) json.RawMessage {
	args := x.redact.arguments(x.args)
	if answered != x.target {
		args = x.info.method.arguments(answered).arguments(args)
	}
	return args
}

// observe tells the Observer the request is done, with the context its
// Serve returned, if it was called.
func (x *exchange) observe(rec CallRecord) {
	defer x.recoverHook("observer", rec)
	ctx := x.observed
	if ctx == nil {
		ctx = x.r.Context()
	}
	x.h.observer.Done(context.WithoutCancel(ctx), x.r, x.req, rec)
}

// audit hands the record to the Auditor, with a context that outlives
// the client.
func (x *exchange) audit(rec CallRecord) {
	defer x.recoverHook("auditor", rec)
	x.h.auditor.Audit(context.WithoutCancel(x.r.Context()), rec)
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

// Writing the answer: one writer for every answer, JSON or the last event
// of a stream. The message is built in pieces so that a result this package
// encoded (a tools/list page shared by every caller who sees it, a tool's
// result) is written as it is, never copied.

// write sends a; it is called once.
func (x *exchange) write(a *answer) {
	if x.written {
		return
	}
	x.written = true
	st := x.status(a)
	var msg [3][]byte
	if st != http.StatusAccepted && a.resp != nil {
		msg = x.message(a.resp)
	}
	if x.stream != nil && x.stream.finish(msg[:]) {
		return // sent as the last event of the stream
	}
	hdr := x.w.Header()
	for k, v := range a.header {
		hdr[k] = v
	}
	if msg[0] == nil {
		x.w.WriteHeader(st)
		return
	}
	hdr.Set("Content-Type", "application/json")
	x.w.WriteHeader(st)
	for _, piece := range msg {
		if len(piece) > 0 {
			_, _ = x.w.Write(piece)
		}
	}
}

// message returns the JSON-RPC response to the request for resp, in up to
// three pieces to be written in order. The id is the request's, byte for
// byte, and absent when it could not be read.
func (x *exchange) message(resp *Response) [3][]byte {
	id := x.env.id
	if x.env.response {
		id = nil // nothing answers a response
	}
	if resp.Error != nil {
		return [3][]byte{appendErrorMessage(make([]byte, 0, 128), id, resp.Error)}
	}
	head := append(make([]byte, 0, 32+len(id)), `{"jsonrpc":"2.0","id":`...)
	head = append(append(head, id...), `,"result":`...)
	result := resp.Result
	if v := x.revision(); v.envelope() && !resp.encoded {
		result = appendCompleted(make([]byte, 0, len(result)+len(x.h.ad.serverMeta)+32), result, x.h.ad.serverMeta)
	}
	return [3][]byte{head, result, closingBrace}
}

var closingBrace = []byte{'}'}

// appendErrorMessage appends a JSON-RPC error response to dst.
func appendErrorMessage(dst []byte, id json.RawMessage, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if id != nil {
		dst = append(dst, `,"id":`...)
		dst = append(dst, id...)
	}
	dst = append(dst, `,"error":`...)
	dst = appendError(dst, e)
	return append(dst, '}')
}

func appendError(dst []byte, e *Error) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = jsonwire.AppendString(dst, e.Message)
	if e.Data != nil {
		if raw, err := json.Marshal(e.Data); err == nil {
			dst = append(dst, `,"data":`...)
			dst = append(dst, raw...)
		}
	}
	return append(dst, '}')
}

// appendCompleted appends the result object res with what 2026-07-28 wants
// on every result and a middleware may have left out: resultType
// "complete", and serverInfo in _meta.
func appendCompleted(dst, res, serverMeta []byte) []byte {
	ms, ok := jsonwire.ObjectMembers(res, make([]jsonwire.Member, 0, 8))
	if !ok {
		return append(dst, res...)
	}
	dst = append(dst, '{')
	sep := false
	if jsonwire.Lookup(ms, "resultType") == nil {
		dst = append(dst, `"resultType":"complete"`...)
		sep = true
	}
	// serverMeta is `"_meta":{ <info member> }`; inner is the info member.
	inner := serverMeta[len(`"_meta":{`) : len(serverMeta)-1]
	hasMeta := false
	for _, m := range ms {
		if sep {
			dst = append(dst, ',')
		}
		sep = true
		dst = append(dst, '"')
		dst = append(dst, m.Key...)
		dst = append(dst, `":`...)
		if !m.Is("_meta") || jsonwire.KindOf(m.Value) != jsonwire.KindObject {
			dst = append(dst, m.Value...)
			continue
		}
		hasMeta = true
		metaMembers, _ := jsonwire.ObjectMembers(m.Value, nil)
		if jsonwire.Lookup(metaMembers, "io.modelcontextprotocol/serverInfo") != nil {
			dst = append(dst, m.Value...)
			continue
		}
		dst = append(dst, '{')
		dst = append(dst, inner...)
		if len(metaMembers) > 0 {
			dst = append(dst, ',')
			dst = append(dst, m.Value[jsonwire.SkipSpace(m.Value, 1):]...)
		} else {
			dst = append(dst, '}')
		}
	}
	if !hasMeta {
		if sep {
			dst = append(dst, ',')
		}
		dst = append(dst, serverMeta...)
	}
	return append(dst, '}')
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
	a := &answer{resp: internalError("", nil, "panic: "+capEcho(fmt.Sprint(v)))}
	x.seal()
	x.report(a)
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
