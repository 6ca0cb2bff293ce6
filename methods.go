package mcpmw

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// A Method is one JSON-RPC method an endpoint serves. The built-in methods
// (server/discover, initialize, ping, tools/list, tools/call, ...) are
// Methods, and an application adds its own through Options.Methods: a
// method, or a whole capability's worth of them, in one place, which
// server/discover and initialize then advertise, so that what is declared
// is exactly what is served.
//
// A request for a method the table does not have, or on a revision that
// does not have it, is answered -32601 before any middleware sees it.
//
// A Method named "notifications/…" handles notifications (messages
// without an id); any other handles requests. A message without an id
// that names a request's method (tools/call, or an application's
// "app/sync") is not a request: neither the method nor any middleware
// runs it, and it is answered 202 and recorded as ignored.
type Method struct {
	// Name is the JSON-RPC method, e.g. "resources/list".
	Name string
	// Capability is the server capability the method belongs to
	// ("tools", "resources", "prompts", "completions", "logging"), or ""
	// for a method every server has. A capability is declared in
	// server/discover and initialize exactly when one of its methods is
	// served.
	Capability string
	// Settings are merged into the declared capability's settings object,
	// e.g. {"listChanged": true}, in the revisions the method has (see
	// Revisions): a setting only one revision can honour is declared only
	// there. Two methods of one revision may not set one key to two values.
	Settings map[string]any
	// Revisions lists the protocol revisions that have the method (e.g.
	// LatestVersion for a 2026-07-28 method); nil means all that are
	// served.
	Revisions []string
	// Streams lets a request of the method get an event stream: its
	// handler may send progress and log notifications (Progress, Log)
	// before the answer, when the client asked for them. Without it they
	// are dropped and the answer is plain JSON.
	Streams bool
	// Lifetime says how long the answer to a request lasts: the zero
	// value, LifetimeCall, for an answer decided when Handle returns;
	// LifetimeStream for an event stream that outlives the request's
	// audit record (see Lifetime).
	Lifetime Lifetime
	// Target, when set, finds what a request acts on (a tool, a prompt, a
	// resource) before anything else is done with it, so that the caller's
	// permission for it is checked first and the request's headers are
	// checked against it: a caller that may not use the target gets 403
	// and learns nothing else about it. It returns the target, or the
	// answer to a request whose target cannot be found (e.g. -32602 for an
	// unknown tool). It is called once per request, as soon as the
	// request is read, so that its audit record names the target (the
	// Target's Name, or the refusal's Target) even when a rule of the
	// revision refuses the request before the gate: it must only find,
	// and never act.
	Target func(req *Request) (*Target, *Response)
	// NameParam is the member of params, a string, that a request's
	// Mcp-Name header mirrors ("name" for tools/call, "uri" for
	// resources/read, "taskId" for tasks/get); empty for a method whose
	// requests name nothing. On 2026-07-28 the header is then required and
	// must equal the member; on the legacy revisions one that is sent must.
	NameParam string
	// Handle answers a request that has passed every check. It is called
	// through Options.Middleware.
	Handle func(ctx context.Context, req *Request) *Response

	// extends are settings the method adds to other capabilities, in its
	// revisions, when those capabilities are served: subscriptions/listen
	// makes tools, resources and prompts declare listChanged (and
	// resources subscribe) on 2026-07-28 only, the one revision with a
	// stream to deliver them on.
	extends map[string]map[string]any
	// quick marks a built-in method that runs no application code beyond
	// Caller.Can and never waits: a legacy notifications/cancelled has
	// nothing of it to stop, so its calls are not registered in flight.
	// Every other method (an application's own Methods included) can be
	// cancelled (see Handler.call).
	quick bool
	// arguments, when set, marks a method whose target is a tool
	// (tools/call): its record names the target as the Tool too and
	// carries params.arguments, with the values redacted that the
	// redaction arguments returns for the tool named reaches (and, when a
	// middleware pointed the request at another tool, that tool's too).
	arguments func(tool string) *redaction
	// sessionID marks legacy initialize: with Options.LegacySessionIDs
	// its answer carries a random Mcp-Session-Id.
	sessionID bool
	// extension is the ID of the Extension the method belongs to.
	extension string
}

