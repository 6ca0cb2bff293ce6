package mcpmw

import (
	"context"
	"errors"
	"strconv"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// completionMethods serves completion/complete for the prompts and
// resource templates of a Registry that have Completers.
type completionMethods struct {
	reg *Registry
	ad  *advertisement
}

func (m *completionMethods) methods() []Method {
	return []Method{{Name: "completion/complete", Capability: "completions", Target: m.target, Handle: m.complete}}
}

// target finds the prompt or template a completion/complete completes
// (params.ref), so that the caller's permission for it is checked before
// anything else.
func (m *completionMethods) target(req *Request) (*Target, *Response) {
	raw := req.Param("ref")
	var ms [4]jsonwire.Member
	members, ok := jsonwire.ObjectMembers(raw, ms[:0]) // not ok: absent, or not an object
	if !ok {
		return nil, ErrorResponse(CodeInvalidParams, `Invalid params: completion/complete needs params.ref, {"type":"ref/prompt","name":...} or {"type":"ref/resource","uri":...}`)
	}
	typ, _ := jsonwire.Unquote(jsonwire.Lookup(members, "type"))
	var t *Target
	var name, field string
	switch typ {
	case "ref/prompt":
		field = "name"
		if name, ok = jsonwire.Unquote(jsonwire.Lookup(members, field)); ok {
			t = m.reg.promptByName(name)
		}
	case "ref/resource":
		field = "uri"
		if name, ok = jsonwire.Unquote(jsonwire.Lookup(members, field)); ok {
			t = m.reg.templateByURI(name)
		}
	default:
		return nil, ErrorResponse(CodeInvalidParams, `Invalid params: params.ref.type must be "ref/prompt" or "ref/resource", not `+quoteEcho(typ))
	}
	switch {
	case !ok:
		return nil, ErrorResponse(CodeInvalidParams, "Invalid params: params.ref."+field+" must be a string")
	case t == nil && typ == "ref/prompt":
		return nil, UnknownTarget("prompt", name)
	case t == nil:
		return nil, UnknownTarget("resource template", name)
	}
	return t, nil
}

// completers are the Completers of the prompt or template t names.
func completers(t *Target) map[string]Completer {
	switch e := t.Found.(type) {
	case *promptEntry:
		return e.Complete
	case *templateEntry:
		return e.Complete
	}
	return nil
}

// complete answers completion/complete: the Completer of the named
// argument, its values capped at 100. An argument without a Completer has
// no suggestions (an empty list, not an error: the client asked politely).
func (m *completionMethods) complete(ctx context.Context, req *Request) *Response {
	t, resp := AdmittedTarget(ctx, req, m.target)
	if resp != nil {
		return resp
	}
	creq, resp := completionRequest(req)
	if resp != nil {
		resp.Target = t.Name
		return resp
	}
	var c Completion
	if fn := completers(t)[creq.Argument]; fn != nil {
		var err error
		if c, err = fn(ctx, req.Caller, creq); err != nil {
			var je *Error
			if errors.As(err, &je) {
				return &Response{Error: je, Target: t.Name, Summary: capEcho(je.Message)}
			}
			return failed(t.Name, "completer", err)
		}
	}
	body := appendCompletion(nil, &c, req.revision(), m.ad.serverMeta)
	sent := min(len(c.Values), maxCompletionValues)
	return &Response{Result: body, Target: t.Name, encoded: true,
		Summary: "completed " + capEcho(creq.Argument) + ": " + strconv.Itoa(sent) + " value" + plural(sent)}
}

// completionRequest reads params.argument and params.context.arguments.
func completionRequest(req *Request) (CompletionRequest, *Response) {
	var ms [4]jsonwire.Member
	raw := req.Param("argument")
	members, ok := jsonwire.ObjectMembers(raw, ms[:0]) // not ok: absent, or not an object
	if !ok {
		return CompletionRequest{}, ErrorResponse(CodeInvalidParams, `Invalid params: completion/complete needs params.argument, {"name":...,"value":...}`)
	}
	var c CompletionRequest
	if c.Argument, ok = jsonwire.Unquote(jsonwire.Lookup(members, "name")); !ok {
		return c, ErrorResponse(CodeInvalidParams, "Invalid params: params.argument.name must be a string")
	}
	if c.Value, ok = jsonwire.Unquote(jsonwire.Lookup(members, "value")); !ok {
		return c, ErrorResponse(CodeInvalidParams, "Invalid params: params.argument.value must be a string")
	}
	switch ctxRaw := req.Param("context"); jsonwire.KindOf(ctxRaw) {
	case jsonwire.KindNone, jsonwire.KindNull:
		return c, nil
	case jsonwire.KindObject:
		cm, _ := jsonwire.ObjectMembers(ctxRaw, ms[:0])
		args := jsonwire.Lookup(cm, "arguments")
		switch jsonwire.KindOf(args) {
		case jsonwire.KindNone, jsonwire.KindNull:
			return c, nil
		case jsonwire.KindObject:
		default:
			return c, ErrorResponse(CodeInvalidParams, "Invalid params: params.context.arguments must be an object of strings")
		}
		am, _ := jsonwire.ObjectMembers(args, nil)
		c.Context = make(map[string]string, len(am))
		for _, a := range am {
			k := a.Name()
			v, ok := jsonwire.Unquote(a.Value)
			if !ok {
				return c, ErrorResponse(CodeInvalidParams, "Invalid params: params.context.arguments."+capEcho(k)+" must be a string")
			}
			c.Context[k] = v
		}
		return c, nil
	default:
		return c, ErrorResponse(CodeInvalidParams, "Invalid params: params.context must be an object")
	}
}

// appendCompletion encodes a CompleteResult: at most 100 values, total
// when known (never less than what is sent), hasMore when values were cut
// or the Completer said so. A nil dst is one sized to fit.
func appendCompletion(dst []byte, c *Completion, rev revision, serverMeta []byte) []byte {
	values, more := c.Values, c.HasMore
	if len(values) > maxCompletionValues {
		values, more = values[:maxCompletionValues], true
	}
	if dst == nil {
		size := 96 + len(serverMeta)
		for _, v := range values {
			size += len(v) + 3
		}
		dst = make([]byte, 0, size)
	}
	dst = append(openResult(dst, rev), `"completion":{"values":[`...)
	for i, v := range values {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonwire.AppendString(dst, v)
	}
	dst = append(dst, ']')
	if c.Total > 0 {
		dst = append(dst, `,"total":`...)
		dst = strconv.AppendInt(dst, int64(max(c.Total, len(values))), 10)
	}
	if more {
		dst = append(dst, `,"hasMore":true`...)
	}
	return closeResult(append(dst, '}'), rev, serverMeta)
}
