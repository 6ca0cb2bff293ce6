package uritemplate

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/internal/urisyntax"
)

// normal is the normal form Match expects a URI in: the root package's
// normal form but for its refusal of "." and ".." segments, which is no
// concern of matching.
func normal(uri string) (string, error) {
	return urisyntax.NormalizePercent(uri, urisyntax.SchemeLen(uri))
}

func TestURITemplateMatch(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		tmpl, uri string
		want      map[string]string // nil: no match
	}{
		{"notes://{id}", "notes://3", map[string]string{"id": "3"}},
		{"notes://{id}", "notes://", map[string]string{"id": ""}}, // RFC 6570 expands an empty value to nothing
		{"notes://{id}", "notes://a/b", nil},
		{"notes://{id}", "notes://a?b", nil},
		{"notes://{id}", "notes://a:b", nil}, // a simple expansion encodes every reserved character
		{"notes://{id}", "notes://a%20b", map[string]string{"id": "a b"}},
		{"notes://{id}", "notes://a%2Fb", map[string]string{"id": "a/b"}}, // an expansion of "a/b", which BadValue refuses
		{"notes://{id}", "other://3", nil},
		{"test://template/{id}/data", "test://template/123/data", map[string]string{"id": "123"}},
		{"test://template/{id}/data", "test://template/123/data/x", nil},
		{"test://template/{id}/data", "test://template//data", map[string]string{"id": ""}},
		{"file:///{+path}", "file:///etc/motd", map[string]string{"path": "etc/motd"}},
		{"file:///{+path}.txt", "file:///a/b.c.txt", map[string]string{"path": "a/b.c"}},
		{"file:///{+path}", "file:///a%2Fb%20c%25d%3F", map[string]string{"path": "a%2Fb c%25d%3F"}}, // reserved octets and '%' stay encoded
		{"db://{table}/{id}", "db://users/42", map[string]string{"table": "users", "id": "42"}},
		{"db://{table}/{id}", "db://users/", map[string]string{"table": "users", "id": ""}},
		{"db://{table}-{id}", "db://a-b-c", map[string]string{"table": "a", "id": "b-c"}}, // the shortest first value
		{"x://{a}x", "x://pxqx", map[string]string{"a": "pxq"}},                           // the last literal ends the URI
		{"x://{a}2F{b}", "x://%2F2Fq", map[string]string{"a": "/", "b": "q"}},             // a literal inside a pct-encoding is no boundary
		{"x://{a}.{b}", "x://n.a.me", map[string]string{"a": "n", "b": "a.me"}},
		{"x://{a}F{b}", "x://%2FFq", map[string]string{"a": "/", "b": "q"}}, // nor one whose '%' is two bytes back
		{"x://{a}F{b}", "x://zFq", map[string]string{"a": "z", "b": "q"}},   // a literal right after the first byte
		{"x://{a}F{b}", "x://Fq", map[string]string{"a": "", "b": "q"}},
		{"x://{a}/data", "x://a/data", map[string]string{"a": "a"}},
		{"x://{a}", "x://%AF%AF%9F", map[string]string{"a": "\xaf\xaf\x9f"}},
		{"x://{a}-{b}", "x://abc", nil},   // the literal never comes
		{"x://{a}-{b}", "x://a/b-c", nil}, // it comes, but after what a value may hold
		{"db://{t}/{id}", "db://u/4", map[string]string{"t": "u", "id": "4"}},
		{"notes://{id}", "notes:///x", nil}, // a simple value never holds a raw '/'
		{"x://fixed", "x://fixed", map[string]string{}},
		{"x://fixed", "x://fixed2", nil},
		{"x:/{a}/y", "x:/y", nil},                                   // the first and last literals overlap: no room for the value
		{"X://%7e{a}%2f", "x://~q%2F", map[string]string{"a": "q"}}, // the template's literals are in normal form too
		// Backtracking: the first place the literal follows is not always the one.
		{"repo://{+path}/secrets/{name}", "repo://a/secrets/b/secrets/c", map[string]string{"path": "a/secrets/b", "name": "c"}},
		{"repo://{+path}/secrets/{name}", "repo:///secrets/c", map[string]string{"path": "", "name": "c"}},
		{"repo://{+path}/secrets/{name}", "repo://a/secrets/b/c", nil},
		{"x://{+a}-{b}-{+c}/{d}", "x://p-q-r/s-t/u/v", map[string]string{"a": "p", "b": "q", "c": "r/s-t/u", "d": "v"}},
		{"x://{a}-{b}/{c}", "x://p-q-r/s", map[string]string{"a": "p", "b": "q-r", "c": "s"}},
		{"x://{a}/{+b}/{c}", "x://p/q/r/s", map[string]string{"a": "p", "b": "q/r", "c": "s"}},
		{"x://{a}/{+b}/{c}", "x://p/q/r/s/", map[string]string{"a": "p", "b": "q/r/s", "c": ""}},
	} {
		tmpl, err := Parse(tt.tmpl)
		require.NoError(t, err, tt.tmpl)
		norm, err := normal(tt.uri)
		require.NoError(t, err, tt.uri)
		require.Equal(t, tt.uri, norm, "the table's URIs are in normal form")
		vars := map[string]string{}
		ok := tmpl.Match(tt.uri, vars)
		assert.Equal(t, ok, tmpl.Match(tt.uri, nil), "with or without vars")
		if tt.want == nil {
			assert.False(t, ok, "%s ~ %s: %v", tt.tmpl, tt.uri, vars)
			continue
		}
		if assert.True(t, ok, "%s ~ %s", tt.tmpl, tt.uri) {
			assert.Equal(t, tt.want, vars, "%s ~ %s", tt.tmpl, tt.uri)
		}
	}
}

