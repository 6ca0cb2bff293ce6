package mcpmw

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// Every WWW-Authenticate challenge the handler writes is built here, from
// one vocabulary (Challenge): the answer to a failed authentication (the
// endpoint's own challenge, Options.Challenge, or those the Authenticator's
// error carries, on the 401, 400 or 403 it chooses) and the gate's 403
// insufficient_scope, in the scheme the caller's token came with (RFC 6750
// §3, RFC 9449 §7.1, RFC 9728 §5.1). Every value is written as a quoted
// string, escaped (quoteParam); error and error_description, which may
// quote what a client sent, are capped (echo.go) and kept to the
// characters RFC 6750 allows in them.

// A Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): an authentication scheme and what it tells the client to do
// next. An Authenticator chooses the challenges of its refusal by returning
// an error (or one wrapping an error) with a method
//
//	Challenges() []Challenge
//
// found with errors.As, as HTTPStatus() is, so that its error stays its own
// type, keeping its detail for the audit record, and gains one method. The
// handler writes them, in order, as one WWW-Authenticate value (the
// challenges comma-separated), with Options.ResourceMetadata added to each
// as resource_metadata. They replace Options.Challenge, and ErrInvalidToken's
// error="invalid_token". Without HTTPStatus() (or ErrForbidden,
// ErrTooManyRequests), the answer's status follows the first challenge
// whose Error implies one: 400 for invalid_request, 403 for
// insufficient_scope, 401 otherwise. For example, a token that expired:
//
//	Challenges() []mcpmw.Challenge {
//		return []mcpmw.Challenge{{Error: "invalid_token", Description: "The access token expired"}}
//	}
//
// answers 401 with
//
//	WWW-Authenticate: Bearer error="invalid_token", error_description="The access token expired", resource_metadata="…"
//
// A request with no credentials, at an endpoint that takes Bearer and DPoP
// tokens, is told of both (RFC 9449 §7.2) by
//
//	[]mcpmw.Challenge{{}, {Scheme: "DPoP", Params: map[string]string{"algs": "ES256 PS256"}}}
//
// written Bearer resource_metadata="…", DPoP algs="ES256 PS256",
// resource_metadata="…". The error's own text still goes to the audit
// record only.
//
// A Challenge is fields rather than a string so that the handler writes
// the header: each value quoted and escaped, a name or scheme no client
// could parse left out, and the description, which may quote the request,
// capped as every client value the handler repeats is.
type Challenge struct {
	// Scheme is the authentication scheme: "Bearer" when empty; "DPoP"
	// for a DPoP-bound token (RFC 9449). A challenge whose Scheme is not
	// an HTTP token (RFC 9110 §5.6.2) is left out.
	Scheme string
	// Error is the error code (RFC 6750 §3.1, RFC 9449 §7.1):
	// invalid_request (answered 400), invalid_token, insufficient_scope
	// (403), invalid_dpop_proof. Leave it empty for a
	// request that sent no credentials: RFC 6750 §3.1 says it gets no error
	// information.
	Error string
	// Description is the error_description: a sentence for the client's
	// developer. Unlike the error's text, which goes to the audit record
	// only, it is sent, so it must hold nothing secret; it may quote the
	// request, so it is capped at 100 characters, as every client value the
	// handler repeats is. A character RFC 6750 §3 does not allow in it (a
	// '"', a '\', anything but printable ASCII) is written as '?'.
	Description string
	// Scope is the scopes the request needs, separated by single spaces
	// (RFC 6750 §3). A list that is not scope tokens (printable ASCII but
	// '"' and '\') so separated is left out.
	Scope string
	// Params are the scheme's other auth-params, such as DPoP's algs
	// ("ES256 PS256"), realm or error_uri, written after those above in
	// name order, each value quoted and escaped. They are the server's own
	// values, never capped: a client's words go in Description. A name that
	// is not a token, or that names error, error_description, scope or
	// resource_metadata (Options.ResourceMetadata is the one), is left out.
	Params map[string]string
}

// header is c as one challenge, with resource_metadata when
// resourceMetadata is set; "" when its scheme is not a token.
func (c Challenge) header(resourceMetadata string) string {
	scheme := c.Scheme
	if scheme == "" {
		scheme = "Bearer"
	}
	if !isToken(scheme) {
		return ""
	}
	var params []string
	if c.Error != "" {
		params = append(params, "error="+quoteParam(errorText(c.Error)))
	}
	if c.Description != "" {
		params = append(params, "error_description="+quoteParam(errorText(c.Description)))
	}
	if validScopes(c.Scope) {
		params = append(params, "scope="+quoteParam(c.Scope))
	}
	for _, name := range slices.Sorted(maps.Keys(c.Params)) {
		if isToken(name) && !ownParam(name) {
			params = append(params, name+"="+quoteParam(c.Params[name]))
		}
	}
	if resourceMetadata != "" {
		params = append(params, "resource_metadata="+quoteParam(resourceMetadata))
	}
	if len(params) == 0 {
		return scheme
	}
	return scheme + " " + strings.Join(params, ", ")
}

