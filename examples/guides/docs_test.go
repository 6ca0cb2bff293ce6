// Package guides_test checks the Markdown of the repository (README.md and
// docs/*.md): every relative link reaches a file that exists and, for a
// link to a heading, a heading that exists; every Go snippet is a copy of a
// region of Go source that compiles and runs in a test; and every curl
// example is one that a test runs.
//
// A Go snippet is the fenced block right after a marker naming its source:
//
//	<!-- snippet: examples/guides/tools/tools_test.go#weather -->
//
// The name after # is a region of that file, the lines between the
// comments "// !+weather" and "// !-weather", with their common
// indentation and the blank lines at either end removed; or, without such comments, a top-level declaration
// of that name (a func, type, var or const), as mcpmwtest/doc_test.go's
// TestEcho. The block must equal it byte for byte. To change a snippet,
// change its source, then copy it into the Markdown with
//
//	go -C examples test ./guides -run TestSnippets -update
//
// The source is the truth because the compiler and the tests read it: a
// snippet that only lived in Markdown would be checked by nobody, and one
// assembled from Markdown at test time would compile only in the template
// that assembles it. The one exception is the quick start's main.go, which
// examples/quickstart runs as a new user would (as are its setup and curl
// lines).
package guides_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "copy each snippet's source into the Markdown instead of failing on a difference")

// root is the repository's root, from this package's folder.
const root = "../.."

// pages returns the Markdown files this test checks, relative to root: the
// README, every page under docs/, and the two documents the README links
// beside them.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md", "SECURITY.md", "ARCHITECTURE.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	if len(out) < 10 {
		t.Fatalf("found only %v: is docs/ there?", out)
	}
	return out
}

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A fence is one fenced code block of a Markdown file.
type fence struct {
	lang   string
	marker string // the HTML comment on the nearest non-blank line before it, or ""
	code   string // its lines, each with its newline
	line   int    // the line of its opening fence, from 1
	start  int    // the byte offset of code in the file
}

// fences returns the fenced code blocks of md (``` fences at the start of
// a line, as the repository writes them).
func fences(md string) []fence {
	var out []fence
	var open *fence
	lastNonBlank := ""
	offset := 0
	for i, line := range strings.SplitAfter(md, "\n") {
		trimmed := strings.TrimRight(line, "\n")
		switch {
		case open == nil && strings.HasPrefix(trimmed, "```"):
			open = &fence{lang: strings.TrimPrefix(trimmed, "```"), line: i + 1, start: offset + len(line)}
			if strings.HasPrefix(lastNonBlank, "<!--") {
				open.marker = lastNonBlank
			}
		case open != nil && trimmed == "```":
			open.code = md[open.start:offset]
			out = append(out, *open)
			open = nil
		}
		if strings.TrimSpace(trimmed) != "" {
			lastNonBlank = strings.TrimSpace(trimmed)
		}
		offset += len(line)
	}
	return out
}

// snippetMarker reads "<!-- snippet: PATH#NAME -->".
var snippetMarker = regexp.MustCompile(`^<!-- snippet: ([^#\s]+)#(\S+) -->$`)

// curlAppMarker marks a block of curl lines that TestCurlAgainstTheExampleApp
// runs against the example app.
const curlAppMarker = "<!-- curl: example app -->"

// curlMarkers are the markers of the blocks of curl lines that a test
// runs: examples/quickstart the quick start's, TestCurlAgainstTheExampleApp
// the others.
var curlMarkers = []string{"<!-- quickstart:curl -->", curlAppMarker}

// region returns the region name of the Go file at rel (see the package
// documentation), its indentation removed.
func region(rel, name string) (string, error) {
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return "", err
	}
	begin, end := "// !+"+name+"\n", "// !-"+name+"\n"
	var lines []string
	in, found := false, false
	for line := range strings.Lines(string(src)) {
		trimmed := strings.TrimLeft(line, "\t ")
		switch {
		case trimmed == begin:
			if found {
				return "", fmt.Errorf("%s: region %q opens twice", rel, name)
			}
			in, found = true, true
		case trimmed == end:
			in = false
		case in:
			lines = append(lines, line)
		}
	}
	if in {
		return "", fmt.Errorf("%s: region %q is not closed with %q", rel, name, strings.TrimSpace(end))
	}
	if !found {
		return declaration(rel, src, name)
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return dedent(lines), nil
}

