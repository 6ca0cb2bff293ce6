package mcpmw

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// Header names of the Streamable HTTP transport.
const (
	headerProtocolVersion = "Mcp-Protocol-Version" // canonical form of MCP-Protocol-Version
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
)

// Keys of the 2026-07-28 request _meta.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
)

// errTooManyValues is returned when a header that must appear once repeats.
var errTooManyValues = errors.New("appears more than once")

// singleHeader returns the one value of header name, trimmed of optional
// whitespace. present is false when the header is absent.
func singleHeader(h http.Header, name string) (v string, present bool, err error) {
	vals := h[name]
	switch len(vals) {
	case 0:
		return "", false, nil
	case 1:
		return strings.Trim(vals[0], " \t"), true, nil
	default:
		return "", true, errTooManyValues
	}
}

// decodeHeaderValue decodes a header value that mirrors a body value: either
// plain visible ASCII (spaces and tabs inside allowed), or the sentinel form
// =?base64?<base64 of UTF-8>?= for anything else. Surrounding whitespace must
// already be trimmed.
func decodeHeaderValue(v string) (string, error) {
	const prefix, suffix = "=?base64?", "?="
	if len(v) >= len(prefix)+len(suffix) && strings.HasPrefix(v, prefix) && strings.HasSuffix(v, suffix) {
		enc := v[len(prefix) : len(v)-len(suffix)]
		// Strict still skips CR and LF, which no client's encoding holds.
		b, err := base64.StdEncoding.Strict().DecodeString(enc)
		if err != nil || strings.ContainsAny(enc, "\r\n") {
			return "", errors.New("has a malformed =?base64?…?= value")
		}
		if !utf8.Valid(b) {
			return "", errors.New("decodes to invalid UTF-8")
		}
		return string(b), nil
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", errors.New("holds characters that are not visible ASCII; encode it as =?base64?…?=")
		}
	}
	return v, nil
}

// headerError is the 400 -32020 answer for a routing header problem.
func headerError(msg string) *answer {
	return refusal(http.StatusBadRequest, CodeHeaderMismatch, "Header mismatch: "+msg)
}

// invalidMeta is the 400 -32602 answer for params._meta that break the
// 2026-07-28 rules (400, where other -32602 errors are 200: WIRE.md §1.1).
func invalidMeta(msg string) *answer {
	return refusal(http.StatusBadRequest, CodeInvalidParams, "Invalid params: "+msg)
}

// unsupportedVersion is the 400 -32022 answer naming what is served and,
// capped like every echo of a client value, what was asked for.
func unsupportedVersion(requested, msg string) *answer {
	return &answer{status: http.StatusBadRequest, resp: &Response{Error: &Error{
		Code:    CodeUnsupportedProtocolVersion,
		Message: msg,
		Data: struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{supportedVersions, capEcho(requested)},
	}}}
}

// checkRevision checks a request against the rules of the revision it
// speaks, in the order the conformance suite pins (WIRE.md §1.1), and the
// routing headers Mcp-Method and Mcp-Name against the body: required on
// 2026-07-28 requests, checked when sent everywhere else.
func checkRevision(req *Request, h http.Header, named string) *answer {
	hv, hPresent, herr := singleHeader(h, headerProtocolVersion)
	if herr != nil {
		return headerError("MCP-Protocol-Version " + herr.Error())
	}
	hPresent = hPresent && hv != "" // an empty header says nothing
	var a *answer
	switch {
	case req.IsNotification():
		// No header or _meta rules for notifications, on any revision.
	case req.Version == LatestVersion:
		a = checkModern(req, hv, hPresent)
	default:
		a = checkLegacy(req, hv, hPresent)
	}
	if a != nil {
		return a
	}
	return checkRouting(req, h, named, req.revision().requiresHeaders() && !req.IsNotification())
}

