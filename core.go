package mcpmw

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// core is the innermost Dispatcher: the protocol methods and the tools.
type core struct {
	p           *protocol
	reg         *Registry
	pageSize    int
	toolTimeout time.Duration
	inflight    inflight // legacy calls a notifications/cancelled may name
}

var emptyObject = []byte("{}")

func (c *core) Dispatch(ctx context.Context, req *Request) *Response {
	if req.IsNotification() {
		if req.Method == "notifications/cancelled" && req.Legacy() {
			return c.inflight.cancel(req)
		}
		return accepted(capEcho(req.Method))
	}
	switch req.Method {
	case "server/discover":
		return &Response{Result: c.p.discover, Summary: "discover", complete: true}
	case "initialize":
		return c.p.handleInitialize(req)
	case "ping", "logging/setLevel":
		// A stateless server has nothing to remember a log level in; the
		// legacy revisions only expect an empty result.
		return &Response{Result: emptyObject, complete: true}
	case "tools/list":
		return c.listTools(req)
	case "tools/call":
		return c.callTool(ctx, req)
	}
	return methodNotFound(req, "")
}

// listTools answers tools/list with the tools the caller may use, in
// registration order, one page at a time.
func (c *core) listTools(req *Request) *Response {
	off := 0
	switch raw := req.Param("cursor"); kindOf(raw) {
	case kindNone, kindNull:
	case kindString:
		s, _ := unquote(raw)
		var ok bool
		if off, ok = decodeCursor(s); !ok {
			return ErrorResponse(CodeInvalidParams, "Invalid params: cursor "+quoteEcho(s)+" is not one this server issued; list again without a cursor")
		}
	default:
		return ErrorResponse(CodeInvalidParams, "Invalid params: cursor must be a string")
	}
	tab := c.reg.table()
	rev := revIndex(req.Version)
	var keyBuf [64]byte
	key := pageKey(keyBuf[:0], tab, req.Caller, rev, off)
	p := tab.pages.get(key)
	if p == nil {
		p = c.buildPage(tab, key, rev, off, req.Legacy())
		if p.err != nil {
			return p.err
		}
		tab.pages.put(key, p)
	}
	return &Response{Result: p.body, Summary: p.summary, complete: true}
}

const cursorPrefix = "tools:"

func encodeCursor(off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(off)))
}

func decodeCursor(s string) (int, bool) {
	if s == "" {
		return 0, true
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return 0, false
	}
	n, err := strconv.Atoi(string(b[len(cursorPrefix):]))
	if err != nil || n < 0 || encodeCursor(n) != s { // only the exact form this server issues
		return 0, false
	}
	return n, true
}

// callTool answers tools/call: find the tool, check the caller may use it
// (the list was a courtesy; this is the gate), run it, encode its result.
func (c *core) callTool(ctx context.Context, req *Request) *Response {
	name, ok := req.StringParam("name")
	if !ok {
		return ErrorResponse(CodeInvalidParams, "Invalid params: tools/call needs params.name, the tool's name as a string")
	}
	args := req.Param("arguments")
	switch kindOf(args) {
	case kindNone, kindNull, kindObject:
	default:
		resp := ErrorResponse(CodeInvalidParams, "Invalid params: params.arguments must be an object, not "+kindOf(args).String())
		resp.Tool = capEcho(name)
		return resp
	}
	e := c.reg.table().byName[name]
	if e == nil {
		resp := ErrorResponse(CodeInvalidParams, "Unknown tool: "+capEcho(name))
		resp.Tool = capEcho(name)
		return resp
	}
	// The gate comes before anything that depends on the tool: a caller
	// that may not use it learns nothing about it (its arguments, its
	// headers, what it needs of the client) beyond the 403.
	if !req.Caller.Can(e.Permission) {
		return denied(e)
	}
	if len(e.headers) > 0 {
		if resp := checkParamHeaders(e.headers, args, req.Header, !req.Legacy()); resp != nil {
			resp.Tool = e.Name
			return resp
		}
	}
	if e.requiredData != nil && !req.Legacy() {
		for _, capability := range e.RequiredClientCapabilities {
			if !hasClientCapability(req.ClientCapabilities, capability) {
				return &Response{Tool: e.Name, Summary: "client lacks capability " + capability, Error: &Error{
					Code:    CodeMissingRequiredClientCapability,
					Message: "Tool " + strconv.Quote(e.Name) + " requires the client capability " + capability,
					Data:    json.RawMessage(e.requiredData),
				}}
			}
		}
	}
	res, err := c.run(ctx, req, e, args)
	if ctx.Err() != nil { // the client left: nobody reads the answer, but the record says why
		resp := ErrorResponse(CodeInternalError, "Request cancelled")
		resp.Tool, resp.Summary = e.Name, "client went away: "+context.Cause(ctx).Error()
		return resp
	}
	if err != nil {
		return c.toolError(req, e.Name, err)
	}
	body, err := encodeToolResult(&res, req.Version, c.p.serverMeta)
	if err != nil {
		resp := ErrorResponse(CodeInternalError, "Internal error")
		resp.Tool, resp.err = e.Name, err
		return resp
	}
	resp := &Response{Result: body, Tool: e.Name, complete: true, Summary: "ok"}
	if res.IsError {
		resp.Outcome = OutcomeError
		resp.Summary = "tool reported an error: " + capEcho(res.AllText())
	}
	return resp
}