// declaration returns the top-level declaration name of the Go source src,
// without its doc comment.
func declaration(rel string, src []byte, name string) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		var named bool
		switch d := d.(type) {
		case *ast.FuncDecl:
			named = d.Recv == nil && d.Name.Name == name
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					named = named || s.Name.Name == name
				case *ast.ValueSpec:
					named = named || slices.ContainsFunc(s.Names, func(n *ast.Ident) bool { return n.Name == name })
				}
			}
		}
		if named {
			return string(src[fset.Position(d.Pos()).Offset:fset.Position(d.End()).Offset]) + "\n", nil
		}
	}
	return "", fmt.Errorf("%s has neither a region %q (// !+%[2]s ... // !-%[2]s) nor a top-level declaration of that name", rel, name)
}

// dedent removes the indentation lines share (tabs and spaces as written).
func dedent(lines []string) string {
	prefix := ""
	first := true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, "\t "))]
		if first {
			prefix, first = indent, false
			continue
		}
		for !strings.HasPrefix(indent, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString(strings.TrimPrefix(l, prefix))
	}
	return b.String()
}

// TestSnippets checks that every Go snippet is its source's region, and
// that every block of curl lines is one a test runs.
func TestSnippets(t *testing.T) {
	regions := 0
	for _, page := range pages(t) {
		md := read(t, page)
		replaced, problems, n := checkSnippets(page, md, region)
		regions += n
		for _, p := range problems {
			t.Error(p)
		}
		if *update && replaced != md {
			if err := os.WriteFile(filepath.Join(root, page), []byte(replaced), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("updated %s", page)
		}
	}
	if regions < 10 {
		t.Errorf("checked only %d snippets: are the markers there?", regions)
	}
}

// checkSnippets checks the blocks of the Markdown md of page, reading
// regions with source. It returns md with every Go snippet replaced by its
// source, the problems it found (a difference is one unless update is
// set), and how many snippets it compared.
func checkSnippets(page, md string, source func(rel, name string) (string, error)) (replaced string, problems []string, regions int) {
	replaced = md
	// Walk backwards so that replacing a block keeps the offsets of the
	// ones before it.
	fs := fences(md)
	for i := len(fs) - 1; i >= 0; i-- {
		f := fs[i]
		where := fmt.Sprintf("%s:%d", page, f.line)
		if strings.Contains(f.code, "curl ") && !slices.Contains(curlMarkers, f.marker) {
			problems = append(problems, fmt.Sprintf("%s: a block of curl lines no test runs: mark it %s and keep it working against the example app", where, curlAppMarker))
		}
		if f.lang != "go" {
			continue
		}
		if f.marker == "<!-- quickstart:main.go -->" {
			continue // examples/quickstart builds and runs it
		}
		m := snippetMarker.FindStringSubmatch(f.marker)
		if m == nil {
			problems = append(problems, where+": a Go snippet without a <!-- snippet: PATH#NAME --> marker on the line before it: no test compiles it")
			continue
		}
		want, err := source(m[1], m[2])
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		regions++
		if f.code == want {
			continue
		}
		replaced = replaced[:f.start] + want + replaced[f.start+len(f.code):]
		if !*update {
			problems = append(problems, fmt.Sprintf("%s: the snippet differs from %s#%s (run go -C examples test ./guides -run TestSnippets -update to copy the source):\n%s",
				where, m[1], m[2], firstDifference(f.code, want)))
		}
	}
	return replaced, problems, regions
}

// firstDifference shows the first line where got and want part.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d of the snippet\n  markdown: %q\n  source:   %q", i+1, gl, wl)
		}
	}
	return "(they differ in their last newline)"
}

// link finds inline links and images, [text](target) and ![alt](target),
// with an optional title after the target.
var link = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// refDef finds reference definitions, "[name]: target".
var refDef = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s+(\S+)`)

// prose returns md without its fenced blocks and inline code spans, whose
// brackets are code, not links; line breaks are kept.
func prose(md string) string {
	var b strings.Builder
	inFence := false
	for line := range strings.Lines(md) {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			b.WriteString("\n")
			continue
		}
		if inFence {
			b.WriteString("\n")
			continue
		}
		b.WriteString(stripCodeSpans(line))
	}
	return b.String()
}

// stripCodeSpans blanks the `code spans` of one line.
func stripCodeSpans(line string) string {
	var b strings.Builder
	for {
		start := strings.IndexByte(line, '`')
		if start < 0 {
			b.WriteString(line)
			return b.String()
		}
		ticks := len(line[start:]) - len(strings.TrimLeft(line[start:], "`"))
		end := strings.Index(line[start+ticks:], line[start:start+ticks])
		if end < 0 {
			b.WriteString(line)
			return b.String()
		}
		b.WriteString(line[:start])
		b.WriteString(" ")
		line = line[start+ticks+end+ticks:]
	}
}