// A simple value that decodes to '/', '?' or '#', and any value that
// decodes to NUL or invalid UTF-8, breaks what the template's doc
// promises Read: badValue names it.
func TestURITemplateBadValues(t *testing.T) {
	t.Parallel()
	tmpl, err := Parse("file:///srv/{name}/{+path}")
	require.NoError(t, err)
	for _, tt := range []struct{ uri, name, why string }{
		{"file:///srv/docs/a/b", "", ""},
		{"file:///srv/..%2F..%2Fetc/passwd", "name", "'/'"},
		{"file:///srv/a%3Fb/c", "name", "'?'"},
		{"file:///srv/a%23b/c", "name", "'#'"},
		{"file:///srv/a%00/c", "name", "NUL"},
		{"file:///srv/%00/c", "name", "NUL"}, // first
		{"file:///srv/a%FF/c", "name", "UTF-8"},
		{"file:///srv/a/b%00", "path", "NUL"},
		{"file:///srv/a/b%C3", "path", "UTF-8"},
		{"file:///srv/a/b%2F..%2Fc", "", ""}, // a reserved value keeps %2F encoded: it may
		{"file:///srv/a/b%3F#c", "", ""},
		{"file:///srv/a%C3%A9/%C3%A9", "", ""},
	} {
		vars := map[string]string{}
		require.True(t, tmpl.Match(tt.uri, vars), tt.uri)
		name, why := tmpl.BadValue(vars)
		assert.Equal(t, tt.name, name, tt.uri)
		assert.Contains(t, why, tt.why, tt.uri)
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
		_, err := Parse(tmpl)
		if assert.Error(t, err, tmpl) {
			assert.Contains(t, err.Error(), want, tmpl)
		}
	}
	for _, ok := range []string{"x://{a.b}", "x://{a_1}", "x://{%41}", "x://{+a}/{b}"} {
		_, err := Parse(ok)
		assert.NoError(t, err, ok)
	}
}