// challenges is the WWW-Authenticate value of cs: each challenge that can
// be written, in order, comma-separated (RFC 9110 §11.6.1), each with
// resourceMetadata; "" when none can.
func challenges(cs []Challenge, resourceMetadata string) string {
	var out []string
	for _, c := range cs {
		if h := c.header(resourceMetadata); h != "" {
			out = append(out, h)
		}
	}
	return strings.Join(out, ", ")
}

// ownParam reports whether name is an auth-param a Challenge writes from
// its own field or from Options.ResourceMetadata, which Params may not
// repeat (RFC 6750 §3: each at most once). Names are case-insensitive
// (RFC 9110 §11.2).
func ownParam(name string) bool {
	for _, own := range [...]string{"error", "error_description", "scope", "resource_metadata"} {
		if strings.EqualFold(name, own) {
			return true
		}
	}
	return false
}

// endpointChallenge is the endpoint's own 401 challenge, built once in New:
// Options.Challenge as it is, or Bearer with the resource metadata; each
// without and with error="invalid_token" (ErrInvalidToken).
type endpointChallenge struct {
	plain, invalidToken string
}

func newEndpointChallenge(custom, resourceMetadata string) endpointChallenge {
	if custom != "" {
		return endpointChallenge{plain: custom, invalidToken: withAuthParam(custom, `error="invalid_token"`)}
	}
	return endpointChallenge{
		plain:        Challenge{}.header(resourceMetadata),
		invalidToken: Challenge{Error: "invalid_token"}.header(resourceMetadata),
	}
}

// withAuthParam adds an auth-param to a challenge given as a string
// (Options.Challenge): after the scheme, or after the parameters it
// already has.
func withAuthParam(challenge, param string) string {
	if strings.ContainsRune(challenge, ' ') {
		return challenge + ", " + param
	}
	return challenge + " " + param
}

// authFailure is the answer to a failed authentication: the status the
// error chooses (authStatus), with the error's own challenges, or, on a
// 401, the endpoint's.
func (h *Handler) authFailure(err error) *answer {
	var cs []Challenge
	var carrier interface{ Challenges() []Challenge }
	if errors.As(err, &carrier) {
		cs = carrier.Challenges()
	}
	st := authStatus(err, cs)
	var a *answer
	switch st {
	case http.StatusUnauthorized:
		a = refusal(st, CodeInvalidRequest, "Unauthorized: send valid credentials in the Authorization header")
	case http.StatusBadRequest:
		a = refusal(st, CodeInvalidRequest, "Bad Request: the credentials are malformed")
	case http.StatusForbidden:
		a = refusal(st, CodeInvalidRequest, "Forbidden: these credentials may not use this endpoint")
	default:
		a = refusal(st, CodeInvalidRequest, http.StatusText(st))
	}
	challenge := challenges(cs, h.metadata)
	if challenge == "" && st == http.StatusUnauthorized { // a 401 always has one (RFC 9110 §15.5.2)
		challenge = h.challenge.plain
		if errors.Is(err, ErrInvalidToken) {
			challenge = h.challenge.invalidToken
		}
	}
	a.header = challengeHeader(err)
	if challenge != "" {
		if a.header == nil {
			a.header = http.Header{}
		}
		a.header["Www-Authenticate"] = []string{challenge}
	}
	a.resp.Outcome, a.resp.Summary = OutcomeDenied, "authentication failed"
	return a
}

// challengeHeader is the header fields an Authenticator's error asks to
// send beside its challenges, with a method
//
//	ChallengeHeader() http.Header
//
// found with errors.As: DPoP-Nonce with a use_dpop_nonce challenge (RFC
// 9449 §9), Retry-After with a 429 or 503. The method's name is its own so
// that an error of an HTTP client the Authenticator wraps (which may have
// a Header method holding an upstream answer's fields) never has its
// fields sent. The fields the handler writes itself (the challenges, the
// body's framing and type, the connection's) are left out, and so is a
// value no header may hold (a control character): nil when none is left.
func challengeHeader(err error) http.Header {
	var hc interface{ ChallengeHeader() http.Header }
	if !errors.As(err, &hc) {
		return nil
	}
	var out http.Header
	for name, values := range hc.ChallengeHeader() {
		name = http.CanonicalHeaderKey(name)
		if !isToken(name) || handlerOwnsHeader(name) {
			continue
		}
		for _, v := range values {
			if !headerValue(v) {
				continue
			}
			if out == nil {
				out = http.Header{}
			}
			out[name] = append(out[name], v)
		}
	}
	return out
}

