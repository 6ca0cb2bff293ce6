package scaleout

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// Each request while Redis is down or hung ends at its deadlines: the rate
// limit's (outageRedisTimeout) and the notes store's 500 ms. answeredWithin
// leaves a busy machine room on top of them, and is still far below what a
// call left without its deadline would wait: go-redis's socket read
// timeout (redisReadTimeout, raised from 3 s so that the two cannot be
// mistaken), or the client's (httpClient).
const (
	outageRedisTimeout = "500ms"
	answeredWithin     = 5 * time.Second
	redisReadTimeout   = 4 * answeredWithin
)

// TestRedisStoppedThenStarted: three instances behind the proxy while
// redis-server is stopped, then started again on its port, for each
// REDIS_FAIL (hung first, SIGSTOP, then stopped). Meanwhile the policy holds (open: every request admitted,
// past the budget; closed: 429 with Retry-After: 1), every request is
// answered within its deadline, and the notes tools answer isError naming
// the outage (open; closed refuses them first). Each instance logs each
// transition once each way. Afterwards everything works again without a
// restart: the notes, the rate limit (it refuses again), the
// notifications (a listener on instance 1 hears a change on instance 2;
// one that asked for the tool list, which nothing changes, is told it may
// have changed: the resync) and the legacy answers (a question asked on
// instance 1 is answered through instance 2).
func TestRedisStoppedThenStarted(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"open", "closed"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			const budget = 40
			// REDIS_TIMEOUT: the deadline this test is about, ten times
			// mcpredis's default: on a busy machine a healthy Redis misses
			// 50 ms now and then, and each miss is a transition logged
			// (the test counts one each way); the other tests' 2 s would
			// make each request of the outage wait 2 s.
			c := startCluster(t, "chi-app", "RATE_LIMIT="+strconv.Itoa(budget), "REDIS_FAIL="+policy, "REDIS_TIMEOUT="+outageRedisTimeout)
			ctx := t.Context()
			createNote(t, c.instances[0].url, writerToken, "before the outage")
			listener, err := client(c.instances[0].url, readerToken).Listen(ctx, mcpmwtest.ListenFilter{ResourcesListChanged: true})
			require.NoError(t, err)
			defer listener.Close()
			tools, err := client(c.instances[0].url, readerToken).Listen(ctx, mcpmwtest.ListenFilter{ToolsListChanged: true})
			require.NoError(t, err)
			defer tools.Close()

			// echo sends one echo to url and returns its status and
			// Retry-After, failing the test if it took too long.
			var n int
			echo := func(url string) (int, string) {
				t.Helper()
				n++
				t0 := time.Now()
				status, h, _, err := post(ctx, url, readerToken, "tools/call", "echo", echoBody(policy+"-"+strconv.Itoa(n)))
				require.NoError(t, err)
				assert.Less(t, time.Since(t0), answeredWithin, "answered within its deadline")
				return status, h.Get("Retry-After")
			}

			want, wantRetry := 200, ""
			if policy == "closed" {
				want, wantRetry = 429, "1"
			}
			// outage checks the policy, the deadlines and the notes tools
			// while Redis cannot answer (down: refused at once; hung: no
			// answer at all, so that only the deadlines end the waits).
			outage := func(how string) {
				for _, in := range c.instances { // each instance meets the outage itself
					status, retry := echo(in.url)
					assert.Equal(t, want, status, "%s, Redis %s", in.name, how)
					assert.Equal(t, wantRetry, retry)
				}
				b := burst(t, c.proxyURL, 8, 8)
				assert.Equal(t, map[int]int{want: 64}, b.statuses, "Redis %s: 64 requests, more than the budget: the policy decides each", how)
				assert.Less(t, b.slowest, answeredWithin, "Redis %s: every request answered within its deadline", how)
				if policy == "closed" {
					assert.Equal(t, map[string]int{"1": 64}, b.retries)
				}
				for _, in := range c.instances {
					t0 := time.Now()
					res, err := client(in.url, writerToken).CallTool(ctx, "note_create", map[string]any{"text": "during the outage"})
					assert.Less(t, time.Since(t0), answeredWithin)
					if policy == "closed" {
						var e *mcpmwtest.Error
						require.ErrorAs(t, err, &e)
						assert.Equal(t, 429, e.Status, "%s: refused before the tool runs", in.name)
						continue
					}
					require.NoError(t, err)
					assert.True(t, res.IsError, "%s: %s", in.name, res.Text)
					assert.True(t, strings.HasPrefix(res.Text, "the notes store (Redis) is not answering: "), res.Text)
					t0 = time.Now()
					list, err := client(in.url, readerToken).CallTool(ctx, "notes_list", nil)
					assert.Less(t, time.Since(t0), answeredWithin)
					require.NoError(t, err)
					assert.True(t, list.IsError)
					assert.True(t, strings.HasPrefix(list.Text, "the notes store (Redis) is not answering: "), list.Text)
				}
			}
			c.redis.Pause()
			outage("hung")
			c.redis.Stop() // resumes it first, then stops it: one outage, hung then down
			outage("down")

			c.redis.Restart() // empty: nothing was persisted
			for _, in := range c.instances {
				waitFor(t, in.name+" works again", patience, func() bool {
					res, err := client(in.url, writerToken).CallTool(ctx, "note_create", map[string]any{"text": "after, on " + in.name})
					return err == nil && !res.IsError
				})
			}
			assert.Len(t, listNotes(t, c.instances[2].url, readerToken), 3, "the notes written since, on every instance")

			// The Notifier's subscription comes back by itself: a change on
			// instance 2 reaches the listener opened on instance 1 before
			// the outage.
			heard := false
			for deadline := time.Now().Add(patience); !heard && time.Now().Before(deadline); {
				createNote(t, c.instances[1].url, writerToken, "heard?")
				next, cancel := context.WithTimeout(ctx, time.Second)
				n, err := listener.Next(next)
				cancel()
				heard = err == nil && n.Method == mcpmw.ResourcesListChanged
			}
			assert.True(t, heard, "notifications cross instances again\n%s", c.logs())
			next, cancel := context.WithTimeout(ctx, patience)
			told, err := tools.Next(next)
			cancel()
			require.NoError(t, err, "the resync: the tool list may have changed while the subscription was broken\n%s", c.logs())
			assert.Equal(t, mcpmw.ToolsListChanged, told.Method)

			// The relay's subscriptions (the instance's own and the shared
			// one) come back by themselves too.
			waitFor(t, "instance 1's relay is subscribed again", patience, func() bool {
				return c.instances[0].logs.count("the relay's subscription is restored") >= 2
			})
			call := legacyDelete(t, c.instances[0].url, writerToken, createNote(t, c.instances[0].url, writerToken, "to delete"))
			accepted(t, c.instances[1].url, writerToken, `{"jsonrpc":"2.0","id":`+string(call.question(t))+`,`+confirmYes+`}`)
			text, isError := call.result(t)
			assert.False(t, isError, "legacy answers cross instances again: %s", text)

			b := burst(t, c.proxyURL, 8, 8)
			assert.Positive(t, b.statuses[429], "the limit holds again: %v", b.statuses)
			assert.LessOrEqual(t, b.statuses[200], budget+2+b.refills(budget), "%v in %v", b.statuses, b.took)

			for _, in := range c.instances {
				assert.Equal(t, 1, in.logs.count("mcpredis: Redis does not answer: the rate limit fails "+policy+" until it does"), "%s logs the outage once:\n%s", in.name, in.logs)
				assert.Equal(t, 1, in.logs.count("mcpredis: Redis answers again", `component="mcpredis rate limit"`), "%s logs the recovery once:\n%s", in.name, in.logs)
				if policy == "open" {
					assert.Equal(t, 1, in.logs.count("chi-app: the notes store (Redis) is not answering"), "%s:\n%s", in.name, in.logs)
					assert.Equal(t, 1, in.logs.count("chi-app: the notes store (Redis) answers again"), "%s:\n%s", in.name, in.logs)
				}
			}
		})
	}
}