// An Extension is an extension of the protocol (SEP-2133) the endpoint
// serves: declared under capabilities.extensions in server/discover and
// initialize, with its settings, on the revisions it has, and its methods
// served there. An extension may have no methods at all (one that only
// adds metadata to tools and resources, as MCP Apps does): it is declared
// all the same. Give extensions in Options.Extensions; packages that
// implement one (skills, apps) return an Extension to put there.
type Extension struct {
	// ID is the extension's identifier, e.g. "io.modelcontextprotocol/tasks".
	ID string
	// Settings is the extension's settings object in the declaration; nil
	// declares {}. It is encoded once, when New builds the handler.
	Settings map[string]any
	// Revisions lists the protocol revisions that have the extension; nil
	// means all that are served. A method of the extension with no
	// Revisions of its own has these.
	Revisions []string
	// Methods are the extension's methods. Their Capability must be empty:
	// they belong to the extension, which is declared whether or not a
	// client calls them.
	Methods []Method
}

// A Lifetime is how long the answer to a request of a Method lasts, and so
// when the request's audit record is made.
type Lifetime uint8

const (
	// LifetimeCall is the default: the answer (one JSON response, or with
	// Streams the call's notifications, then its response) is decided
	// when Handle returns, and the record is made then, before the answer
	// is written.
	LifetimeCall Lifetime = iota
	// LifetimeStream makes the answer an event stream that outlives the
	// request's record: a subscription (subscriptions/listen) or the
	// notifications of work that goes on, open for minutes or hours. Its
	// record must say when and how it was opened rather than wait for an
	// end that may never come. The handler refuses a request whose Accept header rules out
	// text/event-stream with 406, and every request with 503 once
	// Handler.Close was called, before Handle runs; it opens the stream,
	// and reads the body to its end so that the request's context ends
	// when the client goes. Handle returns the Response the record is made
	// of, with Then set to what serves the stream: the handler makes the
	// record, then calls Then, and sends the Response it returns as the
	// stream's last event. A Response without Then is the answer, as for
	// LifetimeCall.
	LifetimeStream
)

// A Target is what a request acts on, as a Method's Target func finds it:
// its name for the audit record, the permission a caller needs, and what
// the request must bring along for it.
type Target struct {
	// Kind says what the target is, for messages: "tool", "prompt",
	// "resource".
	Kind string
	// Name is the tool or prompt name, or the resource URI.
	Name string
	// Permission is what the caller must hold (Caller.Can) to use it.
	Permission Permission
	// RequiredClientCapabilities are the client capabilities without
	// which the target cannot work (Capability("sampling"), an
	// extension's Capability("extensions", id)); a 2026-07-28 request
	// that lacks one is refused with -32021 before the method runs.
	RequiredClientCapabilities []ClientCapability

	params       []headerParam // arguments mirrored in Mcp-Param-* headers (tools)
	requiredData []byte        // the -32021 data for RequiredClientCapabilities
	// Found is what the Target func found (the tool's entry, the
	// prompt's, the template's with the URI's values, an extension's own
	// item), for its Method's Handle to take from AdmittedTarget: the
	// target is looked up once per request.
	Found any
}

// kind is t.Kind, or "target" when it is empty.
func (t *Target) kind() string {
	if t.Kind == "" {
		return "target"
	}
	return t.Kind
}

// extensionsCapability is the server capability extensions are declared
// under.
const extensionsCapability = "extensions"

// methodTable is an endpoint's methods by name, built once by New.
type methodTable struct {
	byName map[string]*Method
	// known are the protocol's methods the endpoint does not serve (those
	// of a capability or an extension it lacks), for what the protocol
	// says of their requests whoever serves them: the member Mcp-Name
	// mirrors, and the capability the -32601 names.
	known map[string]*Method
	caps  [revisionCount][]declaredCapability // per revision, sorted by name
}

// declaredCapability is one server capability with its settings object.
type declaredCapability struct {
	name     string
	settings map[string]any
}

