// Package redistest starts a real redis-server for the tests that need
// one (package mcpredis in redis/, the example app's notes store and the
// multi-process tests in examples/): never a mock, so that scripts,
// pub/sub and outages behave as they do in production. It uses the
// standard library only, so that it lives in the root module, where every
// module of the repository can import it.
//
// Start runs redis-server on a free port of 127.0.0.1 with persistence off
// (--save ” --appendonly no) and stops it when the test ends. Where the
// binary is absent the test is skipped with a message saying how to
// install it, unless the environment sets RequireEnv (as .ci/run does): then
// the test fails, so that CI cannot pass by skipping.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw/internal/testproc"
)

// RequireEnv is the environment variable that turns a missing redis-server
// from a skip into a failure. .ci/run sets it to 1.
const RequireEnv = "MCPMW_REQUIRE_REDIS"

// startTimeout bounds how long a server may take to answer PING.
const startTimeout = 10 * time.Second

// A Server is one redis-server process on a port of 127.0.0.1 that stays
// the same across Stop and Start, for outage tests.
type Server struct {
	// Addr is host:port, for redis.Options.Addr.
	Addr string

	t     testing.TB
	bin   string
	port  int
	dir   string
	extra []string // more redis-server arguments (a cluster node's)

	mu     sync.Mutex
	cmd    *exec.Cmd     // nil while stopped
	exited chan struct{} // closed when cmd has exited
	log    *os.File
}

// Start starts a redis-server for t and stops it when t ends; see the
// package doc for what happens when the binary is absent.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, lookPath(t, "redis-server"))
}

// lookPath returns the path of the named Redis binary, or skips (or fails)
// t as the package doc says.
func lookPath(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		msg := name + " not found in PATH: these tests need a real Redis server " +
			"(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis)"
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%s, and %s is set", msg, RequireEnv)
		}
		t.Skip(msg + "; set " + RequireEnv + "=1 to make this a failure")
	}
	return bin
}

func start(t testing.TB, bin string, extra ...string) *Server {
	t.Helper()
	s := &Server{t: t, bin: bin, dir: t.TempDir(), extra: extra}
	// A port the kernel had free a moment ago: another process may take
	// it before redis-server binds, so a failed start tries another.
	var lastErr error
	for range 5 {
		if s.port, lastErr = freePort(); lastErr != nil {
			continue
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
		if lastErr = s.start(); lastErr == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatalf("redistest: cannot start redis-server: %v", lastErr)
	return nil
}

// freePort returns a TCP port of 127.0.0.1 that was free when asked.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Restart starts the server again on its port after Stop: an empty
// server, since nothing was persisted. It fails the test if it cannot.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatalf("redistest: restarting redis-server on %s: %v", s.Addr, err)
	}
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("redis-server on %s is already running", s.Addr)
	}
	log, err := os.OpenFile(filepath.Join(s.dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, append([]string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no",
		"--dir", s.dir, "--daemonize", "no", "--loglevel", "warning"}, s.extra...)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = testproc.SysProcAttr() // no server outlives a killed test
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return err
	}
	exited := make(chan struct{})
	go func() {
		_, _ = cmd.Process.Wait()
		close(exited)
	}()
	if err := waitReady(s.Addr, cmd.Process.Pid, exited); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		_ = log.Close()
		return fmt.Errorf("%w; its log:\n%s", err, s.logText())
	}
	s.cmd, s.exited, s.log = cmd, exited, log
	return nil
}

// waitReady waits until the server at addr answers PING and says it is
// process pid, it exits, or startTimeout passes. The port was free when
// chosen, but another process's redis-server (a test of another package
// running at the same time) may have taken it since: it answers PING as
// well, while ours fails to bind and exits; a test must never be handed
// that one (it would flush or fill a stranger's data).
func waitReady(addr string, pid int, exited <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited before answering on %s", addr)
		default:
		}
		if Ping(addr, 200*time.Millisecond) == nil {
			got, err := serverPID(addr, 200*time.Millisecond)
			switch {
			case err != nil:
			case got != pid:
				return fmt.Errorf("another redis-server (process %d) answers on %s", got, addr)
			default:
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("redis-server did not answer PING on %s within %s", addr, startTimeout)
}

// serverPID asks the server at addr for its process id (INFO server).
func serverPID(addr string, timeout time.Duration) (int, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("INFO server\r\n")); err != nil {
		return 0, err
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
	if err != nil || !strings.HasPrefix(head, "$") {
		return 0, fmt.Errorf("INFO answered %q", head)
	}
	body := make([]byte, n+2)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(body), "\r\n") {
		if v, ok := strings.CutPrefix(line, "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("INFO server has no process_id")
}

// Ping sends PING to addr over a connection of its own and waits at most
// timeout for +PONG.
func Ping(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// Stop stops the server (SIGTERM, then SIGKILL after 5 s) and waits for
// it to exit; the port stays the Server's, for Restart. Stopping a stopped
// server does nothing. A server paused by Pause is resumed first, so that
// it can exit.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	_ = s.log.Close()
	s.cmd, s.log = nil, nil
}

// Pause stops the server's process (SIGSTOP) without closing its port:
// connections stay open and requests go unanswered, as with a server that
// hangs. Resume (or Stop) undoes it; a test that pauses should defer
// Resume.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.t.Fatalf("redistest: redis-server on %s is not running", s.Addr)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("redistest: signal %v to redis-server: %v", sig, err)
	}
}

// logText returns what the server has logged, for a failure message.
func (s *Server) logText() string {
	b, err := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	if err != nil {
		return err.Error()
	}
	return string(b)
}
