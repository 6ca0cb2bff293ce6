package mcpmw

import (
	"log/slog"
	"net/http"
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
	// localhost, 127.0.0.1 and ::1. Entries are bare hostnames. A list
	// replaces those defaults rather than adding to them (a public server
	// names exactly the hosts its pages come from): include the loopback
	// names too when a browser-based client on the same machine, such as
	// the MCP Inspector, must reach the server.
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
	// means "Bearer", with the resource_metadata of ResourceMetadata when
	// that is set. An Authenticator's error that carries its own
	// challenges (see Challenge) replaces it.
	Challenge string
	// ResourceMetadata is the URL of the endpoint's OAuth 2.0 Protected
	// Resource Metadata (RFC 9728), where a client learns which
	// authorization server issues tokens for it (see the oauthmeta
	// package). When set, the 401 challenge (unless Challenge says
	// otherwise), every challenge an Authenticator's error carries and
	// the 403 insufficient_scope challenge name it as resource_metadata.
	ResourceMetadata string

	// Methods are the application's own methods, served beside the
	// built-in ones (and able to replace none of them); their capabilities
	// are declared in server/discover and initialize. See Method.
	Methods []Method
	// Extensions are the protocol extensions the endpoint serves beside
	// the built-in ones (tasks, declared when a tool may become a task or
	// Tasks is set), each declared in server/discover and initialize on
	// its revisions, with its methods. See Extension.
	Extensions []Extension
	// Middleware wraps the handler's Dispatcher, the first outermost, to
	// observe, rewrite or refuse requests on their way to a method; see
	// Dispatcher.
	Middleware []func(Dispatcher) Dispatcher

	// ClientLogLevel enables logging to clients (the "logging" capability,
	// see Log). On 2026-07-28 each request chooses its own level; on the
	// legacy revisions, which cannot carry one per request, messages at or
	// above ClientLogLevel are sent. Empty means no logging to clients.
	ClientLogLevel LogLevel
	// StateKeys seal the requestState of input_required rounds (see Ask):
	// the first key seals, every key opens. Every instance of a service
	// must hold the same ring for any of them to resume any round (read it
	// with ParseKeyRing from the environment). Nil means a random key of
	// this process's own.
	StateKeys *KeyRing
	// Endpoint names this endpoint in the requestState it seals, so that
	// state sealed by one endpoint is refused (-32602) by another that
	// shares StateKeys: a round begun at /mcp cannot be resumed at
	// /admin/mcp by a tool, prompt or resource of the same name. Empty
	// means the request's URL path, as the handler sees it and as the
	// client requested it (they differ behind http.StripPrefix), which is
	// the same on every instance of a service and different for two
	// endpoints of one process. Set it when the path is not stable: behind
	// a proxy that reaches instances of one service under different
	// paths, or for an endpoint mounted at several paths. Two endpoints
	// sharing StateKeys must have different names.
	Endpoint string
	// AskTimeout bounds how long Ask waits for a legacy client's answer
	// POST (2025-11-25, 2025-06-18), within the tool's own timeout. Zero
	// means 2 minutes. The answer must reach the instance that asked.
	AskTimeout time.Duration
	// ToolTimeout bounds how long a tool may run; a Tool's own Timeout
	// overrides it. When it passes, the tool's context is cancelled and the
	// caller gets an isError result saying so. Tools must honour their
	// context: the handler cannot stop one that does not. Zero means no
	// limit beyond the client's patience.
	ToolTimeout time.Duration

	// Tasks configures the tasks extension (see TaskMode): where tasks are
	// kept, how many run here at once, how long they live. Nil means the
	// defaults: a store in this process's memory (for one instance; give
	// every instance of a service the same shared store, such as the
	// redis module's), 64 at once, one hour. Only tools whose Task is
	// TaskOptional or TaskRequired make tasks. The extension (discover's
	// capabilities.extensions, tasks/get, tasks/update, tasks/cancel) is
	// served when Tasks is set or the Registry holds such a tool when New
	// is called, and only then does a call become a task: set Tasks when
	// such tools are added only later. Without it, a TaskOptional tool
	// added after New runs as a plain call, and a TaskRequired one is
	// refused with -32603 (and a log line naming the mistake).
	Tasks *TaskOptions

	// LegacySessionIDs makes the legacy initialize answer carry a random
	// Mcp-Session-Id. The handler never stores, reads or checks it: every
	// request is still answered on its own. Some legacy clients expect an id
	// to exist (the conformance suite's server-sse-multiple-streams scenario
	// does); with one, they may also send DELETE when they close, which gets
	// 405. Off by default: a stateless server need not pretend.
	LegacySessionIDs bool

	// Notifier carries change notifications (see Event) to the
	// subscriptions/listen streams of every instance hearing it:
	// Handler.Publish sends events to it, and the handler delivers what it
	// hears to its own streams. Nil means a LocalNotifier of the handler's
	// own; give every instance one backed by a shared bus for a change
	// published on one to reach listeners on all. (Changes to the Registry
	// are not sent through it: each instance has its own Registry, and
	// tells its own listeners.)
	Notifier Notifier
	// Relay joins a legacy client's two POSTs across the instances of a
	// service: its answer to a request a call sent it reaches the instance
	// whose call waits for it, and its notifications/cancelled the instance
	// running the call, whichever instance received them (see Relay). Nil
	// means this instance only: give every instance one on the same bus
	// (mcpredis.NewRelay) when a load balancer spreads a client's requests.
	// The 2026-07-28 rounds need none of it, only StateKeys shared.
	Relay Relay
	// ListenKeepAlive is how often an idle subscriptions/listen stream gets
	// a keep-alive comment, so that proxies do not close it as idle and a
	// client that has gone is noticed. Zero means 15 seconds; negative
	// means none.
	ListenKeepAlive time.Duration
	// ListenMaxLifetime is how long one subscriptions/listen stream may
	// stay open. Its caller was authenticated when it opened, and a
	// stream is not authenticated again: when the lifetime is over, the
	// stream ends with its result (as on Close), and the client, listening
	// again, shows its current credentials, so a revoked token stops
	// hearing changes within this bound. Each stream ends up to a tenth
	// sooner, at random, so that streams opened together do not all come
	// back together. Zero means one hour; negative means no limit (a
	// revoked token then hears changes for as long as its stream lasts).
	ListenMaxLifetime time.Duration

	// Observer, when set, follows every request for traces and metrics,
	// refused ones included; see Observer and the otel module.
	Observer Observer

	// Logger receives what the handler has to report outside the audit
	// trail: panics, tool errors, auditor failures. Nil means slog.Default().
	Logger *slog.Logger
}
