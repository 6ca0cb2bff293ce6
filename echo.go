package mcpmw

import "github.com/mcpmw/mcpmw/internal/echo"

// Every value a client sent that reaches an answer, a log line or an audit
// record goes through here first, capped: a client must not be able to
// make the server repeat a large value back. (The JSON-RPC id is the one
// exception on the wire: every answer carries it byte for byte.) The cap
// itself is internal/echo's, shared with typed/ and otel/; these names are
// the root's short spellings of it.

// capEcho returns s cut to echo.Max (100) runes plus an ellipsis, with
// invalid UTF-8 replaced, so a client's input can be quoted safely.
func capEcho(s string) string { return echo.Cap(s) }

// capBytes is capEcho for raw bytes with an explicit byte limit.
func capBytes(b []byte, limit int) string { return echo.CapBytes(b, limit) }

// quoteEcho quotes a client-supplied value for an error message, capped.
func quoteEcho(s string) string { return echo.Quote(s) }
