package mcpmw

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
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
}

// parseEnvelope reads one JSON-RPC request, notification or response from
// body. On failure it returns an error whose code is -32700 (not JSON) or
// -32600 (JSON, but not one valid message); the envelope's id is filled in
// whenever it could be read, so the error can echo it.
func parseEnvelope(body []byte) (envelope, *Error) {
	var env envelope
	if !json.Valid(body) {
		return env, &Error{Code: CodeParseError, Message: "Parse error: the body is not valid JSON"}
	}
	// encoding/json accepts invalid UTF-8 inside strings and reads each bad
	// byte as U+FFFD, while the raw slices handed on (ids, arguments) keep
	// the bytes: two readings of one body, and answers that are not UTF-8.
	// JSON exchanged between systems must be UTF-8 (RFC 8259 §8.1).
	if !utf8.Valid(body) {
		return env, &Error{Code: CodeParseError, Message: "Parse error: the body is not valid UTF-8"}
	}
	// The members are walked, not collected: a body of a million unknown
	// members costs time in proportion, but no memory.
	it, ok := iterMembers(body)
	if !ok {
		if kindOf(body[skipSpace(body, 0):]) == kindArray {
			return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: batches are not supported; send one JSON-RPC message per POST"}
		}
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: the body must be a JSON-RPC object"}
	}
	var version, id, method, params, result, errv []byte
	var dup string    // the first known member that appears twice
	var folded string // the first member that is a known one but for case
	idTwice := false
	for m, more := it.next(); more; m, more = it.next() {
		var slot *[]byte
		switch {
		case m.is("jsonrpc"):
			slot = &version
		case m.is("id"):
			slot = &id
		case m.is("method"):
			slot = &method
		case m.is("params"):
			slot = &params
		case m.is("result"):
			slot = &result
		case m.is("error"):
			slot = &errv
		default:
			// Unknown members are ignored, as JSON-RPC allows, but not one
			// that Go decoders would read as a known member by folding case
			// ("ID" makes a request of what this reader sees as a
			// notification).
			if name, ok := foldedRPCMember(m.key); ok && folded == "" {
				folded = name
			}
			continue
		}
		switch {
		case *slot == nil:
			*slot = m.val
			continue
		case slot == &id:
			idTwice = true
		}
		if dup == "" {
			dup = m.keyString()
		}
	}
	if dup != "" {
		// The id is still echoed when it was given once; two ids echo none.
		if k := kindOf(id); !idTwice && (k == kindString || k == kindNumber) {
			env.id = json.RawMessage(id)
		}
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: member \"" + dup + "\" appears twice"}
	}
	if folded != "" {
		if k := kindOf(id); k == kindString || k == kindNumber {
			env.id = json.RawMessage(id)
		}
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: a member is spelled like \"" + folded + "\" in another case; JSON-RPC member names are case-sensitive"}
	}
	switch kindOf(id) {
	case kindNone:
	case kindString, kindNumber:
		env.id = json.RawMessage(id)
	case kindNull:
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: id must not be null; omit it for a notification"}
	default:
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: id must be a string or an integer, not " + kindOf(id).String()}
	}
	// Checked once the id is known, so the refusal can echo it; reading the
	// top-level members above does not recurse.
	if exceedsDepth(body, maxJSONDepth) {
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: JSON nesting is deeper than " + strconv.Itoa(maxJSONDepth) + " levels"}
	}
	if v, ok := unquote(version); !ok || v != "2.0" {
		return env, &Error{Code: CodeInvalidRequest, Message: `Invalid Request: "jsonrpc" must be "2.0"`}
	}
	if method == nil {
		if (result != nil || errv != nil) && env.id != nil && params == nil {
			env.response = true
			return env, nil
		}
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method is missing"}
	}
	if result != nil || errv != nil {
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: a request cannot carry result or error"}
	}
	s, ok := unquote(method)
	if !ok || s == "" {
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method must be a non-empty string"}
	}
	env.method = s
	switch kindOf(params) {
	case kindNone:
	case kindObject:
		env.params = json.RawMessage(params)
	default:
		return env, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: params must be an object, not " + kindOf(params).String()}
	}
	return env, nil
}
