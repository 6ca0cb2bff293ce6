package mcpmw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// A tool sometimes needs one more thing before it acts: a confirmation, a
// missing field, a model's completion, the client's roots. On 2026-07-28
// it asks without a session: the answer to tools/call is an input_required
// result listing what it needs (inputRequests) and an opaque, sealed
// requestState; the client retries the call with the answers
// (inputResponses) and the state, and the tool runs again from the top,
// now finding its answers. Any instance holding the same KeyRing resumes
// any round.
//
// A tool asks with Ask, which returns the client's answer when this round
// carries one, and otherwise records the question and returns an error
// that ends the round:
//
//	ans, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Delete note 3?", schema))
//	if err != nil {
//		return mcpmw.ToolResult{}, err // the input_required round, or a real error
//	}
//
// Several questions asked before the error is returned go out in one
// round (join the errors with errors.Join). A tool carries its own small
// state from round to round with SetRoundState and RoundState: each retry
// brings only the answers of the round before.
//
// On the legacy revisions the same Ask sends the question as a request on
// the call's event stream and waits for the client's answer (legacyask.go):
// the tool runs once, and Ask returns the answer or an *AskError.

// An InputRequest is a question for the client: a JSON-RPC method it
// serves (elicitation/create, sampling/createMessage, roots/list) and its
// params. Build one with ElicitForm, ElicitURL, Sample or ListRoots.
type InputRequest struct {
	Method string
	Params json.RawMessage
	// capability is the client capability the request needs.
	capability ClientCapability
}

// ElicitForm asks the user to fill in a form: message says what and why,
// schema is the flat JSON Schema of the form's fields (an object of string,
// number, integer, boolean and enum properties). A schema that is not a
// JSON object makes Ask return an error.
func ElicitForm(message string, schema json.RawMessage) InputRequest {
	if jsonwire.KindOf(schema) != jsonwire.KindObject {
		return InputRequest{Method: "elicitation/create", capability: elicitationForm} // no params: Ask refuses it
	}
	p := append(make([]byte, 0, 48+len(message)+len(schema)), `{"mode":"form","message":`...)
	p = jsonwire.AppendString(p, message)
	p = append(p, `,"requestedSchema":`...)
	p = append(p, schema...)
	return InputRequest{Method: "elicitation/create", Params: append(p, '}'), capability: elicitationForm}
}

// ElicitURL asks the user to visit url (to sign in, pay, consent) and
// tell when done; id names the elicitation.
func ElicitURL(message, url, id string) InputRequest {
	p := append(make([]byte, 0, 64+len(message)+len(url)+len(id)), `{"mode":"url","message":`...)
	p = jsonwire.AppendString(p, message)
	p = append(p, `,"url":`...)
	p = jsonwire.AppendString(p, url)
	p = append(p, `,"elicitationId":`...)
	p = jsonwire.AppendString(p, id)
	return InputRequest{Method: "elicitation/create", Params: append(p, '}'), capability: elicitationURL}
}

// Sample asks the client's model for a completion of a user message, in at
// most maxTokens tokens.
func Sample(prompt string, maxTokens int) InputRequest {
	p := append(make([]byte, 0, 96+len(prompt)), `{"messages":[{"role":"user","content":{"type":"text","text":`...)
	p = jsonwire.AppendString(p, prompt)
	p = append(p, `}}],"maxTokens":`...)
	p = strconv.AppendInt(p, int64(maxTokens), 10)
	return InputRequest{Method: "sampling/createMessage", Params: append(p, '}'), capability: samplingCapability}
}

// ListRoots asks the client for its roots: the directories or files it
// lets the server work on.
func ListRoots() InputRequest {
	return InputRequest{Method: "roots/list", Params: json.RawMessage("{}"), capability: rootsCapability}
}

