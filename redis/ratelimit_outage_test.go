package mcpredis_test

import (
	"bytes"
	"context"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/internal/redistest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// slack is what a call may take beyond Config.Timeout on a busy machine
// under -race: the deadline is the point, not the microseconds. A call
// that ignored its deadline would wait the client's ReadTimeout, 3 s, so
// a second of slack still tells the two apart.
const slack = time.Second

// timedCodes sends n discovers from remote on each of conc goroutines and
// returns their statuses, Retry-After values and the slowest answer.
func timedCodes(e *endpoint, remote string, conc, n int) (codes map[int]int, retryAfter map[string]int, slowest time.Duration) {
	var mu sync.Mutex
	codes, retryAfter = map[int]int{}, map[string]int{}
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				t0 := time.Now()
				w := e.discover(remote)
				took := time.Since(t0)
				mu.Lock()
				codes[w.Code]++
				if w.Code == 429 {
					retryAfter[w.Header().Get("Retry-After")]++
				}
				slowest = max(slowest, took)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return codes, retryAfter, slowest
}

// TestRedisStoppedThenStarted: while Redis is down the configured policy
// holds, every request is answered within the deadline, one line is logged
// when Redis stops answering and one when it answers again, and the limit
// works again without a restart. The limiter that meets the outage has a
// deadline of 50 ms; the budget before and after it is checked by one of
// the same limit (so the same budget) with a deadline no busy machine
// misses.
func TestRedisStoppedThenStarted(t *testing.T) {
	t.Parallel()
	for _, policy := range []mcpredis.FailurePolicy{mcpredis.FailOpen, mcpredis.FailClosed} {
		t.Run(policy.String(), func(t *testing.T) {
			t.Parallel()
			cfg, srv, logs := config(t, policy)
			checked := newEndpoint(mcpredis.PerIP(mcpredis.Config{Client: cfg.Client, Failure: policy, Logger: discard, Timeout: cfg.Timeout}, 5, time.Minute))
			cfg.Timeout = 50 * time.Millisecond
			e := newEndpoint(mcpredis.PerIP(cfg, 5, time.Minute))
			const ip = "198.51.100.20:1"
			require.Equal(t, []int{200, 200, 200, 200, 200, 429}, checked.codes(ip, 6), "Redis up: the limit holds")

			srv.Stop()
			codes, retry, slowest := timedCodes(e, ip, 8, 10)
			assert.Less(t, slowest, cfg.Timeout+slack, "no request waits past the deadline")
			if policy == mcpredis.FailOpen {
				assert.Equal(t, map[int]int{200: 80}, codes, "fail open admits every request")
			} else {
				assert.Equal(t, map[int]int{429: 80}, codes, "fail closed refuses every request")
				assert.Equal(t, map[string]int{"1": 80}, retry)
			}

			srv.Restart()
			answers := "INFO mcpredis: Redis answers again"
			deadline := time.Now().Add(10 * time.Second)
			for !slices.Contains(logs.all(), answers) {
				require.True(t, time.Now().Before(deadline), "Redis did not answer again within 10 s of the restart")
				e.discover("198.51.100.99:1")
				time.Sleep(20 * time.Millisecond)
			}
			// The restarted server is empty: the budget is whole again.
			assert.Equal(t, []int{200, 200, 200, 200, 200, 429}, checked.codes(ip, 6), "the limit holds again")
			assert.Equal(t, []string{
				"WARN mcpredis: Redis does not answer: the rate limit fails " + policy.String() + " until it does",
				answers,
			}, logs.all(), "one line per transition, none per request")
		})
	}
}

// TestRedisPausedDeadlineHolds: a server that accepts and never answers
// (SIGSTOP) costs each request Config.Timeout, not the client's
// ReadTimeout. The limiter paused has a deadline of 30 ms; the script is
// loaded, and recovery checked, by one with a deadline no busy machine
// misses.
func TestRedisPausedDeadlineHolds(t *testing.T) {
	t.Parallel()
	cfg, srv, logs := config(t, mcpredis.FailClosed)
	warm := newEndpoint(mcpredis.PerIP(mcpredis.Config{Client: cfg.Client, Failure: cfg.Failure, Logger: discard, Timeout: cfg.Timeout}, 100, time.Minute))
	require.Equal(t, []int{200}, warm.codes("192.0.2.9:1", 1))
	cfg.Timeout = 30 * time.Millisecond
	e := newEndpoint(mcpredis.PerIP(cfg, 100, time.Minute))

	srv.Pause()
	codes, retry, slowest := timedCodes(e, "192.0.2.9:1", 4, 5)
	srv.Resume()
	assert.Less(t, slowest, cfg.Timeout+slack, "each request waits the deadline and no more")
	assert.Equal(t, map[int]int{429: 20}, codes)
	assert.Equal(t, map[string]int{"1": 20}, retry)

	deadline := time.Now().Add(10 * time.Second)
	for e.discover("192.0.2.9:1").Code != 200 {
		require.True(t, time.Now().Before(deadline), "no recovery within 10 s of SIGCONT")
		time.Sleep(50 * time.Millisecond)
	}
	assert.Len(t, logs.all(), 2, "one line down, one up: %v", logs.all())
}

// roundTrips is a go-redis hook counting the commands a client sends.
type roundTrips struct{ n atomic.Int64 }

func (c *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

func TestOneRoundTripPerCheck(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailClosed)
	client := cfg.Client.(*redis.Client)
	var rt roundTrips
	client.AddHook(&rt)
	e := newEndpoint(mcpredis.PerIP(cfg, 3, time.Minute))
	require.Equal(t, []int{200}, e.codes("192.0.2.1:1", 1)) // the first loads the script
	rt.n.Store(0)
	require.Equal(t, []int{200, 200, 429, 429}, e.codes("192.0.2.1:1", 4))
	assert.EqualValues(t, 4, rt.n.Load(), "one command per request, admitted or refused")

	require.NoError(t, client.ScriptFlush(t.Context()).Err())
	rt.n.Store(0)
	assert.Equal(t, []int{200}, e.codes("192.0.2.2:1", 1), "a flushed script cache is reloaded within the request")
	assert.EqualValues(t, 2, rt.n.Load(), "EVALSHA answered NOSCRIPT, then EVAL")
	rt.n.Store(0)
	assert.Equal(t, []int{200}, e.codes("192.0.2.3:1", 1))
	assert.EqualValues(t, 1, rt.n.Load(), "and EVALSHA again after that")
}

// loseOneReply is a TCP proxy in front of a real Redis that can drop the
// next reply it would pass back and close that connection, as a network
// failure after the server has run the command would.
type loseOneReply struct {
	ln     net.Listener
	target string
	drop   atomic.Bool
	script atomic.Bool // the client's last bytes sent a script (EVALSHA or EVAL)
}

func newLoseOneReply(t *testing.T, target string) *loseOneReply {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &loseOneReply{ln: ln, target: target}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			wg.Add(2)
			go func() { defer wg.Done(); p.forth(s, c) }()
			go func() { defer wg.Done(); p.back(c, s) }()
		}
	}()
	return p
}

