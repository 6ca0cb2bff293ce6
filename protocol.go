package mcpmw

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
)

// Protocol revisions this package serves.
const (
	LatestVersion   = "2026-07-28" // stateless: per-request _meta, server/discover
	Version20251125 = "2025-11-25" // legacy: initialize handshake
	Version20250618 = "2025-06-18" // legacy: initialize handshake, no icons
)

// supportedVersions is listed by server/discover and in -32022 errors.
var supportedVersions = []string{LatestVersion, Version20251125, Version20250618}

// isLegacyVersion reports whether v names a revision that negotiates through
// initialize, served or not.
func isLegacyVersion(v string) bool {
	switch v {
	case "2024-11-05", "2025-03-26", Version20250618, Version20251125:
		return true
	}
	return false
}

func servedLegacy(v string) bool { return v == Version20250618 || v == Version20251125 }

// Implementation describes this server to clients (serverInfo).
type Implementation struct {
	Name        string // required on the wire; defaults to "mcp-server"
	Version     string // defaults to "0.0.0"
	Title       string // optional display name
	Description string // optional; not sent to 2025-06-18 clients
	WebsiteURL  string // optional; not sent to 2025-06-18 clients
	Icons       []Icon // optional; not sent to 2025-06-18 clients
}

// An Icon is an image a client may show for a server or a tool.
type Icon struct {
	Src      string   // an https: or data: URI
	MimeType string   // optional
	Sizes    []string // optional, e.g. "48x48" or "any"
	Theme    string   // optional: "light" or "dark"
}