// ErrInputRequired ends a round: Ask returns it, wrapped, when the answer is
// not there yet, and the tool returns it (or an error joining several) for
// the handler to send the input_required result. Returned without an Ask
// in the round having asked anything (and on the legacy revisions, where
// Ask waits instead), it is the tool's mistake: the caller gets -32603
// "Internal error", and the log and the record say why.
var ErrInputRequired = errors.New("mcpmw: the client's input is required")

// A round is what one tools/call round knows of asking: the answers it
// carries, the tool's state from the round before, what it asked.
type round struct {
	revision  revision
	nextSet   bool                       // next was set; beside revision, so the two share a word (an exchange holds a round)
	keepUsed  bool                       // a task tool's call: Ask notes the answers it used (in used)
	clientCap json.RawMessage            // the request's clientCapabilities
	answers   map[string]json.RawMessage // inputResponses
	state     []byte                     // the tool's state, from the round before
	next      []byte                     // the tool's state for the next round
	asked     map[string]InputRequest
	used      []string     // the keys of answers Ask returned, when keepUsed: what a task keeps of them
	asker     *legacyAsker // on the legacy revisions: asks over the event stream
}

var roundKey = &ctxKey{"round"}

// roundFrom returns the round of the tools/call ctx serves: kept in the
// call's context by the handler (no allocation), or in a context of its
// own when the method runs without one.
func roundFrom(ctx context.Context) *round {
	if info := callFrom(ctx); info != nil && info.hasRound {
		return &info.round
	}
	r, _ := ctx.Value(roundKey).(*round)
	return r
}

// withRound returns ctx carrying r.
func withRound(ctx context.Context, r round) (context.Context, *round) {
	if info := callFrom(ctx); info != nil && !info.hasRound {
		info.round, info.hasRound = r, true
		return ctx, &info.round
	}
	p := new(round) // only here: r itself stays on the stack
	*p = r
	return context.WithValue(ctx, roundKey, p), p
}

// Ask returns the client's answer to req under key (the raw result of the
// request: an ElicitResult, a CreateMessageResult, a ListRootsResult) when
// this round carries one. Otherwise it records req for the round's
// input_required result and returns an error wrapping ErrInputRequired,
// which the tool returns. A client that lacks the capability req needs
// gets an *Error with -32021 instead (never asked for what it cannot
// give); an answer that is not a JSON object is an *Error with -32602.
//
// On the legacy revisions, whose clients declare no capabilities per call,
// Ask sends req on the call's event stream and blocks until the client's
// answer POST arrives (see Options.AskTimeout); it returns the result, or
// an *AskError when the client answers with an error, does not answer in
// time or cannot be asked. The tool runs once, so a key asked twice is
// asked once. Outside a tools/call, prompts/get or resources/read Ask
// returns an error. Call Ask, and SetRoundState, from the tool's own
// goroutine, one call at a time: a round is not safe for concurrent use.
func Ask(ctx context.Context, key string, req InputRequest) (json.RawMessage, error) {
	r := roundFrom(ctx)
	switch {
	case r == nil:
		return nil, errors.New("mcpmw: Ask outside a tools/call, prompts/get or resources/read")
	case key == "":
		return nil, errors.New("mcpmw: Ask needs a key")
	case jsonwire.KindOf(req.Params) != jsonwire.KindObject || !json.Valid(req.Params):
		// Checked here, before the params reach an answer or a stream that
		// copies them verbatim: one check for the builders and hand-made
		// InputRequests alike.
		return nil, fmt.Errorf("mcpmw: Ask %q: the params of %s are not one JSON object (check the schema given to ElicitForm)", key, req.Method)
	case r.revision.asksOnStream():
		return r.askOverStream(ctx, key, req)
	}
	if ans, ok := r.answers[key]; ok {
		if jsonwire.KindOf(ans) != jsonwire.KindObject {
			return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: inputResponses." + capEcho(key) + " must be an object, the client's result for " + req.Method}
		}
		if r.keepUsed && !slices.Contains(r.used, key) {
			r.used = append(r.used, key)
		}
		return ans, nil
	}
	if req.capability.Path != nil && !hasClientCapability(r.clientCap, req.capability) {
		data := requiredCapabilitiesData([]ClientCapability{req.capability})
		return nil, &Error{Code: CodeMissingRequiredClientCapability, Message: "This call needs the client capability " + req.capability.String(), Data: json.RawMessage(data)}
	}
	if r.asked == nil {
		r.asked = map[string]InputRequest{}
	}
	r.asked[key] = req
	return nil, errors.Join(ErrInputRequired, errors.New("mcpmw: asked "+strconv.Quote(key)))
}

