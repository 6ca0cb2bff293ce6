package mcpmw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// A target may need something of the client: a tool that asks the user
// needs elicitation, one that asks a model needs sampling. On 2026-07-28
// every request declares the client's capabilities, so a request that
// lacks one is refused with -32021 before anything runs; the legacy
// revisions declare them only on initialize, which a stateless server has
// forgotten by the time a tool runs.

// A ClientCapability is a client capability a target needs, or a tool
// asks about (ClientSupports): the member of the client's capabilities
// object at Path, present and neither null nor false, and, when Contains
// is set, an array holding that string. Each element of Path is one
// member name, so that an extension's identifier, which holds dots and a
// slash, is one segment: {"extensions", ExtensionTasks}. An empty
// elicitation object stands for form mode, as the protocol says.
type ClientCapability struct {
	Path     []string
	Contains string // e.g. the Apps extension's MIME type in its mimeTypes
}

// Capability returns the ClientCapability at path: Capability("sampling"),
// Capability("elicitation", "url"), Capability("extensions", ExtensionTasks).
func Capability(path ...string) ClientCapability { return ClientCapability{Path: path} }

// String names c as the protocol's documents do: elicitation.url, or
// extensions["io.modelcontextprotocol/tasks"] for a segment that holds a
// dot or a slash, followed by the value it must contain.
func (c ClientCapability) String() string {
	var b strings.Builder
	for i, seg := range c.Path {
		switch {
		case strings.ContainsAny(seg, "./\"\\[] ") || seg == "":
			b.WriteString("[" + strconv.Quote(seg) + "]")
		case i > 0:
			b.WriteString("." + seg)
		default:
			b.WriteString(seg)
		}
	}
	if c.Contains != "" {
		b.WriteString(" containing " + strconv.Quote(c.Contains))
	}
	return b.String()
}

// check panics, naming where it was given (what), on a capability that
// names nothing.
func (c ClientCapability) check(what string) {
	if len(c.Path) == 0 {
		panic(fmt.Sprintf("mcpmw: %s: a ClientCapability has an empty Path", what))
	}
	for _, seg := range c.Path {
		if seg == "" {
			panic(fmt.Sprintf("mcpmw: %s: ClientCapability %v has an empty segment", what, c.Path))
		}
	}
}

// lacks is the record's summary of a request refused for lacking c: an
// extension is named as one ("client lacks the extension
// io.modelcontextprotocol/tasks"), with what it must declare
// ("io.modelcontextprotocol/ui with mimeTypes containing ..."), anything
// else by its path.
func lacks(c ClientCapability) string {
	if len(c.Path) < 2 || c.Path[0] != "extensions" {
		return "client lacks capability " + c.String()
	}
	s := "client lacks the extension " + c.Path[1]
	if len(c.Path) > 2 {
		s += " with " + ClientCapability{Path: c.Path[2:], Contains: c.Contains}.String()
	}
	return s
}

// cloneCapabilities returns a deep copy of caps, paths and all.
func cloneCapabilities(caps []ClientCapability) []ClientCapability {
	if caps == nil {
		return nil
	}
	out := make([]ClientCapability, len(caps))
	for i, c := range caps {
		out[i] = ClientCapability{Path: slices.Clone(c.Path), Contains: c.Contains}
	}
	return out
}

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
	if len(t.RequiredClientCapabilities) == 0 || !req.revision().perRequestCapabilities() {
		return nil
	}
	for _, c := range t.RequiredClientCapabilities {
		if !hasClientCapability(req.ClientCapabilities, c) {
			data := t.requiredData
			if data == nil { // a Target built by an application's Method
				data = requiredCapabilitiesData(t.RequiredClientCapabilities)
			}
			name := capEcho(t.Name) // an application's Target may name what the client sent
			return &Response{Target: name, Summary: lacks(c), Error: &Error{
				Code:    CodeMissingRequiredClientCapability,
				Message: capitalize(t.kind()) + " " + strconv.Quote(name) + " requires the client capability " + c.String(),
				Data:    json.RawMessage(data),
			}}
		}
	}
	return nil
}

// requiredCapabilitiesData encodes the -32021 data for caps, e.g.
// {"requiredCapabilities":{"elicitation":{"url":{}}}}; a value test is an
// array of the value: {"extensions":{"io.modelcontextprotocol/ui":
// {"mimeTypes":["text/html;profile=mcp-app"]}}}.
func requiredCapabilitiesData(caps []ClientCapability) []byte {
	root := map[string]any{}
	for _, c := range caps {
		node := root
		for i, seg := range c.Path {
			if i == len(c.Path)-1 && c.Contains != "" {
				vals, _ := node[seg].([]string)
				node[seg] = append(vals, c.Contains)
				break
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

// hasClientCapability reports whether the capabilities object caps
// declares c. It reads caps in place: a client declares a handful of
// capabilities, so a check costs no allocation.
func hasClientCapability(caps []byte, c ClientCapability) bool {
	var buf [8]jsonwire.Member
	val := caps
	for i, seg := range c.Path {
		ms, ok := jsonwire.ObjectMembers(val, buf[:0])
		if !ok {
			return false
		}
		next := jsonwire.Lookup(ms, seg)
		if next == nil && i == 1 && c.Path[0] == "elicitation" && seg == "form" && len(ms) == 0 && c.Contains == "" {
			return true
		}
		if k := jsonwire.KindOf(next); k == jsonwire.KindNone || k == jsonwire.KindNull || string(next) == "false" {
			return false
		}
		val = next
	}
	return c.Contains == "" || arrayHolds(val, c.Contains)
}

// arrayHolds reports whether the JSON value v is an array with the string
// s among its elements. v must be valid JSON (a request's, which the
// handler has parsed).
func arrayHolds(v []byte, s string) bool {
	it, _ := jsonwire.IterElements(v)
	for e, more := it.Next(); more; e, more = it.Next() {
		if stringIs(e, s) {
			return true
		}
	}
	return false
}

// stringIs reports whether the JSON value tok is the string s. A string
// without escapes, in valid UTF-8, is compared in place: a client that
// renders apps costs tools/list no allocation more than one that does not.
func stringIs(tok []byte, s string) bool {
	if jsonwire.KindOf(tok) != jsonwire.KindString {
		return false
	}
	if inner := tok[1 : len(tok)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner) == s
	}
	str, ok := jsonwire.Unquote(tok)
	return ok && str == s
}

// The client capabilities the package itself needs: the tasks
// extension's, and those Ask's requests need.
var (
	tasksCapability    = Capability("extensions", ExtensionTasks)
	elicitationForm    = Capability("elicitation", "form")
	elicitationURL     = Capability("elicitation", "url")
	samplingCapability = Capability("sampling")
	rootsCapability    = Capability("roots")
)

// tasksUndeclared is the -32021 of a tasks/* request from a client that
// did not declare the tasks extension.
func tasksUndeclared(method string) *Response {
	return &Response{Summary: lacks(tasksCapability), Error: &Error{
		Code:    CodeMissingRequiredClientCapability,
		Message: method + " is the tasks extension's: declare the client capability " + tasksCapability.String(),
		Data:    json.RawMessage(tasksRequiredData),
	}}
}

// tasksRequiredData is the -32021 data naming the tasks extension.
var tasksRequiredData = requiredCapabilitiesData([]ClientCapability{tasksCapability})