func appendIcons(dst []byte, icons []Icon) []byte {
	dst = append(dst, '[')
	for i, ic := range icons {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"src":`...)
		dst = appendString(dst, ic.Src)
		if ic.MimeType != "" {
			dst = append(dst, `,"mimeType":`...)
			dst = appendString(dst, ic.MimeType)
		}
		if len(ic.Sizes) > 0 {
			dst = append(dst, `,"sizes":[`...)
			for j, s := range ic.Sizes {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendString(dst, s)
			}
			dst = append(dst, ']')
		}
		if ic.Theme != "" {
			dst = append(dst, `,"theme":`...)
			dst = appendString(dst, ic.Theme)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendImplementation encodes impl as the revision v defines it.
func appendImplementation(dst []byte, impl Implementation, v string) []byte {
	dst = append(dst, `{"name":`...)
	dst = appendString(dst, impl.Name)
	if impl.Title != "" {
		dst = append(dst, `,"title":`...)
		dst = appendString(dst, impl.Title)
	}
	dst = append(dst, `,"version":`...)
	dst = appendString(dst, impl.Version)
	if v != Version20250618 {
		if impl.Description != "" {
			dst = append(dst, `,"description":`...)
			dst = appendString(dst, impl.Description)
		}
		if impl.WebsiteURL != "" {
			dst = append(dst, `,"websiteUrl":`...)
			dst = appendString(dst, impl.WebsiteURL)
		}
		if len(impl.Icons) > 0 {
			dst = append(dst, `,"icons":`...)
			dst = appendIcons(dst, impl.Icons)
		}
	}
	return append(dst, '}')
}

// Capabilities are server capabilities, keyed as in the MCP schema
// ("resources", "prompts", "completions", "logging", "experimental",
// "extensions"), each with its settings object:
//
//	mcpmw.Capabilities{"resources": {"listChanged": false}, "completions": {}}
type Capabilities map[string]map[string]any

// methodCapability names the server capability a method belongs to, or "" for
// methods every server has.
func methodCapability(method string) string {
	switch method {
	case "tools/list", "tools/call":
		return "tools"
	case "resources/list", "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe":
		return "resources"
	case "prompts/list", "prompts/get":
		return "prompts"
	case "completion/complete":
		return "completions"
	case "logging/setLevel":
		return "logging"
	}
	return ""
}

// removedIn2026 lists methods 2026-07-28 no longer has.
func removedIn2026(method string) bool {
	switch method {
	case "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		return true
	}
	return false
}

// protocol holds what a handler says about itself, encoded once at New.
type protocol struct {
	caps         map[string]bool // advertised capability names
	discover     []byte          // the whole server/discover result
	initialize   map[string][]byte
	serverMeta   []byte // `"_meta":{"io.modelcontextprotocol/serverInfo":{...}}`
	ttlMs        int64
	instructions string
	sessionIDs   bool // Options.LegacySessionIDs
}

func newProtocol(impl Implementation, instructions string, caps Capabilities, ttlMs int64) *protocol {
	p := &protocol{caps: make(map[string]bool, len(caps)), initialize: make(map[string][]byte, 2), ttlMs: ttlMs, instructions: instructions}
	names := make([]string, 0, len(caps))
	for name := range caps {
		names = append(names, name)
		p.caps[name] = true
	}
	sort.Strings(names)
	capsJSON := []byte{'{'}
	for i, name := range names {
		if i > 0 {
			capsJSON = append(capsJSON, ',')
		}
		capsJSON = appendString(capsJSON, name)
		capsJSON = append(capsJSON, ':')
		settings := caps[name]
		if settings == nil {
			settings = map[string]any{}
		}
		raw, err := json.Marshal(settings)
		if err != nil {
			panic("mcpmw: Capabilities[" + strconv.Quote(name) + "] cannot be encoded: " + err.Error())
		}
		capsJSON = append(capsJSON, raw...)
	}
	capsJSON = append(capsJSON, '}')

	p.serverMeta = append([]byte(`"_meta":{"io.modelcontextprotocol/serverInfo":`), appendImplementation(nil, impl, LatestVersion)...)
	p.serverMeta = append(p.serverMeta, '}')

	d := []byte(`{"resultType":"complete","supportedVersions":[`)
	for i, v := range supportedVersions {
		if i > 0 {
			d = append(d, ',')
		}
		d = appendString(d, v)
	}
	d = append(d, `],"capabilities":`...)
	d = append(d, capsJSON...)
	if instructions != "" {
		d = append(d, `,"instructions":`...)
		d = appendString(d, instructions)
	}
	d = append(d, `,"ttlMs":`...)
	d = strconv.AppendInt(d, ttlMs, 10)
	d = append(d, `,"cacheScope":"public",`...)
	d = append(d, p.serverMeta...)
	p.discover = append(d, '}')

	for _, v := range []string{Version20251125, Version20250618} {
		b := []byte(`{"protocolVersion":`)
		b = appendString(b, v)
		b = append(b, `,"capabilities":`...)
		b = append(b, capsJSON...)
		b = append(b, `,"serverInfo":`...)
		b = appendImplementation(b, impl, v)
		if instructions != "" {
			b = append(b, `,"instructions":`...)
			b = appendString(b, instructions)
		}
		p.initialize[v] = append(b, '}')
	}
	return p
}

// gate answers -32601 for methods this revision or this server does not
// have, before any Dispatcher middleware runs; otherwise it calls next.
func (p *protocol) gate(next Dispatcher) Dispatcher {
	return DispatcherFunc(func(ctx context.Context, req *Request) *Response {
		if req.IsNotification() {
			return next.Dispatch(ctx, req)
		}
		if !req.Legacy() && removedIn2026(req.Method) {
			return methodNotFound(req, " (removed in "+LatestVersion+")")
		}
		if req.Legacy() && req.Method == "server/discover" {
			return methodNotFound(req, " (it belongs to "+LatestVersion+"; this request speaks "+req.Version+")")
		}
		if c := methodCapability(req.Method); c != "" && !p.caps[c] {
			return methodNotFound(req, " (this server does not offer "+c+")")
		}
		return next.Dispatch(ctx, req)
	})
}

func methodNotFound(req *Request, why string) *Response {
	return ErrorResponse(CodeMethodNotFound, "Method not found: "+capEcho(req.Method)+why)
}

// handleInitialize answers a legacy initialize as a pure function of the
// request: a served legacy version is echoed, anything else gets 2025-11-25.
// No session is created.
func (p *protocol) handleInitialize(req *Request) *Response {
	v, _ := req.StringParam("protocolVersion")
	if !servedLegacy(v) {
		v = Version20251125
	}
	resp := &Response{Result: p.initialize[v], Summary: "initialize " + v, complete: true}
	if p.sessionIDs {
		var b [16]byte
		_, _ = rand.Read(b[:])
		resp.Header = http.Header{"Mcp-Session-Id": {hex.EncodeToString(b[:])}}
	}
	return resp
}

// accepted is the Response to a notification or client response: 202.
func accepted(summary string) *Response {
	return &Response{Status: 202, Outcome: OutcomeAccepted, Summary: summary, complete: true}
}
