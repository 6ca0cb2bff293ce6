package jsonwire

import (
	"strings"
	"testing"
)

// BenchmarkAppendString measures escaping the text of a result: plain
// ASCII prose (the common case), and text with something to escape on
// every line.
func BenchmarkAppendString(b *testing.B) {
	for _, tc := range []struct{ name, s string }{
		{"ascii1k", strings.Repeat("The quick brown fox jumps over the lazy dog, 0123456789. ", 19)[:1024]},
		{"lines1k", strings.Repeat("a line of text with \"quotes\" <b>\n", 33)[:1024]},
		{"utf8-1k", strings.Repeat("Grüße aus Köln, 東京から. ", 40)[:1000]},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dst := make([]byte, 0, 4096)
			b.SetBytes(int64(len(tc.s)))
			b.ReportAllocs()
			for b.Loop() {
				dst = AppendString(dst[:0], tc.s)
			}
		})
	}
}