// anchors returns the anchors GitHub gives the headings of md.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	sc := bufio.NewScanner(strings.NewReader(md))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		if text == "" || line[len(line)-len(strings.TrimLeft(line, "#")):][0] != ' ' {
			continue // "#hashtag" is no heading
		}
		slug := slugify(text)
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// inlineLink is a Markdown link inside a heading: only its text counts.
var inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// slugify is GitHub's anchor for a heading's text: lower case, spaces to
// hyphens, and every character but letters, digits, hyphens and
// underscores dropped.
func slugify(heading string) string {
	heading = inlineLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestLinks checks every relative link of the Markdown: the file or folder
// it names exists, and the heading it names, in a Markdown file, too.
func TestLinks(t *testing.T) {
	headings := map[string]map[string]bool{}
	anchorsOf := func(rel string) map[string]bool {
		if a, ok := headings[rel]; ok {
			return a
		}
		a := anchors(read(t, rel))
		headings[rel] = a
		return a
	}
	exists := func(rel string) error {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		return err
	}
	checked := 0
	for _, page := range pages(t) {
		problems, n := checkLinks(page, read(t, page), exists, anchorsOf)
		checked += n
		for _, p := range problems {
			t.Error(p)
		}
	}
	if checked < 30 {
		t.Errorf("checked only %d relative links", checked)
	}
}

// checkLinks checks the relative links of the Markdown md of page (a path
// from the repository's root), with exists telling whether a path is there
// and anchorsOf the anchors of a Markdown file. It returns the problems
// and how many links it checked.
func checkLinks(page, md string, exists func(rel string) error, anchorsOf func(rel string) map[string]bool) (problems []string, checked int) {
	text := prose(md)
	var targets []string
	for _, m := range link.FindAllStringSubmatch(text, -1) {
		targets = append(targets, m[1])
	}
	for _, m := range refDef.FindAllStringSubmatch(text, -1) {
		targets = append(targets, m[1])
	}
	for _, target := range targets {
		target = strings.Trim(target, "<>")
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		checked++
		path, anchor, _ := strings.Cut(target, "#")
		dest := page
		if path != "" {
			dest = filepath.ToSlash(filepath.Join(filepath.Dir(page), path))
			if dest == ".." || strings.HasPrefix(dest, "../") {
				problems = append(problems, fmt.Sprintf("%s: link %q leaves the repository", page, target))
				continue
			}
			if err := exists(dest); err != nil {
				problems = append(problems, fmt.Sprintf("%s: link %q: %v", page, target, err))
				continue
			}
		}
		if anchor == "" {
			continue
		}
		if !strings.HasSuffix(dest, ".md") {
			problems = append(problems, fmt.Sprintf("%s: link %q names a heading of a file that is not Markdown", page, target))
			continue
		}
		if !anchorsOf(dest)[anchor] {
			problems = append(problems, fmt.Sprintf("%s: link %q: %s has no heading with that anchor", page, target, dest))
		}
	}
	return problems, checked
}

// TestCheckLinksFindsEachKindOfBrokenLink feeds checkLinks a page with one
// link of each kind, good and broken.
func TestCheckLinksFindsEachKindOfBrokenLink(t *testing.T) {
	t.Parallel()
	files := map[string]string{"docs/a.md": "# A\n## Part one\n", "docs/b.go": "", "README.md": "# R\n"}
	exists := func(rel string) error {
		if _, ok := files[rel]; !ok {
			return os.ErrNotExist
		}
		return nil
	}
	anchorsOf := func(rel string) map[string]bool { return anchors(files[rel]) }
	md := "# Page\n[ok](a.md#part-one) [ok](../README.md) [ok](#page) [web](https://example.com/x.md#nope) [mail](mailto:a@b)\n" +
		"[gone](c.md) [bad anchor](a.md#part-two) [not md](b.go#L3) [out](../../etc/passwd) [self](#nope)\n" +
		"`[code](span.md)`\n```sh\n[fenced](f.md)\n```\n[ref]: missing.md\n"
	problems, checked := checkLinks("docs/page.md", md, exists, func(rel string) map[string]bool {
		if rel == "docs/page.md" {
			return anchors(md)
		}
		return anchorsOf(rel)
	})
	assert.Equal(t, 9, checked, "relative links, the reference definition included, and neither the absolute ones nor those in code")
	want := []string{`"c.md"`, `"a.md#part-two"`, `"b.go#L3" names a heading of a file that is not Markdown`, `"../../etc/passwd" leaves`, `"#nope"`, `"missing.md"`}
	require.Len(t, problems, len(want), "%q", problems)
	for i, w := range want {
		assert.Contains(t, problems[i], w)
	}
}

// TestCheckSnippetsFindsEachKindOfProblem feeds checkSnippets a page with
// one block of each kind.
func TestCheckSnippetsFindsEachKindOfProblem(t *testing.T) {
	t.Parallel()
	source := func(rel, name string) (string, error) {
		if name == "x" {
			return "x := 1\n", nil
		}
		return "", fmt.Errorf("%s has no region %q", rel, name)
	}
	md := "<!-- snippet: a.go#x -->\n```go\nx := 1\n```\n" + // equal
		"<!-- snippet: a.go#x -->\n```go\nx := 2\n```\n" + // differs
		"<!-- snippet: a.go#y -->\n```go\ny := 1\n```\n" + // no region
		"```go\nz := 1\n```\n" + // no marker
		"<!-- quickstart:main.go -->\n```go\npackage main\n```\n" + // examples/quickstart's
		"```sh\ncurl -s http://127.0.0.1:8080/mcp\n```\n" + // curl no test runs
		"<!-- curl: example app -->\n```sh\ncurl -s http://127.0.0.1:8080/mcp\n```\n" +
		"```sh\ngo test ./...\n```\n"
	replaced, problems, regions := checkSnippets("p.md", md, source)
	assert.Equal(t, 2, regions)
	want := []string{"p.md:20: a block of curl lines", "p.md:13: a Go snippet without", `p.md:10: a.go has no region "y"`, "p.md:6: the snippet differs from a.go#x"}
	require.Len(t, problems, len(want), "%q", problems)
	for i, w := range want {
		assert.Contains(t, problems[i], w)
	}
	assert.Equal(t, strings.Replace(md, "x := 2", "x := 1", 1), replaced, "the source replaces the block that differs, and only it")
}

// TestAnchors pins the slug rules against headings of this repository.
func TestAnchors(t *testing.T) {
	t.Parallel()
	for heading, want := range map[string]string{
		"Quick start (chi)": "quick-start-chi",
		"Change notifications (2026-07-28 `subscriptions/listen`)": "change-notifications-2026-07-28-subscriptionslisten",
		"Tenancy: narrow the caller once":                          "tenancy-narrow-the-caller-once",
		"OAuth: protected resource metadata and JWT access tokens": "oauth-protected-resource-metadata-and-jwt-access-tokens",
		"The [example app](example-app.md)":                        "the-example-app",
		"Schéma_2 ünd  more":                                       "schéma_2-ünd--more",
	} {
		if got := slugify(heading); got != want {
			t.Errorf("slugify(%q) = %q, want %q", heading, got, want)
		}
	}
	a := anchors("# A\n## A\n```sh\n# not a heading\n```\n#nope\n### B `c`\n")
	for _, want := range []string{"a", "a-1", "b-c"} {
		if !a[want] {
			t.Errorf("anchors: no %q in %v", want, a)
		}
	}
	if a["not-a-heading"] || a["nope"] {
		t.Errorf("anchors: a comment in a code block or a #word counted as a heading: %v", a)
	}
}

// TestFences pins how blocks and their markers are read.
func TestFences(t *testing.T) {
	t.Parallel()
	md := "text\n<!-- snippet: a.go#x -->\n\n```go\nx := 1\n```\n\n```sh\ncurl -s\n```\n"
	fs := fences(md)
	if len(fs) != 2 {
		t.Fatalf("found %d blocks, want 2: %+v", len(fs), fs)
	}
	if fs[0].lang != "go" || fs[0].marker != "<!-- snippet: a.go#x -->" || fs[0].code != "x := 1\n" || fs[0].line != 4 {
		t.Errorf("first block: %+v", fs[0])
	}
	if fs[1].marker != "" || md[fs[1].start:fs[1].start+len(fs[1].code)] != "curl -s\n" {
		t.Errorf("second block: %+v", fs[1])
	}
	if got := dedent([]string{"\t\tif x {\n", "\n", "\t\t\ty()\n", "\t\t}\n"}); got != "if x {\n\n\ty()\n}\n" {
		t.Errorf("dedent: %q", got)
	}
	if got := dedent([]string{"\t\t\ta\n", "\t\tb\n"}); got != "\ta\nb\n" {
		t.Errorf("dedent of a region whose first line is the deepest: %q", got)
	}
	if got := prose("see `[a](b)` and [c](d)\n```\n[e](f)\n```\n"); strings.Contains(got, "(b)") || strings.Contains(got, "(f)") || !strings.Contains(got, "[c](d)") {
		t.Errorf("prose: %q", got)
	}
	if got := bytes.Count([]byte(prose("a\n```\nb\n```\nc\n")), []byte("\n")); got != 5 {
		t.Errorf("prose keeps %d line breaks of 5", got)
	}
}
