package mcpmw

import (
	"encoding/json"
	"net/http"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// parseRequest makes the Request of a JSON-RPC request or notification:
// its params read once, with every key that two readers could read
// differently refused, and the revision it speaks with what the client
// declares in it (readRevision). It checks nothing of the revision's rules:
// checkRevision does.
//
// It fills req, which the caller provides (as json.Unmarshal fills a value)
// so that a request costs no allocation of its own; at is the endpoint it
// arrived at.
func parseRequest(req *Request, env envelope, caller Caller, h http.Header, at endpointName) *answer {
	*req = Request{ID: env.id, Method: env.method, Params: env.params, Caller: caller, Header: h, endpoint: at}
	req.parsed.read(req.Params)
	if a := checkKeys(req); a != nil {
		return a
	}
	readRevision(req, h)
	return nil
}

// Object keys are where JSON readers disagree. Given {"a":1,"a":2} this
// package's scanner reads the first member and encoding/json the last;
// given {"region":"us","Region":"eu"} encoding/json fills a field tagged
// "region" from "Region", because it matches names case-insensitively,
// while every exact reader (the Mcp-Param-* check, Args' accessors, a
// gateway) sees "us". Two readers of one request must never act on two
// values, so the request path keeps three rules:
//
//   - no object anywhere in params has the same key twice (-32602, naming
//     the JSON pointer of the repeat);
//   - the protocol's own members (params and params._meta, where
//     applications' middleware decode with encoding/json) have no two keys
//     that differ only in case;
//   - Args.Decode matches keys exactly: a key that encoding/json would fill
//     a struct field from only by folding case is refused, as the official
//     Go SDK refuses it, so the tool reads exactly the members the checks
//     read. (Refusing every case-insensitive pair in arguments instead would
//     still let a lone "Region" fill the field tagged "region" unseen.)

// checkKeys refuses params whose readers could disagree: a key repeated in
// any object, or two protocol members differing only in case.
func checkKeys(req *Request) *answer {
	if req.Params == nil {
		return nil
	}
	if ptr, dup := jsonwire.DuplicatePointer(req.Params); dup {
		return refusal(http.StatusBadRequest, CodeInvalidParams,
			"Invalid params: member "+quoteEcho(ptr)+" appears more than once (a JSON pointer into params); send each member once")
	}
	for _, ms := range [...][]jsonwire.Member{req.parsed.params, req.parsed.meta} {
		if a, b, twins := jsonwire.CaseTwins(ms); twins {
			return refusal(http.StatusBadRequest, CodeInvalidParams,
				"Invalid params: members "+quoteEcho(a)+" and "+quoteEcho(b)+" differ only in case; member names are case-sensitive, send one")
		}
	}
	return nil
}

// readRevision decides which revision req speaks (WIRE.md §1) and reads
// what the client declares in it: Version, ClientCapabilities, ClientName
// and ClientVersion. A request that names no served revision keeps an
// empty Version; checkRevision refuses it.
func readRevision(req *Request, h http.Header) {
	hv, hPresent, _ := singleHeader(h, headerProtocolVersion)
	hPresent = hPresent && hv != "" // an empty header says nothing
	switch {
	case req.metaParam(metaProtocolVersion) != nil || (hPresent && !knownLegacy(hv)):
		req.Version = LatestVersion
		if caps := req.metaParam(metaClientCapabilities); jsonwire.KindOf(caps) == jsonwire.KindObject {
			req.ClientCapabilities = caps
		}
		req.ClientName, req.ClientVersion = clientInfo(req.metaParam(metaClientInfo))
	case req.Method == handshakeMethod:
		v, _ := req.StringParam("protocolVersion")
		if !servedLegacy(v) {
			v = Version20251125 // a legacy initialize is answered with the latest legacy revision
		}
		req.Version = v
		req.ClientCapabilities = req.Param("capabilities")
		req.ClientName, req.ClientVersion = clientInfo(req.param("clientInfo"))
	case req.IsNotification():
		req.Version = Version20251125
		if servedLegacy(hv) {
			req.Version = hv
		}
	case servedLegacy(hv):
		req.Version = hv
	}
}

// clientInfo reads name and version from a clientInfo object, ignoring
// anything malformed: it is display-only.
func clientInfo(raw []byte) (name, version string) {
	var buf [4]jsonwire.Member
	ms, ok := jsonwire.ObjectMembers(raw, buf[:0])
	if !ok {
		return "", ""
	}
	name, _ = jsonwire.Unquote(jsonwire.Lookup(ms, "name"))
	version, _ = jsonwire.Unquote(jsonwire.Lookup(ms, "version"))
	return capEcho(name), capEcho(version)
}

// A Request is one JSON-RPC request or notification, validated for its
// protocol revision, as a Dispatcher sees it. Its byte slices alias the
// request body: treat them as read-only and copy what must outlive the call.
//
// A middleware may rewrite a request by replacing Params (never by changing
// its bytes in place) before calling the next Dispatcher: everything after
// it, the tool included, reads the new value. Version, Caller and the
// client's declarations were decided from the original request and stay.
type Request struct {
	ID      json.RawMessage // exactly as sent; nil for a notification
	Method  string
	Params  json.RawMessage // the params object, or nil when absent
	Version string          // the protocol revision the request speaks, e.g. "2026-07-28"
	Caller  Caller          // never nil: authentication has succeeded
	Header  http.Header     // the HTTP request's headers

	// ClientCapabilities is the client's capabilities object: from _meta on
	// 2026-07-28 requests, from params.capabilities on initialize, and nil on
	// other legacy requests (a stateless server cannot remember them).
	ClientCapabilities json.RawMessage
	// ClientName and ClientVersion are the client's self-description, as
	// declared; use them for display and logs, never for decisions.
	ClientName, ClientVersion string

	parsed   parsedParams // the handler's reading of Params, while Params is unchanged
	endpoint endpointName // where the request arrived, for its requestState
}

// parsedParams is the handler's one reading of a request's params, made
// when it parsed the body, so that the request path looks members up
// without scanning again. It belongs to the exact Params slice it was read
// from: when Params is replaced (by a middleware, or in a Request built by
// hand), the Request's methods read the new Params instead, so nothing ever
// acts on a value the request no longer holds.
type parsedParams struct {
	of     []byte            // the Params this reading is of; nil when there is none
	params []jsonwire.Member // top-level members of of
	meta   []jsonwire.Member // members of of._meta
	name   string            // params.name decoded, when nameOK
	nameOK bool
	buf    [8]jsonwire.Member // backing store for params and meta, saving two allocations
}

// read sets p to the members of params, a JSON object that parseEnvelope
// has already validated.
func (p *parsedParams) read(params []byte) {
	*p = parsedParams{of: params}
	if params == nil {
		return
	}
	p.params = jsonwire.MembersInto(params, p.buf[:0:4])
	if metaRaw := jsonwire.Lookup(p.params, "_meta"); jsonwire.KindOf(metaRaw) == jsonwire.KindObject {
		p.meta = jsonwire.MembersInto(metaRaw, p.buf[4:8:8])
	}
	p.name, p.nameOK = jsonwire.Unquote(jsonwire.Lookup(p.params, "name"))
}

// current reports whether p is a reading of params: the same bytes, not
// merely equal ones. (Empty params have no members, read or not.)
func (p *parsedParams) current(params []byte) bool { return sameBytes(p.of, params) }

// sameBytes reports whether a and b are the same bytes, not merely equal
// ones. (Empty slices are the same.)
func sameBytes(a, b []byte) bool { return idOf(a) == idOf(b) }

// A bytesID names a byte slice by its first byte and its length: equal
// IDs are the same bytes (sameBytes), and an ID is smaller to keep than
// the slice.
type bytesID struct {
	first *byte
	n     int
}

// idOf returns the bytesID of b; every empty slice has the zero one.
func idOf(b []byte) bytesID {
	if len(b) == 0 {
		return bytesID{}
	}
	return bytesID{&b[0], len(b)}
}

// param returns the raw value of the named top-level member of r.Params.
func (r *Request) param(name string) []byte {
	if r.parsed.current(r.Params) {
		return jsonwire.Lookup(r.parsed.params, name)
	}
	return scanMember(r.Params, name)
}

// metaParam returns the raw value of the named member of params._meta.
func (r *Request) metaParam(name string) []byte {
	if r.parsed.current(r.Params) {
		return jsonwire.Lookup(r.parsed.meta, name)
	}
	return scanMember(scanMember(r.Params, "_meta"), name)
}

// scanMember returns the value of the first member named name of the JSON
// object doc, or nil when doc is not a valid JSON object or has no such
// member. It checks doc first: a Params set by a middleware or by hand has
// not been through the parser.
func scanMember(doc []byte, name string) []byte {
	if !json.Valid(doc) {
		return nil
	}
	it, _ := jsonwire.IterMembers(doc) // not an object: it has no members
	for m, more := it.Next(); more; m, more = it.Next() {
		if m.Is(name) {
			return m.Value
		}
	}
	return nil
}

// IsNotification reports whether the request has no id and so gets no answer.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Legacy reports whether the request speaks a revision older than
// 2026-07-28 (that is, one negotiated through initialize).
func (r *Request) Legacy() bool { return r.Version != LatestVersion }

// revision is the revision the request speaks (see revisionOf).
func (r *Request) revision() revision { return revisionOf(r.Version) }

// Param returns the raw value of the named top-level member of Params, or
// nil when it is absent (or Params is not a JSON object).
func (r *Request) Param(name string) json.RawMessage {
	return json.RawMessage(r.param(name))
}

// StringParam returns the named top-level member of Params when it is a
// string; ok is false when it is absent or of another type.
func (r *Request) StringParam(name string) (s string, ok bool) {
	if name == "name" && r.parsed.current(r.Params) {
		return r.parsed.name, r.parsed.nameOK
	}
	return jsonwire.Unquote(r.param(name))
}
