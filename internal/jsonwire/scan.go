package jsonwire

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// Member is one name/value pair of a JSON object, both as raw bytes of the
// original document: slices of it, not copies, so a Member is valid as long
// as the document is and must not be written through.
type Member struct {
	Key   []byte // the key without its quotes, escapes as written
	Value []byte // the raw value
}

// Is reports whether the member's key, decoded, equals name.
func (m Member) Is(name string) bool {
	if bytes.IndexByte(m.Key, '\\') < 0 {
		return string(m.Key) == name
	}
	var s string
	if err := json.Unmarshal(append(append([]byte{'"'}, m.Key...), '"'), &s); err != nil {
		return false
	}
	return s == name
}

// Name returns the member's key with escapes decoded. It allocates only
// for a key that holds an escape.
func (m Member) Name() string {
	if bytes.IndexByte(m.Key, '\\') < 0 {
		return string(m.Key)
	}
	var s string
	_ = json.Unmarshal(append(append([]byte{'"'}, m.Key...), '"'), &s)
	return s
}

// ObjectMembers appends the members of the JSON object doc to dst. doc must
// be valid JSON; ok is false when it is not an object.
func ObjectMembers(doc []byte, dst []Member) (_ []Member, ok bool) {
	it, ok := IterMembers(doc)
	if !ok {
		return dst, false
	}
	for m, more := it.Next(); more; m, more = it.Next() {
		dst = append(dst, m)
	}
	return dst, true
}

// CollectMembers returns the members of the JSON object doc, which must be
// valid JSON; ok is false when it is not an object. A small object grows its
// slice as usual; past 32 members the rest are counted first, so a body of a
// million members costs one slice of the right size, not a series of ever
// larger copies.
func CollectMembers(doc []byte) (_ []Member, ok bool) {
	it, ok := IterMembers(doc)
	if !ok {
		return nil, false
	}
	const exactAbove = 32
	var ms []Member
	for m, more := it.Next(); more; m, more = it.Next() {
		if len(ms) == exactAbove {
			rest, n := it, 0 // it is a value: counting moves only the copy
			for _, more := rest.Next(); more; _, more = rest.Next() {
				n++
			}
			ms = append(make([]Member, 0, exactAbove+1+n), ms...)
		}
		ms = append(ms, m)
	}
	return ms, true
}

// MemberIter reads the members of a JSON object one at a time, without
// collecting them: a body with a million members costs no memory to walk.
type MemberIter struct {
	doc  []byte
	i    int // the opening quote of the next key
	done bool
}

// IterMembers starts reading the members of the JSON object doc, which must
// be valid JSON; ok is false when it is not an object.
func IterMembers(doc []byte) (it MemberIter, ok bool) {
	i := SkipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return MemberIter{done: true}, false
	}
	i = SkipSpace(doc, i+1)
	return MemberIter{doc: doc, i: i, done: i >= len(doc) || doc[i] == '}'}, true
}

// Next returns the next member; more is false after the last one.
func (it *MemberIter) Next() (m Member, more bool) {
	if it.done {
		return Member{}, false
	}
	doc, i := it.doc, it.i
	end := stringEnd(doc, i)
	m.Key = doc[i+1 : end-1]
	i = SkipSpace(doc, end)
	i = SkipSpace(doc, i+1) // past ':'
	vend := ValueEnd(doc, i)
	m.Value = doc[i:vend]
	i = SkipSpace(doc, vend)
	if i >= len(doc) || doc[i] == '}' {
		it.done = true
	} else if i = SkipSpace(doc, i+1); i >= len(doc) { // past ','
		it.done = true
	}
	it.i = i
	return m, true
}

// ElementIter reads the elements of a JSON array one at a time: the
// array's MemberIter, and the one walk of an array every reader shares.
type ElementIter struct {
	doc  []byte
	i    int // the first byte of the next element
	done bool
}

