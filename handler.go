package mcpmw

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

const defaultMaxBody = 4 << 20

// A Handler is a stateless MCP endpoint over Streamable HTTP: mount it on
// any path of any router. Each POST is answered on its own; nothing is kept
// between requests, so any instance can answer any request.
type Handler struct {
	authn      Authenticator
	auditor    Auditor
	limiter    RateLimiter
	clientIP   func(*http.Request) string
	hosts      hostSet
	checkHost  bool
	logLevel   LogLevel // legacy threshold for Log; "" when logging is off
	maxBody    int64
	challenge  endpointChallenge
	metadata   string // Options.ResourceMetadata, in every challenge
	sessionIDs bool
	endpoint   string // Options.Endpoint
	logger     *slog.Logger
	observer   Observer
	methods    *methodTable
	format     pageFormat // what its list pages are made of, a List's too
	dispatch   Dispatcher // the method table, wrapped in Options.Middleware
	ad         *advertisement
	asks       answerWaiters // legacy requests to clients awaiting their answer POST (answers.go)
	inflight   runningCalls  // legacy calls a notifications/cancelled may name (cancels.go)
	notifier   Notifier      // Options.Notifier: where Publish sends events
	hub        *hub          // the open subscriptions/listen streams (listen.go)
	tasks      *taskRunner   // the tasks this instance runs, and the tasks/* methods (taskrunner.go)
	stopNotify func()        // stops hearing the Notifier; nil when nothing listens
	closeOnce  sync.Once

	eventWriteTimeout time.Duration // each event write's bound (stream.go); 0: the default, 30 s. Only tests set it, before serving
}

// New returns a Handler serving the tools, prompts and resources in reg,
// the built-in methods and Options.Methods. authn and auditor are
// required: New panics if either is nil, and on a setup mistake (an
// invalid Method, a nil Middleware, a ClientLogLevel that is no level). A
// hook that holds a nil func or a nil pointer (AuthenticatorFunc(nil), a
// nil *T in an optional field) counts as such a mistake, required or
// optional: every request would panic on it. Leave an optional field nil
// to go without it. reg may be nil for an endpoint without tools. opts may
// be nil.
func New(reg *Registry, authn Authenticator, auditor Auditor, opts *Options) *Handler {
	if isNilHook(authn) {
		panic("mcpmw: New needs an Authenticator (use one that admits every request if the endpoint is public)")
	}
	if isNilHook(auditor) {
		panic("mcpmw: New needs an Auditor")
	}
	checkOptionalHooks(opts)
	o := withDefaults(opts)
	h := &Handler{
		authn:      authn,
		auditor:    auditor,
		limiter:    o.RateLimit,
		clientIP:   o.ClientIP,
		hosts:      newHostSet(o.AllowedHosts),
		checkHost:  o.CheckHost,
		logLevel:   o.ClientLogLevel,
		maxBody:    o.MaxBodyBytes,
		challenge:  newEndpointChallenge(o.Challenge, o.ResourceMetadata),
		metadata:   o.ResourceMetadata,
		sessionIDs: o.LegacySessionIDs,
		endpoint:   o.Endpoint,
		logger:     o.Logger,
		observer:   o.Observer,
		ad:         &advertisement{}, // encoded below, once the methods are known
		asks:       &pendingAsks{},
		inflight:   &inflight{},
		notifier:   o.Notifier,
		hub:        newHub(o.Logger),
	}
	var self string // this handler on the Relay
	if o.Relay != nil {
		self = relaySelf(o.Relay)
	}
	h.tasks = newTaskRunner(o.Tasks, o.Relay, self, auditor, o.Observer, o.Logger, h.ad, o.ToolTimeout)
	if o.Relay != nil {
		h.asks, h.inflight = newRelayed(o.Relay, self, h.tasks.wake)
	}
	methods, exts := h.allMethods(reg, &o)
	methods, listens := h.withListen(methods, &o)
	h.methods = newMethodTable(methods, exts, protocolMethods())
	*h.ad = *newAdvertisement(o.Server, o.Instructions, &h.methods.caps, cacheTTL(o.CacheTTL).Milliseconds())
	h.format = pageFormat{size: o.PageSize, ttlMs: cacheTTL(o.CacheTTL).Milliseconds(), serverMeta: h.ad.serverMeta}
	h.dispatch = chain(h.methods, o.Middleware)
	if listens {
		// The Notifier carries what any instance publishes; the registry
		// is this instance's own, so its changes go straight to the hub.
		stopNotify := h.notifier.Subscribe(h.hub.publish)
		stopWatch := func() {}
		if reg != nil {
			stopWatch = reg.watch(h.hub.registryChanged)
		}
		stopResync := func() {}
		if r, ok := h.notifier.(Resyncer); ok {
			stopResync = r.SubscribeResync(h.hub.resync)
		}
		h.stopNotify = func() { stopNotify(); stopWatch(); stopResync() }
	}
	return h
}

