package mcpredis_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// TestClientsIgnoringDeadlinesRefused: every constructor refuses, with a
// panic naming why, a client that cannot end a call at its deadline: an
// AutoPipeliner (its queued calls wait for their batch), even one made
// from a client that honours deadlines, and a go-redis client made
// without ContextTimeoutEnabled; one of each kind made with it is taken.
func TestClientsIgnoringDeadlinesRefused(t *testing.T) {
	t.Parallel()
	ok := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	deadlineless := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, ContextTimeoutEnabled: true})
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _, _, _, _ = ok.Close(), deadlineless.Close(), cluster.Close(), ring.Close() })
	pipeliner, err := ok.AutoPipeline()
	require.NoError(t, err)
	async, err := ok.AsyncAutoPipeline()
	require.NoError(t, err)
	clusterPipeliner, err := cluster.AutoPipeline()
	require.NoError(t, err)
	t.Cleanup(func() { _, _, _ = pipeliner.Close(), async.Close(), clusterPipeliner.Close() })

	constructors := map[string]func(mcpredis.Config){
		"PerIP": func(cfg mcpredis.Config) { mcpredis.PerIP(cfg, 1, time.Minute) },
		"By": func(cfg mcpredis.Config) {
			mcpredis.By(cfg, 1, time.Minute, func(*http.Request, string) string { return "" })
		},
		"NewNotifier":  func(cfg mcpredis.Config) { _ = mcpredis.NewNotifier(cfg).Close() },
		"NewTaskStore": func(cfg mcpredis.Config) { mcpredis.NewTaskStore(cfg) },
		"NewRelay": func(cfg mcpredis.Config) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			if r, err := mcpredis.NewRelay(ctx, cfg); err == nil {
				_ = r.Close()
			}
		},
	}
	refused := map[string]struct {
		client redis.UniversalClient
		why    string
	}{
		"auto-pipeliner":         {pipeliner, "is a *redis.AutoPipeliner, whose queued calls wait for their batch whatever their deadline"},
		"async auto-pipeliner":   {async, "is a *redis.AutoPipeliner"},
		"cluster auto-pipeliner": {clusterPipeliner, "is a *redis.AutoPipeliner"},
		"without deadlines":      {deadlineless, "was made without ContextTimeoutEnabled: true"},
	}
	for ctor, make := range constructors {
		for name, c := range refused {
			func() {
				defer func() {
					msg, _ := recover().(string)
					assert.True(t, strings.HasPrefix(msg, "mcpredis: "+ctor+": Config.Client "+c.why), "%s, %s: %q", ctor, name, msg)
					assert.Contains(t, msg, "a stalled Redis would hold each request past Config.Timeout", "%s, %s", ctor, name)
				}()
				make(mcpredis.Config{Client: c.client, Logger: discard})
				t.Errorf("%s took a client %s", ctor, name)
			}()
		}
		if ctor != "NewRelay" && ctor != "NewNotifier" { // these would dial the nodes of the cluster and ring
			for _, c := range []redis.UniversalClient{ok, cluster, ring} {
				assert.NotPanics(t, func() { make(mcpredis.Config{Client: c, Logger: discard}) }, "%s, %T", ctor, c)
			}
		}
	}
}

// TestGoRedisLoggerPassesLinesAtItsLevel: a GoRedisLogger formats
// go-redis's line and logs it at its level with component=go-redis, and
// formats nothing below the handler's level.
func TestGoRedisLoggerPassesLinesAtItsLevel(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	l := slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelInfo}))
	mcpredis.GoRedisLogger{Logger: l, Level: slog.LevelWarn}.Printf(context.Background(), "redis: dial %s: %v", "127.0.0.1:1", "refused")
	assert.Contains(t, b.String(), `level=WARN msg="redis: dial 127.0.0.1:1: refused" component=go-redis`)

	b.Reset()
	formatted := false
	mcpredis.GoRedisLogger{Logger: l, Level: slog.LevelDebug}.Printf(context.Background(), "%v", stringer(func() string { formatted = true; return "x" }))
	assert.Empty(t, b.String(), "below the handler's level: dropped")
	assert.False(t, formatted, "and never formatted")
	assert.NotPanics(t, func() {
		mcpredis.GoRedisLogger{Level: slog.LevelDebug - 4}.Printf(context.Background(), "to slog.Default(), below its level")
	}, "a nil Logger is slog.Default()")
}

// stringer is a fmt.Stringer made of a func.
type stringer func() string

func (s stringer) String() string { return s() }
