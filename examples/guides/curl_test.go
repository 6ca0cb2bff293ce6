//go:build unix

package guides_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// exampleAppCommand is the README's first command, which starts the
// example app on 127.0.0.1:8080; the test runs it as written, on another
// port through ADDR.
const exampleAppCommand = "go -C examples run ./chi-app"

// TestCurlAgainstTheExampleApp starts the example app with the README's
// command and runs, with curl, every block of curl lines of the README
// and docs/ that says it works against the example app: the quick start's
// and each one marked curlAppMarker. Each curl line must print one line,
// the JSON-RPC answer: a result, or the error code that a "# answers
// -NNNNN" comment line before it announces.
func TestCurlAgainstTheExampleApp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example app")
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the documented lines need %s: %v", tool, err)
		}
	}
	readme := read(t, "README.md")
	setup := fences(readme)
	if len(setup) == 0 || !strings.HasPrefix(setup[0].code, exampleAppCommand+" ") ||
		!strings.Contains(strings.SplitN(setup[0].code, "\n", 2)[0], "http://127.0.0.1:8080/mcp") {
		t.Fatalf("the README's first block does not start with %q on http://127.0.0.1:8080/mcp:\n%s", exampleAppCommand, setup[0].code)
	}

	var blocks []fence
	var where []string
	for _, page := range pages(t) {
		for _, f := range fences(read(t, page)) {
			if f.marker == curlAppMarker || f.marker == "<!-- quickstart:curl -->" {
				blocks = append(blocks, f)
				where = append(where, page+":"+strconv.Itoa(f.line))
			}
		}
	}
	if len(blocks) < 2 {
		t.Fatalf("found %d blocks of curl lines, want the quick start's and docs/resources-prompts.md's", len(blocks))
	}

	addr := startExampleApp(t)
	for i, b := range blocks {
		t.Run(where[i], func(t *testing.T) { runCurlBlock(t, b.code, addr) })
	}
}

// answers reads the "# answers -32020" comment that announces an error.
var answers = regexp.MustCompile(`^#.*\banswers (-\d+)`)

// runCurlBlock runs block with bash against addr and checks each curl
// line's answer.
func runCurlBlock(t *testing.T, block, addr string) {
	var want []int // per curl line: 0 for a result, else the error code
	pending := 0
	for line := range strings.Lines(block) {
		if m := answers.FindStringSubmatch(line); m != nil {
			pending, _ = strconv.Atoi(m[1])
		}
		if strings.HasPrefix(line, "curl ") {
			want = append(want, pending)
			pending = 0
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", strings.ReplaceAll(block, "127.0.0.1:8080", addr))
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errs.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d curl lines printed %d lines: each answer must end its own line (curl -w '\\n')\n%s", len(want), len(lines), out.String())
	}
	for i, l := range lines {
		var msg struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &msg); err != nil {
			t.Errorf("curl line %d: not JSON (%v): %s", i+1, err, l)
			continue
		}
		switch {
		case want[i] == 0 && (msg.Result == nil || msg.Error != nil):
			t.Errorf("curl line %d: want a result, got %s", i+1, l)
		case want[i] != 0 && (msg.Error == nil || msg.Error.Code != want[i]):
			t.Errorf("curl line %d: want the error %d its comment announces, got %s", i+1, want[i], l)
		}
	}
}

// startExampleApp runs the README's command in the repository's root with
// ADDR set to a free port, in a process group of its own (go run starts the
// app as its child, and both must stop with the test), and returns the
// address once the app listens.
func startExampleApp(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(t.TempDir(), "app.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logs.Close() })
	app := exec.Command("bash", "-c", "exec "+exampleAppCommand)
	app.Dir = absRoot
	app.Env = append(os.Environ(), "ADDR="+addr, "AUDIT_LOG="+filepath.Join(t.TempDir(), "audit.jsonl"))
	app.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	app.Stdout, app.Stderr = logs, logs
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-app.Process.Pid, syscall.SIGKILL)
		_ = app.Wait()
	})
	deadline := time.Now().Add(3 * time.Minute) // go run compiles first
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			return addr
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, _ := os.ReadFile(logs.Name())
	t.Fatalf("%s did not listen on %s within 3 minutes:\n%s", exampleAppCommand, addr, b)
	return ""
}
