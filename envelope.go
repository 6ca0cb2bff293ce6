package mcpmw

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// maxJSONDepth is how deeply a request body may nest objects and arrays,
// counting the body itself as level 1 (so a tool's arguments may use 125
// levels). A deeper body is refused with 400 and -32600 before anything
// decodes it, so no decoder down the line (Args.Decode, a tool's own
// json.Unmarshal) spends stack or memory on it. encoding/json alone would
// accept 10000 levels.
const maxJSONDepth = 128

// envelope is one JSON-RPC message as read from a POST body. Values are raw
// slices of the body: the id is echoed byte for byte, and params are decoded
// only as far as a method needs.
type envelope struct {
	id       json.RawMessage // nil for a notification
	method   string
	params   json.RawMessage // nil when absent
	response bool            // a client-sent JSON-RPC response (result or error, no method)
	result   json.RawMessage // a response's result, nil when absent
	rpcError json.RawMessage // a response's error, nil when absent (takeAnswer refuses both at once)
}

// readEnvelope parses the body as one JSON-RPC message. A client-sent
// JSON-RPC response (a legacy client answering a server request) goes on
// to takeAnswer; 2026-07-28 clients never send one.
func readEnvelope(body []byte, h http.Header) (envelope, *answer) {
	env, perr := parseEnvelope(body)
	switch {
	case perr != nil:
		return env, &answer{resp: &Response{Error: perr}}
	case !env.response:
		return env, nil
	}
	if hv := strings.TrimSpace(h.Get(headerProtocolVersion)); hv != "" && !knownLegacy(hv) {
		return env, &answer{resp: ErrorResponse(CodeInvalidRequest, "Invalid Request: clients do not POST JSON-RPC responses on "+LatestVersion)}
	}
	return env, nil
}

// parseEnvelope reads one JSON-RPC request, notification or response from
// body. On failure it returns an error whose code is -32700 (not JSON) or
// -32600 (JSON, but not one valid message); the envelope's id is filled in
// whenever it could be read, so the error can echo it.
func parseEnvelope(body []byte) (envelope, *Error) {
	if err := checkJSON(body); err != nil {
		return envelope{}, err
	}
	ms, err := readRPCMembers(body)
	if err != nil {
		return envelope{}, err
	}
	env := envelope{id: ms.echoableID()}
	if err := ms.check(body); err != nil {
		return env, err
	}
	env.id = json.RawMessage(ms.id)
	return ms.message(env)
}

// checkJSON refuses a body that is not one valid UTF-8 JSON document.
func checkJSON(body []byte) *Error {
	if !json.Valid(body) {
		return &Error{Code: CodeParseError, Message: "Parse error: the body is not valid JSON"}
	}
	// encoding/json accepts invalid UTF-8 inside strings and reads each bad
	// byte as U+FFFD, while the raw slices handed on (ids, arguments) keep
	// the bytes: two readings of one body, and answers that are not UTF-8.
	// JSON exchanged between systems must be UTF-8 (RFC 8259 §8.1).
	if !utf8.Valid(body) {
		return &Error{Code: CodeParseError, Message: "Parse error: the body is not valid UTF-8"}
	}
	return nil
}

// rpcMembers are the JSON-RPC members of a body, raw, and what was wrong
// with their names.
type rpcMembers struct {
	version, id, method, params, result, errv []byte

	dup     string // the first JSON-RPC member that appears twice
	idTwice bool
	folded  string // the first member spelled like a JSON-RPC member in another case
}

// readRPCMembers walks the members of a valid JSON body. They are walked,
// not collected: a body of a million unknown members costs time in
// proportion, but no memory.
func readRPCMembers(body []byte) (rpcMembers, *Error) {
	var ms rpcMembers
	it, ok := jsonwire.IterMembers(body)
	if !ok {
		if jsonwire.KindOf(body[jsonwire.SkipSpace(body, 0):]) == jsonwire.KindArray {
			return ms, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: batches are not supported; send one JSON-RPC message per POST"}
		}
		return ms, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: the body must be a JSON-RPC object"}
	}
	for m, more := it.Next(); more; m, more = it.Next() {
		ms.take(m)
	}
	return ms, nil
}

