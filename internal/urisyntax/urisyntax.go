// Package urisyntax holds the byte-level syntax of URIs (RFC 3986) and the
// normal form of a resource URI built from it (Normal): what the root
// package compares every resource URI in (uri.go: normalURI), what the
// literals of URI templates (internal/uritemplate) are put in, and what any
// other package of this module that looks a resource URI up must use:
// the character classes, hex digits, percent-encoding and its
// normalisation, the scheme, dot-segments. Both comparing in one normal
// form is what lets a template match a URI byte for byte; keeping that form
// in one package, below all of them, is what keeps it one. It uses nothing
// from the root package.
package urisyntax

import (
	"errors"
	"strconv"
	"strings"
)

// NormalizePercent returns s with its first scheme bytes lower-cased and
// its percent-encoding normalised, allocating only when something
// changes: an octet of an unreserved character decoded, the hex digits of
// every other one upper-cased, a byte no URI holds (a space, a control,
// '"', '<', '>', '\', '^', '`', '{', '|', '}', any byte from 0x80)
// percent-encoded. A '%' that starts no percent-encoded octet is an error.
//
// It decides every byte in one pass, with the copy started only at the
// first byte that changes, so it stays whole rather than split by case.
func NormalizePercent(s string, scheme int) (string, error) {
	var b []byte // nil until the first byte that changes
	start := func(i int) {
		if b == nil {
			b = make([]byte, 0, len(s)+16)
			b = append(b, s[:i]...)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i < scheme:
			if 'A' <= c && c <= 'Z' {
				start(i)
				c += 'a' - 'A'
			}
			if b != nil {
				b = append(b, c)
			}
		case c == '%':
			if i+2 >= len(s) || !IsHex(s[i+1]) || !IsHex(s[i+2]) {
				return "", errors.New("the '%' at offset " + strconv.Itoa(i) + " starts no percent-encoded octet (write %25 for a '%')")
			}
			switch o := Unhex(s[i+1])<<4 | Unhex(s[i+2]); {
			case Unreserved(o):
				start(i)
				b = append(b, o)
			case s[i+1] >= 'a' || s[i+2] >= 'a':
				start(i)
				b = AppendPercent(b, o)
			case b != nil:
				b = append(b, s[i:i+3]...)
			}
			i += 2
		case Unreserved(c) || Reserved(c):
			if b != nil {
				b = append(b, c)
			}
		default:
			start(i)
			b = AppendPercent(b, c)
		}
	}
	if b == nil {
		return s, nil
	}
	return string(b), nil
}

// AppendPercent appends the percent-encoded octet c, hex upper-case.
func AppendPercent(b []byte, c byte) []byte {
	const hex = "0123456789ABCDEF"
	return append(b, '%', hex[c>>4], hex[c&0xf])
}

// SchemeLen returns the length of uri's scheme, without the ':', or 0
// when it has none (RFC 3986 §3.1).
func SchemeLen(uri string) int {
	for i := 0; i < len(uri); i++ {
		c := uri[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':':
			return i // 0 at offset 0: no scheme
		default:
			return 0
		}
	}
	return 0
}

// Unreserved reports whether c is an unreserved character of RFC 3986
// §2.3 (ALPHA, DIGIT, '-', '.', '_', '~'): one a URI holds as it is and
// whose percent-encoded octet the normal form decodes.
func Unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// Reserved reports whether c is a reserved character of RFC 3986 §2.2
// (gen-delims and sub-delims): one a URI holds as it is, and whose
// percent-encoded octet means something else (a %2F is no '/').
func Reserved(c byte) bool { return strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0 }

// IsHex reports whether c is a hexadecimal digit, of either case.
func IsHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Unhex returns the value of the hexadecimal digit c (IsHex(c) must hold).
func Unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
