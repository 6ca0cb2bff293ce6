package urisyntax

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The character classes are RFC 3986's, byte for byte.
func TestURICharacterClasses(t *testing.T) {
	t.Parallel()
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	for c := range 256 {
		b := byte(c)
		assert.Equal(t, strings.IndexByte(alnum+"-._~", b) >= 0, Unreserved(b), "Unreserved(%q)", b)
		assert.Equal(t, strings.IndexByte(":/?#[]@"+"!$&'()*+,;=", b) >= 0, Reserved(b), "Reserved(%q)", b)
	}
}

func TestHexDigits(t *testing.T) {
	t.Parallel()
	for c := range 256 {
		b := byte(c)
		v, err := strconv.ParseUint(string(rune(b)), 16, 8)
		want := err == nil && b < 0x80
		assert.Equal(t, want, IsHex(b), "IsHex(%q)", b)
		if want {
			assert.Equal(t, byte(v), Unhex(b), "Unhex(%q)", b)
		}
	}
}
