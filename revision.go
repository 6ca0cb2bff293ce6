package mcpmw

// Protocol revisions this package serves.
const (
	LatestVersion   = "2026-07-28" // stateless: per-request _meta, server/discover
	Version20251125 = "2025-11-25" // legacy: initialize handshake
	Version20250618 = "2025-06-18" // legacy: initialize handshake, no icons
)

// supportedVersions is listed by server/discover and in -32022 errors.
var supportedVersions = []string{LatestVersion, Version20251125, Version20250618}

// A revision is a protocol revision this package serves. It answers every
// question whose answer differs between revisions, so that the rest of the
// code asks it rather than comparing version strings.
type revision uint8

// The served revisions. Each value is also the index of its slot in arrays
// of per-revision encodings (tool definitions, list pages).
const (
	rev20260728 revision = iota
	rev20251125
	rev20250618
	revisionCount
)

// revisionOf returns the revision a Request.Version names. A version this
// package does not serve (a legacy request refused before dispatch, or a
// Request built by hand) reads as 2025-11-25, the legacy rules being the
// ones that assume least of the client.
func revisionOf(version string) revision {
	switch version {
	case LatestVersion:
		return rev20260728
	case Version20250618:
		return rev20250618
	default:
		return rev20251125
	}
}

// String returns the revision's version string.
func (v revision) String() string {
	return [...]string{LatestVersion, Version20251125, Version20250618}[v]
}

// legacy reports whether the revision negotiates through initialize, with
// no per-request _meta, server/discover or result envelope.
func (v revision) legacy() bool { return v != rev20260728 }

// envelope reports whether results carry resultType, serverInfo in _meta
// and, for lists, ttlMs and cacheScope.
func (v revision) envelope() bool { return v == rev20260728 }

// icons reports whether Implementation, Tool, Prompt, Resource and
// ResourceTemplate definitions may carry icons (and Implementation its
// description and websiteUrl).
func (v revision) icons() bool { return v != rev20250618 }

// anyStructuredContent reports whether structuredContent and outputSchema
// may be any JSON value (schema); the legacy revisions allow only objects.
func (v revision) anyStructuredContent() bool { return v == rev20260728 }

// requiresHeaders reports whether MCP-Protocol-Version, Mcp-Method,
// Mcp-Name and Mcp-Param-* must be sent; on the legacy revisions they are
// optional, but checked when sent.
func (v revision) requiresHeaders() bool { return v == rev20260728 }

// perRequestCapabilities reports whether each request declares the
// client's capabilities (so they can be checked before a tool runs).
func (v revision) perRequestCapabilities() bool { return v == rev20260728 }

// asksOnStream reports whether a tool asks its client (Ask) with a
// request on the call's event stream, answered by a POST of its own; on
// 2026-07-28 it ends the round with an input_required result instead.
func (v revision) asksOnStream() bool { return v != rev20260728 }

// methodNotFoundStatus is the HTTP status of -32601: 404 as 2026-07-28
// requires; 200 on the legacy revisions, whose clients (the TypeScript SDK)
// drop the JSON-RPC error of a 404.
func (v revision) methodNotFoundStatus() int {
	if v == rev20260728 {
		return 404
	}
	return 200
}

// cancelsByNotification reports whether a client cancels a call with
// notifications/cancelled (on 2026-07-28 it closes the stream instead).
func (v revision) cancelsByNotification() bool { return v.legacy() }

// servedLegacy reports whether v names a legacy revision this package
// serves.
func servedLegacy(v string) bool { return v == Version20250618 || v == Version20251125 }

// knownLegacy reports whether v names a revision that negotiates through
// initialize, served or not.
func knownLegacy(v string) bool {
	switch v {
	case "2024-11-05", "2025-03-26", Version20250618, Version20251125:
		return true
	}
	return false
}
