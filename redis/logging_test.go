package mcpredis_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/redistest"
	"github.com/mcpmw/mcpmw/internal/testproc"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// childEnv names the variable that makes TestGoRedisLoggerInAnOutageChild
// run: it sets go-redis's process-wide logger, so it runs alone, in a
// process of its own.
const childEnv = "MCPREDIS_GOREDIS_LOG_CHILD"

// TestGoRedisLoggerInAnOutage: with go-redis's own logger routed through
// a GoRedisLogger at Debug (as the package doc shows), a Redis outage
// logs, at Info and above, only the package's lines, one each way per
// part, while go-redis's own lines go to Debug. It runs in a child
// process: redis.SetLogger is process-wide, and the goroutines of every
// other test read it.
func TestGoRedisLoggerInAnOutage(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGoRedisLoggerInAnOutageChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.SysProcAttr = testproc.SysProcAttr()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the child:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestGoRedisLoggerInAnOutageChild", "the child ran:\n%s", out)
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "go-redis lines") {
			t.Log(strings.TrimSpace(line))
		}
	}
}

// levelled is a slog.Handler keeping each record's level, message and
// component.
type levelled struct {
	mu    sync.Mutex
	lines []string
}

func (l *levelled) Enabled(context.Context, slog.Level) bool { return true }
func (l *levelled) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *levelled) WithGroup(string) slog.Handler            { return l }
func (l *levelled) Handle(_ context.Context, r slog.Record) error {
	component := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "component" {
			component = a.Value.String()
		}
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, r.Level.String()+" "+component+": "+r.Message)
	return nil
}

func (l *levelled) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func TestGoRedisLoggerInAnOutageChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestGoRedisLoggerInAnOutage, in a process of its own")
	}
	logs := &levelled{}
	logger := slog.New(logs)
	redis.SetLogger(mcpredis.GoRedisLogger{Logger: logger, Level: slog.LevelDebug})
	srv := redistest.Start(t)
	ctx := t.Context()
	cfg := mcpredis.Config{Client: newClient(t, srv.Addr), Logger: logger, Timeout: 2 * time.Second}
	n := mcpredis.NewNotifier(cfg)
	t.Cleanup(func() { _ = n.Close() })
	r, err := mcpredis.NewRelay(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	s := mcpredis.NewTaskStore(cfg)
	e := newEndpoint(mcpredis.PerIP(cfg, 1000, time.Minute))
	// calls calls every part once, and reports whether a call failed.
	calls := func() (failed bool) {
		errs := []error{n.Publish(ctx, mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}), r.Broadcast(ctx, []byte("x"))}
		_, err := s.Get(ctx, "none")
		errs = append(errs, err)
		_, _, err = s.Update(ctx, "none", mcpmw.TaskUpdate{Op: mcpmw.TaskCancel})
		errs = append(errs, err)
		_, err = s.Expired(ctx, time.Now(), 10)
		errs = append(errs, err)
		e.discover("192.0.2.1:1") // admitted either way (FailOpen): for the limiter's lines
		for _, err := range errs {
			if err != nil && err != mcpmw.ErrTaskNotFound {
				failed = true
			}
		}
		return failed
	}
	require.False(t, calls(), "Redis up")
	subscribers(t, newClient(t, srv.Addr), "mcpmw:", 1)

	srv.Stop()
	for t0 := time.Now(); time.Since(t0) < 3*time.Second; time.Sleep(100 * time.Millisecond) {
		calls()
	}
	srv.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for calls() {
		require.True(t, time.Now().Before(deadline), "Redis not back within 10 s")
		time.Sleep(50 * time.Millisecond)
	}
	subscribers(t, newClient(t, srv.Addr), "mcpmw:", 1)

	want := []string{
		"WARN mcpredis notifier: mcpredis: Redis does not answer: events published here reach this instance only until it does",
		"INFO mcpredis notifier: mcpredis: Redis answers again",
		"INFO mcpredis notifier: mcpredis: subscription restored: events published meanwhile are lost; telling listeners their lists may have changed",
		"WARN mcpredis relay: mcpredis: Redis does not answer: answers and cancellations for other instances are lost until it does",
		"INFO mcpredis relay: mcpredis: Redis answers again",
		"INFO mcpredis relay: mcpredis: the relay's subscription is restored: this instance receives answers and cancellations again",
		"INFO mcpredis relay: mcpredis: the relay's subscription is restored: this instance receives answers and cancellations again",
		"WARN mcpredis task store: mcpredis: Redis does not answer: tasks cannot be created, read or changed until it does",
		"INFO mcpredis task store: mcpredis: Redis answers again",
		"WARN mcpredis rate limit: mcpredis: Redis does not answer: the rate limit fails open until it does",
		"INFO mcpredis rate limit: mcpredis: Redis answers again",
	}
	// split returns the lines logged so far at Info and above, and
	// go-redis's own.
	split := func() (info, goRedis []string) {
		for _, line := range logs.all() {
			switch {
			case strings.HasPrefix(line, "DEBUG go-redis: "):
				goRedis = append(goRedis, line)
			case strings.HasPrefix(line, "DEBUG"):
			default:
				info = append(info, line)
			}
		}
		return info, goRedis
	}
	// The restorations are logged as the subscriptions' goroutines read
	// their confirmations: wait for as many lines as are wanted.
	info, goRedis := split()
	for deadline := time.Now().Add(10 * time.Second); len(info) < len(want) && time.Now().Before(deadline); info, goRedis = split() {
		time.Sleep(20 * time.Millisecond)
	}
	assert.ElementsMatch(t, want, info, "at Info and above, the package's lines only")
	assert.NotEmpty(t, goRedis, "go-redis's own lines went to Debug")
	t.Logf("go-redis lines at Debug during a 3 s outage: %d", len(goRedis))
}