// errToolTimeout is the cause of a tool's context when its time is up.
var errToolTimeout = errors.New("mcpmw: tool timeout")

// run calls the tool with its deadline and, on the legacy revisions, where
// a call can be cancelled by a notification, registered as in flight.
func (c *core) run(ctx context.Context, req *Request, e *entry, args []byte) (ToolResult, error) {
	limit := e.Timeout
	if limit == 0 {
		limit = c.toolTimeout
	}
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, limit, errToolTimeout)
		defer cancel()
	}
	if req.Legacy() {
		var done func()
		ctx, done = c.inflight.add(ctx, req)
		defer done()
	}
	res, err := e.Call(ctx, req.Caller, NewArgs(args))
	switch context.Cause(ctx) {
	case errToolTimeout:
		return ErrorResult("The tool %q did not finish within %v and was stopped. Try again with a smaller request.", e.Name, limit), nil
	case errCancelledByClient:
		return ErrorResult("The call was cancelled by the client."), nil
	}
	return res, err
}

// denied is the 403 answer to a call the caller's capabilities do not allow.
func denied(e *entry) *Response {
	challenge := `Bearer error="insufficient_scope"`
	if validScope(string(e.Permission)) {
		challenge += `, scope="` + string(e.Permission) + `"`
	}
	return &Response{
		Status:  http.StatusForbidden,
		Error:   &Error{Code: CodeInvalidParams, Message: "Forbidden: the caller may not use tool " + strconv.Quote(e.Name)},
		Header:  http.Header{"Www-Authenticate": {challenge}},
		Outcome: OutcomeDenied,
		Tool:    e.Name,
		Summary: "caller lacks permission " + capEcho(string(e.Permission)),
	}
}

// validScope reports whether s can go in a scope="..." parameter (RFC 6750).
func validScope(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return s != ""
}

// toolError turns an error returned by a tool into its Response.
func (c *core) toolError(req *Request, tool string, err error) *Response {
	var ae *ArgError
	var je *Error
	switch {
	case errors.As(err, &ae):
		res := ErrorResult("Invalid arguments: %s. Check the tool's input schema and call it again.", ae.Error())
		body, _ := encodeToolResult(&res, req.Version, c.p.serverMeta) // text only: cannot fail
		return &Response{Result: body, complete: true, Tool: tool, Outcome: OutcomeError, Summary: capEcho(ae.Error())}
	case errors.As(err, &je):
		return &Response{Error: je, Tool: tool, Summary: capEcho(je.Message)}
	default:
		resp := ErrorResponse(CodeInternalError, "Internal error")
		resp.Tool, resp.err, resp.Summary = tool, err, "tool failed: "+capEcho(err.Error())
		return resp
	}
}