func TestURITemplateExpand(t *testing.T) {
	t.Parallel()
	tmpl, err := Parse("x://{a}/{+b}")
	require.NoError(t, err)
	assert.Equal(t, "x://a%2Fb%20c/d/e%25f", tmpl.Expand(map[string]string{"a": "a/b c", "b": "d/e%f"}))
	assert.Equal(t, "x://%252F/%2F%2f%25%252", tmpl.Expand(map[string]string{"a": "%2F", "b": "%2F%2f%%2"}),
		"a reserved expansion passes the value's percent-encoded octets through (RFC 6570 §3.2.3)")
	assert.Equal(t, "x:///", tmpl.Expand(nil))
}

func TestURITemplateLiteralErrors(t *testing.T) {
	t.Parallel()
	for _, tmpl := range []string{"x://a b/{id}", "x://{id}%", "x://%zz/{id}", "x://<{id}>", "x://\x00{id}"} {
		_, err := Parse(tmpl)
		assert.Error(t, err, tmpl)
	}
	_, err := Parse("x://%2F/{id}")
	assert.NoError(t, err)
}

// hostileTemplate has several reserved variables, each followed by a
// literal a hostile URI repeats: a matcher that tried the splits one after
// another would take time growing as the URI's length to the power of
// the variables (here the fourth), where this one takes time linear in
// it.
const hostileTemplate = "x://{+a}/s/{+b}/s/{+c}/s/{+d}/s/{e}"

// hostileURI is a URI of n bytes or so of "/s" that no split matches: the
// last, simple, variable would have to hold a '/'.
func hostileURI(n int) string { return "x://" + strings.Repeat("/s", n/2) + "/s/q/z" }

// Matching a 64 KiB URI built to make a backtracking matcher try every
// split takes as long as reading it a few times over (milliseconds), not
// the hours a backtracking matcher would take: the bound is
// O(len(uri) × len(template)).
func TestURITemplateMatchTimeIsBounded(t *testing.T) {
	t.Parallel()
	tmpl, err := Parse(hostileTemplate)
	require.NoError(t, err)
	for _, uri := range []string{hostileURI(64 << 10), "x://" + strings.Repeat("/s/", 22<<10) + "q"} {
		start := time.Now()
		vars := map[string]string{}
		ok := tmpl.Match(uri, vars)
		took := time.Since(start)
		assert.Less(t, took, 2*time.Second, "a %d-byte URI", len(uri))
		if strings.HasSuffix(uri, "/z") {
			assert.False(t, ok)
		} else if assert.True(t, ok) {
			assert.Equal(t, "", vars["a"], "the shortest first value")
			assert.Equal(t, "q", vars["e"])
		}
	}
}

// A match of a few variables allocates nothing while its marks fit on
// the stack (64 words: two variables over 2047 bytes), and allocates
// them once beyond.
func TestURITemplateMatchAllocations(t *testing.T) {
	tmpl, err := Parse("x://{a}/{+b}")
	require.NoError(t, err)
	for _, tt := range []struct {
		uri    string
		allocs float64
	}{
		{"x://a/b", 0},
		{"x://a/" + strings.Repeat("b", 2047-2), 0}, // len(m) = 2047: 2 × 32 words
		{"x://a/" + strings.Repeat("b", 2048-2), 1}, // 2 × 33
	} {
		got := testing.AllocsPerRun(20, func() {
			if !tmpl.Match(tt.uri, nil) {
				t.Fatal("no match")
			}
		})
		assert.Equal(t, tt.allocs, got, "a %d-byte URI", len(tt.uri))
	}
}

func TestBitsetNext(t *testing.T) {
	t.Parallel()
	s := make(bitset, 3)
	for _, i := range []int{0, 63, 64, 130} {
		s.set(i)
	}
	for from, want := range map[int]int{0: 0, 1: 63, 63: 63, 64: 64, 65: 130, 130: 130, 131: -1, 191: -1} {
		assert.Equal(t, want, s.next(from), "next(%d)", from)
	}
}
