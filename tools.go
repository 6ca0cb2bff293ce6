package mcpmw

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
	"github.com/mcpmw/mcpmw/internal/schemawalk"
)

// A Tool is an operation a caller's model may invoke. It is a plain value:
// build it with a struct literal and add it to a Registry (AddTools) at
// startup.
type Tool struct {
	// Name identifies the tool: 1 to 64 characters of [A-Za-z0-9_.-].
	Name string
	// Title is an optional display name; Description tells the model what
	// the tool does and when to use it.
	Title, Description string
	// Permission is what a caller must be able to do (Caller.Can) to see
	// the tool in tools/list and to call it. It is required: a tool every
	// caller may use still names a permission every caller has. See
	// Permission for what a caller without it learns.
	Permission Permission
	// InputSchema is the JSON Schema (2020-12) of the arguments, as raw
	// JSON whose root is {"type":"object",...}. It is sent exactly as given
	// (whitespace removed). Nil means a tool without arguments.
	InputSchema json.RawMessage
	// Sensitive lists the arguments whose values must not leave the
	// process through the library, as JSON pointers (RFC 6901) into the
	// arguments: "/password", "/card/number", with "*" standing for every
	// member of an object or element of an array ("/cards/*/cvc", "/*"
	// for every argument). Each must name a member the InputSchema
	// declares. The audit record (and so LogAuditor, JSONAuditor and an
	// Observer), and every message and isError text the handler builds,
	// carry "[redacted]" in place of such a value; the tool still gets it
	// as sent. Nil means none: such a tool pays nothing. See docs/audit.md,
	// "Sensitive arguments" for what is redacted where.
	//
	// A record does not rely on the client spelling a name right. Names
	// match the pointers case-insensitively ("API_KEY" is redacted with
	// "/api_key"). Where a pointer leads (the arguments object, and each
	// object or array on the way to what it names: the root and "card" for
	// "/card/number"), a member that no pointer reaches and that the
	// InputSchema does not name at that level ("properties", or a
	// "patternProperties" pattern, through $ref, allOf, anyOf, oneOf, then
	// and else; a member "additionalProperties" only admits is not named)
	// is recorded as "[redacted]": "apiKey" sent for the sensitive
	// "api_key" is recorded "apiKey":"[redacted]", and so is "crad" sent for
	// "card". Likewise an element that neither "prefixItems" nor "items"
	// covers there, and a value of the wrong shape for a pointer to go on
	// into (a string or an array where "/card/number" expects the object
	// "card") is redacted whole. A null stays null. Off those paths (under
	// "user", say) the arguments are recorded as sent. And while some tool
	// of the Registry has Sensitive arguments, a call naming no tool (a
	// misspelt "logn") has the value of every argument recorded as
	// "[redacted]".
	Sensitive []string
	// OutputSchema optionally describes StructuredContent. Clients of the
	// legacy revisions only accept an object-rooted one; others are left out
	// of what they are sent.
	OutputSchema json.RawMessage
	// ReadOnly, Destructive, Idempotent and OpenWorld are the behaviour
	// hints of the tool's annotations. An unset hint is left off the wire,
	// so the client applies the specification's default (destructive and
	// open-world default to true).
	ReadOnly, Destructive, Idempotent, OpenWorld Hint
	// Icons are optional images for the tool; 2025-06-18 clients get none.
	Icons []Icon
	// Meta is the definition's _meta: what an extension adds to it (MCP
	// Apps' {"ui": {"resourceUri": ...}}, say), encoded once, at
	// registration, with encoding/json. Keys starting with
	// "io.modelcontextprotocol/" are the protocol's; use your own prefix
	// for your own.
	Meta map[string]any
	// RequiredClientCapabilities lists client capabilities the tool cannot
	// work without: Capability("sampling"), Capability("elicitation",
	// "url"), Capability("roots"). A 2026-07-28 request whose
	// clientCapabilities lack one is refused with -32021 (HTTP 400) before
	// the tool runs. Legacy requests carry no per-request capabilities and
	// are not checked. (A TaskRequired tool needs the tasks extension too,
	// without saying so here.)
	RequiredClientCapabilities []ClientCapability
	// ListedOnlyFor lists client capabilities without which the tool is
	// not even offered: a 2026-07-28 request that lacks one does not see
	// it in tools/list, and its call is refused with -32021, as for
	// RequiredClientCapabilities; the legacy revisions, whose requests
	// declare no capabilities, never list it, and a call of it there is a
	// call of an unknown tool. MCP Apps' app-only tools need this: a host
	// that does not render apps would show them to its model.
	ListedOnlyFor []ClientCapability
	// Timeout bounds one call of the tool, overriding Options.ToolTimeout.
	// A task's every run has the same bound.
	Timeout time.Duration
	// Task says whether calls may become tasks (see TaskMode): run in the
	// background, their status and result polled with tasks/get. The
	// default, TaskNever, answers every call when it is done.
	Task TaskMode
	// Prepare, when set, runs first on every call, in the request itself:
	// what the tool must have before its work starts, and before a call
	// becomes a task (a confirmation, arguments checked). Its Asks are
	// rounds of the call (input_required on 2026-07-28, questions on the
	// event stream on the legacy revisions), and Call's Ask finds their
	// answers. An error it returns ends the call as one from Call would,
	// and no task is created.
	Prepare func(ctx context.Context, c Caller, args *Args) error
	// Call runs the tool. It returns a result, or an error:
	//   - an *ArgError (as from Args.Err) becomes an isError result naming
	//     the argument, so the model can correct itself;
	//   - an *Error is sent as that JSON-RPC error;
	//   - any other error becomes -32603 "Internal error" and a log line;
	//     its text is not sent to the client.
	// A failure the model should see and act on is a result with IsError set.
	Call func(ctx context.Context, c Caller, args *Args) (ToolResult, error)
}

