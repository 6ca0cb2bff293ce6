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
//	RATE_LIMIT_LEASE  with REDIS_URL, how many requests of a client's budget an
//	               instance takes with each Redis call, and then admits with no
//	               round trip for up to a second (mcpredis.Lease): from 0 (unset:
//	               no lease, one call per request) to RATE_LIMIT. Across a minute
//	               at most instances × RATE_LIMIT_LEASE requests more than the
//	               limit get through. Size it to a few times the requests
//	               one client has in flight at once on an instance, or the
//	               lease runs dry while it is topped up (see mcpredis.Lease).
//	AUDIT_LOG      file that receives one JSON audit record per line (default stderr)
//	EXPORT_DELAY   how long notes_export takes, in seconds from 0 to 600, fractions
//	               allowed (default 3): long enough that a client declaring the tasks
//	               extension gets a task to poll, while any other waits for the answer
//	MCP_STATE_KEY  hex key(s) sealing input_required state: 64 hex characters, or a
//	               comma-separated list (a key ring: the first seals, all open);
//	               unset means a random key of this process's own. Instances that
//	               share a key resume each other's rounds.
//	REDIS_URL      redis://[user:password@]host:port/db: the notes (per team), the
//	               rate limit (one budget per client IP across every instance),
//	               change notifications, a legacy client's answers and
//	               cancellations (relayed to the instance that asked, or runs the
//	               call), and the tasks of notes_export (redisenv.TaskStore) go
//	               through this Redis, so that any number of instances behind a
//	               load balancer serve the same service.
//	               Unset: one instance, everything in its memory.
//	REDIS_FAIL     open (default) or closed: while Redis cannot be reached, the rate
//	               limit admits every request, or refuses it (429, Retry-After: 1).
//	               The notes tools then answer isError ("the notes store (Redis) is
//	               not answering: ..."), each within 500 ms; everything works again
//	               once Redis does, without a restart.
//	REDIS_TIMEOUT  how long each call of the rate limit, the notifications, the
//	               relay and the tasks to Redis may take (a Go duration; default
//	               50ms); the notes store keeps its 500 ms.
//	TLS_CERT, TLS_KEY  PEM files of the server's certificate (its chain, leaf
//	               first) and its private key: with both, the app serves HTTPS,
//	               and net/http offers HTTP/2 to clients that ask for it (ALPN).
//	               Unset: plain HTTP/1.1. One without the other, or a file that
//	               cannot be read or does not hold a matching pair, stops the
//	               app naming the variable, so it never serves plain HTTP by
//	               mistake when HTTPS was meant.
//
// With REDIS_URL, its keys and channels start with "chi-app:": the notes of
// team T are the sorted set chi-app:notes:{T} (and its counter
// chi-app:notes:{T}:next); the rate limit and the notifications use
// mcpredis's (chi-app:rate:..., chi-app:events), the relay each
// instance's own chi-app:instance:<id> and the shared chi-app:instances.
//
// Bearer tokens: "reader-token" (capability read) and "writer-token" (read
// and write), both of the team "demo"; "other-token" (read and write) is of
// another team, whose notes are its own; "guest-token" (of "demo") holds no
// capability, so every tool, prompt and resource refuses it.
package main

import (
	"context"
	"crypto/tls"
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
	rateLease    int // RATE_LIMIT_LEASE: tokens per Redis call; 0: no lease
	auditPath    string
	exportDelay  time.Duration  // how long notes_export takes
	stateKeys    *mcpmw.KeyRing // nil: a random key per process
	redis        redisenv.Settings
	certificate  *tls.Certificate // TLS_CERT and TLS_KEY; nil: plain HTTP
}

// EXPORT_DELAY's default and maximum. A plain call of notes_export holds
// its request that long; newHTTPServer's WriteTimeout leaves room for it.
const (
	defaultExportDelay = 3 * time.Second
	maxExportDelay     = 10 * time.Minute
)

func configFromEnv(getenv func(string) string) (config, error) {
	c := config{addr: "127.0.0.1:8080", allowedHosts: []string{"localhost", "127.0.0.1"}, ratePerMin: 600, exportDelay: defaultExportDelay}
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
	if v := getenv("RATE_LIMIT_LEASE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > c.ratePerMin {
			return c, fmt.Errorf("RATE_LIMIT_LEASE=%q: want how many requests of a client's budget an instance takes per Redis call, from 0 (no lease) to RATE_LIMIT (%d)", v, c.ratePerMin)
		}
		c.rateLease = n
	}
	c.auditPath = getenv("AUDIT_LOG")
	if v := getenv("EXPORT_DELAY"); v != "" {
		d, err := parseExportDelay(v)
		if err != nil {
			return c, err
		}
		c.exportDelay = d
	}
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
	c.certificate, err = certificateFromEnv(getenv)
	return c, err
}

// certificateFromEnv loads TLS_CERT and TLS_KEY, both or neither, at start,
// so that a bad file stops the app before it listens rather than failing
// every handshake.
func certificateFromEnv(getenv func(string) string) (*tls.Certificate, error) {
	certPath, keyPath := getenv("TLS_CERT"), getenv("TLS_KEY")
	switch {
	case certPath == "" && keyPath == "":
		return nil, nil
	case keyPath == "":
		return nil, errors.New("TLS_CERT is set but TLS_KEY is not: set both to serve HTTPS, or neither for plain HTTP")
	case certPath == "":
		return nil, errors.New("TLS_KEY is set but TLS_CERT is not: set both to serve HTTPS, or neither for plain HTTP")
	}
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, fmt.Errorf("TLS_CERT: %w", err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("TLS_KEY: %w", err)
	}
	// The error says which input it could not use (the certificate's or the
	// key's), or that they do not match; the key itself is never quoted.
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("TLS_CERT=%q, TLS_KEY=%q: %w", certPath, keyPath, err)
	}
	return &cert, nil
}

// parseExportDelay reads EXPORT_DELAY, seconds from 0 to maxExportDelay.
func parseExportDelay(v string) (time.Duration, error) {
	s, err := strconv.ParseFloat(v, 64)
	// Written so that NaN, which fails every comparison, fails this one;
	// Inf is past the maximum.
	if err != nil || !(s >= 0 && s <= maxExportDelay.Seconds()) {
		return 0, fmt.Errorf("EXPORT_DELAY=%q: want how long notes_export takes, in seconds from 0 to %g (fractions allowed; default %g)",
			v, maxExportDelay.Seconds(), defaultExportDelay.Seconds())
	}
	return time.Duration(s * float64(time.Second)), nil
}

// instructions tell the client's model what the endpoint is for.
const instructions = "Notes for your team: notes_list reads them, note_create adds one and note_delete removes one " +
	"after asking the user to confirm (both need write access; note_delete needs a client that supports elicitation); " +
	"notes_export returns them all, and takes a while: a client that supports tasks gets a task to poll. " +
	"Each note is also a resource, notes://<id>; the prompts summarize_notes and draft_note help write and review them."

// taskPollInterval is the pollIntervalMs the app's tasks suggest: an
// export takes EXPORT_DELAY (3 s by default), so a client polling every
// half second sees it done at most half a second late, for two tasks/get
// a second per waiting client (with REDIS_URL, one Redis round trip each).
const taskPollInterval = 500 * time.Millisecond

// taskMaxRunning bounds the exports one instance runs as tasks at once
// (each mostly waits: EXPORT_DELAY); beyond it an export is answered when
// done. One caller (a team's token) may use all of them: the app's
// contract is 128 per instance, whoever calls.
const taskMaxRunning = 128

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
	b := newBackends(c, logger)
	var reg mcpmw.Registry
	reg.AddResources(resources(b.notes)...)
	addBoard(&reg, b.notes, tools(b.notes, b.notify, c.exportDelay)) // the tools, some shown on the notes board (board.go)
	reg.AddTools(extra...)
	reg.AddResourceTemplates(noteTemplates(b.notes)...)
	reg.AddPrompts(prompts(b.notes)...)
	exts := []mcpmw.Extension{appSkills(&reg)}

	opts := &mcpmw.Options{
		Server:       mcpmw.Implementation{Name: "chi-app", Title: "mcpmw example app", Version: "1.0.0"},
		Instructions: instructions,
		AllowedHosts: c.allowedHosts,
		ClientIP:     func(r *http.Request) string { return middleware.GetClientIP(r.Context()) },
		Logger:       logger,
		StateKeys:    c.stateKeys,
		Notifier:     b.notify,
		Relay:        b.relay,
		RateLimit:    b.limit,
		Tasks:        &mcpmw.TaskOptions{Store: b.tasks, PollInterval: taskPollInterval, MaxRunning: taskMaxRunning, MaxPerCaller: taskMaxRunning},
		Extensions:   exts,
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
	return r, mcp, b.close
}

// backends are what the app keeps its notes and tasks in, tells its
// listeners through, limits requests by and relays legacy answers and
// cancellations through: this process's memory, or with REDIS_URL, Redis,
// which every instance shares.
type backends struct {
	notes  notes
	notify mcpmw.Notifier
	limit  mcpmw.RateLimiter // nil: RATE_LIMIT=0
	relay  mcpmw.Relay       // nil: none
	tasks  mcpmw.TaskStore   // nil: mcpmw's own, in this process's memory
	close  func()            // closes the connections to Redis
}

// newBackends returns the backends c asks for.
func newBackends(c config, logger *slog.Logger) backends {
	if !c.redis.Enabled() {
		b := backends{notes: newMemNotes(), notify: mcpmw.NewLocalNotifier(), close: func() {}}
		if c.ratePerMin > 0 {
			b.limit = ratelimit.PerIP(c.ratePerMin, time.Minute)
		}
		return b
	}
	cfg := c.redis.Config("chi-app:", logger)
	n := mcpredis.NewNotifier(cfg)
	relay, closeRelay := redisenv.Relay(cfg, logger)
	b := backends{notes: newRedisNotes(cfg.Client, cfg.Prefix, logger), notify: n, relay: relay, tasks: redisenv.TaskStore(cfg),
		close: func() { closeRelay(); _, _ = n.Close(), cfg.Client.Close() }}
	if c.ratePerMin > 0 {
		b.limit = mcpredis.PerIP(cfg, c.ratePerMin, time.Minute, mcpredis.Lease(c.rateLease))
	}
	return b
}

// newHTTPServer returns the http.Server for h, with every timeout set: without
// them a client that sends slowly, or never reads, holds its connection for
// as long as it likes. slowest is the longest a tool runs before it answers
// (notes_export's EXPORT_DELAY, called without a task).
func newHTTPServer(addr string, h http.Handler, slowest time.Duration) *http.Server {
	return &http.Server{Addr: addr, Handler: h,
		ReadHeaderTimeout: 10 * time.Second,         // a client must send its headers promptly,
		ReadTimeout:       30 * time.Second,         // and its body: a stalled body does not hold the connection
		WriteTimeout:      slowest + 60*time.Second, // the slowest tool, then a minute to answer; event streams set their own
		IdleTimeout:       2 * time.Minute,          // idle keep-alive connections are closed
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
	// Once the server is done: the tasks still running finish (or fail
	// after TaskOptions.Shutdown, saying the instance shut down), their
	// ends stored and audited before Redis and the audit file close.
	// Close runs once; this call waits for the one that Shutdown started.
	defer mcp.Close()
	srv := newHTTPServer(c.addr, router, c.exportDelay)
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
	scheme := "http"
	if c.certificate != nil {
		// ServeTLS adds "h2" to the protocols offered, so that HTTP/2 is
		// negotiated with any client that asks for it.
		scheme = "https"
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*c.certificate}, MinVersion: tls.VersionTLS12}
		go func() { errc <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { errc <- srv.Serve(ln) }()
	}
	fmt.Fprintf(os.Stderr, "chi-app: MCP endpoint at %s://%s/mcp\n", scheme, ln.Addr())
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
