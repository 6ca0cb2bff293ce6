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
// [New] combines them into a [Handler], an http.Handler; [Options] holds
// the knobs (nil is a valid configuration). A whole endpoint, which the
// package's Example compiles and runs:
//
//	type session struct {
//		name  string
//		perms map[mcpmw.Permission]bool
//	}
//
//	func (s *session) Can(p mcpmw.Permission) bool { return s.perms[p] }
//	func (s *session) String() string              { return s.name }
//
//	echo := mcpmw.Tool{
//		Name: "echo", Description: "Returns the message.", Permission: "read",
//		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
//		Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
//			msg := args.String("message")
//			if err := args.Err(); err != nil {
//				return mcpmw.ToolResult{}, err // an isError result naming the argument
//			}
//			return mcpmw.TextResult(msg), nil
//		},
//	}
//	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
//		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
//		if subtle.ConstantTimeCompare([]byte(token), []byte("reader-token")) != 1 {
//			return nil, mcpmw.ErrUnauthorized // 401 with WWW-Authenticate
//		}
//		return &session{name: "reader", perms: map[mcpmw.Permission]bool{"read": true}}, nil
//	})
//	auditor := mcpmw.AuditFunc(func(ctx context.Context, rec mcpmw.CallRecord) {
//		fmt.Println("audit:", rec.Method, rec.Tool, rec.Outcome, rec.Caller, rec.Status)
//	})
//
//	var reg mcpmw.Registry
//	reg.AddTools(echo)
//	mux := http.NewServeMux()
//	mux.Handle("/mcp", mcpmw.New(&reg, authn, auditor, &mcpmw.Options{
//		Server: mcpmw.Implementation{Name: "orders", Version: "1.4.0"},
//	}))
//
// In production the auditor writes somewhere durable ([JSONAuditor],
// [LogAuditor], or the application's own table). The README's quick start
// is the same endpoint as a program of its own, on chi, with typed tools
// and a rate limit; examples/chi-app is a complete service.
//
// # Sub-packages and modules
//
//   - typed (github.com/mcpmw/mcpmw/typed): tools built from Go types,
//     their schemas derived once, and arguments validated against any
//     tool's JSON Schema (github.com/google/jsonschema-go).
//   - mcpmwtest: the test kit: NewServer, a Client speaking either wire,
//     the Recorder auditor, Tokens and User.
//   - ratelimit: per-IP and per-key [RateLimiter]s for [Options].RateLimit
//     (GCRA in this process's memory; standard library only). For a limit
//     shared by many instances, the redis module (package mcpredis).
//   - oauthmeta: the OAuth 2.0 protected resource metadata document (RFC
//     9728) and the URL for [Options].ResourceMetadata; standard library
//     only.
//   - otel (github.com/mcpmw/mcpmw/otel, package mcpotel, a module of its
//     own): the OpenTelemetry [Observer], one span and one duration per
//     request.
//
// This package imports none of them, and only the standard library.
// Under examples/: chi-app (the example service), quickstart (the README's
// quick start, built and run as a new user would), guides (the tested
// snippets of the guides under docs/), oauth (a JWT Authenticator, a module
// of its own) and conformance (the server the official conformance suite
// runs against).
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
// none (docs/status.md has the table). Panics after the rate limiter are
// recovered, answered 500 with -32603, logged, and audited once.
package mcpmw