// forth copies the client's commands to the server, noting whether the
// last of them runs a script: only a script's reply is dropped, not that of
// a command go-redis sends on its own (HELLO, CLIENT SETINFO on a new
// connection), which would lose the check before it is sent.
func (p *loseOneReply) forth(s, c net.Conn) {
	defer s.Close()
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			p.script.Store(bytes.Contains(bytes.ToLower(buf[:n]), []byte("eval")))
			if _, err := s.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// back copies the server's replies to the client until told to drop one,
// the reply to a script.
func (p *loseOneReply) back(c, s net.Conn) {
	defer c.Close()
	defer s.Close()
	buf := make([]byte, 4096)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if p.script.Load() && p.drop.CompareAndSwap(true, false) {
				return
			}
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestLostReplyIsNotRetried: go-redis retries a command whose connection
// broke (MaxRetries, 3 by default), which would run the script again and
// count the request twice; the limiter sends it once.
func TestLostReplyIsNotRetried(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := newLoseOneReply(t, srv.Addr)
	client := newClient(t, proxy.ln.Addr().String()) // go-redis's default MaxRetries
	// A timeout far above any round trip: under a loaded CI machine (-race,
	// parallel tests) the first check (dial, HELLO, EVALSHA, NOSCRIPT, EVAL)
	// can take longer than the default 50 ms and fail open uncounted. The
	// lost reply needs no timeout: the proxy closes the connection.
	e := newEndpoint(mcpredis.PerIP(mcpredis.Config{Client: client, Logger: discard, Timeout: 10 * time.Second}, 3, time.Minute))
	require.Equal(t, []int{200}, e.codes("192.0.2.5:1", 1), "counted: 1 of 3")
	proxy.drop.Store(true)
	require.Equal(t, []int{200}, e.codes("192.0.2.5:1", 1), "the reply is lost: fail open; counted once by the server: 2 of 3")
	require.False(t, proxy.drop.Load(), "the proxy dropped a reply")
	assert.Equal(t, []int{200, 429}, e.codes("192.0.2.5:1", 2), "3 of 3, then refused: the lost request was counted once, not twice")
}