// A Hint is a tri-state annotation value: unset, yes or no.
type Hint uint8

// Hint values, named for their type as OutcomeOK and LogDebug are: HintYes
// reads as what it is at a use (ReadOnly: mcpmw.HintYes), where a bare Yes
// would be a package-level word.
const (
	HintUnset Hint = iota // left off the wire; the client assumes the default
	HintYes
	HintNo
)

// toolTable is an immutable snapshot of a Registry's tools. (Each Handler
// caches its own tools/list pages of it: listpages.go.)
type toolTable struct {
	catalogue[*entry]
	sensitive bool // some tool has Sensitive arguments
}

// newToolTable returns the table of the tools in c.
func newToolTable(c *catalogue[*entry]) *toolTable {
	t := &toolTable{catalogue: *c}
	for _, e := range c.list {
		t.sensitive = t.sensitive || e.redact != nil
	}
	return t
}

// entry is a registered tool with its definition encoded for each revision
// and what a tools/call naming it is checked against.
type entry struct {
	Tool
	enc       [revisionCount][]byte // the definition, per revision
	permIndex int                   // index of Permission in its table's perms
	target    Target
	redact    *redaction // the Sensitive pointers, compiled; nil when there are none
}

// AddTools registers tools. It panics, with a message naming the tool, if
// a name is invalid or already taken, if Permission or Call is missing, if a
// schema is not valid JSON (or, for InputSchema, not an object schema), or
// if a Sensitive pointer is not a JSON pointer or names nothing the
// InputSchema declares.
// Such mistakes are found at startup, never while serving.
func (r *Registry) AddTools(tools ...Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	add := make([]*entry, len(tools))
	for i, t := range tools {
		add[i] = prepare(t)
	}
	next, perms := r.table().with("tool", add)
	r.tabs.Store(newToolTable(next))
	r.changed(ToolsListChanged, perms)
}

// RemoveTools unregisters the tools named, and reports how many were
// registered. A request already running a removed tool finishes; later
// ones get "Unknown tool". Listeners who could see a removed tool are told
// the list changed.
func (r *Registry) RemoveTools(names ...string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	next, perms := r.table().without(names)
	if len(perms) == 0 {
		return 0
	}
	r.tabs.Store(newToolTable(next))
	r.changed(ToolsListChanged, perms)
	return len(perms)
}

