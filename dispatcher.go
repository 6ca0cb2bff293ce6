package mcpmw

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// A Dispatcher turns one parsed, validated request into a Response. It never
// touches HTTP: the Handler reads the request, runs the Dispatcher, makes the
// audit record from the Response and writes the answer.
//
// The handler's own Dispatcher serves the protocol methods and tools. An
// application adds methods the chi way, with a middleware that serves what
// it knows and delegates the rest:
//
//	func withResources(next mcpmw.Dispatcher) mcpmw.Dispatcher {
//		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
//			if req.Method == "resources/list" {
//				return mcpmw.ResultResponse(map[string]any{"resources": []any{}})
//			}
//			return next.Dispatch(ctx, req)
//		})
//	}
//
// A method that belongs to a server capability (resources/*, prompts/*,
// completion/complete, logging/setLevel) is answered -32601 before any
// middleware sees it unless Options.Capabilities declares that capability,
// so what server/discover and initialize advertise is exactly what is served.
type Dispatcher interface {
	Dispatch(ctx context.Context, req *Request) *Response
}

// DispatcherFunc is an adapter to allow the use of ordinary functions as
// Dispatchers.
type DispatcherFunc func(ctx context.Context, req *Request) *Response

// Dispatch calls f(ctx, req).
func (f DispatcherFunc) Dispatch(ctx context.Context, req *Request) *Response { return f(ctx, req) }

// A Request is one JSON-RPC request or notification, validated for its
// protocol revision, as a Dispatcher sees it. Its byte slices alias the
// request body: treat them as read-only and copy what must outlive the call.
//
// A middleware may rewrite a request by replacing Params (never by changing
// its bytes in place) before calling the next Dispatcher: everything after
// it, the tool included, reads the new value. Version, Caller and the
// client's declarations were decided from the original request and stay.
type Request struct {
	ID      json.RawMessage // exactly as sent; nil for a notification
	Method  string
	Params  json.RawMessage // the params object, or nil when absent
	Version string          // the protocol revision the request speaks, e.g. "2026-07-28"
	Caller  Caller          // never nil: authentication has succeeded
	Header  http.Header     // the HTTP request's headers

	// ClientCapabilities is the client's capabilities object: from _meta on
	// 2026-07-28 requests, from params.capabilities on initialize, and nil on
	// other legacy requests (a stateless server cannot remember them).
	ClientCapabilities json.RawMessage
	// ClientName and ClientVersion are the client's self-description, as
	// declared; use them for display and logs, never for decisions.
	ClientName, ClientVersion string

	parsed parsedParams // the handler's reading of Params, while Params is unchanged
}

// parsedParams is the handler's one reading of a request's params, made
// when it parsed the body, so that the request path looks members up
// without scanning again. It belongs to the exact Params slice it was read
// from: when Params is replaced (by a middleware, or in a Request built by
// hand), the Request's methods read the new Params instead, so nothing ever
// acts on a value the request no longer holds.
type parsedParams struct {
	of     []byte   // the Params this reading is of; nil when there is none
	params []member // top-level members of of
	meta   []member // members of of._meta
	name   string   // params.name decoded, when nameOK
	nameOK bool
	buf    [8]member // backing store for params and meta, saving two allocations
}

// read sets p to the members of params, a JSON object that parseEnvelope
// has already validated.
func (p *parsedParams) read(params []byte) {
	*p = parsedParams{of: params}
	if params == nil {
		return
	}
	p.params = membersInto(params, p.buf[:0:4])
	if metaRaw := lookup(p.params, "_meta"); kindOf(metaRaw) == kindObject {
		p.meta = membersInto(metaRaw, p.buf[4:8:8])
	}
	p.name, p.nameOK = unquote(lookup(p.params, "name"))
}

// current reports whether p is a reading of params.
func (p *parsedParams) current(params []byte) bool {
	return len(p.of) == len(params) && (len(params) == 0 || &p.of[0] == &params[0]) && (p.of == nil) == (params == nil)
}

// param returns the raw value of the named top-level member of r.Params.
func (r *Request) param(name string) []byte {
	if r.parsed.current(r.Params) {
		return lookup(r.parsed.params, name)
	}
	return scanMember(r.Params, name)
}