// isNilHook reports whether h, a hook given to New, has nothing to call:
// it is nil, or holds a nil func or a nil pointer (a typed nil such as
// AuthenticatorFunc(nil), which passes h == nil and then panics on every
// request).
func isNilHook(h any) bool {
	if h == nil {
		return true
	}
	switch v := reflect.ValueOf(h); v.Kind() {
	case reflect.Func, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// checkOptionalHooks panics on an optional hook of opts that is set to a
// typed nil: it is not unset (the handler would call it), and it cannot
// be called.
func checkOptionalHooks(opts *Options) {
	if opts == nil {
		return
	}
	for _, h := range []struct {
		field string
		hook  any
	}{{"RateLimit", opts.RateLimit}, {"Observer", opts.Observer}, {"Notifier", opts.Notifier}, {"Relay", opts.Relay}} {
		if h.hook != nil && isNilHook(h.hook) {
			panic(fmt.Sprintf("mcpmw: Options.%s holds a nil %T; leave the field nil to go without one", h.field, h.hook))
		}
	}
}

// allMethods lists the endpoint's methods: the built-in ones, the tools'
// (when there is a Registry), the prompts' (when it holds a prompt) and
// the application's; and its extensions: tasks (when served) and the
// application's.
func (h *Handler) allMethods(reg *Registry, o *Options) ([]Method, []Extension) {
	var exts []Extension
	methods := builtinMethods(h.ad, o.ClientLogLevel != "", h.inflight)
	ask := &rounds{ring: o.StateKeys, asker: &legacyAsker{pending: h.asks, timeout: o.AskTimeout}, ad: h.ad}
	if reg != nil {
		t := &toolMethods{reg: reg, timeout: o.ToolTimeout, ad: h.ad, pageSize: o.PageSize, ttl: cacheTTL(o.CacheTTL), rounds: ask, tasks: h.tasks}
		methods = append(methods, t.methods()...)
		if o.Tasks != nil || reg.hasTaskTools() {
			exts = append(exts, h.tasks.serve())
		}
	}
	if reg != nil && len(reg.promptTable().list) > 0 {
		p := &promptMethods{reg: reg, ad: h.ad, pageSize: o.PageSize, ttl: cacheTTL(o.CacheTTL), rounds: ask}
		methods = append(methods, p.methods()...)
	}
	if reg != nil && reg.hasResources() {
		rm := &resourceMethods{reg: reg, pageSize: o.PageSize, ttl: cacheTTL(o.CacheTTL), ad: h.ad, rounds: ask}
		methods = append(methods, rm.methods()...)
		exts = append(exts, declaredBy(reg.resourceExtensions(), o.Extensions)...)
	}
	if reg != nil && reg.hasCompleters() {
		c := &completionMethods{reg: reg, ad: h.ad}
		methods = append(methods, c.methods()...)
	}
	return append(methods, o.Methods...), append(exts, o.Extensions...)
}

// declaredBy returns an Extension, with no methods and settings {}, for
// each ID of ids that given does not already declare: what the registered
// resources belong to (Resource.Extension).
func declaredBy(ids []string, given []Extension) []Extension {
	var out []Extension
	for _, id := range ids {
		if !slices.ContainsFunc(given, func(x Extension) bool { return x.ID == id }) {
			out = append(out, Extension{ID: id})
		}
	}
	return out
}

// withDefaults returns a copy of opts (nil means the zero Options) with
// every zero field set to its documented default.
func withDefaults(opts *Options) Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	defaultIdentity(&o)
	defaultBounds(&o)
	defaultHooks(&o)
	if o.ClientLogLevel != "" && o.ClientLogLevel.rank() == 0 {
		panic(fmt.Sprintf("mcpmw: Options.ClientLogLevel %q is not a log level", o.ClientLogLevel))
	}
	return o
}

// defaultIdentity sets what the endpoint says of itself: its name and
// version. (Its authentication challenge is challenge.go's.)
func defaultIdentity(o *Options) {
	if o.Server.Name == "" {
		o.Server.Name = "mcp-server"
	}
	if o.Server.Version == "" {
		o.Server.Version = "0.0.0"
	}
}

// defaultBounds sets the sizes and times that bound a request.
func defaultBounds(o *Options) {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = defaultMaxBody
	}
	if o.PageSize <= 0 {
		o.PageSize = defaultPageSize
	}
	if o.AskTimeout <= 0 {
		o.AskTimeout = defaultAskTimeout
	}
	if o.ListenKeepAlive == 0 {
		o.ListenKeepAlive = defaultListenKeepAlive
	}
	if o.ListenMaxLifetime == 0 {
		o.ListenMaxLifetime = defaultListenMaxLifetime
	}
}

