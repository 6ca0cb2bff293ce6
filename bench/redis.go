package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// startRedis starts redis-server and waits for it to answer, on a new
// port each time the one it picked turns out to be another's.
func startRedis() (*redisServer, error) {
	var err error
	for range 3 {
		var s *redisServer
		if s, err = startRedisOnce(); err == nil {
			return s, nil
		}
		if !errors.Is(err, errNotOurRedis) {
			return nil, err
		}
	}
	return nil, err
}

// errNotOurRedis is startRedisOnce's error when the port it picked was
// taken, between its check and redis-server's start, by a redis-server it
// did not start (the machine is shared): the harness would otherwise
// count in, and the I/O workload flush, someone else's Redis.
var errNotOurRedis = errors.New("another redis-server answers on the port picked")

// startRedisOnce starts redis-server on a port that was free a moment ago
// and waits for it to answer, checking that the server answering is the
// one it started (by its working folder, which is new).
func startRedisOnce() (*redisServer, error) {
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
			got, err := c.ConfigGet(context.Background(), "dir").Result()
			want, _ := filepath.EvalSymlinks(dir)
			if err != nil || got["dir"] != want {
				s.stop()
				return nil, fmt.Errorf("%w (%s, dir %q, want %q)", errNotOurRedis, s.addr, got["dir"], want)
			}
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
// sends, its round trips, by name: apart those sent for a request that
// redisTaskRoundTrips marks (onPath), which are on the request's path,
// from the others, sent in the background (a task's run, the reaper).
// The commands that open a new connection (HELLO, CLIENT SETINFO) are
// counted apart, as handshakes: the pool opens one when requests and
// tasks' ends need more connections at once than it has.
type commandCounter struct {
	mu               sync.Mutex
	path, background map[string]int64
	handshakes       int64
}

// handshake reports whether the command named name opens a connection.
func handshake(name string) bool { return name == "hello" || name == "client" }

// onPathKey marks the context of a request whose commands are on its path.
type onPathKey struct{}

func (c *commandCounter) add(ctx context.Context, cmds ...redis.Cmder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := &c.background
	if ctx.Value(onPathKey{}) != nil {
		m = &c.path
	}
	if *m == nil {
		*m = map[string]int64{}
	}
	for _, cmd := range cmds {
		if handshake(cmd.Name()) {
			c.handshakes++
			continue
		}
		(*m)[cmd.Name()]++
	}
}

// reset forgets every command counted so far.
func (c *commandCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.path, c.background, c.handshakes = nil, nil, 0
}

// counts returns copies of the counts so far: on a request's path, in
// the background, and the handshakes.
func (c *commandCounter) counts() (path, background map[string]int64, handshakes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.path), maps.Clone(c.background), c.handshakes
}

// total is the number of commands in counts.
func total(counts map[string]int64) int64 {
	var n int64
	for _, v := range counts {
		n += v
	}
	return n
}

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.add(ctx, cmd)
		return next(ctx, cmd)
	}
}
func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.add(ctx, cmds...)
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
	h := newOursWith(sc.setup(), redisLimiter(client), nil)
	body := sc.body()
	tmpl := newTemplateRequest(sc, body)
	fp, err := validateOnce(h, sc, tmpl, body)
	if err != nil {
		return 0, err
	}
	sent.reset()
	if err := serveSequentially(h, tmpl, body, fp, n); err != nil {
		return 0, fmt.Errorf("ours+redis: %w", err)
	}
	path, background, handshakes := sent.counts()
	return float64(total(path)+total(background)+handshakes) / float64(n), nil
}

// roundTripRequests is how many requests the round trips of an opt-in
// contestant are counted over.
const roundTripRequests = 1000

