package mcpmw

import (
	"testing"
)

// FuzzURITemplate checks that parsing and matching never panic on any
// template and URI, and that matching inverts expansion: the values a URI
// expanded from a template matches with expand to that URI again, and are
// exactly the values it was expanded from when no literal after a
// variable could be part of its value.
func FuzzURITemplate(f *testing.F) {
	for _, s := range [][3]string{
		{"notes://{id}", "a b/c", ""},
		{"test://template/{id}/data", "123", ""},
		{"file:///{+path}.txt", "a/b.c", ""},
		{"db://{table}/{id}", "users", "42%"},
		{"db://{table}-{id}", "a-b", "c"},
		{"x://{a}2F{b}", "/", "q"},
		{"x://{a}?q={+b}#f", "é", "a?b#c"},
	} {
		f.Add(s[0], s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, raw, uri, v1, v2 string) {
		tmpl, err := parseURITemplate(raw)
		if err != nil {
			return
		}
		vars := map[string]string{}
		if tmpl.match(uri, vars) != tmpl.match(uri, nil) {
			t.Fatalf("%q ~ %q: the match depends on whether the values are wanted", raw, uri)
		}
		if v1 == "" || v2 == "" {
			return // a value is one character or more
		}
		want := map[string]string{}
		for i, n := range tmpl.names {
			want[n] = [2]string{v1, v2}[i%2]
		}
		u := tmpl.expand(want)
		got := map[string]string{}
		if tmpl.match(u, got) {
			// The values matched expand to a URI that matches as the same
			// values; and to u itself, when no reserved expansion leaves a
			// decoded reserved character unencoded.
			again, got2 := tmpl.expand(got), map[string]string{}
			if !tmpl.match(again, got2) || !sameVars(got, got2) || again != u && !hasReserved(tmpl) {
				t.Fatalf("%q: %v expands to %q, which matches as %v, which expands to %q, which matches as %v", raw, want, u, got, again, got2)
			}
		}
		if !unambiguous(tmpl) {
			return
		}
		if !tmpl.match(u, got) {
			t.Fatalf("%q: %v expands to %q, which does not match", raw, want, u)
		}
		if !sameVars(want, got) {
			t.Fatalf("%q: %v expands to %q, which matches as %v", raw, want, u, got)
		}
	})
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

func hasReserved(t *uriTemplate) bool {
	for _, p := range t.parts {
		if p.reserved {
			return true
		}
	}
	return false
}

// unambiguous reports whether every literal after a variable (but the
// last, which ends the URI) starts with a character the variable's
// expansion never holds.
func unambiguous(t *uriTemplate) bool {
	for i := 0; i+2 < len(t.parts); i++ {
		p := t.parts[i]
		if p.name == "" {
			continue
		}
		c := t.parts[i+1].lit[0]
		if c == '%' || unreserved(c) || p.reserved && reservedChar(c) {
			return false
		}
	}
	return true
}
