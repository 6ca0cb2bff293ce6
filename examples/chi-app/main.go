// Command chi-app is a small web service that exposes some of its operations
// as MCP tools with mcpmw, mounted at /mcp on a chi router.
//
//	go -C examples run ./chi-app     # from the repository root: examples/ is a module of its own
//
// Environment:
//
//	ADDR           listen address (default 127.0.0.1:8080)
//	ALLOWED_HOSTS  comma-separated hosts an Origin header may name (default localhost,127.0.0.1)
//	RATE_LIMIT     requests per minute per client IP (default 600; 0 disables)
//	AUDIT_LOG      file that receives one JSON audit record per line (default stderr)
//	MCP_STATE_KEY  hex key(s) sealing input_required state: 64 hex characters, or a
//	               comma-separated list (a key ring: the first seals, all open);
//	               unset means a random key of this process's own. Instances that
//	               share a key resume each other's rounds.
//	REDIS_URL      redis://[user:password@]host:port/db: the notes (per team), the
//	               rate limit (one budget per client IP across every instance),
//	               change notifications, and a legacy client's answers and
//	               cancellations (relayed to the instance that asked, or runs the
//	               call) go through this Redis, so that any number of instances
//	               behind a load balancer serve the same service.
//	               Unset: one instance, everything in its memory.
//	REDIS_FAIL     open (default) or closed: while Redis cannot be reached, the rate
//	               limit admits every request, or refuses it (429, Retry-After: 1).
//	               The notes tools then answer isError ("the notes store (Redis) is
//	               not answering: ..."), each within 500 ms; everything works again
//	               once Redis does, without a restart.
//
// With REDIS_URL, its keys and channels start with "chi-app:": the notes of
// team T are the sorted set chi-app:notes:{T} (and its counter
// chi-app:notes:{T}:next); the rate limit and the notifications use
// mcpredis's (chi-app:rate:..., chi-app:events), the relay each
// instance's own chi-app:instance:<id> and the shared chi-app:instances.
//
// Bearer tokens: "reader-token" (capability read) and "writer-token" (read
// and write), both of the team "demo"; "other-token" (read and write) is of
// another team, whose notes are its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/examples/internal/redisenv"
	"github.com/mcpmw/mcpmw/ratelimit"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// config is what the environment decides.
type config struct {
	addr         string
	allowedHosts []string
	ratePerMin   int
	auditPath    string
	stateKeys    *mcpmw.KeyRing // nil: a random key per process
	redis        redisenv.Settings
}

func configFromEnv(getenv func(string) string) (config, error) {
	c := config{addr: "127.0.0.1:8080", allowedHosts: []string{"localhost", "127.0.0.1"}, ratePerMin: 600}
	if v := getenv("ADDR"); v != "" {
		c.addr = v
	}
	if v := getenv("ALLOWED_HOSTS"); v != "" {
		c.allowedHosts = nil
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				c.allowedHosts = append(c.allowedHosts, h)
			}
		}
	}
	if v := getenv("RATE_LIMIT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return c, fmt.Errorf("RATE_LIMIT=%q: want a number of requests per minute, or 0 to disable", v)
		}
		c.ratePerMin = n
	}
	c.auditPath = getenv("AUDIT_LOG")
	keys, err := redisenv.StateKeys(getenv)
	if err != nil {
		return c, err
	}
	c.stateKeys = keys
	r, err := redisenv.FromEnv(getenv)
	if err != nil {
		return c, err
	}
	c.redis = r
	return c, nil
}

// instructions tell the client's model what the endpoint is for.
const instructions = "Notes for your team: notes_list reads them, note_create adds one and note_delete removes one " +
	"after asking the user to confirm (both need write access; note_delete needs a client that supports elicitation). " +
	"Each note is also a resource, notes://<id>; the prompts summarize_notes and draft_note help write and review them."

// newRouter builds the application's router: chi's standard middleware, a
// health check, and the MCP endpoint at /mcp, auditing to auditOut and
// logging to logOut. extra tools are served beside the application's own
// (the tests use it for faults the real tools never produce).
func newRouter(c config, auditOut, logOut io.Writer, extra ...mcpmw.Tool) http.Handler {
	r, _, _ := newApp(c, auditOut, logOut, extra...)
	return r
}

// newApp is newRouter, also returning the MCP endpoint, whose Close ends
// its open listen streams when the server shuts down, and a func that
// closes the connections to Redis once the server is done.
func newApp(c config, auditOut, logOut io.Writer, extra ...mcpmw.Tool) (http.Handler, *mcpmw.Handler, func()) {
	logger := slog.New(slog.NewTextHandler(logOut, nil))
	store, notify, limit, relay, done := backends(c, logger)
	var reg mcpmw.Registry
	reg.AddTools(tools(store, notify)...)
	reg.AddTools(extra...)
	reg.AddResources(resources(store)...)
	reg.AddResourceTemplates(noteTemplates(store)...)
	reg.AddPrompts(prompts(store)...)

	opts := &mcpmw.Options{
		Server:       mcpmw.Implementation{Name: "chi-app", Title: "mcpmw example app", Version: "1.0.0"},
		Instructions: instructions,
		AllowedHosts: c.allowedHosts,
		ClientIP:     func(r *http.Request) string { return middleware.GetClientIP(r.Context()) },
		Logger:       logger,
		StateKeys:    c.stateKeys,
		Notifier:     notify,
		Relay:        relay,
		RateLimit:    limit,
	}
	// One JSON object per line, the arguments as JSON (sensitive ones,
	// note_create's text, as "[redacted]"); a line that cannot be written
	// is logged with the record it lost.
	audit := mcpmw.JSONAuditor(auditOut, opts.Logger)

	r := chi.NewRouter()
	r.Use(middleware.RequestID)
	r.Use(middleware.ClientIPFromRemoteAddr) // behind a proxy: middleware.ClientIPFromXFF("10.0.0.0/8")
	r.Use(middleware.Recoverer)
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mcp := mcpmw.New(&reg, newTokenAuth(), audit, opts)
	r.Handle("/mcp", mcp)
	return r, mcp, done
}

// backends returns what the app keeps its notes in, tells its listeners
// through, limits requests by (nil for RATE_LIMIT=0) and relays legacy
// answers and cancellations through (nil: none): this process's memory,
// or with REDIS_URL, Redis, which every instance shares; and the func that
// closes the connections to Redis.
func backends(c config, logger *slog.Logger) (notes, mcpmw.Notifier, mcpmw.RateLimiter, mcpmw.Relay, func()) {
	if !c.redis.Enabled() {
		var limit mcpmw.RateLimiter
		if c.ratePerMin > 0 {
			limit = ratelimit.PerIP(c.ratePerMin, time.Minute)
		}
		return newMemNotes(), mcpmw.NewLocalNotifier(), limit, nil, func() {}
	}
	cfg := c.redis.Config("chi-app:", logger)
	var limit mcpmw.RateLimiter
	if c.ratePerMin > 0 {
		limit = mcpredis.PerIP(cfg, c.ratePerMin, time.Minute)
	}
	n := mcpredis.NewNotifier(cfg)
	relay, closeRelay := redisenv.Relay(cfg, logger)
	return newRedisNotes(cfg.Client, cfg.Prefix, logger), n, limit, relay, func() { closeRelay(); _, _ = n.Close(), cfg.Client.Close() }
}

// newHTTPServer returns the http.Server for h, with every timeout set: without
// them a client that sends slowly, or never reads, holds its connection for
// as long as it likes.
func newHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{Addr: addr, Handler: h,
		ReadHeaderTimeout: 10 * time.Second, // a client must send its headers promptly,
		ReadTimeout:       30 * time.Second, // and its body: a stalled body does not hold the connection
		WriteTimeout:      60 * time.Second, // longer than the slowest tool; event streams set their own
		IdleTimeout:       2 * time.Minute,  // idle keep-alive connections are closed
	}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "chi-app:", err)
		os.Exit(1)
	}
}

func run() error {
	c, err := configFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	var auditOut io.Writer = os.Stderr
	if c.auditPath != "" {
		f, err := os.OpenFile(c.auditPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("AUDIT_LOG: %w", err)
		}
		defer f.Close()
		auditOut = f
	}
	router, mcp, closeRedis := newApp(c, auditOut, os.Stderr)
	defer closeRedis()
	srv := newHTTPServer(c.addr, router)
	srv.RegisterOnShutdown(mcp.Close) // listen streams end, so Shutdown does not wait for them
	if c.redis.Enabled() {
		fmt.Fprintf(os.Stderr, "chi-app: notes, rate limit, notifications, legacy answers and cancellations in Redis at %s (REDIS_FAIL=%s)\n", c.redis.Addr(), c.redis.Failure)
	}

	// Listening first, so that the line below names the port the kernel
	// chose for ADDR=127.0.0.1:0 (the multi-instance tests start it so).
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "chi-app: MCP endpoint at http://%s/mcp\n", ln.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