// addRedisRoundTrips counts the Redis round trips of the opt-in
// contestants the run measures, on srv, and adds them to the notes (or,
// when they cannot be counted, to the failures): ours+redis's for the
// first scenario it was measured on, ours+redistasks's for every task
// scenario it was measured on.
func (r *report) addRedisRoundTrips(srv *redisServer) {
	var measured []*scenario
	if r.cfg.inprocess {
		measured = r.cfg.scenarios
	}
	if r.cfg.loopback {
		for _, sc := range r.cfg.loopScenarios {
			if !slices.Contains(measured, sc) {
				measured = append(measured, sc)
			}
		}
	}
	if slices.Contains(r.cfg.contestants, "ours+redis") {
		if i := slices.IndexFunc(measured, func(sc *scenario) bool { return supports("ours+redis", sc) }); i >= 0 {
			sc := measured[i]
			per, err := redisRoundTrips(srv, sc, roundTripRequests)
			if err != nil {
				r.otherFailures = append(r.otherFailures, "ours+redis round trips: "+err.Error())
			} else {
				r.notes = append(r.notes, fmt.Sprintf("ours+redis: %.2f Redis round trips per %s request (the commands its client sent over 1,000 sequential requests after a warm-up: the rate-limit check, one EVALSHA)", per, sc.name))
			}
		}
	}
	if slices.Contains(r.cfg.contestants, "ours+redistasks") {
		for _, sc := range measured {
			if !sc.tasks {
				continue
			}
			rt, err := redisTaskRoundTrips(srv, sc, roundTripRequests)
			if err != nil {
				r.otherFailures = append(r.otherFailures, "ours+redistasks round trips, "+sc.name+": "+err.Error())
				continue
			}
			r.notes = append(r.notes, fmt.Sprintf("ours+redistasks, %s: %s Redis commands per request on its path, and %s after it (in the background, until every task had ended), over 1,000 sequential requests after a warm-up; the call itself sends none (no Redis limiter); besides, %d command(s) opening connections (HELLO, CLIENT SETINFO) as the pool grew to serve requests and tasks' ends at once",
				sc.name, rt.perRequest(rt.path), rt.perRequest(rt.after), rt.handshakes))
		}
	}
}

// taskRoundTrips are the Redis commands of requests of a task scenario,
// by name: on their path, and after them (in the background, until every
// task they made has ended).
type taskRoundTrips struct {
	requests    int
	path, after map[string]int64
	handshakes  int64 // of the connections opened meanwhile
}

// redisTaskRoundTrips sends n requests of sc (taskget or taskcreate), one
// at a time, to an ours+redistasks handler whose client counts the
// commands it sends, after a warm-up (which loads the scripts and, for
// taskcreate, waits for its task to end), then closes the handler, which
// waits for every task to end, and returns the counts.
func redisTaskRoundTrips(srv *redisServer, sc *scenario, n int) (*taskRoundTrips, error) {
	client := redis.NewClient(&redis.Options{Addr: srv.addr, ContextTimeoutEnabled: true})
	defer client.Close()
	var sent commandCounter
	client.AddHook(&sent)
	h := newOursWith(sc.setup(), nil, redisTaskStore(client))
	defer h.Close()
	send := inProcess(h)
	bound, err := bind(sc, send)
	if err != nil {
		return nil, err
	}
	status, ct, got, _ := send(bound)
	if err := bound.validate(status, ct, got); err != nil {
		return nil, err
	}
	fp := bound.fingerprint(got)
	if bound.createsTask() {
		var a answer
		_ = json.Unmarshal(got, &a) // validate decoded it
		get := *bound
		get.method, get.taskID = "tasks/get", a.Result.TaskID
		if err := awaitCompleted(&get, send); err != nil {
			return nil, err
		}
	}
	body := bound.body()
	tmpl := newTemplateRequest(bound, body).WithContext(context.WithValue(context.Background(), onPathKey{}, true))
	sent.reset()
	if err := serveSequentially(h, tmpl, body, fp, n); err != nil {
		return nil, fmt.Errorf("ours+redistasks: %w", err)
	}
	path, _, _ := sent.counts()
	h.Close()
	_, after, handshakes := sent.counts()
	return &taskRoundTrips{requests: n, path: path, after: after, handshakes: handshakes}, nil
}

// perRequest formats counts per request: the total, then each command.
func (rt *taskRoundTrips) perRequest(counts map[string]int64) string {
	per := func(v int64) string { return fmt.Sprintf("%.2f", float64(v)/float64(rt.requests)) }
	if len(counts) == 0 {
		return "0"
	}
	names := slices.Sorted(maps.Keys(counts))
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = name + " " + per(counts[name])
	}
	return per(total(counts)) + " (" + strings.Join(parts, ", ") + ")"
}
