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
	"github.com/mcpmw/mcpmw/ratelimit"
)

// config is what the environment decides.
type config struct {
	addr         string
	allowedHosts []string
	ratePerMin   int
	auditPath    string
	stateKeys    *mcpmw.KeyRing // nil: a random key per process
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
	if v := getenv("MCP_STATE_KEY"); v != "" {
		keys, err := mcpmw.ParseKeyRing(v)
		if err != nil {
			return c, fmt.Errorf("MCP_STATE_KEY: %w", err) // the error never quotes the key
		}
		c.stateKeys = keys
	}
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
	r, _ := newApp(c, auditOut, logOut, extra...)
	return r
}

// newApp is newRouter, also returning the MCP endpoint, whose Close ends
// its open listen streams when the server shuts down.
func newApp(c config, auditOut, logOut io.Writer, extra ...mcpmw.Tool) (http.Handler, *mcpmw.Handler) {
	store := newNoteStore()
	notify := mcpmw.NewLocalNotifier() // one process; a shared bus (Redis) would let every instance's listeners hear
	var reg mcpmw.Registry
	reg.Add(tools(store, notify)...)
	reg.Add(extra...)
	reg.AddResources(resources(store)...)
	reg.AddResourceTemplates(noteTemplates(store)...)
	reg.AddPrompts(prompts(store)...)

	opts := &mcpmw.Options{
		Server:       mcpmw.Implementation{Name: "chi-app", Title: "mcpmw example app", Version: "1.0.0"},
		Instructions: instructions,
		AllowedHosts: c.allowedHosts,
		ClientIP:     func(r *http.Request) string { return middleware.GetClientIP(r.Context()) },
		Logger:       slog.New(slog.NewTextHandler(logOut, nil)),
		StateKeys:    c.stateKeys,
		Notifier:     notify,
	}
	if c.ratePerMin > 0 {
		opts.RateLimit = ratelimit.PerIP(c.ratePerMin, time.Minute)
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
	return r, mcp
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
	router, mcp := newApp(c, auditOut, os.Stderr)
	srv := newHTTPServer(c.addr, router)
	srv.RegisterOnShutdown(mcp.Close) // listen streams end, so Shutdown does not wait for them

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	fmt.Fprintf(os.Stderr, "chi-app: MCP endpoint at http://%s/mcp\n", c.addr)
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
