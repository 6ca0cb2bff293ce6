package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/internal/testproc"
)

// patience bounds every wait of these tests for something that must
// happen: so generous that a busy machine never runs out of it, since it
// only turns a hang into a failure.
const patience = 30 * time.Second

// The example app's bearer tokens (examples/chi-app/app.go).
const (
	readerToken = "reader-token" // may use echo, add, notes_list and notes_export
	writerToken = "writer-token" // may also use note_create
)

// chiApp is the example app (examples/chi-app) running as its own process
// on a loopback port, the way README.md runs it. It is a package main, so a
// test in another module cannot build its router in-process; running the
// binary also tests what users run.
type chiApp struct {
	url       string // the MCP endpoint
	auditPath string // one JSON audit record per line
	cmd       *exec.Cmd
	exited    chan struct{}
	exitErr   error
	logs      *syncBuffer
}

// syncBuffer is an io.Writer the child's output goroutine and the test may
// use at the same time.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startChiApp builds the example app and starts it on a free loopback port,
// with its default settings except the audit file. It is stopped when the
// test ends. Every wait is bounded.
func startChiApp(t *testing.T) *chiApp {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "chi-app")
	buildCtx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	build := exec.CommandContext(buildCtx, "go", "build", "-o", bin, "./chi-app")
	build.Dir = "../examples" // the examples' module, which holds the example app
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build ./chi-app in examples/: %s", out)

	// The app has no way to report a port the kernel picked, so pick one
	// here; another process may grab it in between, so a start that fails
	// is retried on a new port.
	var lastLogs string
	for range 3 {
		app := launchChiApp(t, bin, filepath.Join(dir, "audit.jsonl"))
		if app.waitReady(patience) {
			t.Cleanup(app.kill)
			return app
		}
		lastLogs = app.logs.String()
		app.kill()
	}
	require.FailNow(t, "the example app did not start", "last output:\n%s", lastLogs)
	return nil
}

// launchChiApp starts bin on a port that was free a moment ago.
func launchChiApp(t *testing.T, bin, auditPath string) *chiApp {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	_ = os.Remove(auditPath)

	app := &chiApp{
		url:       "http://" + addr + "/mcp",
		auditPath: auditPath,
		exited:    make(chan struct{}),
		logs:      &syncBuffer{},
	}
	app.cmd = exec.Command(bin)
	app.cmd.Env = append(os.Environ(), "ADDR="+addr, "AUDIT_LOG="+auditPath)
	app.cmd.Stdout, app.cmd.Stderr = app.logs, app.logs
	app.cmd.SysProcAttr = testproc.SysProcAttr() // it dies with the test, even one killed before its cleanup
	require.NoError(t, app.cmd.Start())
	go func() {
		app.exitErr = app.cmd.Wait()
		close(app.exited)
	}()
	return app
}

// waitReady polls /healthz until it answers 200, the process exits or
// the timeout passes.
func (a *chiApp) waitReady(timeout time.Duration) bool {
	client := &http.Client{Timeout: time.Second}
	health := strings.TrimSuffix(a.url, "/mcp") + "/healthz"
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		select {
		case <-a.exited:
			return false
		default:
		}
		if resp, err := client.Get(health); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// kill stops the app if it still runs and waits for it to exit.
func (a *chiApp) kill() {
	select {
	case <-a.exited:
	default:
		_ = a.cmd.Process.Kill()
		<-a.exited
	}
}

// stop asks the app to shut down the way an operator would (SIGINT), so that
// every audit record is written, and fails the test if it does not exit
// cleanly within patience.
func (a *chiApp) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, a.cmd.Process.Signal(os.Interrupt))
	select {
	case <-a.exited:
		require.NoError(t, a.exitErr, "the app stops cleanly on SIGINT; output:\n%s", a.logs.String())
	case <-time.After(patience):
		require.FailNow(t, "the app did not stop within patience of SIGINT")
	}
}

// auditRecord is the part of an audit line the interop tests look at.
type auditRecord struct {
	Method          string `json:"method"`
	Tool            string `json:"tool"`
	Outcome         string `json:"outcome"`
	Status          int    `json:"status"`
	ProtocolVersion string `json:"protocol_version"`
	Caller          string `json:"caller"`
}

// auditRecords reads the app's audit file.
func (a *chiApp) auditRecords(t *testing.T) []auditRecord {
	t.Helper()
	data, err := os.ReadFile(a.auditPath)
	require.NoError(t, err)
	var recs []auditRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var rec auditRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), "audit line %q", sc.Text())
		recs = append(recs, rec)
	}
	require.NoError(t, sc.Err())
	return recs
}

// statusOf returns the HTTP status of the last recorded POST whose body
// contains substr, or an error if there is none.
func (w *wireRecorder) statusOf(substr string) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.exchange) - 1; i >= 0; i-- {
		ex := w.exchange[i]
		if ex.method == http.MethodPost && bytes.Contains(ex.reqBody, []byte(substr)) {
			return ex.status, nil
		}
	}
	return 0, errors.New("no POST contains " + substr)
}

// methods returns the JSON-RPC method of every recorded POST, in order.
func (w *wireRecorder) methods() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, ex := range w.exchange {
		var msg struct {
			Method string `json:"method"`
		}
		if ex.method == http.MethodPost && json.Unmarshal(ex.reqBody, &msg) == nil {
			out = append(out, msg.Method)
		}
	}
	return out
}

// lastHeader returns the response header name of the last recorded POST
// whose body contains substr, or "" if there is none.
func (w *wireRecorder) lastHeader(substr, name string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.exchange) - 1; i >= 0; i-- {
		ex := w.exchange[i]
		if ex.method == http.MethodPost && bytes.Contains(ex.reqBody, []byte(substr)) {
			return ex.respHeader.Get(name)
		}
	}
	return ""
}
