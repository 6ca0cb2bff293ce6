package mcpmw_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The package documentation's endpoint is the package Example, line for
// line, so that what a reader copies from go doc compiles and runs: no
// name in it is left undefined.
func TestDocSnippetIsTheExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	example, err := os.ReadFile("example_package_test.go")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(doc), "// # Setting up")
	require.True(t, ok, "doc.go has a Setting up section")
	section, _, _ = strings.Cut(section, "// # ")
	lines := map[string]bool{}
	for _, l := range strings.Split(string(example), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	n := 0
	for _, l := range strings.Split(section, "\n") {
		code, isCode := strings.CutPrefix(l, "//\t")
		if !isCode || strings.TrimSpace(code) == "" {
			continue
		}
		n++
		assert.True(t, lines[strings.TrimSpace(code)], "doc.go's snippet line is not in the Example: %s", code)
	}
	assert.Greater(t, n, 20, "the snippet is the whole endpoint")
}
