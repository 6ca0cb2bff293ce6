// Package echo caps a value a client sent before anything repeats it: an
// answer, a header, a log line, an audit record, a span. A client must not
// be able to make the server repeat a large value back, so every such value
// goes through Cap (ARCHITECTURE.md, invariant 4). It is a leaf below the
// root package and every package of this module that repeats a client's
// value (typed, the otel module), so that the cap is one function, not a
// copy per package that could drift from it. It uses nothing from the root
// package.
package echo

import (
	"strings"
	"unicode/utf8"
)

// Max is how many runes of a client-supplied value are repeated.
const Max = 100

// Cap returns s cut to Max runes plus an ellipsis, with invalid UTF-8
// replaced, so that a client's input can be quoted safely. A short valid s
// is returned as it is, without allocating.
func Cap(s string) string {
	if len(s) <= Max && utf8.ValidString(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	n := 0
	for i := range s {
		if n == Max {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// CapBytes is Cap for raw bytes with an explicit byte limit (such as the
// arguments of a log line): b cut at a rune boundary at or before limit,
// plus an ellipsis, with invalid UTF-8 replaced.
func CapBytes(b []byte, limit int) string {
	if len(b) <= limit {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(b[:cut]), "\uFFFD") + "…"
}

// Quote quotes a client-supplied value for an error message, capped.
func Quote(s string) string { return "'" + Cap(s) + "'" }
