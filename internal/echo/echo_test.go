package echo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCap(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, in, want string }{
		{"empty", "", ""},
		{"short", "hello", "hello"},
		{"exactly Max runes", strings.Repeat("a", Max), strings.Repeat("a", Max)},
		{"one rune over", strings.Repeat("a", Max+1), strings.Repeat("a", Max) + "…"},
		{"Max runes of two bytes each, over Max bytes", strings.Repeat("é", Max), strings.Repeat("é", Max)},
		{"one two-byte rune over", strings.Repeat("é", Max+1), strings.Repeat("é", Max) + "…"},
		{"invalid UTF-8, short", "a\xffb", "a\uFFFDb"},
		{"invalid UTF-8, long", "\xff" + strings.Repeat("b", Max), "\uFFFD" + strings.Repeat("b", Max-1) + "…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, Cap(tt.in))
			assert.Equal(t, "'"+tt.want+"'", Quote(tt.in))
		})
	}
}

// A short valid value is returned as it is: capping costs nothing on the
// common path.
func TestCapShortDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("x", Max)
	assert.Zero(t, testing.AllocsPerRun(10, func() { _ = Cap(s) }))
}

func TestCapBytes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		in    string
		limit int
		want  string
	}{
		{"under the limit", "abc", 4, "abc"},
		{"at the limit", "abcd", 4, "abcd"},
		{"over the limit", "abcde", 4, "abcd…"},
		{"cut inside a rune goes back to its start", "abcé", 4, "abc…"},
		{"cut right after a rune", "abéd", 4, "abé…"},
		{"a rune at offset 0 cut whole", "éa", 1, "…"},
		{"continuation bytes from offset 0: cut to nothing", "\x80\x80abc", 1, "…"},
		{"invalid UTF-8 replaced", "a\xff", 4, "a\uFFFD"},
		{"invalid UTF-8 before the cut replaced", "\xffabcd", 3, "\uFFFDab…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, CapBytes([]byte(tt.in), tt.limit))
		})
	}
}