// take files one member of the body.
func (ms *rpcMembers) take(m jsonwire.Member) {
	slot := ms.slot(m)
	switch {
	case slot == nil:
		// Unknown members are ignored, as JSON-RPC allows, but not one that
		// Go decoders would read as a known member by folding case ("ID"
		// makes a request of what this reader sees as a notification).
		if name, ok := jsonwire.FoldedRPCMember(m.Key); ok && ms.folded == "" {
			ms.folded = name
		}
	case *slot == nil:
		*slot = m.Value
	default:
		ms.idTwice = ms.idTwice || slot == &ms.id
		if ms.dup == "" {
			ms.dup = m.Name()
		}
	}
}

// slot returns where the member goes, or nil for a member JSON-RPC does
// not define.
func (ms *rpcMembers) slot(m jsonwire.Member) *[]byte {
	switch {
	case m.Is("jsonrpc"):
		return &ms.version
	case m.Is("id"):
		return &ms.id
	case m.Is("method"):
		return &ms.method
	case m.Is("params"):
		return &ms.params
	case m.Is("result"):
		return &ms.result
	case m.Is("error"):
		return &ms.errv
	}
	return nil
}

// echoableID is the id an error about the body may echo: one given once,
// as a string or a number.
func (ms *rpcMembers) echoableID() json.RawMessage {
	if k := jsonwire.KindOf(ms.id); !ms.idTwice && (k == jsonwire.KindString || k == jsonwire.KindNumber) {
		return json.RawMessage(ms.id)
	}
	return nil
}

// check refuses what makes the body no JSON-RPC message at all, in the
// order the refusals are reported: repeated or case-folded member names,
// an id of the wrong type, deep nesting, the wrong jsonrpc.
func (ms *rpcMembers) check(body []byte) *Error {
	switch {
	case ms.dup != "":
		return &Error{Code: CodeInvalidRequest, Message: "Invalid Request: member \"" + ms.dup + "\" appears twice"}
	case ms.folded != "":
		return &Error{Code: CodeInvalidRequest, Message: "Invalid Request: a member is spelled like \"" + ms.folded + "\" in another case; JSON-RPC member names are case-sensitive"}
	}
	switch jsonwire.KindOf(ms.id) {
	case jsonwire.KindNone, jsonwire.KindString, jsonwire.KindNumber:
	case jsonwire.KindNull:
		return &Error{Code: CodeInvalidRequest, Message: "Invalid Request: id must not be null; omit it for a notification"}
	default:
		return &Error{Code: CodeInvalidRequest, Message: "Invalid Request: id must be a string or an integer, not " + jsonwire.KindOf(ms.id).String()}
	}
	// Checked once the id is known, so the refusal can echo it; reading the
	// top-level members above does not recurse.
	if jsonwire.ExceedsDepth(body, maxJSONDepth) {
		return &Error{Code: CodeInvalidRequest, Message: "Invalid Request: JSON nesting is deeper than " + strconv.Itoa(maxJSONDepth) + " levels"}
	}
	if v, ok := jsonwire.Unquote(ms.version); !ok || v != "2.0" {
		return &Error{Code: CodeInvalidRequest, Message: `Invalid Request: "jsonrpc" must be "2.0"`}
	}
	return nil
}

// message completes env as the request, notification or response the
// members make, or refuses them.
func (ms *rpcMembers) message(env envelope) (envelope, *Error) {
	if ms.method == nil {
		if (ms.result != nil || ms.errv != nil) && env.id != nil && ms.params == nil {
			env.response = true
			env.result, env.rpcError = json.RawMessage(ms.result), json.RawMessage(ms.errv)
			return env, nil
		}
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method is missing"}
	}
	if ms.result != nil || ms.errv != nil {
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: a request cannot carry result or error"}
	}
	s, ok := jsonwire.Unquote(ms.method)
	if !ok || s == "" {
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method must be a non-empty string"}
	}
	env.method = s
	switch jsonwire.KindOf(ms.params) {
	case jsonwire.KindNone:
	case jsonwire.KindObject:
		env.params = json.RawMessage(ms.params)
	default:
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: params must be an object, not " + jsonwire.KindOf(ms.params).String()}
	}
	return env, nil
}
