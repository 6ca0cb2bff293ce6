package mcpmw

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// On the legacy revisions (2025-11-25, 2025-06-18) a tool asks its client
// the old way: the same Ask sends elicitation/create, sampling/createMessage
// or roots/list as a JSON-RPC request on the call's event stream, and the
// client POSTs its JSON-RPC response to the endpoint as a request of its
// own. Without sessions the two POSTs are joined by a request id the
// server chose at random and bound to the caller: in this process, or,
// with Options.Relay, on the instance the id names, wherever the answer
// lands (relay.go); the 2026-07-28 rounds need only a shared KeyRing.

// defaultAskTimeout is how long Ask waits for a legacy client's answer when
// Options.AskTimeout is zero: long enough for a person to read a short form.
const defaultAskTimeout = 2 * time.Minute

// An AskError says why a legacy client gave no answer to what Ask sent it:
// it answered with a JSON-RPC error (Code and Message, the client's own
// words, capped), or it could not be asked or did not answer in time (Code
// 0). A tool that returns it gets an isError result saying so, which the
// model can read; a tool that can go on without the answer checks for it
// with errors.As.
type AskError struct {
	Method  string // what was asked: elicitation/create, sampling/createMessage, roots/list
	Code    int    // the client's JSON-RPC error code; 0 when it sent no error
	Message string
}

func (e *AskError) Error() string {
	if e.Code != 0 {
		return "the client refused " + e.Method + " (error " + strconv.Itoa(e.Code) + "): " + e.Message
	}
	return "the client gave no answer to " + e.Method + ": " + e.Message
}

// legacyAsker is what a legacy tools/call round needs to ask: where
// answers arrive and how long to wait.
type legacyAsker struct {
	pending answerWaiters
	timeout time.Duration
}

// askOverStream sends req to the client on the call's event stream and
// waits for its answer POST, the call's end, or the timeout. The answer is
// kept under key: a second Ask with the same key in this call returns it
// without asking again.
func (r *round) askOverStream(ctx context.Context, key string, req InputRequest) (json.RawMessage, error) {
	if ans, ok := r.answers[key]; ok {
		return ans, nil
	}
	info := callFrom(ctx)
	switch {
	case info == nil: // a middleware dispatched with a context of its own
		return nil, &AskError{Method: req.Method, Message: "the tools/call's context was replaced, so the server cannot reach its event stream"}
	case info.stream == nil:
		return nil, &AskError{Method: req.Method, Message: "the call did not accept an event stream (Accept: text/event-stream), which the server needs to ask on " + r.revision.String()}
	case callerID(info.caller) == "":
		return nil, &AskError{Method: req.Method, Message: "the caller has no CallerID, which the server needs to know who may answer"}
	}
	params, err := legacyParams(req, r.revision)
	if err != nil {
		return nil, err
	}
	id, answer, remove := r.asker.pending.add(callerID(info.caller))
	defer remove()
	msg := append(make([]byte, 0, 64+len(id)+len(req.Method)+len(params)), `{"jsonrpc":"2.0","id":"`...)
	msg = append(msg, id...)
	msg = append(msg, `","method":`...)
	msg = jsonwire.AppendString(msg, req.Method)
	msg = append(msg, `,"params":`...)
	msg = append(msg, params...)
	msg = append(msg, '}')
	if err := info.stream.send(ctx, msg); err != nil {
		return nil, err
	}
	timer := time.NewTimer(r.asker.timeout)
	defer timer.Stop()
	select {
	case a := <-answer:
		if a.err != nil {
			e := *a.err
			e.Method = req.Method
			return nil, &e
		}
		if r.answers == nil {
			r.answers = map[string]json.RawMessage{}
		}
		r.answers[key] = a.result
		return a.result, nil
	case <-timer.C:
		return nil, &AskError{Method: req.Method, Message: "no answer within " + r.asker.timeout.String()}
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// legacyParams returns req's params as revision v has them: 2025-06-18
// knows form elicitation only, without a mode.
func legacyParams(req InputRequest, v revision) (json.RawMessage, error) {
	if v != rev20250618 || req.Method != "elicitation/create" {
		return req.Params, nil
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, fmt.Errorf("mcpmw: elicitation params: %w", err)
	}
	if mode, ok := p["mode"]; ok {
		if s, _ := jsonwire.Unquote(mode); s != "form" {
			return nil, &AskError{Method: req.Method, Message: "2025-06-18 clients know form elicitation only, not " + capEcho(string(mode))}
		}
		delete(p, "mode")
	}
	return json.Marshal(p)
}
