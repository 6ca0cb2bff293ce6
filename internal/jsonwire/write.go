package jsonwire

import (
	"encoding/base64"
	"unicode/utf8"
)

// Writing JSON by hand on the hot path: strings escaped as encoding/json
// escapes them, and bytes as base64 strings. Documents built once at
// startup use encoding/json.

// AppendString appends s to dst as a JSON string, escaping what JSON requires
// and the HTML-sensitive characters encoding/json also escapes. Invalid UTF-8
// becomes U+FFFD, as with encoding/json.
//
// Runs of bytes that need no escaping (plain ASCII text, nearly all of a
// typical result) are skipped with one table lookup per byte and appended
// at once; everything else stays in one loop, however branchy (cyclomatic
// 16, on purpose), because it runs over every byte of every string the hot
// path writes: a call per escaped byte would cost more than the branches,
// and the loop reads as one table of escapes.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i < len(s) && plainASCII[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainASCII[b] reports whether AppendString copies byte b as it is:
// printable ASCII other than '"', '\\' and the HTML-sensitive '<', '>', '&'.
var plainASCII = func() (t [256]bool) {
	for b := byte(0x20); b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// AppendBase64 appends data to dst as a JSON string of its standard base64.
func AppendBase64(dst []byte, data []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, data)
	return append(dst, '"')
}