// newMethodTable indexes methods and the methods of exts, checking each
// (setup mistakes panic, as they are found at startup) and collecting the
// capabilities they declare; it keeps the methods of protocol that it
// does not serve as known. A capability is declared on every revision
// when any of its methods is served (logging, say, is declared on
// 2026-07-28 though logging/setLevel is legacy); its settings are merged
// per revision, from the methods that revision has. The extensions are
// declared on their own revisions, under "extensions".
func newMethodTable(methods []Method, exts []Extension, protocol []Method) *methodTable {
	methods = append(slices.Clip(methods), extensionMethods(exts)...)
	t := &methodTable{byName: make(map[string]*Method, len(methods)), known: map[string]*Method{}}
	for i := range protocol {
		t.known[protocol[i].Name] = &protocol[i]
	}
	served := map[string]bool{}
	for i := range methods {
		m := &methods[i]
		checkMethod(m)
		if _, dup := t.byName[m.Name]; dup {
			panic(fmt.Sprintf("mcpmw: method %q is registered twice", m.Name))
		}
		t.byName[m.Name] = m
		delete(t.known, m.Name)
		if m.Capability != "" {
			served[m.Capability] = true
		}
	}
	for v := range revisionCount {
		settings := make(map[string]map[string]any, len(served))
		for c := range served {
			settings[c] = map[string]any{}
		}
		for i := range methods {
			m := &methods[i]
			if !m.has(v) {
				continue
			}
			if m.Capability != "" {
				mergeSettings(settings[m.Capability], m, m.Capability, m.Settings)
			}
			for c, s := range m.extends {
				if served[c] {
					mergeSettings(settings[c], m, c, s)
				}
			}
		}
		for name, s := range settings {
			t.caps[v] = append(t.caps[v], declaredCapability{name: name, settings: s})
		}
		if declared := extensionSettings(exts, v); declared != nil {
			t.caps[v] = append(t.caps[v], declaredCapability{name: extensionsCapability, settings: declared})
		}
		sort.Slice(t.caps[v], func(i, j int) bool { return t.caps[v][i].name < t.caps[v][j].name })
	}
	return t
}

// extensionMethods checks exts (a setup mistake panics) and returns their
// methods, each with its extension's Revisions when it has none.
func extensionMethods(exts []Extension) []Method {
	var out []Method
	seen := map[string]bool{}
	for _, x := range exts {
		switch {
		case x.ID == "" || strings.ContainsAny(x.ID, " \t\r\n"):
			panic(fmt.Sprintf("mcpmw: an Extension's ID is %q: want its identifier, such as %q", x.ID, ExtensionTasks))
		case seen[x.ID]:
			panic(fmt.Sprintf("mcpmw: extension %q is given twice", x.ID))
		}
		seen[x.ID] = true
		checkRevisions("extension "+strconv.Quote(x.ID), x.Revisions)
		for _, m := range x.Methods {
			if m.Capability != "" {
				panic(fmt.Sprintf("mcpmw: method %q of extension %q has Capability %q: an extension's methods belong to the extension", m.Name, x.ID, m.Capability))
			}
			if m.Revisions == nil {
				m.Revisions = x.Revisions
			}
			m.extension = x.ID
			out = append(out, m)
		}
	}
	return out
}

