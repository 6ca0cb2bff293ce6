package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The ours+redis contestant is ours+hooks with the Redis rate limiter
// (mcpredis.PerIP, FailClosed, so that a check Redis does not answer in
// time shows as a wrong answer, never as speed) instead of the in-memory
// one. The harness starts one redis-server on this machine, on a free port
// of 127.0.0.1 with persistence off, and passes its address to the
// contestant, in this process or a loopback child, in redisEnv.
const redisEnv = "MCPMW_BENCH_REDIS"

// redisServer is the redis-server the harness started.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
	dir  string
}

// startRedis starts redis-server and waits for it to answer.
func startRedis() (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("ours+redis needs redis-server (apt-get install redis-server): %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	dir, err := os.MkdirTemp("", "mcpmw-bench-redis")
	if err != nil {
		return nil, err
	}
	s := &redisServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir}
	s.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning")
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	c := redis.NewClient(&redis.Options{Addr: s.addr})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c.Ping(context.Background()).Err() == nil {
			return s, nil
		}
	}
	s.stop()
	return nil, fmt.Errorf("redis-server on %s did not answer within 10 s", s.addr)
}

// stop ends redis-server and removes its folder.
func (s *redisServer) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	_ = os.RemoveAll(s.dir)
}

// commandCounter is a go-redis hook counting the commands its client
// sends: its round trips.
type commandCounter struct{ n atomic.Int64 }

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// redisRoundTrips sends n requests of sc, one at a time, to an ours+redis
// handler whose client counts the commands it sends, and returns the
// commands per request (after a warm-up, which loads the script).
func redisRoundTrips(srv *redisServer, sc *scenario, n int) (float64, error) {
	client := redis.NewClient(&redis.Options{Addr: srv.addr, ContextTimeoutEnabled: true})
	defer client.Close()
	var sent commandCounter
	client.AddHook(&sent)
	h := newOursWith(sc.setup(), redisLimiter(client))
	body := sc.body()
	tmpl := newTemplateRequest(sc, body)
	fp, err := validateOnce(h, sc, tmpl, body)
	if err != nil {
		return 0, err
	}
	sent.n.Store(0)
	w := newFakeWriter()
	for range n {
		w.reset()
		h.ServeHTTP(w, newRequest(tmpl, body))
		if !fp.match(w.status, w.body) {
			return 0, fmt.Errorf("ours+redis: an answer differs from the validated one: %d %s", w.status, clip(w.body))
		}
	}
	return float64(sent.n.Load()) / float64(n), nil
}