// IterElements starts reading the elements of the JSON array doc, which
// must be valid JSON; ok is false when it is not an array. A document cut
// short ends the walk where it ends, without a panic.
func IterElements(doc []byte) (it ElementIter, ok bool) {
	i := SkipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '[' {
		return ElementIter{done: true}, false
	}
	i = SkipSpace(doc, i+1)
	return ElementIter{doc: doc, i: i, done: i >= len(doc) || doc[i] == ']'}, true
}

// Next returns the next element, its raw bytes; more is false after the
// last one.
func (it *ElementIter) Next() (v []byte, more bool) {
	if it.done {
		return nil, false
	}
	doc, i := it.doc, it.i
	end := ValueEnd(doc, i)
	v = doc[i:end]
	i = SkipSpace(doc, end)
	if i >= len(doc) || doc[i] == ']' {
		it.done = true
	} else if i = SkipSpace(doc, i+1); i >= len(doc) { // past ','
		it.done = true
	}
	it.i = i
	return v, true
}

// MembersInto reads the members of the JSON object doc into buf while they
// fit, and otherwise into one exactly sized slice (see CollectMembers), so a
// wide object costs one allocation rather than a series of regrowths. doc
// must be valid JSON; nil means it is not an object.
func MembersInto(doc []byte, buf []Member) []Member {
	it, ok := IterMembers(doc)
	if !ok {
		return nil
	}
	ms := buf[:0]
	for m, more := it.Next(); more; m, more = it.Next() {
		if len(ms) == cap(ms) {
			all, _ := CollectMembers(doc)
			return all
		}
		ms = append(ms, m)
	}
	return ms
}

// Lookup returns the value of the first member named name, or nil.
func Lookup(members []Member, name string) []byte {
	for _, m := range members {
		if m.Is(name) {
			return m.Value
		}
	}
	return nil
}

// DuplicateKey returns the first key that appears twice among members, if
// any: the key of the earliest member whose key an earlier member already
// has. Keys are compared as decoded, so "a" and "\u0061" are the same key.
func DuplicateKey(members []Member) (string, bool) {
	i, dup := duplicateIndex(len(members), func(i int) []byte { return members[i].Key })
	if !dup {
		return "", false
	}
	return members[i].Name(), true
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
	return escaped && (Member{Key: a}).Name() == (Member{Key: b}).Name()
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
			decoded[int32(i)] = []byte(Member{Key: k}.Name())
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

// SkipSpace returns the index of the first byte of doc at i or after that
// is not JSON whitespace, or len(doc).
func SkipSpace(doc []byte, i int) int {
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

// ValueEnd returns the index just past the value starting at doc[i].
func ValueEnd(doc []byte, i int) int {
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

// ExceedsDepth reports whether the valid JSON document doc nests objects and
// arrays more than limit levels deep. It does not recurse, and it reads a
// document with few brackets (nearly every request) only through
// bytes.Count.
func ExceedsDepth(doc []byte, limit int) bool {
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

// Kind classifies a raw JSON value by its first byte.
type Kind uint8

// The kinds of JSON value, and KindNone for a value that is absent.
const (
	KindNone Kind = iota // absent: an empty value
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// KindOf returns the kind of the raw JSON value v, read from its first
// byte alone: v must be valid JSON or empty (KindNone), as every value the
// scanner returns is.
func KindOf(v []byte) Kind {
	if len(v) == 0 {
		return KindNone
	}
	switch v[0] {
	case 'n':
		return KindNull
	case 't', 'f':
		return KindBool
	case '"':
		return KindString
	case '[':
		return KindArray
	case '{':
		return KindObject
	default:
		return KindNumber
	}
}

// String returns the kind as a message names it: "a string", "absent".
func (k Kind) String() string {
	return [...]string{"absent", "null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// Unquote decodes the JSON string v (quotes included). ok is false when v is
// not a string.
func Unquote(v []byte) (string, bool) {
	if KindOf(v) != KindString {
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