// extensionSettings returns the declaration of the extensions of exts
// that revision v has, by ID, or nil when it has none.
func extensionSettings(exts []Extension, v revision) map[string]any {
	var out map[string]any
	for _, x := range exts {
		if !hasRevision(x.Revisions, v) {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		if x.Settings == nil {
			out[x.ID] = map[string]any{}
		} else {
			out[x.ID] = x.Settings
		}
	}
	return out
}

// mergeSettings adds what method m sets for capability c to dst, and
// panics when another method of the same revision set a key differently.
func mergeSettings(dst map[string]any, m *Method, c string, src map[string]any) {
	for k, v := range src {
		if old, ok := dst[k]; ok && fmt.Sprint(old) != fmt.Sprint(v) {
			panic(fmt.Sprintf("mcpmw: method %q sets %s.%s to %v, another method of %s to %v", m.Name, c, k, v, c, old))
		}
		dst[k] = v
	}
}

// checkMethod panics on a Method that cannot be served.
func checkMethod(m *Method) {
	switch {
	case m.Name == "":
		panic("mcpmw: a Method has no Name")
	case m.Handle == nil:
		panic(fmt.Sprintf("mcpmw: method %q has no Handle func", m.Name))
	case m.Capability == extensionsCapability:
		panic(fmt.Sprintf("mcpmw: method %q has Capability %q: declare an extension, and its methods, in Options.Extensions", m.Name, m.Capability))
	}
	checkRevisions("method "+strconv.Quote(m.Name), m.Revisions)
}

// checkRevisions panics when revs, given to what, lists a revision this
// package does not serve.
func checkRevisions(what string, revs []string) {
	for _, v := range revs {
		if v != LatestVersion && !servedLegacy(v) {
			panic(fmt.Sprintf("mcpmw: %s lists revision %q, which this package does not serve (%v)", what, v, supportedVersions))
		}
	}
}

// has reports whether the method exists in revision v.
func (m *Method) has(v revision) bool { return hasRevision(m.Revisions, v) }

// hasRevision reports whether revs, a Revisions list (nil: every served
// revision), has v.
func hasRevision(revs []string, v revision) bool {
	if revs == nil {
		return true
	}
	for _, name := range revs {
		if name == v.String() {
			return true
		}
	}
	return false
}

// A route is where the method table sends a request: its method and
// what the method's Target func found, looked up once, right after the
// request was parsed, so that the record names what a request acted on
// even when the revision's rules refuse it. The refusals wait their turn:
// serve answers them in the suite's order, after checkRevision.
type route struct {
	method   *Method   // nil when the table (or the revision) does not have it
	named    string    // the member of params Mcp-Name mirrors (Method.NameParam), served or not
	notFound *Response // -32601 for a request (not a notification) of such a method
	target   *Target   // what method.Target found, if it has one
	missed   *Response // what method.Target answered instead
}

// route finds the method of req and, when it has a Target func, its
// target. A request (not a notification) of a method the table does not
// have, or that the request's revision does not have, gets -32601; a
// notification of one has no method, and the dispatcher accepts it.
func (t *methodTable) route(req *Request) route {
	m := t.byName[req.Method]
	var r route
	if m != nil && m.Target != nil {
		r.target, r.missed = m.Target(req)
	}
	if m != nil {
		r.named = m.NameParam
	} else if k := t.known[req.Method]; k != nil {
		r.named = k.NameParam
	}
	switch resp := t.notServed(req, m); {
	case resp == nil:
		r.method = m
	case !req.IsNotification():
		r.notFound = resp
	}
	return r
}

// notServed is the -32601 to a request of m, when the table does not
// have the method (m is nil) or the request's revision does not have it;
// nil when m serves it. A method of the protocol the endpoint does not
// serve is named as the capability or extension it lacks.
func (t *methodTable) notServed(req *Request, m *Method) *Response {
	switch {
	case m != nil && m.has(req.revision()):
		return nil
	case m == nil:
		why := ""
		switch k := t.known[req.Method]; {
		case k == nil:
		case k.Capability != "":
			why = " (this server does not offer " + k.Capability + ")"
		case k.extension != "":
			why = " (this server does not serve the extension " + k.extension + ")"
		}
		return methodNotFound(req, why)
	case req.revision().legacy():
		return methodNotFound(req, " (it belongs to "+LatestVersion+"; this request speaks "+req.Version+")")
	default:
		return methodNotFound(req, " (removed in "+LatestVersion+")")
	}
}

// Dispatch runs the method of req, after Options.Middleware: the one the
// handler routed it to, when the request still names it. A middleware
// that rewrote the method (or dispatched a request of its own, with a
// context of its own) gets the method the request now names, routed
// here, whose handler then finds and gates its target itself (see
// AdmittedTarget): nothing the gate checked holds for another method.
func (t *methodTable) Dispatch(ctx context.Context, req *Request) *Response {
	if resp := ignoredRequest(req); resp != nil { // a middleware's own, say: the handler stops the client's
		return resp
	}
	if info := callFrom(ctx); info != nil && info.method != nil && info.method.Name == req.Method {
		return info.method.Handle(ctx, req)
	}
	m := t.byName[req.Method]
	if resp := t.notServed(req, m); resp != nil {
		if req.IsNotification() {
			return accepted(capEcho(req.Method))
		}
		return resp
	}
	return m.Handle(ctx, req)
}

// AdmittedTarget returns the target of req for the Handle of a method
// whose Target func is find, checked as the gate checks it. It is the one
// re-check after Options.Middleware, shared by every method with a
// target, the built-in ones too: when req is still the request the
// handler admitted (the same method, the same params), it is the target
// the gate admitted, looked up once, with what find put in its Found.
// Otherwise a middleware has rewritten the request (or the method runs
// without the gate, as for a notification): the target is found again
// and the caller's permission for it and the client's capabilities
// checked here, as the gate would have (the list is a courtesy; the call
// check is the gate). The Response, when not nil, is the answer: find's
// own refusal, a 403 naming only the target, or a -32021.
func AdmittedTarget(ctx context.Context, req *Request, find func(*Request) (*Target, *Response)) (*Target, *Response) {
	if info := callFrom(ctx); info != nil && info.admits(req) {
		return info.target, nil
	}
	t, resp := find(req)
	if resp != nil {
		return nil, resp
	}
	if !req.Caller.Can(t.Permission) {
		return nil, Denied(t)
	}
	if resp := clientCapabilityError(t, req); resp != nil {
		return nil, resp
	}
	return t, nil
}

// nameAndArguments reads what a request of method for a kind's entry
// named by params.name (tools/call, prompts/get) must carry: the name, as
// a string, and arguments that are absent, null or an object (what they
// must be, argsMust, says so in the -32602).
func nameAndArguments(req *Request, method, kind, argsMust string) (string, *Response) {
	name, ok := req.StringParam("name")
	if !ok {
		return "", ErrorResponse(CodeInvalidParams, "Invalid params: "+method+" needs params.name, the "+kind+"'s name as a string")
	}
	switch args := req.Param("arguments"); jsonwire.KindOf(args) {
	case jsonwire.KindNone, jsonwire.KindNull, jsonwire.KindObject:
		return name, nil
	default:
		resp := ErrorResponse(CodeInvalidParams, "Invalid params: params.arguments must be "+argsMust+", not "+jsonwire.KindOf(args).String())
		resp.Target = capEcho(name)
		return "", resp
	}
}

// UnknownTarget is the -32602 to a request naming no entry of kind
// ("tool", "skill") called name: what a Target func answers when it finds
// nothing. The name is capped in the message and the record, as every
// echo of what a client sent.
func UnknownTarget(kind, name string) *Response {
	resp := ErrorResponse(CodeInvalidParams, "Unknown "+kind+": "+capEcho(name))
	resp.Target = capEcho(name)
	return resp
}

// admitTarget takes the request's target, as route found it, and checks, in this order, that
// the caller may use it, that the Mcp-Param-* headers mirror its
// arguments, and that the client declared what it needs. The permission
// comes first: a caller that may not use the target learns nothing about
// it beyond the 403.
func admitTarget(req *Request, rt route, resourceMetadata string) (*Target, *answer) {
	if rt.method.Target == nil {
		return nil, nil
	}
	if rt.missed != nil {
		return nil, &answer{resp: rt.missed}
	}
	target := rt.target
	if !req.Caller.Can(target.Permission) {
		return nil, deniedAnswer(req.Caller, target, resourceMetadata)
	}
	if a := checkParamHeaders(target, req); a != nil {
		return nil, a
	}
	return target, checkClientCapabilities(target, req)
}

// Denied is the answer to a caller without the permission target needs,
// exactly as the gate answers it: HTTP 403 with an insufficient_scope
// challenge in the scheme of the caller's token, naming the permission as
// the scope that would do (which drives a client's step-up
// authorisation) and the resource metadata when the Handler has some;
// and a JSON-RPC error naming only the target's kind and name, capped,
// never its arguments, schema or contents. A method that checks a
// permission itself, beyond its Target's, answers with it.
func Denied(target *Target) *Response {
	name := capEcho(target.Name)
	return &Response{
		Error:   &Error{Code: CodeInvalidParams, Message: "Forbidden: the caller may not use " + target.kind() + " " + strconv.Quote(name)},
		Outcome: OutcomeDenied,
		Target:  name,
		Summary: "caller lacks permission " + capEcho(string(target.Permission)),
		denied:  target.Permission,
	}
}

func methodNotFound(req *Request, why string) *Response {
	return ErrorResponse(CodeMethodNotFound, "Method not found: "+capEcho(req.Method)+why)
}

// accepted is the Response to a notification or client response: 202.
func accepted(summary string) *Response {
	return &Response{Outcome: OutcomeAccepted, Summary: summary}
}

// isNotificationMethod reports whether the method name is a notification's:
// the protocol names every one "notifications/…" (notifications/cancelled,
// notifications/initialized). Every other method is a request's.
func isNotificationMethod(name string) bool { return strings.HasPrefix(name, "notifications/") }

// ignoredRequest is the answer to req when it names a request's method
// (tools/call, prompts/get, an application's "app/sync") but has no id:
// it is not a request, so nothing runs it (neither the method nor any
// middleware, nor the permission gate: there is nothing to refuse), and
// as a notification the server does not handle it is accepted (202) and
// recorded as ignored. It is nil for anything else.
func ignoredRequest(req *Request) *Response {
	if !req.IsNotification() || isNotificationMethod(req.Method) {
		return nil
	}
	return accepted("ignored: " + capEcho(req.Method) + " sent as a notification (no id); a request needs an id, and nothing ran")
}