// metaParam returns the raw value of the named member of params._meta.
func (r *Request) metaParam(name string) []byte {
	if r.parsed.current(r.Params) {
		return lookup(r.parsed.meta, name)
	}
	return scanMember(scanMember(r.Params, "_meta"), name)
}

// scanMember returns the value of the first member named name of the JSON
// object doc, or nil when doc is not a valid JSON object or has no such
// member. It checks doc first: a Params set by a middleware or by hand has
// not been through the parser.
func scanMember(doc []byte, name string) []byte {
	if !json.Valid(doc) {
		return nil
	}
	it, _ := iterMembers(doc) // not an object: it has no members
	for m, more := it.next(); more; m, more = it.next() {
		if m.is(name) {
			return m.val
		}
	}
	return nil
}

// IsNotification reports whether the request has no id and so gets no answer.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Legacy reports whether the request speaks a revision older than
// 2026-07-28 (that is, one negotiated through initialize).
func (r *Request) Legacy() bool { return r.Version != LatestVersion }

// Param returns the raw value of the named top-level member of Params, or
// nil when it is absent (or Params is not a JSON object).
func (r *Request) Param(name string) json.RawMessage {
	return json.RawMessage(r.param(name))
}

// StringParam returns the named top-level member of Params when it is a
// string; ok is false when it is absent or of another type.
func (r *Request) StringParam(name string) (s string, ok bool) {
	if name == "name" && r.parsed.current(r.Params) {
		return r.parsed.name, r.parsed.nameOK
	}
	return unquote(r.param(name))
}

// A Response is what a Dispatcher returns: a result or an error, plus the
// facts the audit record needs. Build one with Result or ErrorResponse.
type Response struct {
	// Result is the JSON result object. On 2026-07-28 the handler adds
	// resultType "complete" and _meta serverInfo when they are missing. It
	// is written as it is and may be shared: never modify it afterwards.
	Result json.RawMessage
	// Error is the JSON-RPC error, when the request failed.
	Error *Error
	// Status is the HTTP status; zero picks the revision's usual status
	// for the error code (200 for results).
	Status int
	// Header holds extra HTTP response headers.
	Header http.Header

	// Outcome, Tool and Summary go into the audit record. A zero Outcome is
	// derived: OutcomeError when Error is set, OutcomeOK otherwise.
	Outcome Outcome
	Tool    string
	Summary string

	err      error // a server-side problem to log, never sent to the client
	complete bool  // Result already carries the revision's envelope fields
}

// Result returns a Response whose result is v encoded as JSON (a
// json.RawMessage is used as is). v must encode to a JSON object.
func ResultResponse(v any) *Response {
	raw, err := json.Marshal(v)
	if err == nil && kindOf(raw) != kindObject {
		err = fmt.Errorf("result is %s, not an object", kindOf(raw))
	}
	if err != nil {
		resp := ErrorResponse(CodeInternalError, "Internal error")
		resp.err = fmt.Errorf("mcpmw.Result: %w", err)
		return resp
	}
	return &Response{Result: raw}
}

// ErrorResponse returns a Response carrying a JSON-RPC error. The HTTP status
// is chosen from the code and the request's revision unless Status is set.
func ErrorResponse(code int, message string) *Response {
	return &Response{Error: &Error{Code: code, Message: message}}
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

// status returns the HTTP status for an error code on a revision. The
// choices the specification leaves open are listed in the README.
func errorStatus(code int, legacy bool) int {
	switch code {
	case CodeParseError, CodeInvalidRequest, CodeHeaderMismatch, CodeMissingRequiredClientCapability, CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	case CodeMethodNotFound:
		if legacy {
			return http.StatusOK
		}
		return http.StatusNotFound
	case CodeInternalError:
		return http.StatusInternalServerError
	default:
		return http.StatusOK
	}
}

// chain wraps d in the middlewares, the first outermost, as chi does.
func chain(d Dispatcher, mws []func(Dispatcher) Dispatcher) Dispatcher {
	for i := len(mws) - 1; i >= 0; i-- {
		d = mws[i](d)
	}
	return d
}