// LookupTool returns the tool registered under name (tools only; a prompt
// or a resource of that name is not found here): a copy, whose slices (schemas,
// icons, capabilities) the caller may change without changing the
// registered tool.
func (r *Registry) LookupTool(name string) (Tool, bool) {
	if e := r.table().byKey[name]; e != nil {
		return e.Tool.clone(), true
	}
	return Tool{}, false
}

// clone returns t with its own copies of everything it holds by
// reference, but Call. AddTools keeps a clone, so that a caller changing
// the slices it registered (or LookupTool returned) changes nothing
// registered.
func (t Tool) clone() Tool {
	t.InputSchema = bytes.Clone(t.InputSchema)
	t.OutputSchema = bytes.Clone(t.OutputSchema)
	t.Icons = cloneIcons(t.Icons)
	t.RequiredClientCapabilities = cloneCapabilities(t.RequiredClientCapabilities)
	t.ListedOnlyFor = cloneCapabilities(t.ListedOnlyFor)
	t.Meta = maps.Clone(t.Meta)
	return t
}

// NumTools returns the number of registered tools. Prompts, resources and
// resource templates are not counted.
func (r *Registry) NumTools() int { return len(r.table().list) }

var emptyTable = &toolTable{}

func (r *Registry) table() *toolTable {
	if t := r.tabs.Load(); t != nil {
		return t
	}
	return emptyTable
}

// validToolName reports whether name is 1-64 characters of [A-Za-z0-9_.-].
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

var noArgsSchema = json.RawMessage(`{"type":"object","additionalProperties":false}`)

// prepare validates t and encodes its definition for each revision. The
// entry keeps its own copy of t: the caller's slices may change later.
func prepare(t Tool) *entry {
	t = t.clone()
	if !validToolName(t.Name) {
		panic(fmt.Sprintf("mcpmw: tool name %q is invalid: use 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', '-'", t.Name))
	}
	if t.Permission == "" {
		panic(fmt.Sprintf("mcpmw: tool %q has no Permission; name one that every permitted caller has", t.Name))
	}
	if t.Task > TaskRequired {
		panic(fmt.Sprintf("mcpmw: tool %q: Task is %d, not a TaskMode (TaskNever, TaskOptional, TaskRequired)", t.Name, t.Task))
	}
	if t.Call == nil {
		panic(fmt.Sprintf("mcpmw: tool %q has no Call func", t.Name))
	}
	in := t.InputSchema
	if len(bytes.TrimSpace(in)) == 0 {
		in = noArgsSchema
	}
	in = compactSchema(t.Name, "InputSchema", in)
	checkSchemaTypes(t.Name, "InputSchema", in)
	var ms []jsonwire.Member
	ms, _ = jsonwire.ObjectMembers(in, ms)
	if typ, _ := jsonwire.Unquote(jsonwire.Lookup(ms, "type")); typ != "object" {
		panic(fmt.Sprintf("mcpmw: tool %q: InputSchema must have \"type\": \"object\" at its root", t.Name))
	}
	t.InputSchema = in
	t.Sensitive = append([]string(nil), t.Sensitive...) // the caller's slice may change; LookupTool returns this copy
	red := compileSensitive(t.Name, t.Sensitive, in)
	var outObject bool
	if len(bytes.TrimSpace(t.OutputSchema)) > 0 {
		t.OutputSchema = compactSchema(t.Name, "OutputSchema", t.OutputSchema)
		checkSchemaTypes(t.Name, "OutputSchema", t.OutputSchema)
		ms, _ = jsonwire.ObjectMembers(t.OutputSchema, ms[:0])
		typ, _ := jsonwire.Unquote(jsonwire.Lookup(ms, "type"))
		outObject = typ == "object"
	} else {
		t.OutputSchema = nil
	}
	needs := append(cloneCapabilities(t.ListedOnlyFor), cloneCapabilities(t.RequiredClientCapabilities)...)
	for _, c := range needs {
		c.check("tool " + strconv.Quote(t.Name))
	}
	if t.Task == TaskRequired {
		needs = append([]ClientCapability{tasksCapability}, needs...)
	}
	e := &entry{Tool: t, redact: red, target: Target{Kind: "tool", Name: t.Name, Permission: t.Permission,
		RequiredClientCapabilities: needs, params: headerParams(t.Name, in, red)}}
	e.target.Found = e
	e.target.requiredData = requiredCapabilitiesData(needs) // the -32021's data, encoded once
	for v := range revisionCount {
		e.enc[v] = appendMeta(appendToolDef(nil, &t, v, outObject), t.Meta, "tool "+strconv.Quote(t.Name))
	}
	return e
}

