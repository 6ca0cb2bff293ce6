package uritemplate

import (
	"strings"
	"testing"

	"github.com/mcpmw/mcpmw/internal/urisyntax"
)

// FuzzURITemplate checks Match against its definition, on any template
// (of absolute URIs, as registration requires) and any URI:
//
//   - parsing, normalising and matching never panic, and a match does not
//     depend on whether the values are wanted;
//   - match agrees with refMatch, the definition written the slow way:
//     the same URIs match, with the same binding (the shortest first
//     value, then the shortest second, ...);
//   - every expansion matches: the normal form of the template expanded
//     with any values matches the template (values that make a "." or
//     ".." segment included: the root refuses such a URI before any
//     match, but matching does not care);
//   - the binding match gives is one whose expansion is the URI again,
//     whichever of several bindings it picks;
//   - it gives back exactly the values expanded when they are the only
//     binding and already in the form match gives a value (any simple
//     value; a reserved value whose every '%' starts an upper-case octet
//     of a reserved character or '%', since a reserved expansion passes
//     octets through and the normal form decodes or upper-cases the
//     others).
func FuzzURITemplate(f *testing.F) {
	for _, s := range [][4]string{
		{"notes://{id}", "notes://a%20b", "a b/c", ""},
		{"test://template/{id}/data", "test://template/123/data", "123", ""},
		{"file:///{+path}.txt", "file:///a/b.c.txt", "a/b.c", ""},
		{"db://{table}/{id}", "db://users/42", "users", "42%"},
		{"db://{table}-{id}", "db://a-b-c", "a-b", "c"},
		{"x://{a}2F{b}", "x://%2F2Fq", "/", "q"},
		{"x://{a}?q={+b}#f", "x://%C3%A9?q=a?b#c#f", "é", "a?b#c"},
		{"repo://{+path}/secrets/{name}", "repo://a/secrets/b/secrets/c", "a/secrets/b", "c"},
		{"x://{+a}-{b}-{+c}", "x://p-q-r-s", "p-q", "r%2F"},
		{"X://%7e{a}%2f{+b}", "x://~q%2f%41", "%", "%2F%25"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, raw, uri, v1, v2 string) {
		tmpl, err := Parse(raw)
		if err != nil || urisyntax.SchemeLen(raw) == 0 {
			return
		}
		tmpl.Match(uri, map[string]string{}) // outside its contract (not in normal form), but no panic
		if n, err := normal(uri); err == nil {
			checkMatch(t, tmpl, n)
		}
		want := map[string]string{}
		for i, n := range tmpl.names {
			want[n] = [2]string{v1, v2}[i%2]
		}
		u, err := normal(tmpl.Expand(want))
		if err != nil {
			t.Fatalf("%q: %v expands to %q, which has no normal form: %v", raw, want, tmpl.Expand(want), err)
		}
		got := checkMatch(t, tmpl, u)
		if got == nil {
			t.Fatalf("%q: %v expands to %q, which does not match", raw, want, u)
		}
		if _, count := refMatch(tmpl, u); count == 1 && canonicalValues(tmpl, want) && !sameVars(want, got) {
			t.Fatalf("%q: %v expands to %q, which matches as %v", raw, want, u, got)
		}
	})
}

// checkMatch matches uri, in normal form, against t, checks the match
// against refMatch and the binding against expand, and returns the
// binding, or nil when uri does not match.
func checkMatch(t *testing.T, tmpl *Template, uri string) map[string]string {
	t.Helper()
	got := map[string]string{}
	ok := tmpl.Match(uri, got)
	if ok != tmpl.Match(uri, nil) {
		t.Fatalf("%q ~ %q: the match depends on whether the values are wanted", tmpl.raw, uri)
	}
	if len(uri) <= 256 { // refMatch takes cubic time
		ref, count := refMatch(tmpl, uri)
		if ok != (count > 0) || ok && !sameVars(ref, got) {
			t.Fatalf("%q ~ %q: match says %v %v, the definition %v %v", tmpl.raw, uri, ok, got, count > 0, ref)
		}
	}
	if !ok {
		return nil
	}
	if again, err := normal(tmpl.Expand(got)); err != nil || again != uri {
		t.Fatalf("%q ~ %q: the binding %v expands to %q (%v)", tmpl.raw, uri, got, again, err)
	}
	return got
}

