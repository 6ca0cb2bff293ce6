//go:build unix

// Package quickstart_test checks that the README's quick start is true, as
// a new user meets it: in a folder outside the repository, next to a
// checkout, it runs the README's setup lines as written (a module of its
// own, the replace line, go mod tidy, go run) with the README's main.go,
// then the README's curl lines, with curl; and the lines a program that
// imports the redis and otel modules adds.
package quickstart_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// block returns the fenced code block that follows marker in the README.
func block(t *testing.T, readme, marker string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, marker)
	if !ok {
		t.Fatalf("README.md has no %s marker", marker)
	}
	_, rest, ok = strings.Cut(rest, "```")
	if ok {
		_, rest, ok = strings.Cut(rest, "\n") // the fence's language tag
	}
	code, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatalf("no code block after %s", marker)
	}
	return code
}

// shell runs script with bash in dir and returns its standard output,
// failing the test with everything it printed.
func shell(t *testing.T, dir, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s\n%v\n%s%s", script, err, out.String(), errs.String())
	}
	return out.String()
}

// saveStep is the README's line telling the reader to save main.go: the
// setup lines before it run first, then main.go is saved where they left
// the reader, then the rest run there.
const saveStep = "# save the program below as main.go"

func TestQuickStartAsANewUserRunsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own")
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's lines need %s: %v", tool, err)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)

	// Outside the repository, beside a checkout named mcpmw, as the README
	// says.
	home := t.TempDir()
	if err := os.Symlink(root, filepath.Join(home, "mcpmw")); err != nil {
		t.Fatal(err)
	}
	setup := block(t, readme, "<!-- quickstart:setup -->")
	before, after, ok := strings.Cut(setup, saveStep)
	if !ok {
		t.Fatalf("the setup lines have no %q step", saveStep)
	}
	_, after, _ = strings.Cut(after, "\n")
	lines := strings.Split(strings.TrimSpace(after), "\n")
	last := lines[len(lines)-1]
	if last != "go run ." {
		t.Fatalf("the setup lines end with %q, not go run .", last)
	}
	dir := strings.TrimSpace(shell(t, home, before+"\npwd"))
	if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
		t.Fatalf("the quick start runs in %s, inside the repository", dir)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(block(t, readme, "<!-- quickstart:main.go -->")), 0o644); err != nil {
		t.Fatal(err)
	}
	shell(t, dir, strings.Join(lines[:len(lines)-1], "\n"))
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil || !strings.Contains(string(mod), "replace github.com/mcpmw/mcpmw => ../mcpmw") {
		t.Fatalf("go.mod has not the README's replace line (%v):\n%s", err, mod)
	}

	// go run ., in its own process group: go run starts the program as a
	// child, and both must stop with the test.
	addr := freeAddr(t)
	srv := exec.Command("bash", "-c", last)
	srv.Dir = dir
	srv.Env = append(os.Environ(), "ADDR="+addr)
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A file, not a buffer: the program writes it directly while the test
	// reads it.
	logs, err := os.Create(filepath.Join(home, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	srv.Stdout, srv.Stderr = logs, logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
		_ = srv.Wait()
	}()
	waitListening(t, addr, logs)

	curls := block(t, readme, "<!-- quickstart:curl -->")
	n := strings.Count(curls, "\ncurl ") + 1
	if n < 4 {
		t.Fatalf("found %d curl lines, want discover, tools/list, tools/call and initialize", n)
	}
	out := shell(t, dir, strings.ReplaceAll(curls, "127.0.0.1:8080", addr))
	answers := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(answers) != n {
		t.Fatalf("%d curl lines printed %d lines: each answer must end its own line\n%s", n, len(answers), out)
	}
	for i, a := range answers {
		var msg struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(a), &msg); err != nil || msg.Result == nil || msg.Error != nil || msg.ID != i+1 {
			t.Errorf("curl line %d: %s (%v)\nserver log:\n%s", i+1, a, err, logged(logs))
		}
	}
	if !strings.Contains(answers[2], `"structuredContent":{"message":"hi"}`) {
		t.Errorf("the echo tool did not answer hi: %s", answers[2])
	}
}

// modulesProgram imports both modules of the repository that the README's
// modules lines are for.
const modulesProgram = `package main

import (
	"fmt"

	mcpotel "github.com/mcpmw/mcpmw/otel"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

func main() { fmt.Println(mcpredis.FailClosed, mcpotel.NewObserver() != nil) }
`

// TestModulesOutsideTheRepository checks the README's lines for a program
// that imports the redis and otel modules: in a module of its own beside a
// checkout, with the quick start's replace line, they make go mod tidy and
// go build succeed, and leave the replace lines the README shows.
func TestModulesOutsideTheRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	var replace string
	for line := range strings.Lines(block(t, readme, "<!-- quickstart:setup -->")) {
		if strings.HasPrefix(line, "go mod edit -replace github.com/mcpmw/mcpmw=") {
			replace = line
		}
	}
	if replace == "" {
		t.Fatal("the quick start's setup lines have no replace line")
	}
	home := t.TempDir()
	if err := os.Symlink(root, filepath.Join(home, "mcpmw")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "app")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(modulesProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	shell(t, dir, "go mod init app\n"+replace)
	shell(t, dir, block(t, readme, "<!-- quickstart:modules -->"))
	shell(t, dir, "go build ./...")
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"replace github.com/mcpmw/mcpmw => ../mcpmw", "replace github.com/mcpmw/mcpmw/redis => ../mcpmw/redis",
		"replace github.com/mcpmw/mcpmw/otel => ../mcpmw/otel"} {
		if !strings.Contains(string(mod), want) || !strings.Contains(readme, want) {
			t.Errorf("go.mod or the README lacks %q:\n%s", want, mod)
		}
	}
}

// logged returns what the program has written to its log file.
func logged(f *os.File) string {
	b, _ := os.ReadFile(f.Name())
	return string(b)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitListening(t *testing.T, addr string, logs *os.File) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // go run compiles first
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal(fmt.Errorf("the quick start did not listen on %s within 2 minutes:\n%s", addr, logged(logs)))
}
