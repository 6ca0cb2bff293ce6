package mcpmw

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// A Response is what a Dispatcher returns: a JSON-RPC result or error, and
// the facts the request's audit record needs. It says nothing about HTTP:
// the handler chooses the status from the error code, the outcome and the
// request's revision. Build one with ResultResponse or ErrorResponse.
type Response struct {
	// Result is the JSON result object. On 2026-07-28 the handler adds
	// resultType "complete" and serverInfo in _meta when they are missing.
	// A Result may be shared: never modify it afterwards.
	Result json.RawMessage
	// Error is the JSON-RPC error, when the request failed.
	Error *Error

	// Outcome, Target and Summary go into the audit record. A zero Outcome
	// is derived: OutcomeError when Error is set, OutcomeOK otherwise. An
	// OutcomeDenied error is answered 403: the caller may not do this.
	Outcome Outcome
	// Target names what the request acted on: a tool's name for tools/call.
	Target  string
	Summary string
	// Cause is a server-side problem behind an error, for the log: it is
	// logged with the request and never sent to the client.
	Cause error
	// Then, in the Response of a Method whose Lifetime is LifetimeStream,
	// serves the rest of its stream: the handler makes the record of this
	// Response (the stream's opening), then calls Then with the request's
	// context, and sends the Response it returns as the stream's last
	// event. Elsewhere it is a mistake: the answer is -32603.
	Then func(ctx context.Context) *Response

	// encoded marks a Result this package encoded for the request's
	// revision: valid JSON, complete, written as it is without being
	// checked or copied (a tools/list page is shared by every caller who
	// sees it). Results from elsewhere are checked and completed.
	encoded bool
	// task names the task the request created or acted on: its record's
	// Target (a tools/call's record keeps the tool as its Tool).
	task string
	// unavailable marks an error of something unavailable for now (the
	// task store during an outage): 503 with Retry-After.
	unavailable bool
	// denied is the permission a denial (Denied) names as the scope of
	// its 403's insufficient_scope challenge.
	denied Permission
}

// ResultResponse returns a Response whose result is v encoded as JSON (a
// json.RawMessage is used as is). v must encode to a JSON object.
func ResultResponse(v any) *Response {
	raw, err := json.Marshal(v)
	if err == nil && jsonwire.KindOf(raw) != jsonwire.KindObject {
		err = fmt.Errorf("result is %s, not an object", jsonwire.KindOf(raw))
	}
	if err != nil {
		return internalError("", fmt.Errorf("mcpmw.ResultResponse: %w", err), "")
	}
	return &Response{Result: raw}
}

// CacheableResponse returns the Response of a method whose results a
// client may cache (a CacheableResult: an extension's get method, say):
// v encoded as ResultResponse does, and on 2026-07-28 the Handler's ttlMs
// (Options.CacheTTL) and cacheScope "private", as every list and read of
// this package carries them, since what a caller may read depends on who
// it is. The legacy revisions have neither: there it is ResultResponse.
func CacheableResponse(ctx context.Context, req *Request, v any) *Response {
	resp := ResultResponse(v)
	if resp.Error != nil || req.Legacy() {
		return resp
	}
	f := &defaultPageFormat
	if info := callFrom(ctx); info != nil && info.format != nil {
		f = info.format
	}
	res := resp.Result[:len(resp.Result)-1] // compact (json.Marshal's), without its '}'; not shared yet
	if len(res) > 1 {
		res = append(res, ',')
	}
	res = append(res, `"ttlMs":`...)
	res = strconv.AppendInt(res, f.ttlMs, 10)
	resp.Result = append(res, `,"cacheScope":"private"}`...)
	return resp
}

// plural is the ending of a noun counted n times: "" for one, "s"
// otherwise, so that summaries agree in number ("1 tool", "2 tools")
// within the one concatenation that builds them.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ErrorResponse returns a Response carrying a JSON-RPC error.
func ErrorResponse(code int, message string) *Response {
	return &Response{Error: &Error{Code: code, Message: message}}
}

// internalError is the answer to a request that failed on this side,
// acting on target (its name for the record, capped; "" for none),
// because of cause: -32603 "Internal error" for the client, the cause for
// the log line and the record, never sent. summary, when not "", is the
// record's summary; otherwise it says the cause.
func internalError(target string, cause error, summary string) *Response {
	return &Response{Error: &Error{Code: CodeInternalError, Message: "Internal error"}, Target: target, Cause: cause, Summary: summary}
}

// failed is the internalError of what (a tool, a prompt, a read...) that
// returned err, whose text the record's summary quotes (capped).
func failed(target, what string, err error) *Response {
	return internalError(target, err, what+" failed: "+capEcho(err.Error()))
}

// Every result this package encodes starts and ends with the shared
// writers below, which add what 2026-07-28 puts in every result
// (resultType, and serverInfo in _meta) and in cacheable ones (ttlMs and
// cacheScope), and nothing on the legacy revisions.

// openResult begins a result object for revision v; its first member
// follows.
func openResult(dst []byte, v revision) []byte {
	if v.envelope() {
		return append(dst, `{"resultType":"complete",`...)
	}
	return append(dst, '{')
}

// closeResult ends a result object for revision v: after its last member,
// serverMeta (`"_meta":{serverInfo}`) on 2026-07-28.
func closeResult(dst []byte, v revision, serverMeta []byte) []byte {
	if v.envelope() {
		dst = append(append(dst, ','), serverMeta...)
	}
	return append(dst, '}')
}

// closeCachedResult ends a cacheable result object for revision v: on
// 2026-07-28 its freshness (ttlMs) and cacheScope ("private" or "public"),
// then serverMeta.
func closeCachedResult(dst []byte, v revision, ttlMs int64, scope string, serverMeta []byte) []byte {
	if v.envelope() {
		dst = append(dst, `,"ttlMs":`...)
		dst = strconv.AppendInt(dst, ttlMs, 10)
		dst = append(dst, `,"cacheScope":"`...)
		dst = append(dst, scope...)
		dst = append(dst, '"')
	}
	return closeResult(dst, v, serverMeta)
}

// JSON-RPC and MCP error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	CodeHeaderMismatch                  = -32020 // a routing header disagrees with the body (2026-07-28)
	CodeMissingRequiredClientCapability = -32021 // the client lacks a capability the request needs
	CodeUnsupportedProtocolVersion      = -32022
)

// An Error is a JSON-RPC error object.
type Error struct {
	Code    int
	Message string
	Data    any // encoded with encoding/json when set
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }
