// Command conformance is the server the official MCP conformance suite
// (@modelcontextprotocol/conformance) is run against: one stateless mcpmw
// endpoint, built only on the library's public API, serving the fixtures
// the suite's scenarios call: tools (tools.go), input_required rounds and
// legacy elicitation through Ask (ask.go), resources, a resource template,
// prompts and completion (resources.go), the hooks of the
// subscriptions/listen scenarios (listen.go), and skills (skills.go).
//
//	go -C examples run ./conformance # from the repository root: examples/ is a module of its own
//	bash scripts/conformance.sh      # builds it, starts it, runs the suite
//
// Environment:
//
//	ADDR           listen address (default 127.0.0.1:3001); the endpoint is /mcp
//	ALLOWED_HOSTS  comma-separated hosts an Origin header may name (default: loopback)
//	VERBOSE        when set, every request's audit record is logged to stderr
//	MCP_STATE_KEY  hex key(s) sealing input_required state: 64 hex characters, or a
//	               comma-separated list (a key ring: the first seals, all open);
//	               unset means a random key of this process's own. Instances that
//	               share a key resume each other's rounds (scripts/conformance-proxy.sh
//	               runs three behind a round-robin proxy).
//	REDIS_URL      redis://host:port/db, as for examples/chi-app: change notifications
//	               published on any instance reach the listeners of every instance
//	               sharing it, a legacy client's answers and cancellations reach
//	               the instance that asked or runs the call, and the test_trigger_*
//	               tools change the Registry of every instance (keys and channels
//	               under "conformance:"); unset, each process has its own. REDIS_FAIL and REDIS_TIMEOUT are read and
//	               checked as chi-app reads them; the fixture has no rate limit for
//	               REDIS_FAIL to govern.
//
// Everyone is admitted: this is a test fixture, never a template for
// authentication.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/examples/internal/redisenv"
	mcpredis "github.com/mcpmw/mcpmw/redis"
	"github.com/mcpmw/mcpmw/skills"
)

// anyone is the caller every request authenticates as: it may do anything.
type anyone struct{}

// Can implements mcpmw.Caller.
func (anyone) Can(mcpmw.Permission) bool { return true }

// String is how the caller appears in audit records.
func (anyone) String() string { return "anyone" }

// CallerID identifies the caller across requests, which a sealed
// requestState is bound to.
func (anyone) CallerID() string { return "anyone" }

// config is what the environment decides.
type config struct {
	addr         string
	allowedHosts []string // nil: the library's loopback default
	verbose      bool
	stateKeys    *mcpmw.KeyRing // nil: a random key per process
	redis        redisenv.Settings
}

func configFromEnv(getenv func(string) string) (config, error) {
	c := config{addr: "127.0.0.1:3001", verbose: getenv("VERBOSE") != ""}
	if v := getenv("ADDR"); v != "" {
		c.addr = v
	}
	for _, h := range strings.Split(getenv("ALLOWED_HOSTS"), ",") {
		if h = strings.TrimSpace(h); h != "" {
			c.allowedHosts = append(c.allowedHosts, h)
		}
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
	return c, nil
}

// newHandler returns the mux serving the MCP endpoint at /mcp, and the
// func that closes its connections to Redis once the server is done.
func newHandler(c config, logger *slog.Logger) (http.Handler, func()) {
	var reg mcpmw.Registry
	dyn := newDynamics(&reg)
	skillSet := skills.New(&reg) // before dyn follows Redis: a flip may add a skill at once
	dyn.skills = skillSet
	var notify mcpmw.Notifier // nil: the Handler's own, this process's listeners only
	var relay mcpmw.Relay     // nil: legacy answers and cancellations on this process only
	var tasks *mcpmw.TaskOptions
	done := func() {}
	if c.redis.Enabled() {
		cfg := c.redis.Config("conformance:", logger)
		n := mcpredis.NewNotifier(cfg)
		r, closeRelay := redisenv.Relay(cfg, logger)
		dyn.rdb, dyn.prefix, dyn.channel = cfg.Client, "conformance:dynamic:", "conformance:registry"
		stopFollowing := func() {}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		stop, err := dyn.follow(ctx)
		cancel()
		if err != nil {
			logger.Error("conformance: the test_trigger_* tools change this instance only", slog.Any("error", err))
		} else {
			stopFollowing = stop
		}
		notify, relay, done = n, r, func() { stopFollowing(); closeRelay(); _, _ = n.Close(), cfg.Client.Close() }
		tasks = &mcpmw.TaskOptions{Store: redisenv.TaskStore(cfg)} // every instance answers for every task
	}
	reg.AddTools(tools()...)
	reg.AddTools(askTools()...)
	reg.AddTools(listenTools(dyn)...)
	reg.AddTools(taskTools()...)
	reg.AddResources(resources()...)
	reg.AddResourceTemplates(templates()...)
	reg.AddPrompts(prompts()...)
	skillsExt := addSkills(skillSet)

	authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return anyone{}, nil })
	audit := mcpmw.AuditFunc(func(ctx context.Context, rec mcpmw.CallRecord) {
		logger.LogAttrs(ctx, slog.LevelDebug, "mcp request", slog.Any("", rec))
	})
	mux := http.NewServeMux()
	h := mcpmw.New(&reg, authn, audit, &mcpmw.Options{
		Server:       mcpmw.Implementation{Name: "mcpmw-conformance", Title: "mcpmw conformance fixture", Version: "1.0.0"},
		AllowedHosts: c.allowedHosts,
		CheckHost:    true, // bound to loopback: a rebinding page shows up in Host too
		// The legacy revisions cannot carry a log level per request and a
		// stateless server cannot remember logging/setLevel, so messages at
		// or above this level go to every legacy client that accepts an
		// event stream. test_tool_with_logging logs at info; 2026-07-28
		// requests choose their own level.
		ClientLogLevel: mcpmw.LogInfo,
		// Legacy clients such as the suite's TypeScript SDK client expect
		// initialize to name a session; the id is random and never checked,
		// so the endpoint stays stateless.
		LegacySessionIDs: true,
		StateKeys:        c.stateKeys,
		Notifier:         notify,
		Relay:            relay,
		Tasks:            tasks,
		Extensions:       []mcpmw.Extension{skillsExt},
		Logger:           logger,
	})
	mux.Handle("/mcp", h)
	return mux, func() { h.Close(); done() } // Close ends the tasks still running (after their grace) before Redis goes
}

// newHTTPServer returns the http.Server for h, with every timeout set: without
// them a client that sends slowly, or never reads, holds its connection for
// as long as it likes.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h,
		ReadHeaderTimeout: 10 * time.Second, // a client must send its headers promptly,
		ReadTimeout:       30 * time.Second, // and its body: a stalled body does not hold the connection
		WriteTimeout:      60 * time.Second, // the fixture tools take a fraction of a second (slow_compute's long runs are tasks)
		IdleTimeout:       2 * time.Minute,  // idle keep-alive connections are closed
	}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func run() error {
	c, err := configFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if c.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	h, closeRedis := newHandler(c, logger)
	defer closeRedis()
	srv := newHTTPServer(h)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "conformance: MCP endpoint at http://%s/mcp\n", ln.Addr())
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
