package mcpredis_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/redistest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// newClient returns a client of srv that honours deadlines, closed when t
// ends.
func newClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// config returns a Config of a fresh server's client, logging to logs.
func config(t testing.TB, failure mcpredis.FailurePolicy) (mcpredis.Config, *redistest.Server, *logLines) {
	t.Helper()
	srv := redistest.Start(t)
	logs := &logLines{}
	// A timeout far above a round trip, so that a loaded machine (-race,
	// parallel tests) never turns a correctness test into an outage; the
	// tests of deadlines set their own.
	return mcpredis.Config{Client: newClient(t, srv.Addr), Failure: failure, Logger: slog.New(logs), Timeout: 2 * time.Second}, srv, logs
}

// discard drops every log line.
var discard = slog.New(slog.DiscardHandler)

// slogOf logs to l, or nowhere when l is nil.
func slogOf(l *logLines) *slog.Logger {
	if l == nil {
		return discard
	}
	return slog.New(l)
}

// logLines is a slog.Handler keeping the messages it is given.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logLines) WithGroup(string) slog.Handler            { return l }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, r.Level.String()+" "+r.Message)
	return nil
}

func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

type everyone struct{}

func (everyone) Can(mcpmw.Permission) bool { return true }

// endpoint is an mcpmw Handler limited by l, counting its audit records.
type endpoint struct {
	h      http.Handler
	audits atomic.Int64
}

func newEndpoint(l mcpmw.RateLimiter) *endpoint {
	e := &endpoint{}
	e.h = mcpmw.New(&mcpmw.Registry{}, mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return everyone{}, nil }),
		mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) { e.audits.Add(1) }),
		&mcpmw.Options{RateLimit: l})
	return e
}

// discover sends a server/discover from remote and returns the response.
func (e *endpoint) discover(remote string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	r.RemoteAddr = remote
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "server/discover")
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w
}

// codes sends n discovers from remote and returns their statuses.
func (e *endpoint) codes(remote string, n int) []int {
	var out []int
	for range n {
		out = append(out, e.discover(remote).Code)
	}
	return out
}