// checkModern applies the 2026-07-28 rules: the version header, then
// params._meta with its protocol version and client capabilities, then the
// header against _meta, then the version itself.
func checkModern(req *Request, hv string, hPresent bool) *answer {
	if !hPresent {
		return headerError("the MCP-Protocol-Version header is required")
	}
	if a := checkMeta(req); a != nil {
		return a
	}
	m, _ := jsonwire.Unquote(req.metaParam(metaProtocolVersion))
	if m != hv {
		return headerError("MCP-Protocol-Version " + quoteEcho(hv) + " does not match _meta protocolVersion " + quoteEcho(m))
	}
	if m != LatestVersion {
		msg := "Unsupported protocol version " + quoteEcho(m)
		if knownLegacy(m) {
			msg += ": per-request _meta versions are " + LatestVersion + " only; older revisions negotiate through initialize"
		}
		return unsupportedVersion(m, msg)
	}
	return nil
}

// checkMeta checks the members every 2026-07-28 request's _meta carries.
func checkMeta(req *Request) *answer {
	switch {
	case req.Params == nil:
		return invalidMeta("params with _meta is required on " + LatestVersion + " requests")
	case jsonwire.KindOf(req.param("_meta")) != jsonwire.KindObject:
		return invalidMeta("params._meta must be an object carrying " + metaProtocolVersion + " and " + metaClientCapabilities)
	case jsonwire.KindOf(req.metaParam(metaProtocolVersion)) != jsonwire.KindString:
		return invalidMeta("_meta is missing " + metaProtocolVersion + " (a string)")
	case jsonwire.KindOf(req.metaParam(metaClientCapabilities)) != jsonwire.KindObject:
		return invalidMeta("_meta is missing " + metaClientCapabilities + " (an object; {} declares none)")
	}
	if lv := req.metaParam(metaLogLevel); lv != nil {
		if s, _ := jsonwire.Unquote(lv); !validLogLevel(s) {
			return invalidMeta(metaLogLevel + " must be one of debug, info, notice, warning, error, critical, alert, emergency")
		}
	}
	return nil
}

// checkLegacy applies the legacy rules: initialize needs nothing; any other
// request names a served revision in MCP-Protocol-Version.
func checkLegacy(req *Request, hv string, hPresent bool) *answer {
	switch {
	case req.Method == handshakeMethod:
		return nil
	case !hPresent:
		return headerError("the MCP-Protocol-Version header is required: send the version initialize negotiated, or speak " + LatestVersion + " with params._meta")
	case !servedLegacy(hv):
		return unsupportedVersion(hv, "Unsupported protocol version "+quoteEcho(hv))
	}
	return nil
}

// checkRouting compares Mcp-Method and Mcp-Name with the body (Mcp-Name
// with params.<named>, for a method whose requests name something). When
// required is false (legacy revisions, notifications), an absent header is
// fine; one that is sent must still match: a gateway that routes or
// polices by these headers must never see one call while another runs.
func checkRouting(req *Request, h http.Header, named string, required bool) *answer {
	if a := checkMethodHeader(req, h, required); a != nil {
		return a
	}
	if named == "" {
		return nil
	}
	return checkNameHeader(req, h, named, required)
}

// checkMethodHeader compares Mcp-Method with the body's method.
func checkMethodHeader(req *Request, h http.Header, required bool) *answer {
	mv, present, err := singleHeader(h, headerMethod)
	switch {
	case err != nil:
		return headerError("Mcp-Method " + err.Error())
	case !present && required:
		return headerError("the Mcp-Method header is required and must equal the body's method " + quoteEcho(req.Method))
	case present && mv != req.Method:
		return headerError("Mcp-Method header value " + quoteEcho(mv) + " does not match body method " + quoteEcho(req.Method))
	}
	return nil
}

// checkNameHeader compares Mcp-Name, decoded, with params.<field>.
func checkNameHeader(req *Request, h http.Header, field string, required bool) *answer {
	nv, present, err := singleHeader(h, headerName)
	if err != nil {
		return headerError("Mcp-Name " + err.Error())
	}
	body, bodyOK := req.StringParam(field)
	if !present {
		if !bodyOK || !required {
			return nil // the method's own handler reports the missing param
		}
		return headerError("the Mcp-Name header is required and must equal params." + field + " " + quoteEcho(body))
	}
	decoded, err := decodeHeaderValue(nv)
	if err != nil {
		return headerError("Mcp-Name " + err.Error())
	}
	if !bodyOK || decoded != body {
		return headerError("Mcp-Name header value " + quoteEcho(decoded) + " does not match params." + field + " " + quoteEcho(body))
	}
	return nil
}
