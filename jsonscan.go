package mcpmw

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// This file holds the small JSON scanner the request path uses instead of
// decoding into maps or reflected structs. The body is checked once with
// json.Valid; after that the scanner only has to find where values start and
// end, so it can assume well-formed input. Keys are compared exactly (JSON-RPC
// and MCP member names are case-sensitive, unlike encoding/json's matching).

// member is one name/value pair of a JSON object, both as raw bytes of the
// original document. key excludes its quotes and may contain escapes.
type member struct {
	key []byte
	val []byte
}

// is reports whether the member's key equals name.
func (m member) is(name string) bool {
	if bytes.IndexByte(m.key, '\\') < 0 {
		return string(m.key) == name
	}
	var s string
	if err := json.Unmarshal(append(append([]byte{'"'}, m.key...), '"'), &s); err != nil {
		return false
	}
	return s == name
}

// keyString returns the member's key with escapes decoded.
func (m member) keyString() string {
	if bytes.IndexByte(m.key, '\\') < 0 {
		return string(m.key)
	}
	var s string
	_ = json.Unmarshal(append(append([]byte{'"'}, m.key...), '"'), &s)
	return s
}

// objectMembers appends the members of the JSON object doc to dst. doc must
// be valid JSON; ok is false when it is not an object.
func objectMembers(doc []byte, dst []member) (_ []member, ok bool) {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return dst, false
	}
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		return dst, true
	}
	for i < len(doc) {
		// doc[i] is the opening quote of a key.
		end := stringEnd(doc, i)
		key := doc[i+1 : end-1]
		i = skipSpace(doc, end)
		i = skipSpace(doc, i+1) // past ':'
		vend := valueEnd(doc, i)
		dst = append(dst, member{key: key, val: doc[i:vend]})
		i = skipSpace(doc, vend)
		if i >= len(doc) || doc[i] == '}' {
			break
		}
		i = skipSpace(doc, i+1) // past ','
	}
	return dst, true
}

// lookup returns the value of the first member named name, or nil.
func lookup(members []member, name string) []byte {
	for _, m := range members {
		if m.is(name) {
			return m.val
		}
	}
	return nil
}

// duplicateKey returns the first key that appears twice among members, if
// any. Keys are compared as decoded, so "a" and "\u0061" are the same key.
// Large objects are checked through a map, so a body of many members cannot
// make the check quadratic.
func duplicateKey(members []member) (string, bool) {
	if len(members) <= 8 {
		for i := 1; i < len(members); i++ {
			for j := 0; j < i; j++ {
				if bytes.Equal(members[i].key, members[j].key) || members[i].keyString() == members[j].keyString() {
					return members[i].keyString(), true
				}
			}
		}
		return "", false
	}
	seen := make(map[string]struct{}, len(members))
	for _, m := range members {
		k := m.keyString()
		if _, dup := seen[k]; dup {
			return k, true
		}
		seen[k] = struct{}{}
	}
	return "", false
}

func skipSpace(doc []byte, i int) int {
	for i < len(doc) {
		switch doc[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the string starting at doc[i] == '"'.
func stringEnd(doc []byte, i int) int {
	for i++; i < len(doc); i++ {
		switch doc[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(doc)
}

// valueEnd returns the index just past the value starting at doc[i].
func valueEnd(doc []byte, i int) int {
	if i >= len(doc) {
		return i
	}
	switch doc[i] {
	case '"':
		return stringEnd(doc, i)
	case '{', '[':
		depth := 0
		for ; i < len(doc); i++ {
			switch doc[i] {
			case '"':
				i = stringEnd(doc, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(doc)
	default:
		for ; i < len(doc); i++ {
			switch doc[i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return i
			}
		}
		return len(doc)
	}
}

// jsonKind classifies a raw JSON value by its first byte.
type jsonKind uint8

const (
	kindNone jsonKind = iota // absent
	kindNull
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func kindOf(v []byte) jsonKind {
	if len(v) == 0 {
		return kindNone
	}
	switch v[0] {
	case 'n':
		return kindNull
	case 't', 'f':
		return kindBool
	case '"':
		return kindString
	case '[':
		return kindArray
	case '{':
		return kindObject
	default:
		return kindNumber
	}
}

func (k jsonKind) String() string {
	return [...]string{"absent", "null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// unquote decodes the JSON string v (quotes included). ok is false when v is
// not a string.
func unquote(v []byte) (string, bool) {
	if kindOf(v) != kindString {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// appendString appends s to dst as a JSON string, escaping what JSON requires
// and the HTML-sensitive characters encoding/json also escapes. Invalid UTF-8
// becomes U+FFFD, as with encoding/json.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
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
