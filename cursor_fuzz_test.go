package mcpmw

import (
	"encoding/base64"
	"testing"
)

// FuzzDecodeCursor checks the tools/list cursor decoder: it never panics,
// every offset it accepts is one this server could have issued (so it reads
// back to the same cursor), and every cursor it issues reads back.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{"", "eyJvZmZzZXQiOjJ9", encodeListCursor("tools:", 0), encodeListCursor("tools:", 100), encodeListCursor("tools:", 1<<40), "dG9vbHM6LTE", "!!", "dG9vbHM6",
		base64.RawURLEncoding.EncodeToString([]byte("tools:+5")), base64.RawURLEncoding.EncodeToString([]byte("tools:05"))} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := decodeListCursor("tools:", s)
		if !ok {
			if n != 0 {
				t.Fatalf("decodeListCursor(tools, %q) refused but returned %d", s, n)
			}
			return
		}
		if n < 0 {
			t.Fatalf("decodeListCursor(tools, %q) = %d", s, n)
		}
		if back, ok := decodeListCursor("tools:", encodeListCursor("tools:", n)); !ok || back != n {
			t.Fatalf("encodeListCursor(tools, %d) reads back as %d, %v", n, back, ok)
		}
		if s != "" && encodeListCursor("tools:", n) != s {
			// Row 24 of docs/status.md: a cursor this server did not issue gets -32602.
			t.Fatalf("decodeCursor accepts %q, which this server never issues (it issues %q for offset %d)", s, encodeListCursor("tools:", n), n)
		}
	})
}
