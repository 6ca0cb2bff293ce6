package mcpmw

import (
	"context"
	"slices"
)

// The methods every endpoint serves, whatever its tools: the
// self-description of each revision (server/discover on 2026-07-28,
// initialize on the legacy ones) and the legacy revisions' no-op methods.

var (
	modernOnly = []string{LatestVersion}
	legacyOnly = []string{Version20251125, Version20250618}
)

var emptyObject = []byte("{}")

// builtinMethods returns the methods every endpoint has, answering from ad;
// logging adds logging/setLevel (and declares the logging capability).
// The legacy notifications/cancelled stops the running calls of calls, of
// whatever method.
func builtinMethods(ad *advertisement, logging bool, calls runningCalls) []Method {
	ms := []Method{
		{Name: "server/discover", Revisions: modernOnly, Handle: ad.answerDiscover, quick: true},
		{Name: handshakeMethod, Revisions: legacyOnly, Handle: ad.answerInitialize, quick: true, sessionID: true},
		{Name: "ping", Revisions: legacyOnly, Handle: answerEmpty, quick: true},
		{Name: "notifications/cancelled", Revisions: legacyOnly, Handle: cancelled(calls)},
	}
	if logging {
		// A stateless server has nothing to remember a log level in; the
		// legacy revisions only expect an empty result.
		ms = append(ms, Method{Name: "logging/setLevel", Capability: "logging", Revisions: legacyOnly, Handle: answerEmpty, quick: true})
	}
	return ms
}

// protocolMethods returns every method of the protocol's capabilities
// and of the extensions this package implements, whether or not an
// endpoint serves them, for what the protocol says of them (the member
// Mcp-Name mirrors, the capability a -32601 names). Their handlers are
// never called.
func protocolMethods() []Method {
	ms := slices.Concat((&toolMethods{}).methods(), (&promptMethods{}).methods(), (&resourceMethods{}).methods(), (&completionMethods{}).methods(),
		[]Method{{Name: "logging/setLevel", Capability: "logging", Revisions: legacyOnly, Handle: answerEmpty}})
	return append(ms, extensionMethods([]Extension{(*taskRunner)(nil).extension()})...)
}

// handshakeMethod is the legacy revisions' handshake, initialize: the one
// request that says its revision in its params (protocolVersion) rather
// than in a header, so the revision is read from it before the request is
// routed (readRevision), and it needs no MCP-Protocol-Version header
// (checkLegacy).
const handshakeMethod = "initialize"

// answerEmpty is the legacy revisions' empty result.
func answerEmpty(context.Context, *Request) *Response {
	return &Response{Result: emptyObject, encoded: true}
}

func (ad *advertisement) answerDiscover(context.Context, *Request) *Response {
	return &Response{Result: ad.discover, Summary: "discover", encoded: true}
}

// answerInitialize answers a legacy initialize as a pure function of the
// request: a served legacy version is echoed, anything else gets
// 2025-11-25 (the request's Version, as its revision was read). No session
// is created.
func (ad *advertisement) answerInitialize(_ context.Context, req *Request) *Response {
	v := req.revision()
	return &Response{Result: ad.initialize[v], Summary: "initialize " + v.String(), encoded: true}
}