// defaultHooks sets the in-process implementations of the optional hooks.
func defaultHooks(o *Options) {
	if o.ClientIP == nil {
		o.ClientIP = remoteIP
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.StateKeys == nil {
		o.StateKeys = RandomKeyRing()
	}
	if o.Notifier == nil {
		o.Notifier = NewLocalNotifier()
	}
}

// cacheTTL is the ttlMs declared on discover and lists: Options.CacheTTL,
// a minute when zero, nothing when negative.
func cacheTTL(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return time.Minute
	case d < 0:
		return 0
	}
	return d
}

// remoteIP is the default ClientIP: the host part of r.RemoteAddr.
func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// ServeHTTP answers one MCP POST. Its stages, in order: admit (rate limit
// and HTTP method, never audited), then serve (Host and Origin,
// authentication, body, request, revision, method, target, dispatch), then
// the audit record, then the answer. ARCHITECTURE.md draws them.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{h: h, w: w, r: r, start: time.Now(), clientIP: h.clientIP(r), streamv: stream{timeout: h.eventWriteTimeout}}
	defer x.recoverPanic()
	if a := h.admit(w, r, x.clientIP); a != nil {
		x.finish(*a) // observed, never audited
		return
	}
	x.audited = true
	x.finish(h.serve(x))
}

// admit refuses, before anything is read, a client over its rate limit
// (429) and any HTTP method but POST (405). Neither is audited: a flood
// must not flood the audit log, and clients probe GET routinely.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, clientIP string) *answer {
	if h.limiter != nil && h.limiter.Limit(w, r, clientIP) {
		a := refusal(http.StatusTooManyRequests, CodeInvalidRequest, "Too many requests: retry after the interval in the Retry-After header")
		a.resp.Outcome, a.resp.Summary = OutcomeDenied, "rate limited"
		return a
	}
	if r.Method != http.MethodPost {
		a := refusal(http.StatusMethodNotAllowed, CodeInvalidRequest, "Method not allowed: this MCP endpoint is stateless and accepts only POST")
		a.header = http.Header{"Allow": {http.MethodPost}}
		a.resp.Outcome, a.resp.Summary = OutcomeDenied, "not a POST" // SDK clients probe GET routinely: no error
		return a
	}
	return nil
}

