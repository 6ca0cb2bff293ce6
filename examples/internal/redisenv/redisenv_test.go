package redisenv

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpredis "github.com/mcpmw/mcpmw/redis"
)

func TestFromEnv(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		env      map[string]string
		enabled  bool
		addr     string
		failure  mcpredis.FailurePolicy
		timeout  time.Duration
		wantErr  string
		mustHide string // never in the error
	}{
		{name: "unset: no Redis", env: nil},
		{name: "REDIS_FAIL alone is checked, and has no effect", env: map[string]string{"REDIS_FAIL": "closed"}, failure: mcpredis.FailClosed},
		{name: "a URL", env: map[string]string{"REDIS_URL": "redis://127.0.0.1:6390/2"}, enabled: true, addr: "127.0.0.1:6390"},
		{name: "open, said", env: map[string]string{"REDIS_URL": "redis://h:1/0", "REDIS_FAIL": "open"}, enabled: true, addr: "h:1"},
		{name: "closed", env: map[string]string{"REDIS_URL": "redis://h:1/0", "REDIS_FAIL": "closed"}, enabled: true, addr: "h:1", failure: mcpredis.FailClosed},
		{name: "REDIS_FAIL unknown", env: map[string]string{"REDIS_URL": "redis://h:1/0", "REDIS_FAIL": "Closed"},
			wantErr: `REDIS_FAIL="Closed": want open (the default: admit every request while Redis cannot be reached) or closed (refuse them with 429)`},
		{name: "not a Redis URL", env: map[string]string{"REDIS_URL": "http://h:1/"}, wantErr: "REDIS_URL: redis: invalid URL scheme: http (want redis://[user:password@]host:port/db)"},
		{name: "a bad port, and a password never quoted", env: map[string]string{"REDIS_URL": "redis://u:s3cret@h:port/0"},
			wantErr: `REDIS_URL: invalid port ":port" after host`, mustHide: "s3cret"},
		{name: "a bad database", env: map[string]string{"REDIS_URL": "redis://u:s3cret@h:1/x"}, wantErr: `REDIS_URL: redis: invalid database number: "x"`, mustHide: "s3cret"},
		{name: "a timeout", env: map[string]string{"REDIS_URL": "redis://h:1/0", "REDIS_TIMEOUT": "2s"}, enabled: true, addr: "h:1", timeout: 2 * time.Second},
		{name: "REDIS_TIMEOUT alone is checked, and has no effect", env: map[string]string{"REDIS_TIMEOUT": "250ms"}, timeout: 250 * time.Millisecond},
		{name: "REDIS_TIMEOUT not a duration", env: map[string]string{"REDIS_URL": "redis://h:1/0", "REDIS_TIMEOUT": "2"},
			wantErr: `REDIS_TIMEOUT="2": want a positive duration such as 200ms (unset: 50ms)`},
		{name: "REDIS_TIMEOUT zero", env: map[string]string{"REDIS_URL": "redis://h:1/0", "REDIS_TIMEOUT": "0s"},
			wantErr: `REDIS_TIMEOUT="0s": want a positive duration`},
		{name: "REDIS_TIMEOUT negative", env: map[string]string{"REDIS_URL": "redis://h:1/0", "REDIS_TIMEOUT": "-1ms"},
			wantErr: `REDIS_TIMEOUT="-1ms": want a positive duration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := FromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				if tc.mustHide != "" {
					assert.NotContains(t, err.Error(), tc.mustHide)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.enabled, s.Enabled())
			assert.Equal(t, tc.addr, s.Addr())
			assert.Equal(t, tc.failure, s.Failure)
			assert.Equal(t, tc.timeout, s.Timeout)
		})
	}
}

// TestConfig: the client honours each call's deadline and sends each
// command once, whatever the URL says, and the policy and prefix are
// passed on.
func TestConfig(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REDIS_URL": "redis://127.0.0.1:6390/3?max_retries=5", "REDIS_FAIL": "closed", "REDIS_TIMEOUT": "750ms"}
	s, err := FromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	cfg := s.Config("app:", nil)
	defer cfg.Client.Close()
	opts := cfg.Client.(*redis.Client).Options()
	assert.True(t, opts.ContextTimeoutEnabled)
	assert.Zero(t, opts.MaxRetries, "no retry (go-redis keeps the -1 it was given as 0; its default is 3)")
	assert.Equal(t, 3, opts.DB)
	assert.Equal(t, "app:", cfg.Prefix)
	assert.Equal(t, mcpredis.FailClosed, cfg.Failure)
	assert.Equal(t, 750*time.Millisecond, cfg.Timeout)
	other := s.Config("app:", nil)
	defer other.Client.Close()
	assert.NotSame(t, cfg.Client, other.Client, "a client of its own each time")
	assert.PanicsWithValue(t, "redisenv: Config without REDIS_URL", func() { Settings{}.Config("app:", nil) })
}
