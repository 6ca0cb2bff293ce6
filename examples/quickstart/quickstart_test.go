// Package quickstart_test checks that the README's quick start is true: its
// main.go, pasted into an empty module with only a replace line added,
// builds, runs and answers the README's curl lines.
package quickstart_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// run runs a command in dir, failing the test with its output.
func run(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func TestQuickStartBuildsAndAnswersTheCurlLines(t *testing.T) {
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
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(block(t, readme, "<!-- quickstart:main.go -->")), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GOFLAGS=-mod=mod"}
	run(t, dir, env, "go", "mod", "init", "quickstart")
	run(t, dir, env, "go", "mod", "edit", "-replace", "github.com/mcpmw/mcpmw="+root) // the one line added
	run(t, dir, env, "go", "mod", "tidy")
	run(t, dir, env, "go", "build", "-o", "quickstart", ".")

	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := exec.CommandContext(ctx, filepath.Join(dir, "quickstart"))
	srv.Env = append(os.Environ(), "ADDR="+addr)
	var logs bytes.Buffer
	srv.Stdout, srv.Stderr = &logs, &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = srv.Wait() }()
	waitListening(t, addr)

	calls := curlLines(t, block(t, readme, "<!-- quickstart:curl -->"))
	if len(calls) < 4 {
		t.Fatalf("found %d curl lines, want discover, tools/list, tools/call and initialize", len(calls))
	}
	for _, c := range calls {
		req, err := http.NewRequest(http.MethodPost, strings.Replace(c.url, "127.0.0.1:8080", addr, 1), strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = c.header
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var msg struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &msg) != nil || msg.Result == nil || msg.Error != nil {
			t.Errorf("%s: %d %s\nserver log:\n%s", c.body, resp.StatusCode, body, logs.String())
		}
	}
}

// curlCall is one curl line of the README: a POST with headers and a body.
type curlCall struct {
	url    string
	header http.Header
	body   string
}

// curlLines parses the README's curl commands: single-quoted arguments,
// lines continued with a backslash.
func curlLines(t *testing.T, script string) []curlCall {
	t.Helper()
	var calls []curlCall
	for _, cmd := range strings.Split(strings.ReplaceAll(script, "\\\n", " "), "\n") {
		words := shellWords(cmd)
		if len(words) == 0 || words[0] != "curl" {
			continue
		}
		c := curlCall{header: http.Header{}}
		for i := 1; i < len(words); i++ {
			switch w := words[i]; {
			case w == "-H" && i+1 < len(words):
				k, v, _ := strings.Cut(words[i+1], ":")
				c.header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
				i++
			case w == "-d" && i+1 < len(words):
				c.body = words[i+1]
				i++
			case strings.HasPrefix(w, "http://"):
				c.url = w
			}
		}
		if c.url == "" || c.body == "" {
			t.Fatalf("curl line without a URL or a body: %s", cmd)
		}
		calls = append(calls, c)
	}
	return calls
}

// shellWords splits a command line on spaces, keeping single-quoted words
// whole (the README's curl lines use no other quoting).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, any := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			in, any = !in, true
		case (r == ' ' || r == '\t') && !in:
			if any {
				words = append(words, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		words = append(words, cur.String())
	}
	return words
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

func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal(fmt.Errorf("the quick start did not listen on %s within 30 s", addr))
}
