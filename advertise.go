package mcpmw

import (
	"encoding/json"
	"strconv"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// What a handler says about itself (its capabilities, its serverInfo, its
// instructions) does not change while it serves, so the answers to
// server/discover and initialize, and the serverInfo _meta member of every
// 2026-07-28 result, are encoded once, when the handler is built.

// advertisement holds a handler's self-description, encoded.
type advertisement struct {
	discover   []byte                // the whole server/discover result
	initialize [revisionCount][]byte // the initialize result of each legacy revision
	serverMeta []byte                // `"_meta":{"io.modelcontextprotocol/serverInfo":{...}}`
}

// newAdvertisement encodes what a handler serving caps (per revision) says
// about itself. It panics when a capability's settings cannot be encoded
// as JSON.
func newAdvertisement(impl Implementation, instructions string, caps *[revisionCount][]declaredCapability, ttlMs int64) *advertisement {
	a := &advertisement{}
	a.serverMeta = append([]byte(`"_meta":{"io.modelcontextprotocol/serverInfo":`), appendImplementation(nil, impl, rev20260728)...)
	a.serverMeta = append(a.serverMeta, '}')

	d := append(openResult(nil, rev20260728), `"supportedVersions":[`...)
	for i, v := range supportedVersions {
		if i > 0 {
			d = append(d, ',')
		}
		d = jsonwire.AppendString(d, v)
	}
	d = append(d, `],"capabilities":`...)
	d = appendCapabilities(d, caps[rev20260728])
	if instructions != "" {
		d = append(d, `,"instructions":`...)
		d = jsonwire.AppendString(d, instructions)
	}
	a.discover = closeCachedResult(d, rev20260728, ttlMs, "public", a.serverMeta)

	for v := range revisionCount {
		if !v.legacy() {
			continue
		}
		b := []byte(`{"protocolVersion":`)
		b = jsonwire.AppendString(b, v.String())
		b = append(b, `,"capabilities":`...)
		b = appendCapabilities(b, caps[v])
		b = append(b, `,"serverInfo":`...)
		b = appendImplementation(b, impl, v)
		if instructions != "" {
			b = append(b, `,"instructions":`...)
			b = jsonwire.AppendString(b, instructions)
		}
		a.initialize[v] = append(b, '}')
	}
	return a
}

// appendCapabilities encodes the declared capabilities, sorted by name,
// as a ServerCapabilities object.
func appendCapabilities(dst []byte, caps []declaredCapability) []byte {
	dst = append(dst, '{')
	for i, c := range caps {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonwire.AppendString(dst, c.name)
		dst = append(dst, ':')
		raw, err := json.Marshal(c.settings)
		if err != nil {
			panic("mcpmw: the settings of capability " + strconv.Quote(c.name) + " cannot be encoded: " + err.Error())
		}
		dst = append(dst, raw...)
	}
	return append(dst, '}')
}