// serve runs the audited stages in order, each either refusing the request
// or handing what it found to the next, and returns the answer. It writes
// nothing; it records each stage's result in x for the audit record.
func (h *Handler) serve(x *exchange) answer {
	if a := h.checkHosts(x.r); a != nil {
		return *a
	}
	caller, err := h.authenticate(x.r)
	if err != nil {
		x.authErr = err
		return *h.authFailure(err)
	}
	x.caller = caller
	if a := checkMediaTypes(x.r); a != nil {
		return *a
	}
	body, a := h.readBody(x.w, x.r)
	if a != nil {
		return *a
	}
	env, a := readEnvelope(body, x.r.Header)
	x.env = env
	if a != nil {
		return *a
	}
	if env.response {
		return h.takeAnswer(x.r.Context(), caller, env)
	}
	req := &x.reqv // the exchange's own storage: one allocation fewer per request
	x.req = req
	a = parseRequest(req, env, caller, x.r.Header, h.endpointOf(x.r))
	rt := h.methods.route(req)
	// What the client named and sent, for the record, whatever a
	// middleware makes of the request later.
	x.info.method = rt.method
	x.target, x.args, x.redact = named(req, rt)
	if a != nil {
		return *a
	}
	if a := checkRevision(req, x.r.Header, rt.named); a != nil {
		return *a
	}
	return h.admitAndCall(x, req, rt)
}

// named is what the record says a request acted on, as its method's
// Target found it: the target's name (capped), or the name the refusal
// gave; and, for a method whose target is a tool, its arguments as sent
// with the tool's redaction.
func named(req *Request, rt route) (target string, args []byte, redact *redaction) {
	switch {
	case rt.target != nil:
		target = capEcho(rt.target.Name)
	case rt.missed != nil:
		target = rt.missed.Target
	}
	if m := rt.method; m != nil && m.arguments != nil {
		args, redact = req.Param("arguments"), m.arguments(target)
	}
	return target, args, redact
}

// admitAndCall answers a request routed to rt: -32601 for a method not
// served, else the permission gate and the header checks for its target
// (admitTarget), then the call. A notification has no gate: nothing can
// be refused to it (and one naming a request's method is not run at all:
// see call).
func (h *Handler) admitAndCall(x *exchange, req *Request, rt route) answer {
	if req.IsNotification() {
		return h.call(x, req, rt.method, nil)
	}
	if rt.notFound != nil {
		return h.answerTo(req, nil, rt.notFound)
	}
	target, a := admitTarget(req, rt, h.metadata)
	if a != nil {
		return *a
	}
	return h.call(x, req, rt.method, target)
}

// call dispatches the request through the middleware to its method m,
// with an event stream ready when the method may use one, and turns the
// Response into the answer. On the legacy revisions a request of any
// method that can block is in flight while it runs, so that a
// notifications/cancelled naming its id cancels its context, whatever the
// method (cancels.go). A notification gets none of these: its answer is
// a 202 (m may be nil: Dispatch accepts it), and one that names a
// request's method is observed but not dispatched (ignoredRequest).
func (h *Handler) call(x *exchange, req *Request, m *Method, target *Target) answer {
	x.info = callInfo{caller: req.Caller, clientIP: x.clientIP, method: m, target: target, params: idOf(req.Params), format: &h.format}
	ctx := context.WithValue(x.r.Context(), callKey, &x.info)
	if m != nil && !req.IsNotification() {
		if m.Streams && openStream(&x.streamv, x.w, x.r.Header, req, h.logLevel) {
			x.stream = &x.streamv
			x.info.stream = x.stream
		}
		if !m.quick && req.revision().cancelsByNotification() {
			var done func()
			ctx, done = h.inflight.add(ctx, req)
			defer done()
		}
		if m.Lifetime == LifetimeStream {
			if a := x.openLasting(); a != nil {
				return *a
			}
		}
	}
	if h.observer != nil {
		ctx = h.observer.Serve(ctx, req, x.start)
		x.observed = ctx
	}
	if resp := ignoredRequest(req); resp != nil { // no request without an id: neither middleware nor method runs it
		return h.answerTo(req, nil, resp)
	}
	resp := h.dispatch.Dispatch(ctx, req)
	if resp != nil && resp.Then != nil {
		resp = x.outlive(ctx, resp)
	}
	if resp == nil {
		resp = internalError("", fmt.Errorf("dispatcher returned a nil Response for %q", req.Method), "")
	}
	return h.answerTo(req, m, resp)
}

