package skills

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// TestFrontmatterCoreSchema: the JSON is what a YAML 1.2 (core schema)
// parser makes of the block, which is how hosts compare it: YAML 1.1's
// octals, underscores, binary numbers, yes/no and dates stay as 1.2 reads
// them.
func TestFrontmatterCoreSchema(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ yaml, want string }{
		{"v: 2.1", `2.1`},
		{`v: "2.1.0"`, `"2.1.0"`},
		{"v: 2.1.0", `"2.1.0"`},
		{"v: 0777", `777`},
		{"v: 0o17", `15`},
		{"v: 0x1F", `31`},
		{"v: +12", `12`},
		{"v: -0", `-0`},
		{"v: 1_000", `"1_000"`},
		{"v: 0b101", `"0b101"`},
		{"v: 1e3", `1000`},
		{"v: .5", `0.5`},
		{"v: 12345678901234567890", `12345678901234567000`},
		{"v: yes", `"yes"`},
		{"v: On", `"On"`},
		{"v: True", `true`},
		{"v: FALSE", `false`},
		{"v: 2024-01-02", `"2024-01-02"`},
		{"v: ~", `null`},
		{"v: Null", `null`},
		{"v:", `null`},
		{"v: !!str 12", `"12"`},
		{"v: !!int \"12\"", `12`},
		{"v: [a, 1, {b: c}]", `["a",1,{"b":"c"}]`},
		{"v: &x {a: 1}\nw: *x", `{"a":1}`},
		{"v: |\n  two\n  lines\n", `"two\nlines\n"`},
		{"v: <", `"\u003c"`},
		{"\"<<\": x", ``},
	} {
		raw, _, _, err := frontmatter([]byte("---\nname: n\ndescription: d\n" + tt.yaml + "\n---\nbody\n"))
		require.NoError(t, err, tt.yaml)
		if tt.want == "" {
			continue
		}
		assert.Equal(t, `{"name":"n","description":"d","v":`+tt.want, string(raw)[:len(`{"name":"n","description":"d","v":`)+len(tt.want)], tt.yaml)
	}
}

func TestFrontmatterRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ md, why string }{
		{"no frontmatter\n", "does not begin with a YAML frontmatter"},
		{"---\nname: n\ndescription: d\n", "does not begin with a YAML frontmatter"},
		{"---\n- a\n---\n", "not a YAML mapping"},
		{"---\nname: [n\n---\n", "not YAML"},
		{"---\ndescription: d\n---\n", "has no name"},
		{"---\nname: n\n---\n", "has no description"},
		{"---\nname: \"\"\ndescription: d\n---\n", "name is not a non-empty string"},
		{"---\nname: 12\ndescription: d\n---\n", "name is not a non-empty string"},
		{"---\nname: n\ndescription: [d]\n---\n", "description is not a non-empty string"},
		{"---\nname: n\ndescription: d\nname: m\n---\n", `the key "name" appears twice`},
		{"---\nname: n\ndescription: d\n1: x\n---\n", "a key that is not a string"},
		{"---\nname: n\ndescription: d\nv: .inf\n---\n", "not a number JSON can carry"},
		{"---\nname: n\ndescription: d\nv: .NaN\n---\n", "not a number JSON can carry"},
		{"---\nname: n\ndescription: d\nv: 1e999\n---\n", "not a number JSON can carry"},
		{"---\nname: n\ndescription: d\nv: !!binary aGk=\n---\n", "not one of the YAML 1.2 core schema"},
		{"---\nname: n\ndescription: d\nv: !!bool yes\n---\n", "is not a boolean"},
	} {
		_, _, _, err := frontmatter([]byte(tt.md))
		require.Error(t, err, tt.md)
		assert.Contains(t, err.Error(), tt.why, tt.md)
	}
}

func TestFrontmatterBOMAndCRLF(t *testing.T) {
	t.Parallel()
	raw, name, descr, err := frontmatter([]byte("\uFEFF---\r\nname: n\r\ndescription: d\r\n---\r\nbody"))
	require.NoError(t, err)
	assert.Equal(t, `{"name":"n","description":"d"}`, string(raw))
	assert.Equal(t, "n", name)
	assert.Equal(t, "d", descr)
}

// TestFrontmatterBounded: aliases of aliases cannot make the JSON grow
// without end.
func TestFrontmatterBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("---\nname: n\ndescription: d\na0: [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		b.WriteString("a" + string(rune('0'+i%10)) + string(rune('a'+i)) + ": &a" + string(rune('a'+i)) + " [")
		b.WriteString(strings.Repeat("*a"+string(rune('a'+i-1))+", ", 9) + "*a" + string(rune('a'+i-1)) + "]\n")
	}
	_, _, _, err := frontmatter([]byte(strings.Replace(b.String(), "a0: [", "a0: &aa [", 1) + "---\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "larger than")
}

// TestFrontmatterBoundExact: the bound is on what was written before a
// value: at the bound a value is still written, past it none is.
func TestFrontmatterBoundExact(t *testing.T) {
	t.Parallel()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte("x"), &doc))
	w := jsonWriter{buf: make([]byte, maxFrontmatterJSON)}
	require.NoError(t, w.value(doc.Content[0]))
	w = jsonWriter{buf: make([]byte, maxFrontmatterJSON+1)}
	require.Error(t, w.value(doc.Content[0]))
}

func TestContentType(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		path string
		data []byte
		mime string
		text bool
	}{
		{"a.md", []byte("# a"), "text/markdown", true},
		{"a.MD", []byte("# a"), "text/markdown", true},
		{"a.json", []byte("{}"), "application/json", true},
		{"a.yaml", []byte("a: 1"), "application/yaml", true},
		{"a.xml", []byte("<a/>"), "application/xml", true},
		{"a.svg", []byte("<svg/>"), "image/svg+xml", true},
		{"run.sh", []byte("echo"), "application/x-sh", true},
		{"a.png", []byte("\x89PNG"), "image/png", false},
		{"a.pdf", []byte("%PDF"), "application/pdf", false},
		{"a.md", []byte{0xff}, "text/markdown", false},
		{"LICENSE", []byte("MIT"), "text/plain", true},
		{"blob", []byte{0xff, 0}, "application/octet-stream", false},
	} {
		mime, text := contentType(tt.path, tt.data)
		assert.Equal(t, tt.mime, mime, tt.path)
		assert.Equal(t, tt.text, text, tt.path)
	}
}
