package mcpmwtest_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// tools stands in for an application's package of tools.
var tools = struct{ Echo mcpmw.Tool }{Echo: testTools()[0]}

// TestEcho is the test of the package documentation and of
// docs/testing.md, line for line: keep them the same.
func TestEcho(t *testing.T) {
	var reg mcpmw.Registry
	reg.AddTools(tools.Echo)
	authn := mcpmwtest.Tokens{"reader-token": &mcpmwtest.User{Name: "reader", Permissions: []mcpmw.Permission{"read"}}}
	rec := mcpmwtest.NewRecorder()
	srv := mcpmwtest.NewServer(t, mcpmw.New(&reg, authn, rec, nil))

	c := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision("2025-11-25"))
	res, err := c.CallTool(t.Context(), "echo", map[string]any{"message": "hi"})
	require.NoError(t, err)
	assert.Equal(t, "hi", res.Text)
	assert.Equal(t, mcpmw.OutcomeOK, rec.Last().Outcome)
}

// The test in doc.go and docs/testing.md is TestEcho's body, so that the code
// users copy is code that runs.
func TestDocumentedTestRuns(t *testing.T) {
	src, err := os.ReadFile("doc_test.go")
	require.NoError(t, err)
	start := bytes.Index(src, []byte("func TestEcho("))
	require.NotEqual(t, -1, start)
	end := bytes.Index(src[start:], []byte("\n}\n"))
	want := string(src[start : start+end+3])

	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	var fromDoc strings.Builder
	for line := range strings.Lines(string(doc)) {
		if rest, ok := strings.CutPrefix(line, "//\t"); ok {
			fromDoc.WriteString(rest)
		} else if line == "//\n" && fromDoc.Len() > 0 && !strings.HasSuffix(fromDoc.String(), "}\n") {
			fromDoc.WriteString("\n")
		}
	}
	assert.True(t, strings.Contains(fromDoc.String(), want), "doc.go does not show TestEcho:\n%s", want)

	guide, err := os.ReadFile("../docs/testing.md")
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(guide), "```go\n"+want+"```"), "docs/testing.md does not show TestEcho:\n%s", want)
}