// openLasting readies the exchange of a request whose answer is an event
// stream that outlives its record (LifetimeStream): a client whose Accept
// header rules one out is refused with 406 (no Accept header means
// anything goes), and one that comes after Close with 503. It reads the
// body to its end, so that net/http watches the connection and cancels
// the request's context when the client goes, and opens the stream.
func (x *exchange) openLasting() *answer {
	if len(x.r.Header.Values("Accept")) > 0 && !acceptsEventStream(x.r.Header) {
		return refusal(http.StatusNotAcceptable, CodeInvalidRequest, "Not Acceptable: "+capEcho(x.req.Method)+" answers with an event stream; send Accept: text/event-stream")
	}
	if x.h.hub.isClosed() {
		a := refusal(http.StatusServiceUnavailable, CodeInvalidRequest, "Service unavailable: the server is shutting down; listen again")
		a.header = http.Header{"Retry-After": {"1"}}
		return a
	}
	var b [1]byte
	_, _ = x.r.Body.Read(b[:])
	x.streamv.w = x.w
	x.stream = &x.streamv
	x.info.stream = x.stream
	return nil
}

// outlive serves the rest of a stream that outlives its record: opened is
// the Response the record is made of, made now, as the stream opens; its
// Then serves the stream, and the Response it returns is the stream's
// last event. A Then without a stream of its own (a method not of
// LifetimeStream, or one a middleware dispatched to) is the method's
// mistake.
func (x *exchange) outlive(ctx context.Context, opened *Response) *Response {
	if x.stream == nil || x.info.method == nil || x.info.method.Lifetime != LifetimeStream {
		return internalError(opened.Target, errors.New("a Response with Then from a method whose Lifetime is not LifetimeStream"), "")
	}
	x.report(&answer{resp: opened})
	return opened.Then(ctx)
}

// endpointOf names the endpoint r arrived at, as the requestState of its
// rounds is bound to it: Options.Endpoint, or else the paths r names.
func (h *Handler) endpointOf(r *http.Request) endpointName {
	if h.endpoint != "" {
		return endpointName{name: h.endpoint}
	}
	requested, _, _ := strings.Cut(r.RequestURI, "?")
	return endpointName{path: r.URL.Path, requested: requested}
}

// checkHosts refuses (403) a Host outside AllowedHosts, when CheckHost is
// on, and an Origin outside them, or more than one Origin.
func (h *Handler) checkHosts(r *http.Request) *answer {
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
	return nil
}

// forbidden is the 403 answer to a refused Host or Origin.
func forbidden(err error) *answer {
	a := refusal(http.StatusForbidden, CodeInvalidRequest, "Forbidden: "+err.Error())
	a.resp.Outcome, a.resp.Summary = OutcomeDenied, err.Error()
	return a
}

// authenticate asks the Authenticator who is calling. A nil Caller with a
// nil error is a failure too (fail closed).
func (h *Handler) authenticate(r *http.Request) (Caller, error) {
	caller, err := h.authn.Authenticate(r)
	if err == nil && caller == nil {
		err = errors.New("authenticator returned neither a caller nor an error")
	}
	return caller, err
}
