// Package mcpmw turns an existing Go web service into a Model Context
// Protocol (MCP) server: one http.Handler, mounted at any path of any router,
// that exposes some of the service's operations as MCP tools.
//
// The handler is stateless Streamable HTTP. Each POST is answered on its
// own, with no session and nothing kept between requests, so any instance
// behind any load balancer can answer any request. It speaks three protocol
// revisions at once: 2026-07-28, where every request carries its version and
// the client's capabilities in params._meta, and the legacy 2025-11-25 and
// 2025-06-18, whose initialize handshake it answers as a pure function.
//
// # Setting up
//
// An application supplies two hooks and a set of tools:
//
//   - an [Authenticator] turns request headers into the application's own
//     [Caller] (or refuses the request);
//   - an [Auditor] receives one [CallRecord] per request;
//   - a [Registry] holds the [Tool] values, each naming the [Permission] a
//     caller must have.
//
// [New] combines them into a [Handler]; [Options] holds the knobs.
//
//	var reg mcpmw.Registry
//	reg.Add(tools.Echo, tools.ListOrders)
//	r.Handle("/mcp", mcpmw.New(&reg, authn, auditor, &mcpmw.Options{
//		Server:       mcpmw.Implementation{Name: "orders", Version: "1.4.0"},
//		AllowedHosts: []string{"app.example.com"},
//	}))
//
// # The pipeline
//
// Each request passes, in order: the optional rate limiter
// ([Options].RateLimit, never audited), the HTTP method check (POST only),
// the Host and Origin check against [Options].AllowedHosts (DNS-rebinding
// defence), the Authenticator (headers only, before the body is read), body
// and JSON-RPC envelope parsing, the revision's rules and headers, the
// method table and the request's target (the caller's [Permission] for it
// first), and the [Dispatcher]: [Options].Middleware around the [Method].
// The Auditor is then called exactly once, just before the response is
// written, whatever happened on the way.
//
// # Tools and permissions
//
// tools/list shows a caller only the tools whose permission [Caller].Can
// allows; tools/call checks again before the tool runs. The list is a
// courtesy; the call check is the gate. A tool reads its arguments through
// [Args], whose typed accessors report a missing or mistyped argument as an
// [ArgError] that the handler turns into an isError result naming the field,
// so the model can correct its call.
//
// # Resources, prompts and completion
//
// [Resource], [ResourceTemplate] and [Prompt] values go into the same
// [Registry] as tools, each with the permission a caller needs, and are
// listed and gated the same way: resources/list, resources/templates/list
// and prompts/list show a caller what it may use, and resources/read,
// prompts/get and completion/complete check again before anything else. A
// template's List adds the resources an application computes per caller;
// a [Completer] on a prompt argument or template variable answers
// completion/complete. Their handlers may [Ask] the client, as tools do.
//
// # Change notifications
//
// On 2026-07-28 a client listens for changes with subscriptions/listen.
// Registry changes, and the [Event] values an application publishes with
// [Handler.Publish] (through [Options].Notifier, by default a
// [LocalNotifier]), reach only the listeners that asked for them and whose
// caller holds the event's permission and, when it names one, belongs to
// its audience ([AudienceMember]). Register [Handler.Close] with
// http.Server.RegisterOnShutdown so that shutdown ends open streams.
//
// # Adding methods
//
// Methods of your own are [Method] values in [Options].Methods: each
// brings its server capability, which server/discover and initialize then
// advertise, so what is declared is exactly what is served.
// [Options].Middleware wraps every method the way chi wraps handlers.
//
// # Errors
//
// Bad input gets a JSON-RPC error with the HTTP status and code the
// specification gives, or the package's documented choice where it gives
// none (the README has the table). Panics after the rate limiter are
// recovered, answered 500 with -32603, logged, and audited once.
package mcpmw