// ClientSupports reports whether the client of the current call declared
// the capability (Capability("elicitation"), Capability("sampling",
// "tools")). On the legacy revisions, whose calls do not declare it, it
// reports false.
func ClientSupports(ctx context.Context, capability ClientCapability) bool {
	r := roundFrom(ctx)
	return r != nil && r.revision.perRequestCapabilities() && hasClientCapability(r.clientCap, capability)
}

// RoundState returns the state the tool set in the round before (nil in the
// first round).
func RoundState(ctx context.Context) []byte {
	if r := roundFrom(ctx); r != nil {
		return r.state
	}
	return nil
}

// SetRoundState sets the state the tool gets back, sealed, in the next
// round (keep it small: it travels to the client and back). The caller
// must have a CallerID: state is bound to who may resume it.
func SetRoundState(ctx context.Context, state []byte) {
	if r := roundFrom(ctx); r != nil {
		r.next, r.nextSet = append([]byte(nil), state...), true
	}
}

// asksClient reports whether err ends an input_required round: it wraps
// ErrInputRequired and no error the tool must answer with instead (an
// *Error, such as -32021 from one of several Asks, or an *ArgError).
func asksClient(err error) bool {
	var je *Error
	var ae *ArgError
	return errors.Is(err, ErrInputRequired) && !errors.As(err, &je) && !errors.As(err, &ae)
}

// rounds is what a method whose handlers may Ask (tools/call,
// prompts/get, resources/read) shares: the ring sealing round state, the
// legacy asker, and the serverInfo of results.
type rounds struct {
	ring  *KeyRing       // seals the state of input_required rounds
	asker *legacyAsker   // legacy calls asking their client over the stream
	ad    *advertisement // for serverInfo in results
}

// begin reads the round of req, acting on target, and returns the
// context its handler runs in, carrying the round; or the answer to a
// round that cannot go on (a requestState that does not open). The
// target is bound whole into the state, and capped wherever it is echoed:
// a resource URI is the client's to make long.
func (a *rounds) begin(ctx context.Context, req *Request, target string) (context.Context, *round, *Response) {
	r, resp := readRound(req, a.ring, target)
	if resp != nil {
		return ctx, nil, resp
	}
	if r.revision.asksOnStream() {
		r.asker = a.asker
	}
	ctx, rnd := withRound(ctx, r)
	return ctx, rnd, nil
}

// inputRequired answers a round whose handler, acting on t, returned err, when err ends
// the round by asking the client (asked); otherwise it returns false and
// err is the handler's to report. A handler that returns ErrInputRequired
// without having asked anything this round (on a legacy revision Ask never
// returns it) made a mistake: an input_required result with no
// inputRequests would leave the client nothing to answer, so it is an
// internal error, logged and recorded as the handler's.
func (a *rounds) inputRequired(req *Request, t *Target, rnd *round, err error) (resp *Response, asked bool) {
	if err == nil || !asksClient(err) {
		return nil, false
	}
	target := t.Name
	if len(rnd.asked) == 0 {
		kind := t.kind()
		return internalError(capEcho(target), fmt.Errorf("%s %q returned ErrInputRequired, but asked nothing this round (return Ask's error, not ErrInputRequired itself): %w", kind, capEcho(target), err),
			kind+" mistake: returned ErrInputRequired without calling Ask"), true
	}
	body, err := rnd.inputRequired(req, a.ring, target, a.ad.serverMeta)
	if err != nil {
		return internalError(capEcho(target), err, ""), true
	}
	return &Response{Result: body, Target: capEcho(target), Outcome: OutcomeInputRequired, encoded: true,
		Summary: "asked the client for " + strconv.Itoa(len(rnd.asked)) + " input" + plural(len(rnd.asked))}, true
}

