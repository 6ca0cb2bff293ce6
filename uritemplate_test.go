package mcpmw

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestURITemplateMatch(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		tmpl, uri string
		want      map[string]string // nil: no match
	}{
		{"notes://{id}", "notes://3", map[string]string{"id": "3"}},
		{"notes://{id}", "notes://", nil},
		{"notes://{id}", "notes://a/b", nil},
		{"notes://{id}", "notes://a?b", nil},
		{"notes://{id}", "notes://a%20b", map[string]string{"id": "a b"}},
		{"notes://{id}", "notes://a%2Fb", map[string]string{"id": "a/b"}},
		{"notes://{id}", "notes://a%2", nil},
		{"notes://{id}", "notes://a%zz", nil},
		{"notes://{id}", "other://3", nil},
		{"test://template/{id}/data", "test://template/123/data", map[string]string{"id": "123"}},
		{"test://template/{id}/data", "test://template/123/data/x", nil},
		{"test://template/{id}/data", "test://template//data", nil},
		{"file:///{+path}", "file:///etc/motd", map[string]string{"path": "etc/motd"}},
		{"file:///{+path}.txt", "file:///a/b.c.txt", map[string]string{"path": "a/b.c"}},
		{"db://{table}/{id}", "db://users/42", map[string]string{"table": "users", "id": "42"}},
		{"db://{table}/{id}", "db://users/", nil},
		{"db://{table}-{id}", "db://a-b-c", map[string]string{"table": "a", "id": "b-c"}},
		{"x://{a}x", "x://pxqx", map[string]string{"a": "pxq"}},               // the last literal ends the URI
		{"x://{a}2F{b}", "x://%2F2Fq", map[string]string{"a": "/", "b": "q"}}, // a literal inside a pct-encoding is no boundary
		{"x://{a}.{b}", "x://n.a.me", map[string]string{"a": "n", "b": "a.me"}},
		{"x://{a}F{b}", "x://%2FFq", map[string]string{"a": "/", "b": "q"}},   // nor one whose '%' is two bytes back
		{"x://{a}F{b}", "x://zFq", map[string]string{"a": "z", "b": "q"}},     // a literal right after the first byte
		{"x://{a}F{b}", "x://Fq", nil},                                        // a value is never empty
		{"x://{a}/data", "x:///data", nil},                                    // nor before a last literal
		{"x://{a}/data", "x://a/data", map[string]string{"a": "a"}},           // one byte is enough
		{"x://{a}", "x://%af%AF%9f", map[string]string{"a": "\xaf\xaf\x9f"}},  // hex digits of either case
		{"x://{a}-{b}", "x://abc", nil},                                       // the literal never comes
		{"x://{a}-{b}", "x://a/b-c", nil},                                     // it comes, but after what a value may hold
		{"db://{t}/{id}", "db://u/4", map[string]string{"t": "u", "id": "4"}}, // one-byte values
		{"notes://{id}", "notes:///x", nil},                                   // a simple value never starts with '/'
		{"x://{a}-{b}", "x://a%2", nil},                                       // a '%' cut short before the literal
		{"x://{a}-{b}", "x://a%-b", nil},                                      // a '%' with no hex after it
		{"x://fixed", "x://fixed", map[string]string{}},
		{"x://fixed", "x://fixed2", nil},
	} {
		tmpl, err := parseURITemplate(tt.tmpl)
		require.NoError(t, err, tt.tmpl)
		vars := map[string]string{}
		ok := tmpl.match(tt.uri, vars)
		assert.Equal(t, ok, tmpl.match(tt.uri, nil), "with or without vars")
		if tt.want == nil {
			assert.False(t, ok, "%s ~ %s: %v", tt.tmpl, tt.uri, vars)
			continue
		}
		if assert.True(t, ok, "%s ~ %s", tt.tmpl, tt.uri) {
			assert.Equal(t, tt.want, vars, "%s ~ %s", tt.tmpl, tt.uri)
		}
	}
}

func TestURITemplateParseErrors(t *testing.T) {
	t.Parallel()
	for tmpl, want := range map[string]string{
		"":            "empty",
		"x://{id":     "the expression at offset 4 is not closed with '}'",
		"x://id}":     "'}' at offset 6 closes no expression",
		"x://{a}/{b":  "the expression at offset 8 is not closed with '}'",
		"x://{a}/b}":  "'}' at offset 9 closes no expression",
		`x://"{a}`:    `the character '"' at offset 4 may not appear in a URI template`,
		"|x://{a}":    `the character '|' at offset 0 may not appear in a URI template`,
		"x://{}":      "names no variable",
		"x://{+}":     "names no variable",
		"x://{a}{b}":  "separated by a literal",
		"x://{a}/{a}": "appears twice",
		"x://{?q}":    "operator",
		"x://{#f}":    "operator",
		"x://{a,b}":   "operator",
		"x://{a*}":    "operator",
		"x://{a:3}":   "operator",
		"x://{a-b}":   "invalid",
		"x://{a..b}":  "invalid",
		"x://{.a}":    "operator",
		"x://{a{b}}":  "invalid",
	} {
		_, err := parseURITemplate(tmpl)
		if assert.Error(t, err, tmpl) {
			assert.Contains(t, err.Error(), want, tmpl)
		}
	}
	for _, ok := range []string{"x://{a.b}", "x://{a_1}", "x://{%41}", "x://{+a}/{b}"} {
		_, err := parseURITemplate(ok)
		assert.NoError(t, err, ok)
	}
}

func TestURITemplateExpand(t *testing.T) {
	t.Parallel()
	tmpl, err := parseURITemplate("x://{a}/{+b}")
	require.NoError(t, err)
	assert.Equal(t, "x://a%2Fb%20c/d/e%25f", tmpl.expand(map[string]string{"a": "a/b c", "b": "d/e%f"}))
}

func TestURITemplateLiteralErrors(t *testing.T) {
	t.Parallel()
	for _, tmpl := range []string{"x://a b/{id}", "x://{id}%", "x://%zz/{id}", "x://<{id}>", "x://\x00{id}"} {
		_, err := parseURITemplate(tmpl)
		assert.Error(t, err, tmpl)
	}
	_, err := parseURITemplate("x://%2F/{id}")
	assert.NoError(t, err)
}

// Matching reads the URI once: a long URI full of near-misses takes
// linear time, not quadratic.
func TestURITemplateMatchLinear(t *testing.T) {
	t.Parallel()
	tmpl, err := parseURITemplate("x://{a}%2F{+b}/end")
	require.NoError(t, err)
	long := "x://" + strings.Repeat("%2F", 1<<19) + "q" + strings.Repeat("%2", 1<<19)
	assert.False(t, tmpl.match(long, nil))
	long = "x://a%zz" + strings.Repeat("%2F", 1<<19) + "/end"
	assert.False(t, tmpl.match(long, nil))
	long = "x://a%2F" + strings.Repeat("%2F", 1<<19) + "/end"
	vars := map[string]string{}
	assert.True(t, tmpl.match(long, vars))
	assert.Equal(t, "a", vars["a"])
}

func TestHexDigits(t *testing.T) {
	t.Parallel()
	for c := range 256 {
		b := byte(c)
		v, err := strconv.ParseUint(string(rune(b)), 16, 8)
		want := err == nil && b < 0x80
		assert.Equal(t, want, isHex(b), "isHex(%q)", b)
		if want {
			assert.Equal(t, byte(v), unhex(b), "unhex(%q)", b)
		}
	}
}
