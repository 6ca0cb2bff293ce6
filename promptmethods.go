package mcpmw

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// promptMethods serves prompts/list and prompts/get from a Registry.
type promptMethods struct {
	rounds   *rounds // rounds of asking the client (Ask)
	reg      *Registry
	pageSize int
	ttl      time.Duration
	ad       *advertisement // for serverInfo in results
	pages    listPages[*promptEntry]
}

// methods returns the prompts capability's methods. prompts/get may
// stream, so that a legacy prompt can Ask its client over the stream.
func (p *promptMethods) methods() []Method {
	return []Method{
		{Name: "prompts/list", Capability: "prompts", Handle: p.list, quick: true},
		{Name: "prompts/get", Capability: "prompts", NameParam: "name", Streams: true, Target: p.target, Handle: p.get},
	}
}

// list answers prompts/list with the prompts the caller may use, in
// registration order, one page at a time, like tools/list.
func (p *promptMethods) list(_ context.Context, req *Request) *Response {
	f := pageFormat{size: p.pageSize, ttlMs: p.ttl.Milliseconds(), serverMeta: p.ad.serverMeta}
	return listCatalogue(req, promptsList, f, &p.reg.promptTable().catalogue, &p.pages)
}

// target finds the prompt a prompts/get names, once its name is read
// and its arguments found to be an object. Nothing here depends on the
// prompt: the arguments are checked against it only once the caller is
// admitted.
func (p *promptMethods) target(req *Request) (*Target, *Response) {
	name, resp := nameAndArguments(req, "prompts/get", "prompt", "an object of strings")
	if resp != nil {
		return nil, resp
	}
	e := p.reg.promptTable().byKey[name]
	if e == nil {
		return nil, UnknownTarget("prompt", name)
	}
	return &e.target, nil
}

// get answers prompts/get: read the arguments, run Get, encode the
// messages. The handler checked the caller's permission for the prompt
// before the middleware ran; when a middleware has since rewritten the
// request, its prompt is checked here (AdmittedTarget).
func (p *promptMethods) get(ctx context.Context, req *Request) *Response {
	target, resp := AdmittedTarget(ctx, req, p.target)
	if resp != nil {
		return resp
	}
	e := target.Found.(*promptEntry)
	args, resp := promptArgs(e, req.Param("arguments"))
	if resp != nil {
		return resp
	}
	ctx, rnd, resp := p.rounds.begin(ctx, req, e.Name)
	if resp != nil {
		return resp
	}
	res, err := e.Get(ctx, req.Caller, args)
	if ctx.Err() != nil {
		return clientGone(ctx, e.Name)
	}
	if resp, asked := p.rounds.inputRequired(req, target, rnd, err); asked {
		return resp
	}
	if err != nil {
		return promptError(e.Name, e.sensitive, err)
	}
	body, err := encodePromptResult(&res, req.revision(), p.ad.serverMeta)
	if err != nil {
		return internalError(e.Name, fmt.Errorf("prompt %q: %w", e.Name, err), "prompt failed: "+capEcho(err.Error()))
	}
	return &Response{Result: body, Target: e.Name, encoded: true,
		Summary: "got prompt " + e.Name + ": " + strconv.Itoa(len(res.Messages)) + " message" + plural(len(res.Messages))}
}

// promptArgs reads the arguments of a prompts/get for e: an object whose
// members are strings, each name once, with every Required argument of e
// present. Names e does not declare are passed on: the specification does
// not forbid them, and a prompt may read them or not.
//
// The handler refused duplicate keys when it parsed the body; a name seen
// twice here is one a middleware put in, refused all the same, so that the
// prompt and anything that read the arguments before it see one value.
func promptArgs(e *promptEntry, raw []byte) (map[string]string, *Response) {
	invalid := func(msg string) (map[string]string, *Response) {
		resp := ErrorResponse(CodeInvalidParams, "Invalid params: prompt "+strconv.Quote(e.Name)+" "+msg)
		resp.Target = e.Name
		return nil, resp
	}
	args := map[string]string{}
	if k := jsonwire.KindOf(raw); k == jsonwire.KindObject {
		it, _ := jsonwire.IterMembers(raw)
		for m, more := it.Next(); more; m, more = it.Next() {
			name := m.Name()
			if _, dup := args[name]; dup {
				return invalid("got argument " + strconv.Quote(capEcho(name)) + " more than once")
			}
			v, ok := jsonwire.Unquote(m.Value)
			if !ok {
				return invalid("argument " + strconv.Quote(capEcho(name)) + " must be a string, not " + jsonwire.KindOf(m.Value).String())
			}
			args[name] = v
		}
	}
	for _, a := range e.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return invalid("needs argument " + strconv.Quote(a.Name))
		}
	}
	return args, nil
}

// promptError turns an error returned by a prompt's Get into its Response.
// For a prompt with a sensitive argument (redact), an argument error
// quoting a value is answered and recorded with the value redacted.
func promptError(prompt string, redact bool, err error) *Response {
	var ae *ArgError
	var je *Error
	var ke *AskError
	switch {
	case errors.As(err, &ae):
		resp := ErrorResponse(CodeInvalidParams, "Invalid params: "+ae.detail(redact))
		resp.Target, resp.Summary = prompt, capEcho(ae.text(redact))
		return resp
	case errors.As(err, &je):
		return &Response{Error: je, Target: prompt, Summary: capEcho(je.Message)}
	case errors.As(err, &ke):
		// A legacy client that would not answer: its own doing, not the
		// server's, so it is told why (its words capped) and nothing is logged.
		resp := ErrorResponse(CodeInternalError, "The prompt could not get the client's input: "+ke.Error())
		resp.Target, resp.Summary = prompt, capEcho(ke.Error())
		return resp
	default:
		return failed(prompt, "prompt", err)
	}
}

// encodePromptResult encodes r as a GetPromptResult for revision v, with
// the 2026-07-28 envelope fields (resultType, serverInfo; a prompt is not
// cacheable, so no ttlMs or cacheScope) when v is the latest revision. A
// result without messages, or with a role other than "user" and
// "assistant", is the prompt's mistake: an error.
func encodePromptResult(r *PromptResult, v revision, serverMeta []byte) ([]byte, error) {
	if len(r.Messages) == 0 {
		return nil, errors.New("no messages: Get must return at least one")
	}
	size := 64 + len(r.Description) + len(serverMeta)
	for i := range r.Messages {
		c := &r.Messages[i].Content
		size += 80 + len(c.Text) + len(c.URI) + len(c.Data)*4/3
	}
	dst := openResult(make([]byte, 0, size), v)
	if r.Description != "" {
		dst = append(dst, `"description":`...)
		dst = jsonwire.AppendString(dst, r.Description)
		dst = append(dst, ',')
	}
	dst = append(dst, `"messages":[`...)
	for i := range r.Messages {
		m := &r.Messages[i]
		if m.Role != "user" && m.Role != "assistant" {
			return nil, fmt.Errorf("message %d has role %q, not \"user\" or \"assistant\"", i, m.Role)
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"role":"`...)
		dst = append(dst, m.Role...)
		dst = append(dst, `","content":`...)
		var err error
		if dst, err = appendContent(dst, &m.Content); err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		dst = append(dst, '}')
	}
	return closeResult(append(dst, ']'), v, serverMeta), nil
}