// stateLifetime is how long a round's state stays valid.
const stateLifetime = 10 * time.Minute

// readRound reads a tools/call's inputResponses and requestState: the
// answers, and the tool's state, opened with the ring under the request's
// binding. A state that does not open is a -32602.
func readRound(req *Request, ring *KeyRing, target string) (round, *Response) {
	r := round{revision: req.revision(), clientCap: req.ClientCapabilities}
	if r.revision.asksOnStream() { // no inputResponses, no requestState
		return r, nil
	}
	if raw := req.Param("inputResponses"); jsonwire.KindOf(raw) == jsonwire.KindObject {
		var answers map[string]json.RawMessage // declared here: only a retry pays for it
		if err := json.Unmarshal(raw, &answers); err != nil {
			return r, ErrorResponse(CodeInvalidParams, "Invalid params: inputResponses must be an object")
		}
		r.answers = answers
	}
	switch raw := req.Param("requestState"); jsonwire.KindOf(raw) {
	case jsonwire.KindNone, jsonwire.KindNull:
	case jsonwire.KindString:
		s, _ := jsonwire.Unquote(raw)
		b := roundBinding(req, target)
		state, err := ring.open(&b, s, time.Now())
		if err != nil {
			resp := ErrorResponse(CodeInvalidParams, "Invalid params: requestState integrity check failed; call again without it")
			resp.Target, resp.Summary = capEcho(target), capEcho(err.Error())
			return r, resp
		}
		r.state = state
	default:
		return r, ErrorResponse(CodeInvalidParams, "Invalid params: requestState must be the string this server sent")
	}
	return r, nil
}

// roundBinding is what a round's state is valid for: the caller, the
// endpoint, the revision, the method, the target (tool, prompt or resource
// URI), and its arguments (compacted, so spacing does not matter).
func roundBinding(req *Request, target string) stateBinding {
	args := req.param("arguments")
	var buf bytes.Buffer
	if json.Compact(&buf, args) == nil {
		args = buf.Bytes()
	}
	return stateBinding{callerID: callerID(req.Caller), endpoint: req.endpoint, revision: req.Version,
		method: req.Method, target: target, args: argsDigest(args)}
}

// inputRequired encodes the input_required result of a round: what was
// asked, by key, and the tool's next state, sealed, when it set one.
func (r *round) inputRequired(req *Request, ring *KeyRing, target string, serverMeta []byte) ([]byte, error) {
	dst := appendByKey([]byte(`{"resultType":"input_required","inputRequests":`), r.asked, appendInputRequest)
	if r.nextSet {
		b := roundBinding(req, target)
		sealed, err := ring.seal(&b, r.next, time.Now(), stateLifetime)
		if err != nil {
			return nil, err
		}
		dst = append(dst, `,"requestState":`...)
		dst = jsonwire.AppendString(dst, sealed)
	}
	dst = append(dst, ',')
	dst = append(dst, serverMeta...)
	return append(dst, '}'), nil
}

// appendInputRequest appends q as an inputRequests entry.
func appendInputRequest(dst []byte, q InputRequest) []byte {
	dst = append(dst, `{"method":`...)
	dst = jsonwire.AppendString(dst, q.Method)
	dst = append(dst, `,"params":`...)
	dst = append(dst, q.Params...)
	return append(dst, '}')
}

// appendByKey appends m as a JSON object, its members in key order (so
// that an answer is the same bytes each time), each value appended by
// value: a round's inputRequests, a task's.
func appendByKey[V any](dst []byte, m map[string]V, value func([]byte, V) []byte) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonwire.AppendString(dst, k)
		dst = value(append(dst, ':'), m[k])
	}
	return append(dst, '}')
}
