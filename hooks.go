package mcpmw

import (
	"errors"
	"net/http"
)

// A Permission names something a caller may do, in the application's own
// vocabulary: "read", "orders:write", "admin". Each Tool, Prompt, Resource
// and ResourceTemplate declares the one it needs and a Caller says whether
// it has it. (The word "capability" is kept for what MCP means by it: what
// a server or a client supports.)
//
// A caller without an entry's Permission does not see the entry in any
// list, and a request naming it (tools/call, prompts/get, resources/read,
// completion/complete) gets 403 before anything that depends on the entry
// runs. That answer tells the caller two things, which is why names and
// permissions should not be secrets: that the name is registered (an
// unknown name gets -32602 "Unknown tool", "Unknown prompt" or "Unknown
// resource template", an unknown URI the not-found answer), and the
// permission it lacks, as the scope of the insufficient_scope challenge
// (when the permission is a valid scope token), so that a client can ask
// for it. For a URI under a resource template the caller learns that the
// URI falls under a template it may not use, and nothing about whether the
// record exists: the template's Read does not run. It learns nothing else:
// not the entry's title, description, schema or arguments, not whether its
// Mcp-Param-* headers or client capabilities would pass; no handler,
// argument check or completer runs.
type Permission string

// A Caller is the application's own idea of who is calling, as returned by
// its Authenticator. The handler only ever asks it one question. Tools that
// need more (a tenant, a user id) narrow it to the application's type once:
//
//	s, ok := c.(*app.Session)
//
// A Caller that implements fmt.Stringer or slog.LogValuer controls how it
// appears in audit records; it should never render credentials.
//
// A Caller may also have a method
//
//	CallerID() string
//
// returning a stable identity: the same string for every request of one
// user (or client, or token), and a different one for anyone else. The
// handler uses it, and only it, to decide that two requests come from the
// same caller: a legacy notifications/cancelled cancels only calls whose
// caller has the same non-empty CallerID. Callers are never compared with ==
// (an application's Caller may hold maps or slices, or be a new pointer on
// every request); a Caller without CallerID, or with an empty one, cannot
// cancel its calls from another request.
//
// A Caller may also have a method
//
//	TokenScheme() string
//
// naming the authentication scheme its credentials came with, such as
// "DPoP" for a DPoP-bound access token (RFC 9449). When the caller is
// denied a permission, the 403's insufficient_scope challenge is in that
// scheme, so that the client asks for a token it will present the same
// way; without the method (or when it returns something that is no
// scheme name), it is Bearer.
//
// A Caller may also have a method
//
//	ScopesFor(p Permission) []string
//
// naming every OAuth scope a token needs to be granted p, when that is not
// p alone (a permission the application maps to another scope, or to
// several). The 403 that denies p names them all as its challenge's scope
// (RFC 6750 §3.1), so that the client asks for all of them at once; without
// the method it names p.
//
// Can (and InAudience, for an AudienceMember) must be safe to call from
// several goroutines at once: while a subscriptions/listen stream is open,
// each published event asks its caller on the goroutine delivering the
// event, beside the stream's own goroutine.
type Caller interface {
	// Can reports whether the caller holds permission p: may see and use the
	// tools, prompts, resources and resource templates that need it (and
	// complete their arguments), and hear of changes guarded by it.
	Can(p Permission) bool
}

// An Authenticator turns an HTTP request into a Caller. It sees the request
// before the body is read, so it must decide from headers (and the URL, TLS
// state and context) alone; an anonymous or forged request therefore costs
// no JSON parsing.
//
// Authenticate returns a non-nil Caller, or an error. An error becomes an
// HTTP 401 response with a WWW-Authenticate challenge unless it carries
// another status: wrap ErrForbidden for 403 or ErrTooManyRequests for 429,
// or return an error with an HTTPStatus() int method. An error with a
// Challenges() []Challenge method chooses its own challenges (an
// error_description, a second scheme, a 400 invalid_request: see
// Challenge), and one with a ChallengeHeader() http.Header method header
// fields to send with them (DPoP-Nonce, RFC 9449 §9). The error's text is
// recorded in the audit record but never sent to the client. A nil Caller with a nil error is treated as a failed
// authentication (fail closed).
type Authenticator interface {
	Authenticate(r *http.Request) (Caller, error)
}

// AuthenticatorFunc is an adapter to allow the use of ordinary functions as
// Authenticators.
type AuthenticatorFunc func(r *http.Request) (Caller, error)

// Authenticate calls f(r).
func (f AuthenticatorFunc) Authenticate(r *http.Request) (Caller, error) { return f(r) }

// Errors an Authenticator wraps to choose the HTTP status of its failure,
// keeping its own detail for the audit record:
//
//	return nil, fmt.Errorf("token %s revoked: %w", id, mcpmw.ErrUnauthorized)
//
// ErrUnauthorized is for a request without usable credentials;
// ErrInvalidToken for one whose token was read and refused (expired,
// revoked, for another audience): its challenge adds error="invalid_token"
// (RFC 6750 §3.1), telling the client to get a new token rather than to
// retry.
var (
	ErrUnauthorized    = errors.New("mcpmw: unauthorized")      // 401 with WWW-Authenticate
	ErrInvalidToken    = errors.New("mcpmw: invalid token")     // 401 with WWW-Authenticate and error="invalid_token"
	ErrForbidden       = errors.New("mcpmw: forbidden")         // 403
	ErrTooManyRequests = errors.New("mcpmw: too many requests") // 429
)

// A RateLimiter decides, before anything else is done with a request, whether
// the client has sent too many. It runs first in the pipeline; a request it
// refuses is answered 429 and is never audited (so a flood cannot flood the
// audit log either). Limit may set response headers such as Retry-After and
// X-RateLimit-Remaining but must not write a body; clientIP is what the
// Options.ClientIP hook returned, "" when it could not tell, and such
// requests must be limited too (one shared bucket), not let through. The ratelimit sub-package has ready
// implementations counting in memory, and the redis module (package
// mcpredis) ones counting in Redis, for a limit shared by many instances.
type RateLimiter interface {
	Limit(w http.ResponseWriter, r *http.Request, clientIP string) (limited bool)
}

// RateLimiterFunc is an adapter to allow the use of ordinary functions as
// RateLimiters.
type RateLimiterFunc func(w http.ResponseWriter, r *http.Request, clientIP string) bool

// Limit calls f(w, r, clientIP).
func (f RateLimiterFunc) Limit(w http.ResponseWriter, r *http.Request, clientIP string) bool {
	return f(w, r, clientIP)
}
