package mcpmw

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// This file holds the small JSON scanner the request path uses instead of
// decoding into maps or reflected structs. The body is checked once with
// json.Valid and utf8.Valid; after that the scanner only has to find where
// values start and end, so it can assume well-formed input. (On invalid
// UTF-8 it would disagree with encoding/json, which reads each bad byte of a
// key as U+FFFD; parseEnvelope and NewArgs refuse such input.) Keys are
// compared exactly (JSON-RPC and MCP member names are case-sensitive, unlike
// encoding/json's matching).

// member is one name/value pair of a JSON object, both as raw bytes of the
// original document. key excludes its quotes and may contain escapes.
type member struct {
	key []byte
	val []byte
}

// is reports whether the member's key, decoded, equals name.
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
	it, ok := iterMembers(doc)
	if !ok {
		return dst, false
	}
	for m, more := it.next(); more; m, more = it.next() {
		dst = append(dst, m)
	}
	return dst, true
}

// collectMembers returns the members of the JSON object doc, which must be
// valid JSON; ok is false when it is not an object. A small object grows its
// slice as usual; past 32 members the rest are counted first, so a body of a
// million members costs one slice of the right size, not a series of ever
// larger copies.
func collectMembers(doc []byte) (_ []member, ok bool) {
	it, ok := iterMembers(doc)
	if !ok {
		return nil, false
	}
	const exactAbove = 32
	var ms []member
	for m, more := it.next(); more; m, more = it.next() {
		if len(ms) == exactAbove {
			rest, n := it, 0 // it is a value: counting moves only the copy
			for _, more := rest.next(); more; _, more = rest.next() {
				n++
			}
			ms = append(make([]member, 0, exactAbove+1+n), ms...)
		}
		ms = append(ms, m)
	}
	return ms, true
}

// memberIter reads the members of a JSON object one at a time, without
// collecting them: a body with a million members costs no memory to walk.
type memberIter struct {
	doc  []byte
	i    int // the opening quote of the next key
	done bool
}

// iterMembers starts reading the members of the JSON object doc, which must
// be valid JSON; ok is false when it is not an object.
func iterMembers(doc []byte) (it memberIter, ok bool) {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return memberIter{done: true}, false
	}
	i = skipSpace(doc, i+1)
	return memberIter{doc: doc, i: i, done: i >= len(doc) || doc[i] == '}'}, true
}

// next returns the next member; more is false after the last one.
func (it *memberIter) next() (m member, more bool) {
	if it.done {
		return member{}, false
	}
	doc, i := it.doc, it.i
	end := stringEnd(doc, i)
	m.key = doc[i+1 : end-1]
	i = skipSpace(doc, end)
	i = skipSpace(doc, i+1) // past ':'
	vend := valueEnd(doc, i)
	m.val = doc[i:vend]
	i = skipSpace(doc, vend)
	if i >= len(doc) || doc[i] == '}' {
		it.done = true
	} else if i = skipSpace(doc, i+1); i >= len(doc) { // past ','
		it.done = true
	}
	it.i = i
	return m, true
}

// membersInto reads the members of the JSON object doc into buf while they
// fit, and otherwise into one exactly sized slice (see collectMembers), so a
// wide object costs one allocation rather than a series of regrowths. doc
// must be valid JSON; nil means it is not an object.
func membersInto(doc []byte, buf []member) []member {
	it, ok := iterMembers(doc)
	if !ok {
		return nil
	}
	ms := buf[:0]
	for m, more := it.next(); more; m, more = it.next() {
		if len(ms) == cap(ms) {
			all, _ := collectMembers(doc)
			return all
		}
		ms = append(ms, m)
	}
	return ms
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
// any: the key of the earliest member whose key an earlier member already
// has. Keys are compared as decoded, so "a" and "\u0061" are the same key.
func duplicateKey(members []member) (string, bool) {
	i, dup := duplicateIndex(len(members), func(i int) []byte { return members[i].key })
	if !dup {
		return "", false
	}
	return members[i].keyString(), true
}

// duplicateIndex returns the index of the earliest of n raw keys (as in the
// document, without quotes) that an earlier key equals once decoded.
func duplicateIndex(n int, rawKey func(i int) []byte) (int, bool) {
	if n <= 8 {
		return duplicateIndexSmall(n, rawKey)
	}
	return duplicateIndexSorted(n, rawKey)
}

// duplicateIndexSmall compares every pair: cheapest for a few keys.
func duplicateIndexSmall(n int, rawKey func(i int) []byte) (int, bool) {
	for i := 1; i < n; i++ {
		for j := 0; j < i; j++ {
			if sameKey(rawKey(i), rawKey(j)) {
				return i, true
			}
		}
	}
	return 0, false
}

// sameKey reports whether two raw keys are equal once decoded, decoding
// only when one holds an escape.
func sameKey(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	escaped := bytes.IndexByte(a, '\\') >= 0 || bytes.IndexByte(b, '\\') >= 0
	return escaped && (member{key: a}).keyString() == (member{key: b}).keyString()
}

// duplicateIndexSorted sorts key indices, so that many keys make the check
// neither quadratic nor a copy of every key: raw key bytes are the decoded
// key unless they hold an escape, and only those few are decoded.
func duplicateIndexSorted(n int, rawKey func(i int) []byte) (int, bool) {
	var decoded map[int32][]byte
	for i := range n {
		if k := rawKey(i); bytes.IndexByte(k, '\\') >= 0 {
			if decoded == nil {
				decoded = make(map[int32][]byte)
			}
			decoded[int32(i)] = []byte(member{key: k}.keyString())
		}
	}
	key := func(i int32) []byte {
		if k, ok := decoded[i]; ok {
			return k
		}
		return rawKey(int(i))
	}
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if c := bytes.Compare(key(a), key(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	// In each run of equal keys, the second index is that key's first
	// repeat; the earliest repeat overall is the answer.
	first := int32(-1)
	for p := 1; p < len(idx); p++ {
		if bytes.Equal(key(idx[p-1]), key(idx[p])) && (p == 1 || !bytes.Equal(key(idx[p-2]), key(idx[p-1]))) {
			if first < 0 || idx[p] < first {
				first = idx[p]
			}
		}
	}
	return int(first), first >= 0
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
// It jumps from quote to quote (bytes.IndexByte), and a quote ends the
// string unless an odd run of backslashes escapes it: long strings (a
// tool's text, an argument) cost a vectorised scan, not a loop per byte.
func stringEnd(doc []byte, i int) int {
	for i++; ; i++ {
		j := bytes.IndexByte(doc[i:], '"')
		if j < 0 {
			return len(doc)
		}
		i += j
		k := i // back over the backslashes before this quote; the opening quote stops it
		for doc[k-1] == '\\' {
			k--
		}
		if (i-k)%2 == 0 {
			return i + 1
		}
	}
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

// exceedsDepth reports whether the valid JSON document doc nests objects and
// arrays more than limit levels deep. It does not recurse, and it reads a
// document with few brackets (nearly every request) only through
// bytes.Count.
func exceedsDepth(doc []byte, limit int) bool {
	if bytes.Count(doc, []byte{'{'})+bytes.Count(doc, []byte{'['}) <= limit {
		return false // brackets inside strings only make this count larger
	}
	depth := 0
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '"':
			i = stringEnd(doc, i) - 1
		case '{', '[':
			if depth++; depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
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