// handlerOwnsHeader reports whether the handler writes the field name (in
// canonical form) itself, so that an error's ChallengeHeader may not.
func handlerOwnsHeader(name string) bool {
	switch name {
	case "Www-Authenticate", "Content-Type", "Content-Length", "Content-Encoding",
		"Transfer-Encoding", "Connection", "Trailer", "Upgrade", "Set-Cookie":
		return true
	}
	return strings.HasPrefix(name, "Mcp-")
}

// headerValue reports whether v can be written as a field value (RFC 9110
// §5.5): no control character but a tab.
func headerValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// authStatus returns the HTTP status for an authentication failure: the
// error's own (an HTTPStatus() method returning an error status), the one
// its sentinel names, or the one the first of its challenges with an error
// code that implies one implies (RFC 6750 §3.1); else 401.
func authStatus(err error, cs []Challenge) int {
	var hs interface{ HTTPStatus() int }
	switch {
	case errors.As(err, &hs) && hs.HTTPStatus() >= 400 && hs.HTTPStatus() <= 599:
		return hs.HTTPStatus()
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, ErrTooManyRequests):
		return http.StatusTooManyRequests
	}
	for _, c := range cs {
		switch c.Error {
		case "invalid_request":
			return http.StatusBadRequest
		case "insufficient_scope":
			return http.StatusForbidden
		}
	}
	return http.StatusUnauthorized
}

// deniedAnswer is the 403 to a caller without the target's permission,
// with an OAuth insufficient_scope challenge (RFC 6750 §3.1) naming the
// permission as the scope that would do, and the resource metadata when
// there is some.
func deniedAnswer(c Caller, t *Target, resourceMetadata string) *answer {
	return &answer{status: http.StatusForbidden, header: http.Header{"Www-Authenticate": {insufficientScope(c, t.Permission, resourceMetadata)}},
		resp: Denied(t)}
}

// insufficientScope is the challenge of a 403 to caller c, who lacks
// permission p: in the scheme of c's token, naming as the scope every
// scope a token needs for p (neededScopes) and the resource metadata when
// there is some.
func insufficientScope(c Caller, p Permission, resourceMetadata string) string {
	return Challenge{Scheme: tokenScheme(c), Error: "insufficient_scope", Scope: neededScopes(c, p)}.header(resourceMetadata)
}

// neededScopes is every scope a token needs to be granted p, as c's
// ScopesFor method says (see Caller), space-separated; without the method,
// p itself when it is one scope token. It is "" (no scope named) when the
// method names none, or something that is not scope tokens: a permission
// with a space in it would read as two scopes.
func neededScopes(c Caller, p Permission) string {
	if sf, ok := c.(interface{ ScopesFor(Permission) []string }); ok {
		scopes := sf.ScopesFor(p)
		if len(scopes) == 0 || slices.ContainsFunc(scopes, func(s string) bool { return !validScope(s) }) {
			return ""
		}
		return strings.Join(scopes, " ")
	}
	if validScope(string(p)) {
		return string(p)
	}
	return ""
}

// tokenScheme is the authentication scheme c's token came with, as its
// TokenScheme method says (see Caller), or Bearer.
func tokenScheme(c Caller) string {
	if ts, ok := c.(interface{ TokenScheme() string }); ok {
		if s := ts.TokenScheme(); isToken(s) {
			return s
		}
	}
	return "Bearer"
}

// quoteParam quotes s as an auth-param value (RFC 9110 §11.2, a
// quoted-string of §5.6.4): a backslash or a double quote escaped, a
// control character (which a quoted-string cannot hold, escaped or not)
// written as '?'.
func quoteParam(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' && c != '\t' || c == 0x7f:
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// errorText is s, capped, in the characters RFC 6750 §3 allows in error
// and error_description (%x20-21 / %x23-5B / %x5D-7E: printable ASCII but
// '"' and '\'): the cap's ellipsis written as "...", any other character
// as '?'.
func errorText(s string) string {
	var b strings.Builder
	for _, r := range capEcho(s) {
		switch {
		case r == '…':
			b.WriteString("...")
		case r >= ' ' && r <= '~' && r != '"' && r != '\\':
			b.WriteRune(r)
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}

// validScope reports whether s is one scope token (RFC 6749 §3.3, RFC 6750
// §3): printable ASCII but space, '"' and '\'.
func validScope(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return s != ""
}

// validScopes reports whether s is scope tokens separated by single
// spaces.
func validScopes(s string) bool {
	for tok := range strings.SplitSeq(s, " ") {
		if !validScope(tok) {
			return false
		}
	}
	return true
}
