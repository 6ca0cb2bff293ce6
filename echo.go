package mcpmw

import (
	"strings"
	"unicode/utf8"
)

// Every value a client sent that reaches an answer, a log line or an audit
// record goes through here first, capped: a client must not be able to
// make the server repeat a large value back. (The JSON-RPC id is the one
// exception on the wire: every answer carries it byte for byte.)

// maxEcho is how many runes of a client-supplied value are echoed back in an
// error message or an audit summary.
const maxEcho = 100

// capEcho returns s cut to maxEcho runes plus an ellipsis, with invalid UTF-8
// replaced, so a client's input can be quoted safely.
func capEcho(s string) string {
	if len(s) <= maxEcho && utf8.ValidString(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	n := 0
	for i := range s {
		if n == maxEcho {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// capBytes is capEcho for raw bytes with an explicit byte limit.
func capBytes(b []byte, limit int) string {
	if len(b) <= limit {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(b[:cut]), "\uFFFD") + "…"
}

// quoteEcho quotes a client-supplied value for an error message, capped.
func quoteEcho(s string) string { return "'" + capEcho(s) + "'" }
