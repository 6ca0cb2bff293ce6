// Package scripts tests the counting behind scripts/test.sh's closing line
// (verdict.sh) on outputs like those its parts print.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Outputs as the parts print them (trimmed).
const (
	goPassing = "ok  \tgithub.com/mcpmw/mcpmw\t7.7s\n?   \tgithub.com/mcpmw/mcpmw/internal/schemawalk\t[no test files]\n" +
		"ok  \tgithub.com/mcpmw/mcpmw/typed\t1.2s\nok  \tgithub.com/mcpmw/mcpmw/mcpmwtest\t(cached)\n"
	goFailing = "ok  \tgithub.com/mcpmw/mcpmw\t7.7s\n--- FAIL: TestX (0.00s)\n    x_test.go:1: boom\nFAIL\n" +
		"FAIL\tgithub.com/mcpmw/mcpmw/typed\t0.1s\n# github.com/mcpmw/mcpmw/otel\n./a.go:1: undefined: x\n" +
		"FAIL\tgithub.com/mcpmw/mcpmw/otel [build failed]\nFAIL\n"
	tsPassing   = "✔ TypeScript client at 2025-11-25 (147.0228ms)\nℹ tests 35\nℹ suites 0\nℹ pass 35\nℹ fail 0\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\n"
	tsFailing   = "✖ connect (3ms)\nℹ tests 35\nℹ pass 32\nℹ fail 2\nℹ cancelled 1\n"
	confPassing = "== summary\n2026-07-28: 40 passed, 0 failed, 0 expected failures, 0 stale entries\n" +
		"2025-11-25: 27 passed, 0 failed, 0 expected failures, 0 stale entries\npending (unscored): 1 passed, 2 not passed\n" +
		"unscored runs (not counted): 20 passed, 9 not passed (NOTE lines), 0 expected failures\n67 passed, 0 failed\n"
	confFailing = "== summary\n66 passed, 1 failed\n"
)

type part struct {
	fn, label, log string
	rc             int
}

// verdict runs verdict.sh's functions on the parts and returns what it
// printed, whether it reported success, and the verdict file.
func verdict(t *testing.T, parts []part) (out string, ok bool, file string) {
	t.Helper()
	dir := t.TempDir()
	script := []string{"set -euo pipefail", "source verdict.sh"}
	for i, p := range parts {
		if p.fn == "verdict_check" {
			script = append(script, p.fn+" '"+p.label+"' "+strconv.Itoa(p.rc))
			continue
		}
		log := filepath.Join(dir, "log"+strconv.Itoa(i))
		if err := os.WriteFile(log, []byte(p.log), 0o644); err != nil {
			t.Fatal(err)
		}
		script = append(script, p.fn+" '"+p.label+"' '"+log+"' "+strconv.Itoa(p.rc))
	}
	script = append(script, "verdict_print")
	cmd := exec.Command("bash", "-c", strings.Join(script, "\n"))
	cmd.Env = append(os.Environ(), "MCPMW_VERDICT_FILE="+filepath.Join(dir, "verdict"))
	b, err := cmd.CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatal(err)
	}
	v, _ := os.ReadFile(filepath.Join(dir, "verdict"))
	return string(b), err == nil, string(v)
}

// plain is the closing-line form a CI reader takes as the verdict.
var plain = regexp.MustCompile(`(?m)^(\w+: )?\d+ passed, \d+ failed$`)

func TestVerdict(t *testing.T) {
	for _, tt := range []struct {
		name  string
		parts []part
		want  string
		ok    bool
	}{
		{"all passing: packages, client tests and scored scenarios", []part{
			{"verdict_check", "gofmt", "", 0},
			{"verdict_go", "go packages .", goPassing, 0},
			{"verdict_go", "go packages ./otel", "ok  \tgithub.com/mcpmw/mcpmw/otel\t1s\n", 0},
			{"verdict_ts", "TypeScript client tests", tsPassing, 0},
			{"verdict_conformance", "conformance scenarios (scored)", confPassing, 0},
		}, "total: 106 passed, 0 failed", true},
		{"failing packages and a build failure", []part{{"verdict_go", "go packages .", goFailing, 1}}, "total: 1 passed, 2 failed", false},
		{"a go test that failed without a FAIL line", []part{{"verdict_go", "go packages .", goPassing, 2}}, "total: 3 passed, 1 failed", false},
		{"failing and cancelled client tests", []part{{"verdict_ts", "ts", tsFailing, 1}}, "total: 32 passed, 3 failed", false},
		{"the client never ran", []part{{"verdict_ts", "ts", "npm ERR! network\n", 1}}, "total: 0 passed, 1 failed", false},
		{"a failing scored scenario", []part{{"verdict_conformance", "conformance", confFailing, 1}}, "total: 66 passed, 1 failed", false},
		{"the suite died before its summary", []part{{"verdict_conformance", "conformance", "conformance: the server died\n", 1}}, "total: 0 passed, 1 failed", false},
		{"a vet failure", []part{{"verdict_go", "go packages .", goPassing, 0}, {"verdict_check", "go vet .", "", 1}}, "total: 3 passed, 1 failed", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, ok, file := verdict(t, tt.parts)
			if ok != tt.ok {
				t.Errorf("success %v, want %v\n%s", ok, tt.ok, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if last := lines[len(lines)-1]; last != tt.want {
				t.Errorf("closing line %q, want %q\n%s", last, tt.want, out)
			}
			if got := plain.FindAllString(out, -1); len(got) != 1 {
				t.Errorf("%d lines in the plain form, want the closing one alone: %q", len(got), got)
			}
			if strings.TrimSpace(file) != tt.want {
				t.Errorf("MCPMW_VERDICT_FILE holds %q", file)
			}
			if tt.ok && strings.Contains(out, "failing") {
				t.Errorf("a passing run says failing:\n%s", out)
			}
		})
	}
}
