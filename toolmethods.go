package mcpmw

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// toolMethods serves tools/list and tools/call from a Registry.
type toolMethods struct {
	rounds   *rounds // rounds of asking the client (Ask)
	reg      *Registry
	timeout  time.Duration // Options.ToolTimeout
	pageSize int
	ttl      time.Duration
	ad       *advertisement // for serverInfo in results
	pages    listPages[*entry]
	tasks    *taskRunner // runs the calls that become tasks
}

// methods returns the tools capability's methods.
func (t *toolMethods) methods() []Method {
	return []Method{
		{Name: "tools/list", Capability: "tools", Handle: t.list, quick: true},
		{Name: "tools/call", Capability: "tools", NameParam: "name", Streams: true, Target: t.target, Handle: t.call, arguments: t.reg.toolRedaction},
	}
}

// list answers tools/list with the tools the caller may use, in
// registration order, one page at a time.
func (t *toolMethods) list(_ context.Context, req *Request) *Response {
	f := pageFormat{size: t.pageSize, ttlMs: t.ttl.Milliseconds(), serverMeta: t.ad.serverMeta}
	return listCatalogue(req, toolsList, f, &t.reg.table().catalogue, &t.pages)
}

// target finds the tool a tools/call names, once its name and arguments
// are read.
func (t *toolMethods) target(req *Request) (*Target, *Response) {
	name, resp := nameAndArguments(req, "tools/call", "tool", "an object")
	if resp != nil {
		return nil, resp
	}
	e := t.reg.table().byKey[name]
	if e == nil || (e.ListedOnlyFor != nil && !req.revision().perRequestCapabilities()) {
		return nil, UnknownTarget("tool", name) // a revision that never lists it cannot call it
	}
	return &e.target, nil
}

// call answers tools/call: run the tool, encode its result. The handler
// checked the caller's permission for the tool before the middleware ran;
// when a middleware has since rewritten the request, its tool is checked
// here (AdmittedTarget: the list was a courtesy; the call check is the gate).
func (t *toolMethods) call(ctx context.Context, req *Request) *Response {
	target, resp := AdmittedTarget(ctx, req, t.target)
	if resp != nil {
		return resp
	}
	e := target.Found.(*entry)
	ctx, rnd, resp := t.rounds.begin(ctx, req, e.Name)
	if resp != nil {
		return resp
	}
	if e.Prepare != nil {
		rnd.keepUsed = e.Task != TaskNever // the answers Prepare reads are the task's first
		if resp := t.prepare(ctx, req, target, rnd); resp != nil {
			return resp
		}
	}
	if resp := t.tasks.start(ctx, req, e, rnd); resp != nil {
		return resp // the call is a task now
	}
	res, err := runTool(ctx, e, req.Caller, req.Param("arguments"), t.timeout)
	if resp := t.interrupted(ctx, req, target, rnd, err); resp != nil {
		return resp
	}
	return toolAnswer(req.revision(), e, res, err, t.ad.serverMeta)
}

// interrupted is the answer to a call whose step (Prepare, then Call)
// ended with err without finishing it: the client went away (a tool the
// client cancelled answers isError instead: runTool), or the step asked
// the client. It is nil otherwise.
func (t *toolMethods) interrupted(ctx context.Context, req *Request, target *Target, rnd *round, err error) *Response {
	if ctx.Err() != nil && context.Cause(ctx) != errCancelledByClient {
		return clientGone(ctx, target.Name)
	}
	if resp, asked := t.rounds.inputRequired(req, target, rnd, err); asked {
		return resp
	}
	return nil
}

// prepare runs the tool's Prepare in the call: nil when it returns nil,
// otherwise the call's answer (its questions, or its error as Call's).
func (t *toolMethods) prepare(ctx context.Context, req *Request, target *Target, rnd *round) *Response {
	e := target.Found.(*entry)
	err := e.Prepare(ctx, req.Caller, NewArgs(req.Param("arguments")))
	if resp := t.interrupted(ctx, req, target, rnd, err); resp != nil {
		return resp
	}
	if err != nil {
		return toolError(req.revision(), t.ad.serverMeta, e.Name, e.redact != nil, err)
	}
	return nil
}

// toolAnswer is the answer to a call of e whose tool returned res and
// err (asking nothing of the client): the result encoded for revision
// v, or err as toolError says.
func toolAnswer(v revision, e *entry, res ToolResult, err error, serverMeta []byte) *Response {
	if err != nil {
		return toolError(v, serverMeta, e.Name, e.redact != nil, err)
	}
	body, err := encodeToolResult(&res, v, serverMeta)
	if err != nil {
		return internalError(e.Name, err, "tool failed: its result cannot be sent: "+capEcho(err.Error()))
	}
	resp := &Response{Result: body, Target: e.Name, Summary: "ok", encoded: true}
	if res.IsError {
		resp.Outcome = OutcomeError
		resp.Summary = "tool reported an error: " + capEcho(res.AllText())
	}
	return resp
}

// errToolTimeout is the cause of a tool's context when its time is up.
var errToolTimeout = errors.New("mcpmw: tool timeout")

// runTool calls the tool of e with its deadline (its own Timeout, else
// fallback). A tool the client cancelled (notifications/cancelled,
// legacy; tasks/cancel) or that ran out of time answers an isError
// result saying so.
func runTool(ctx context.Context, e *entry, c Caller, args json.RawMessage, fallback time.Duration) (ToolResult, error) {
	limit := e.Timeout
	if limit == 0 {
		limit = fallback
	}
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, limit, errToolTimeout)
		defer cancel()
	}
	res, err := e.Call(ctx, c, NewArgs(args))
	switch context.Cause(ctx) {
	case errToolTimeout:
		return ErrorResult("The tool %q did not finish within %v and was stopped. Try again with a smaller request.", e.Name, limit), nil
	case errCancelledByClient:
		return ErrorResult("The call was cancelled by the client."), nil
	}
	return res, err
}

// toolError turns an error returned by a tool into its Response. For a
// tool with sensitive arguments (redact), an argument error quoting a
// value is answered and recorded with the value redacted.
func toolError(v revision, serverMeta []byte, tool string, redact bool, err error) *Response {
	var ae *ArgError
	var je *Error
	var ke *AskError
	switch {
	case errors.As(err, &ae):
		res := ErrorResult("Invalid arguments: %s. Check the tool's input schema and call it again.", ae.detail(redact))
		body, _ := encodeToolResult(&res, v, serverMeta) // text only: cannot fail
		return &Response{Result: body, Target: tool, Outcome: OutcomeError, Summary: capEcho(ae.text(redact)), encoded: true}
	case errors.As(err, &ke):
		res := ErrorResult("%s", ke.Error())             // the client's words in it are capped
		body, _ := encodeToolResult(&res, v, serverMeta) // text only: cannot fail
		return &Response{Result: body, Target: tool, Outcome: OutcomeError, Summary: capEcho(ke.Error()), encoded: true}
	case errors.As(err, &je):
		return &Response{Error: je, Target: tool, Summary: capEcho(je.Message)}
	default:
		return failed(tool, "tool", err)
	}
}
