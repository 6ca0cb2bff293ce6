package mcpmw

import (
	"encoding/base64"
	"testing"
)

// FuzzDecodeCursor checks the tools/list cursor decoder: it never panics,
// every offset it accepts is one this server could have issued (so it reads
// back to the same cursor), and every cursor it issues reads back.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{"", "eyJvZmZzZXQiOjJ9", encodeCursor(0), encodeCursor(100), encodeCursor(1 << 40), "dG9vbHM6LTE", "!!", "dG9vbHM6",
		base64.RawURLEncoding.EncodeToString([]byte("tools:+5")), base64.RawURLEncoding.EncodeToString([]byte("tools:05"))} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := decodeCursor(s)
		if !ok {
			if n != 0 {
				t.Fatalf("decodeCursor(%q) refused but returned %d", s, n)
			}
			return
		}
		if n < 0 {
			t.Fatalf("decodeCursor(%q) = %d", s, n)
		}
		if back, ok := decodeCursor(encodeCursor(n)); !ok || back != n {
			t.Fatalf("encodeCursor(%d) reads back as %d, %v", n, back, ok)
		}
		if s != "" && encodeCursor(n) != s {
			// Row 24 of the README: a cursor this server did not issue gets -32602.
			t.Fatalf("decodeCursor accepts %q, which this server never issues (it issues %q for offset %d)", s, encodeCursor(n), n)
		}
	})
}
