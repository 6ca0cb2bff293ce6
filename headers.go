package mcpmw

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"
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
		b, err := base64.StdEncoding.Strict().DecodeString(v[len(prefix) : len(v)-len(suffix)])
		if err != nil {
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
func headerError(msg string) *Response {
	return &Response{Status: http.StatusBadRequest, Error: &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + msg}}
}

func invalidMeta(msg string) *Response {
	return &Response{Status: http.StatusBadRequest, Error: &Error{Code: CodeInvalidParams, Message: "Invalid params: " + msg}}
}

// unsupportedVersion is the 400 -32022 answer naming what is served and,
// capped like every echo of a client value, what was asked for.
func unsupportedVersion(requested, msg string) *Response {
	return &Response{Status: http.StatusBadRequest, Error: &Error{
		Code:    CodeUnsupportedProtocolVersion,
		Message: msg,
		Data: struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{supportedVersions, capEcho(requested)},
	}}
}

// classify decides which revision req speaks, checks the request's protocol
// fields and headers against that revision's rules, in the order the
// conformance suite pins, and fills in req.Version and the client's
// declarations. A non-nil Response is the refusal to send.
func classify(req *Request, h http.Header) *Response {
	hv, hPresent, herr := singleHeader(h, headerProtocolVersion)
	if herr != nil {
		return headerError("MCP-Protocol-Version " + herr.Error())
	}
	hPresent = hPresent && hv != "" // an empty header says nothing
	if resp := checkKeys(req); resp != nil {
		return resp
	}
	metaRaw := req.param("_meta")
	mRaw := req.metaParam(metaProtocolVersion)
	var resp *Response
	if mRaw != nil || (hPresent && !isLegacyVersion(hv)) {
		resp = classifyModern(req, h, hv, hPresent, metaRaw, mRaw)
	} else {
		resp = classifyLegacy(req, hv, hPresent)
	}
	if resp == nil && (req.Legacy() || req.IsNotification()) {
		// 2026-07-28 requests must carry the routing headers and were
		// checked above. Elsewhere they are optional, but a gateway may
		// still route or police by them: when sent, they must match too,
		// or a downgrade would show the gateway one call and run another.
		resp = checkRouting(req, h, false)
	}
	return resp
}

// checkKeys refuses params whose readers could disagree (see keys.go): a
// key repeated in any object, or two protocol members differing only in
// case.
func checkKeys(req *Request) *Response {
	if req.Params == nil {
		return nil
	}
	if ptr, dup := duplicatePointer(req.Params); dup {
		return &Response{Status: http.StatusBadRequest, Error: &Error{Code: CodeInvalidParams,
			Message: "Invalid params: member " + quoteEcho(ptr) + " appears more than once (a JSON pointer into params); send each member once"}}
	}
	for _, ms := range [...][]member{req.parsed.params, req.parsed.meta} {
		if a, b, twins := caseTwins(ms); twins {
			return &Response{Status: http.StatusBadRequest, Error: &Error{Code: CodeInvalidParams,
				Message: "Invalid params: members " + quoteEcho(a) + " and " + quoteEcho(b) + " differ only in case; member names are case-sensitive, send one"}}
		}
	}
	return nil
}

func classifyModern(req *Request, h http.Header, hv string, hPresent bool, metaRaw, mRaw []byte) *Response {
	req.Version = LatestVersion
	if req.IsNotification() {
		return nil // no header or _meta rules for notifications
	}
	if !hPresent {
		return headerError("the MCP-Protocol-Version header is required")
	}
	switch {
	case req.Params == nil:
		return invalidMeta("params with _meta is required on " + LatestVersion + " requests")
	case kindOf(metaRaw) != kindObject:
		return invalidMeta("params._meta must be an object carrying " + metaProtocolVersion + " and " + metaClientCapabilities)
	case kindOf(mRaw) != kindString:
		return invalidMeta("_meta is missing " + metaProtocolVersion + " (a string)")
	}
	caps := req.metaParam(metaClientCapabilities)
	if kindOf(caps) != kindObject {
		return invalidMeta("_meta is missing " + metaClientCapabilities + " (an object; {} declares none)")
	}
	if lv := req.metaParam(metaLogLevel); lv != nil {
		if s, _ := unquote(lv); !validLogLevel(s) {
			return invalidMeta(metaLogLevel + " must be one of debug, info, notice, warning, error, critical, alert, emergency")
		}
	}
	m, _ := unquote(mRaw)
	if m != hv {
		return headerError("MCP-Protocol-Version " + quoteEcho(hv) + " does not match _meta protocolVersion " + quoteEcho(m))
	}
	if m != LatestVersion {
		msg := "Unsupported protocol version " + quoteEcho(m)
		if isLegacyVersion(m) {
			msg += ": per-request _meta versions are " + LatestVersion + " only; older revisions negotiate through initialize"
		}
		return unsupportedVersion(m, msg)
	}
	if resp := checkRouting(req, h, true); resp != nil {
		return resp
	}
	req.ClientCapabilities = caps
	req.ClientName, req.ClientVersion = clientInfo(req.metaParam(metaClientInfo))
	return nil
}

// checkRouting compares Mcp-Method and Mcp-Name with the body. When
// required is false (legacy revisions, notifications), an absent header is
// fine; one that is sent must still match.
func checkRouting(req *Request, h http.Header, required bool) *Response {
	mv, present, err := singleHeader(h, headerMethod)
	switch {
	case err != nil:
		return headerError("Mcp-Method " + err.Error())
	case !present && required:
		return headerError("the Mcp-Method header is required and must equal the body's method " + quoteEcho(req.Method))
	case present && mv != req.Method:
		return headerError("Mcp-Method header value " + quoteEcho(mv) + " does not match body method " + quoteEcho(req.Method))
	}
	var field string
	switch req.Method {
	case "tools/call", "prompts/get":
		field = "name"
	case "resources/read":
		field = "uri"
	default:
		return nil
	}
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

func classifyLegacy(req *Request, hv string, hPresent bool) *Response {
	switch {
	case req.Method == "initialize":
		v, _ := req.StringParam("protocolVersion")
		if !servedLegacy(v) {
			v = Version20251125
		}
		req.Version = v
		req.ClientCapabilities = req.Param("capabilities")
		req.ClientName, req.ClientVersion = clientInfo(req.param("clientInfo"))
		return nil
	case req.IsNotification():
		req.Version = Version20251125
		if servedLegacy(hv) {
			req.Version = hv
		}
		return nil
	case !hPresent:
		return headerError("the MCP-Protocol-Version header is required: send the version initialize negotiated, or speak " + LatestVersion + " with params._meta")
	case !servedLegacy(hv):
		return unsupportedVersion(hv, "Unsupported protocol version "+quoteEcho(hv))
	}
	req.Version = hv
	return nil
}

// clientInfo reads name and version from a clientInfo object, ignoring
// anything malformed: it is display-only.
func clientInfo(raw []byte) (name, version string) {
	var buf [4]member
	ms, ok := objectMembers(raw, buf[:0])
	if !ok {
		return "", ""
	}
	name, _ = unquote(lookup(ms, "name"))
	version, _ = unquote(lookup(ms, "version"))
	return capEcho(name), capEcho(version)
}

func validLogLevel(s string) bool {
	switch s {
	case "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency":
		return true
	}
	return false
}

// quoteEcho quotes a client-supplied value for an error message, capped.
func quoteEcho(s string) string { return "'" + capEcho(s) + "'" }