// refMatch is the definition of match, written the slow way: at each
// variable in turn, try every length of its value from the shortest (the
// value being whole percent-encoded octets and, for a simple variable,
// unreserved characters) until the rest of the URI matches the rest of
// the template. It returns the first binding so found, its values decoded
// as the package's doc says, and the number of bindings (counted up to
// 2). What each state leads to is remembered, so it takes time quadratic
// in the URI, not exponential.
func refMatch(tmpl *Template, uri string) (binding map[string]string, count int) {
	type state struct{ i, p int }
	counted := map[state]int{}
	var spans []string
	var first []string
	// from counts the bindings of the variables i.. with the literal
	// before variable i matched up to p, recording the first in first.
	var from func(i, p int) int
	from = func(i, p int) int {
		if c, ok := counted[state{i, p}]; ok {
			return c
		}
		lit := tmpl.lits[i]
		c := 0
		switch {
		case !strings.HasPrefix(uri[p:], lit):
		case i == len(tmpl.vars):
			if p+len(lit) == len(uri) {
				c = 1
				if first == nil {
					first = append([]string(nil), spans...)
				}
			}
		default:
			q := p + len(lit)
			for e := q; c < 2; { // uri[q:e] is a possible value
				spans = append(spans, uri[q:e])
				c += from(i+1, e)
				spans = spans[:len(spans)-1]
				if n := refOctet(uri[e:], tmpl.vars[i].reserved); n > 0 {
					e += n
				} else {
					break
				}
			}
		}
		c = min(c, 2)
		counted[state{i, p}] = c
		return c
	}
	count = from(0, 0)
	if count == 0 {
		return nil, 0
	}
	binding = map[string]string{}
	for i, v := range tmpl.vars {
		binding[v.name] = refDecode(first[i], v.reserved)
	}
	return binding, count
}

// refOctet returns the length of the character or percent-encoded octet
// at the start of s when a value may hold it (for a simple variable, no
// reserved character), or 0.
func refOctet(s string, reserved bool) int {
	switch {
	case s == "":
		return 0
	case s[0] == '%':
		if len(s) < 3 || !urisyntax.IsHex(s[1]) || !urisyntax.IsHex(s[2]) {
			return 0
		}
		return 3
	case !reserved && !urisyntax.Unreserved(s[0]):
		return 0
	}
	return 1
}

// refDecode decodes a value as the package's doc says: every octet, but
// in a reserved value those of reserved characters and of '%'.
func refDecode(s string, reserved bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		c := urisyntax.Unhex(s[i+1])<<4 | urisyntax.Unhex(s[i+2])
		if reserved && (c == '%' || strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0) {
			b.WriteString(s[i : i+3])
		} else {
			b.WriteByte(c)
		}
		i += 2
	}
	return b.String()
}

// canonicalValues reports whether every value of vars is in the form
// match gives it back in (see FuzzURITemplate).
func canonicalValues(tmpl *Template, vars map[string]string) bool {
	for _, v := range tmpl.vars {
		if !v.reserved {
			continue
		}
		s := vars[v.name]
		for i := 0; i < len(s); i++ {
			if s[i] != '%' {
				continue
			}
			if i+2 >= len(s) || !upperHex(s[i+1]) || !upperHex(s[i+2]) {
				return false
			}
			if c := urisyntax.Unhex(s[i+1])<<4 | urisyntax.Unhex(s[i+2]); c != '%' && !urisyntax.Reserved(c) {
				return false
			}
			i += 2
		}
	}
	return true
}

func sameVars(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func upperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }
