package mcpmw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"
)

// Options are a Handler's settings. The zero value (or a nil *Options) is a
// valid configuration: loopback-only Origins, a 4 MiB body limit, no rate
// limit, slog.Default() for logs.
type Options struct {
	// Server describes this server in server/discover and initialize.
	Server Implementation
	// Instructions tell the client's model how to use the server. Empty
	// means none (the field is left out, never sent as "").
	Instructions string

	// AllowedHosts are the hostnames an Origin header may name (scheme and
	// port are not compared); a request whose Origin names another host is
	// refused with 403. Requests without Origin are not affected. Nil means
	// localhost, 127.0.0.1 and ::1. Entries are bare hostnames.
	AllowedHosts []string
	// CheckHost also refuses, with 403, a request whose Host header names a
	// host outside AllowedHosts. Turn it on for a server bound to loopback
	// (or to one public name): a DNS-rebinding page reaches it under the
	// attacker's name, which shows in Host. Leave it off behind proxies or
	// load balancers that forward internal host names.
	CheckHost bool
	// MaxBodyBytes caps the request body; larger bodies get 413. Zero
	// means 4 MiB.
	MaxBodyBytes int64
	// PageSize is how many tools one tools/list page holds. Zero means 100.
	PageSize int
	// CacheTTL is the freshness (ttlMs) declared on server/discover and
	// tools/list results. Zero means one minute; negative means 0 (clients
	// should not reuse the result).
	CacheTTL time.Duration

	// ClientIP returns the client's address for rate limiting and audit.
	// Nil means the host part of r.RemoteAddr (all of it when it has no
	// port; "" when it is empty). Behind a proxy, trust its header
	// explicitly, e.g. with chi's middleware.ClientIPFromXFF on the router
	// and
	//	ClientIP: func(r *http.Request) string { return middleware.GetClientIP(r.Context()) }
	// which returns "" whenever chi cannot decide. Return "" rather than a
	// guess: the ratelimit package counts every request without an address
	// in one shared bucket (fail closed), and the audit record shows it.
	ClientIP func(r *http.Request) string
	// RateLimit, when set, runs before anything else; requests it refuses
	// get 429 and are not audited. It receives ClientIP's answer, which may
	// be "": a RateLimiter must limit such requests too, never wave them
	// through. See the ratelimit package.
	RateLimit RateLimiter
	// Challenge is the WWW-Authenticate value sent with 401 responses. Empty
	// means "Bearer". An OAuth-protected server names its resource metadata
	// here: `Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource"`.
	Challenge string

	// Middleware wraps the handler's Dispatcher, the first outermost, to
	// serve methods of the application's own; see Dispatcher.
	Middleware []func(Dispatcher) Dispatcher
	// Capabilities declares the server capabilities the Middleware adds
	// (e.g. "resources"). "tools" is declared when there is a Registry.
	Capabilities Capabilities

	// ClientLogLevel enables logging to clients (the "logging" capability,
	// see Log). On 2026-07-28 each request chooses its own level; on the
	// legacy revisions, which cannot carry one per request, messages at or
	// above ClientLogLevel are sent. Empty means no logging to clients,
	// unless Capabilities declares "logging", in which case it is LogInfo.
	ClientLogLevel LogLevel
	// ToolTimeout bounds how long a tool may run; a Tool's own Timeout
	// overrides it. When it passes, the tool's context is cancelled and the
	// caller gets an isError result saying so. Tools must honour their
	// context: the handler cannot stop one that does not. Zero means no
	// limit beyond the client's patience.
	ToolTimeout time.Duration

	// LegacySessionIDs makes the legacy initialize answer carry a random
	// Mcp-Session-Id. The handler never stores, reads or checks it: every
	// request is still answered on its own. Some legacy clients expect an id
	// to exist (the conformance suite's server-sse-multiple-streams scenario
	// does); with one, they may also send DELETE when they close, which gets
	// 405. Off by default: a stateless server need not pretend.
	LegacySessionIDs bool

	// Logger receives what the handler has to report outside the audit
	// trail: panics, tool errors, auditor failures. Nil means slog.Default().
	Logger *slog.Logger
}

const defaultMaxBody = 4 << 20

// A Handler is a stateless MCP endpoint over Streamable HTTP: mount it on
// any path of any router. Each POST is answered on its own; nothing is kept
// between requests, so any instance can answer any request.
type Handler struct {
	authn     Authenticator
	auditor   Auditor
	limiter   RateLimiter
	clientIP  func(*http.Request) string
	hosts     hostSet
	checkHost bool
	logLevel  LogLevel // legacy threshold for Log; "" when logging is off
	maxBody   int64
	challenge string
	logger    *slog.Logger
	p         *protocol
	dispatch  Dispatcher
}

// New returns a Handler serving the tools in reg. authn and auditor are
// required: New panics if either is nil. reg may be nil for an endpoint
// whose methods all come from Options.Middleware. opts may be nil.
func New(reg *Registry, authn Authenticator, auditor Auditor, opts *Options) *Handler {
	if authn == nil {
		panic("mcpmw: New needs an Authenticator (use one that admits every request if the endpoint is public)")
	}
	if auditor == nil {
		panic("mcpmw: New needs an Auditor")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Server.Name == "" {
		o.Server.Name = "mcp-server"
	}
	if o.Server.Version == "" {
		o.Server.Version = "0.0.0"
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = defaultMaxBody
	}
	if o.PageSize <= 0 {
		o.PageSize = 100
	}
	ttl := o.CacheTTL
	switch {
	case ttl == 0:
		ttl = time.Minute
	case ttl < 0:
		ttl = 0
	}
	if o.ClientIP == nil {
		o.ClientIP = remoteIP
	}
	if o.Challenge == "" {
		o.Challenge = "Bearer"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	caps := Capabilities{}
	for k, v := range o.Capabilities {
		caps[k] = v
	}
	if o.ClientLogLevel != "" {
		if o.ClientLogLevel.rank() == 0 {
			panic(fmt.Sprintf("mcpmw: Options.ClientLogLevel %q is not a log level", o.ClientLogLevel))
		}
		if _, ok := caps["logging"]; !ok {
			caps["logging"] = map[string]any{}
		}
	} else if _, ok := caps["logging"]; ok {
		o.ClientLogLevel = LogInfo
	}
	if _, ok := caps["tools"]; !ok && reg != nil {
		caps["tools"] = map[string]any{}
	}
	if reg == nil {
		reg = &Registry{}
	}
	p := newProtocol(o.Server, o.Instructions, caps, ttl.Milliseconds())
	p.sessionIDs = o.LegacySessionIDs
	c := &core{p: p, reg: reg, pageSize: o.PageSize, toolTimeout: o.ToolTimeout}
	return &Handler{
		authn:     authn,
		auditor:   auditor,
		limiter:   o.RateLimit,
		clientIP:  o.ClientIP,
		hosts:     newHostSet(o.AllowedHosts),
		checkHost: o.CheckHost,
		logLevel:  o.ClientLogLevel,
		maxBody:   o.MaxBodyBytes,
		challenge: o.Challenge,
		logger:    o.Logger,
		p:         p,
		dispatch:  p.gate(chain(c, o.Middleware)),
	}
}

// remoteIP is the default ClientIP: the host part of r.RemoteAddr.
func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// ServeHTTP answers one MCP POST. The steps, in order: rate limit (never
// audited), HTTP method (405, never audited), Origin, authentication, body
// and envelope, revision and headers, dispatch; then the audit record, then
// the response.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{h: h, w: w, r: r, start: time.Now()}
	defer x.recoverPanic()
	x.rec.ClientIP = h.clientIP(r)
	if h.limiter != nil && h.limiter.Limit(w, r, x.rec.ClientIP) {
		x.write(&Response{Status: http.StatusTooManyRequests, Error: &Error{Code: CodeInvalidRequest, Message: "Too many requests: retry after the interval in the Retry-After header"}})
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		x.write(&Response{Status: http.StatusMethodNotAllowed, Error: &Error{Code: CodeInvalidRequest, Message: "Method not allowed: this MCP endpoint is stateless and accepts only POST"}})
		return
	}
	x.auditable = true
	x.finish(x.serve())
}

// exchange is the state of one request on its way through ServeHTTP.
type exchange struct {
	h         *Handler
	w         http.ResponseWriter
	r         *http.Request
	ctx       context.Context
	start     time.Time
	rec       CallRecord
	req       *Request // set once the envelope parsed
	reqv      Request  // what req points to, allocated with the exchange
	stream    *stream  // set when the request may get notifications
	id        json.RawMessage
	auditable bool // past the rate limit and method check
	audited   bool
	written   bool
}

// serve runs the pipeline from the Origin check to the dispatcher and
// returns the answer; it writes nothing.
func (x *exchange) serve() *Response {
	h, r := x.h, x.r
	if h.checkHost {
		if err := h.hosts.checkHost(r.Host); err != nil {
			return forbidden(err)
		}
	}
	if origins := r.Header.Values("Origin"); len(origins) > 0 {
		err := errors.New("more than one Origin header")
		if len(origins) == 1 {
			err = h.hosts.checkOrigin(origins[0])
		}
		if err != nil {
			return forbidden(err)
		}
	}

	caller, err := h.authn.Authenticate(r)
	if err == nil && caller == nil {
		err = errors.New("authenticator returned neither a caller nor an error")
	}
	if err != nil {
		return h.authFailure(x, err)
	}
	x.rec.Caller = caller
	x.ctx = context.WithValue(r.Context(), callerKey, caller)

	if resp := checkMediaTypes(r); resp != nil {
		return resp
	}
	body, resp := h.readBody(x.w, r)
	if resp != nil {
		return resp
	}
	env, perr := parseEnvelope(body)
	x.id = env.id
	x.rec.RequestID = capEcho(string(env.id))
	x.rec.Method = capEcho(env.method)
	if perr != nil {
		return &Response{Error: perr}
	}
	if env.response {
		hv := strings.TrimSpace(r.Header.Get(headerProtocolVersion))
		x.id = nil // nothing answers a response
		if hv != "" && !isLegacyVersion(hv) {
			return &Response{Error: &Error{Code: CodeInvalidRequest, Message: "Invalid Request: clients do not POST JSON-RPC responses on " + LatestVersion}}
		}
		return accepted("client response")
	}

	x.reqv = Request{ID: env.id, Method: env.method, Params: env.params, Caller: caller, Header: r.Header}
	req := &x.reqv
	req.parsed.read(req.Params)
	x.req = req
	resp = classify(req, r.Header)
	x.rec.ProtocolVersion = req.Version
	if x.rec.ProtocolVersion == "" {
		x.rec.ProtocolVersion = capEcho(strings.TrimSpace(r.Header.Get(headerProtocolVersion)))
	}
	x.rec.ClientName, x.rec.ClientVersion = req.ClientName, req.ClientVersion
	if req.Method == "tools/call" {
		x.rec.Arguments = req.Param("arguments")
		if name, ok := req.StringParam("name"); ok {
			x.rec.Tool = capEcho(name)
		}
	}
	if resp != nil {
		return resp
	}
	if !req.IsNotification() {
		x.openStream(req)
	}

	resp = h.dispatch.Dispatch(x.ctx, req)
	if resp == nil {
		resp = ErrorResponse(CodeInternalError, "Internal error")
		resp.err = fmt.Errorf("dispatcher returned a nil Response for %q", req.Method)
	}
	if req.IsNotification() {
		if resp.Status < 400 {
			resp.Status, resp.Outcome, resp.Error = http.StatusAccepted, OutcomeAccepted, nil
		}
		resp.Result = nil
	} else if resp.Error == nil && !resp.complete && (kindOf(resp.Result) != kindObject || !json.Valid(resp.Result)) {
		resp = &Response{Error: &Error{Code: CodeInternalError, Message: "Internal error"}, Tool: resp.Tool,
			err: fmt.Errorf("the Response to %q has a Result that is not a JSON object", req.Method)}
	}
	return resp
}

// openStream prepares the request's notification stream when the client
// asked for progress or log messages and accepts text/event-stream. Nothing
// is written until a tool sends the first notification.
func (x *exchange) openStream(req *Request) {
	var token json.RawMessage
	if t := req.metaParam("progressToken"); kindOf(t) == kindString || kindOf(t) == kindNumber {
		token = json.RawMessage(t)
	}
	minLevel := 0
	if x.h.logLevel != "" {
		if req.Legacy() {
			minLevel = x.h.logLevel.rank()
		} else if lv, ok := unquote(req.metaParam(metaLogLevel)); ok {
			minLevel = LogLevel(lv).rank()
		}
	}
	if (token == nil && minLevel == 0) || !acceptsEventStream(x.r.Header) {
		return
	}
	x.stream = &stream{w: x.w, token: token, minLevel: minLevel}
	x.ctx = context.WithValue(x.ctx, streamKey, x.stream)
}

// forbidden is the 403 answer to a refused Host or Origin.
func forbidden(err error) *Response {
	return &Response{Status: http.StatusForbidden, Error: &Error{Code: CodeInvalidRequest, Message: "Forbidden: " + err.Error()},
		Outcome: OutcomeDenied, Summary: err.Error()}
}

// authFailure is the answer to a failed authentication: 401 with a
// challenge unless the error carries another status.
func (h *Handler) authFailure(x *exchange, err error) *Response {
	x.rec.AuthError = err
	st := authStatus(err)
	resp := &Response{Status: st, Outcome: OutcomeDenied, Summary: "authentication failed"}
	switch st {
	case http.StatusUnauthorized:
		resp.Header = http.Header{"Www-Authenticate": {h.challenge}}
		resp.Error = &Error{Code: CodeInvalidRequest, Message: "Unauthorized: send valid credentials in the Authorization header"}
	case http.StatusForbidden:
		resp.Error = &Error{Code: CodeInvalidRequest, Message: "Forbidden: these credentials may not use this endpoint"}
	default:
		resp.Error = &Error{Code: CodeInvalidRequest, Message: http.StatusText(st)}
	}
	return resp
}

// finish records the audit entry, then writes the response.
func (x *exchange) finish(resp *Response) {
	if x.stream != nil {
		x.stream.seal()
	}
	x.audit(resp)
	x.write(resp)
}

// legacy reports whether the answer follows legacy rules.
func (x *exchange) legacy() bool { return x.req != nil && x.req.Legacy() }

// status returns the HTTP status resp is sent with.
func (x *exchange) status(resp *Response) int {
	switch {
	case x.stream != nil && x.stream.isStarted():
		return http.StatusOK // already sent with the first event
	case resp.Status != 0:
		return resp.Status
	case resp.Error != nil:
		return errorStatus(resp.Error.Code, x.legacy())
	default:
		return http.StatusOK
	}
}

// audit calls the Auditor once, whatever happens inside it.
func (x *exchange) audit(resp *Response) {
	if !x.auditable || x.audited {
		return
	}
	x.audited = true
	rec := &x.rec
	rec.Time = x.start
	rec.Status = x.status(resp)
	rec.Outcome = resp.Outcome
	if resp.Error != nil {
		rec.ErrorCode = resp.Error.Code
	}
	if rec.Outcome == "" {
		rec.Outcome = OutcomeOK
		if resp.Error != nil {
			rec.Outcome = OutcomeError
		}
	}
	if resp.Tool != "" {
		rec.Tool = resp.Tool
	}
	rec.Summary = resp.Summary
	if rec.Summary == "" && resp.Error != nil {
		rec.Summary = capEcho(resp.Error.Message)
	}
	if resp.err != nil {
		x.h.logger.LogAttrs(x.r.Context(), slog.LevelError, "mcpmw: request failed", slog.String("method", rec.Method), slog.String("tool", rec.Tool), slog.Any("error", resp.err))
	}
	rec.Duration = time.Since(x.start)
	defer func() {
		if v := recover(); v != nil {
			x.h.logger.LogAttrs(x.r.Context(), slog.LevelError, "mcpmw: auditor panicked; the audit record was lost",
				slog.Any("panic", v), slog.Any("record", *rec), slog.String("stack", string(debug.Stack())))
		}
	}()
	x.h.auditor.Audit(context.WithoutCancel(x.r.Context()), *rec)
}

// write sends resp; it is called once.
func (x *exchange) write(resp *Response) {
	if x.written {
		return
	}
	x.written = true
	st := x.status(resp)
	if x.stream != nil {
		var msg []byte
		if st != http.StatusAccepted {
			msg = appendResponseMessage(make([]byte, 0, 128+len(resp.Result)), x.id, resp, x.legacy(), x.h.p.serverMeta)
		}
		if x.stream.finish(msg) {
			return // sent as the last event of the stream
		}
	}
	hdr := x.w.Header()
	for k, v := range resp.Header {
		hdr[k] = v
	}
	if st == http.StatusAccepted {
		x.w.WriteHeader(st)
		return
	}
	hdr.Set("Content-Type", "application/json")
	x.w.WriteHeader(st)
	if resp.Error == nil && (resp.complete || x.legacy()) {
		// The result is final as it is: write it without copying it (a
		// tools/list page is shared by every caller who sees it).
		head := append(make([]byte, 0, 32+len(x.id)), `{"jsonrpc":"2.0","id":`...)
		head = append(append(head, x.id...), `,"result":`...)
		_, _ = x.w.Write(head)
		_, _ = x.w.Write(resp.Result)
		_, _ = x.w.Write(closingBrace)
		return
	}
	_, _ = x.w.Write(appendResponseMessage(make([]byte, 0, 128+len(resp.Result)), x.id, resp, x.legacy(), x.h.p.serverMeta))
}

var closingBrace = []byte{'}'}

// recoverPanic turns a panic anywhere after the rate limit into a 500 (when
// nothing was written yet), a log line and exactly one audit record.
func (x *exchange) recoverPanic() {
	v := recover()
	if v == nil {
		return
	}
	x.h.logger.LogAttrs(x.r.Context(), slog.LevelError, "mcpmw: panic while serving a request",
		slog.Any("panic", v), slog.String("method", x.rec.Method), slog.String("tool", x.rec.Tool), slog.String("stack", string(debug.Stack())))
	resp := &Response{Error: &Error{Code: CodeInternalError, Message: "Internal error"}, Summary: "panic: " + capEcho(fmt.Sprint(v))}
	if x.stream != nil {
		x.stream.seal()
	}
	x.audit(resp)
	x.writeAfterPanic(resp)
	if v == http.ErrAbortHandler {
		panic(v)
	}
}

// writeAfterPanic writes the answer to a request that panicked. The panic
// may have come from the ResponseWriter itself (a tool's first progress
// event writes the headers), so writing can panic again: then nothing can
// be sent, and the connection is aborted rather than left half-written.
func (x *exchange) writeAfterPanic(resp *Response) {
	defer func() {
		if v := recover(); v != nil {
			x.h.logger.LogAttrs(x.r.Context(), slog.LevelError, "mcpmw: the response writer panicked again; aborting the connection",
				slog.Any("panic", v), slog.String("method", x.rec.Method))
			panic(http.ErrAbortHandler)
		}
	}()
	x.write(resp)
}