func compactSchema(tool, field string, raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		panic(fmt.Sprintf("mcpmw: tool %q: %s is not valid JSON: %v", tool, field, err))
	}
	if jsonwire.KindOf(buf.Bytes()) != jsonwire.KindObject {
		panic(fmt.Sprintf("mcpmw: tool %q: %s must be a JSON object", tool, field))
	}
	return buf.Bytes()
}

// checkSchemaTypes panics, naming the tool, the field and the JSON pointer,
// on a "type" anywhere in the schema raw (under properties, items, $defs,
// allOf, if/then/else...) that names no JSON Schema type, or is an empty
// list: a misspelt "integr" is sent to every client, and a validator
// refuses every call, blaming the caller. (The typed package checks the
// whole schema against the JSON Schema meta-schema.)
func checkSchemaTypes(tool, field string, raw json.RawMessage) {
	var doc any
	_ = json.Unmarshal(raw, &doc) // compactSchema has checked it
	schemawalk.Walk(doc, "", func(ptr string, s map[string]any) bool {
		if typ, ok := s["type"]; ok {
			if p := schemawalk.TypeProblem(typ); p != "" {
				panic(fmt.Sprintf("mcpmw: tool %q: %s: %s/type: %s", tool, field, ptr, p))
			}
		}
		return true
	})
}

func appendToolDef(dst []byte, t *Tool, v revision, outObject bool) []byte {
	dst = append(dst, `{"name":`...)
	dst = jsonwire.AppendString(dst, t.Name)
	if t.Title != "" {
		dst = append(dst, `,"title":`...)
		dst = jsonwire.AppendString(dst, t.Title)
	}
	if t.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = jsonwire.AppendString(dst, t.Description)
	}
	if len(t.Icons) > 0 && v.icons() {
		dst = append(dst, `,"icons":`...)
		dst = appendIcons(dst, t.Icons)
	}
	dst = append(dst, `,"inputSchema":`...)
	dst = append(dst, t.InputSchema...)
	if t.OutputSchema != nil && (outObject || v.anyStructuredContent()) {
		dst = append(dst, `,"outputSchema":`...)
		dst = append(dst, t.OutputSchema...)
	}
	if t.ReadOnly|t.Destructive|t.Idempotent|t.OpenWorld != HintUnset {
		dst = append(dst, `,"annotations":{`...)
		sep := false
		for _, h := range []struct {
			name string
			v    Hint
		}{{"readOnlyHint", t.ReadOnly}, {"destructiveHint", t.Destructive}, {"idempotentHint", t.Idempotent}, {"openWorldHint", t.OpenWorld}} {
			if h.v == HintUnset {
				continue
			}
			if sep {
				dst = append(dst, ',')
			}
			sep = true
			dst = jsonwire.AppendString(dst, h.name)
			if h.v == HintYes {
				dst = append(dst, ":true"...)
			} else {
				dst = append(dst, ":false"...)
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// hasTaskTools reports whether a tool registered now may become a task.
func (r *Registry) hasTaskTools() bool {
	for _, e := range r.table().list {
		if e.Task != TaskNever {
			return true
		}
	}
	return false
}
