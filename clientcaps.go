package mcpmw

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// A target may need something of the client: a tool that asks the user
// needs elicitation, one that asks a model needs sampling. On 2026-07-28
// every request declares the client's capabilities, so a request that
// lacks one is refused with -32021 before anything runs; the legacy
// revisions declare them only on initialize, which a stateless server has
// forgotten by the time a tool runs.

// capitalize upper-cases the first letter of an ASCII word.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// checkClientCapabilities refuses a request whose client lacks a
// capability its target requires.
func checkClientCapabilities(t *Target, req *Request) *answer {
	if resp := clientCapabilityError(t, req); resp != nil {
		return &answer{resp: resp}
	}
	return nil
}

// clientCapabilityError is the -32021 error for the first capability t
// requires that the request's client lacks, or nil.
func clientCapabilityError(t *Target, req *Request) *Response {
	if (len(t.RequiredClientCapabilities) == 0 && !t.needsTasks) || !req.revision().perRequestCapabilities() {
		return nil
	}
	if t.needsTasks && !declaresTasks(req.ClientCapabilities) {
		name := capEcho(t.Name)
		resp := tasksUndeclared(capitalize(t.kind()) + " " + strconv.Quote(name) + " runs only as a task")
		resp.Target = name
		return resp
	}
	for _, capability := range t.RequiredClientCapabilities {
		if !hasClientCapability(req.ClientCapabilities, capability) {
			data := t.requiredData
			if data == nil { // a Target built by an application's Method
				data = requiredCapabilitiesData(t.Name, t.RequiredClientCapabilities)
			}
			name := capEcho(t.Name) // an application's Target may name what the client sent
			return &Response{Target: name, Summary: "client lacks capability " + capability, Error: &Error{
				Code:    CodeMissingRequiredClientCapability,
				Message: capitalize(t.kind()) + " " + strconv.Quote(name) + " requires the client capability " + capability,
				Data:    json.RawMessage(data),
			}}
		}
	}
	return nil
}

// requiredCapabilitiesData encodes the -32021 data for dotted capability
// paths, e.g. {"requiredCapabilities":{"elicitation":{"url":{}}}}.
func requiredCapabilitiesData(tool string, paths []string) []byte {
	root := map[string]any{}
	for _, p := range paths {
		node := root
		for _, seg := range strings.Split(p, ".") {
			if seg == "" {
				panic(fmt.Sprintf("mcpmw: tool %q: ClientCapabilities entry %q is not a dotted capability path such as \"sampling\" or \"elicitation.url\"", tool, p))
			}
			next, _ := node[seg].(map[string]any)
			if next == nil {
				next = map[string]any{}
				node[seg] = next
			}
			node = next
		}
	}
	raw, _ := json.Marshal(map[string]any{"requiredCapabilities": root})
	return raw
}

// hasClientCapability reports whether the capabilities object caps declares
// the dotted path. An empty elicitation object stands for form mode.
func hasClientCapability(caps []byte, path string) bool {
	val := caps
	var ms []jsonwire.Member
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		var ok bool
		if ms, ok = jsonwire.ObjectMembers(val, ms[:0]); !ok {
			return false
		}
		next := jsonwire.Lookup(ms, seg)
		if next == nil && i == 1 && segs[0] == "elicitation" && seg == "form" && len(ms) == 0 {
			return true
		}
		if k := jsonwire.KindOf(next); k == jsonwire.KindNone || k == jsonwire.KindNull || string(next) == "false" {
			return false
		}
		val = next
	}
	return true
}

// tasksRequiredData is the -32021 data naming the tasks extension.
const tasksRequiredData = `{"requiredCapabilities":{"extensions":{"` + ExtensionTasks + `":{}}}}`

// tasksUndeclared is the -32021 of a request that needs the tasks
// extension from a client that did not declare it: a TaskRequired tool's
// call, and every tasks/* request. what says what needs it.
func tasksUndeclared(what string) *Response {
	return &Response{Summary: "client lacks the extension " + ExtensionTasks, Error: &Error{
		Code:    CodeMissingRequiredClientCapability,
		Message: what + ": declare the client capability extensions[\"" + ExtensionTasks + "\"]",
		Data:    json.RawMessage(tasksRequiredData),
	}}
}

// declaresTasks reports whether the capabilities object caps declares the
// tasks extension: extensions["io.modelcontextprotocol/tasks"], an object
// (the extension's name holds dots, so it is no dotted path).
func declaresTasks(caps []byte) bool {
	var buf [8]jsonwire.Member // a client declares a handful: no allocation
	ms, ok := jsonwire.ObjectMembers(caps, buf[:0])
	if !ok {
		return false
	}
	ext, ok := jsonwire.ObjectMembers(jsonwire.Lookup(ms, "extensions"), ms[len(ms):])
	return ok && jsonwire.KindOf(jsonwire.Lookup(ext, ExtensionTasks)) == jsonwire.KindObject
}
