package jsonwire

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The readers of object keys the request path's three rules are built
// from (checkKeys and Args.Decode in the root package state the rules):
// the first repeated key anywhere in a document (DuplicatePointer), two
// keys equal only under case folding (CaseTwins, FoldedRPCMember), and a
// key encoding/json would match to a struct field only by folding case
// (FoldedField).

// keyFrame is one open object or array while DuplicatePointer reads.
type keyFrame struct {
	object    bool
	keysStart int // an object's keys are keys[keysStart:] up to the next object's
	index     int // the current element of an array
}

// keySpan is where one object key (without its quotes) lies in a document.
type keySpan struct{ start, end int32 }

// DuplicatePointer returns the JSON pointer (RFC 6901) of the first key that
// repeats within one object anywhere in doc, a valid JSON document no
// longer than 2 GiB. It reads doc in one pass with no recursion. Small
// documents cost no allocation; a large one costs a key list sized once
// (eight bytes a key) and the sort of each object over eight members.
func DuplicatePointer(doc []byte) (pointer string, found bool) {
	var stackBuf [16]keyFrame
	var keysBuf [32]keySpan
	stack, keys := stackBuf[:0], keysBuf[:0]
	expectKey := false
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '{':
			stack = append(stack, keyFrame{object: true, keysStart: len(keys)})
			expectKey = true
		case '[':
			stack = append(stack, keyFrame{})
		case '}':
			top := stack[len(stack)-1]
			own := keys[top.keysStart:]
			if j, dup := duplicateIndex(len(own), func(j int) []byte { return doc[own[j].start:own[j].end] }); dup {
				return pointerTo(doc, stack, keys, doc[own[j].start:own[j].end]), true
			}
			keys = keys[:top.keysStart]
			stack = stack[:len(stack)-1]
		case ']':
			stack = stack[:len(stack)-1]
		case ',':
			if top := &stack[len(stack)-1]; top.object {
				expectKey = true
			} else {
				top.index++
			}
		case '"':
			end := stringEnd(doc, i)
			if expectKey {
				if len(keys) == cap(keys) && cap(keys) == len(keysBuf) {
					// Every key is followed by a colon: their count bounds
					// the keys still to come, so the list grows once.
					keys = append(make([]keySpan, 0, len(keys)+bytes.Count(doc[i:], []byte{':'})), keys...)
				}
				keys = append(keys, keySpan{int32(i + 1), int32(end - 1)})
				expectKey = false
			}
			i = end - 1
		}
	}
	return "", false
}

// pointerTo renders the JSON pointer of the raw key dup in the innermost
// object of stack: each enclosing object contributes the key of the member
// being read (the last of its keys so far), each enclosing array its index.
func pointerTo(doc []byte, stack []keyFrame, keys []keySpan, dup []byte) string {
	var b strings.Builder
	for j, f := range stack[:len(stack)-1] {
		b.WriteByte('/')
		if !f.object {
			b.WriteString(strconv.Itoa(f.index))
			continue
		}
		end := len(keys)
		for _, deeper := range stack[j+1:] {
			if deeper.object {
				end = deeper.keysStart
				break
			}
		}
		k := keys[end-1]
		writePointerToken(&b, Member{Key: doc[k.start:k.end]}.Name())
	}
	b.WriteByte('/')
	writePointerToken(&b, Member{Key: dup}.Name())
	return b.String()
}

// writePointerToken writes one reference token of a JSON pointer, escaping
// "~" and "/" as RFC 6901 requires.
func writePointerToken(b *strings.Builder, tok string) {
	for i := 0; i < len(tok); i++ {
		switch tok[i] {
		case '~':
			b.WriteString("~0")
		case '/':
			b.WriteString("~1")
		default:
			b.WriteByte(tok[i])
		}
	}
}

// CaseTwins returns two keys of members that are equal under the
// case-insensitive matching of encoding/json but not equal, if any.
func CaseTwins(members []Member) (a, b string, found bool) {
	if len(members) < 2 {
		return "", "", false
	}
	if len(members) <= 8 {
		for i := 1; i < len(members); i++ {
			for j := 0; j < i; j++ {
				if caseTwin(members[j], members[i]) {
					return members[j].Name(), members[i].Name(), true
				}
			}
		}
		return "", "", false
	}
	seen := make(map[string]string, len(members))
	for _, m := range members {
		k := m.Name()
		f := foldKey(k)
		if prev, ok := seen[f]; ok && prev != k {
			return prev, k, true
		}
		seen[f] = k
	}
	return "", "", false
}

// caseTwin reports whether the keys of a and b differ but are equal under
// case folding. Keys without escapes, nearly all, are compared as they
// are, without a copy.
func caseTwin(a, b Member) bool {
	if bytes.IndexByte(a.Key, '\\') < 0 && bytes.IndexByte(b.Key, '\\') < 0 {
		return !bytes.Equal(a.Key, b.Key) && bytes.EqualFold(a.Key, b.Key)
	}
	ka, kb := a.Name(), b.Name()
	return ka != kb && strings.EqualFold(ka, kb)
}

// foldKey returns a form of s shared by exactly the strings that
// strings.EqualFold (and so encoding/json's field matching) equates with it:
// each rune replaced by the smallest rune of its Unicode simple-folding
// orbit (so "K", "k" and the Kelvin sign agree, as do "s", "S" and "ſ").
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteRune(r)
			continue
		}
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < low {
				low = f
			}
		}
		if 'A' <= low && low <= 'Z' {
			low += 'a' - 'A'
		}
		b.WriteRune(low)
	}
	return b.String()
}

// FoldedField walks doc, a valid JSON value, beside the Go type t it is
// about to be decoded into, and returns the JSON pointer of the first
// object key that encoding/json would match to a struct field only by
// folding case. Values decoded by their own UnmarshalJSON, or into
// interfaces (maps keep keys exactly), are not looked into.
// want is the field's JSON name that the key folds to.
func FoldedField(doc []byte, t reflect.Type) (pointer, want string, found bool) {
	var path []string
	if want, found = foldedFieldAt(doc, t, &path); found {
		return pointerOf(path), want, true
	}
	return "", "", false
}

// pointerOf renders path as a JSON pointer: "" for the root, otherwise
// "/" before each escaped reference token.
func pointerOf(path []string) string {
	var b strings.Builder
	for _, tok := range path {
		b.WriteByte('/')
		writePointerToken(&b, tok)
	}
	return b.String()
}

var jsonUnmarshalerType = reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }]()

func foldedFieldAt(doc []byte, t reflect.Type, path *[]string) (want string, found bool) {
	t = decodedType(t)
	if t == nil {
		return "", false
	}
	doc = doc[SkipSpace(doc, 0):]
	switch t.Kind() {
	case reflect.Struct:
		return foldedInStruct(doc, t, path)
	case reflect.Map:
		return foldedInMap(doc, t.Elem(), path)
	case reflect.Slice, reflect.Array:
		return foldedInArray(doc, t.Elem(), path)
	}
	return "", false
}

// decodedType is the type encoding/json decodes a value into when the
// target has type t (pointers followed), or nil when the value is decoded
// by its own UnmarshalJSON, which this walk does not look into.
func decodedType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		if t.Implements(jsonUnmarshalerType) {
			return nil
		}
		t = t.Elem()
	}
	if t == nil || t.Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(jsonUnmarshalerType) {
		return nil
	}
	return t
}

// foldedInStruct checks the members of an object decoded into struct t: a
// member naming a field exactly is followed into the field; one naming a
// field only by folding case is the answer.
func foldedInStruct(doc []byte, t reflect.Type, path *[]string) (string, bool) {
	it, ok := IterMembers(doc)
	if !ok {
		return "", false
	}
	fields := structFields(t)
	for m, more := it.Next(); more; m, more = it.Next() {
		k := m.Name()
		if ft, ok := fields.exact[k]; ok {
			if want, found := foldedUnder(m.Value, ft, path, k); found {
				return want, true
			}
			continue
		}
		if want, ok := fields.folded[foldKey(k)]; ok {
			*path = append(*path, k)
			return want, true
		}
	}
	return "", false
}

// foldedInMap checks the values of an object decoded into a map (whose
// keys are taken exactly).
func foldedInMap(doc []byte, elem reflect.Type, path *[]string) (string, bool) {
	it, ok := IterMembers(doc)
	if !ok {
		return "", false
	}
	for m, more := it.Next(); more; m, more = it.Next() {
		if want, found := foldedUnder(m.Value, elem, path, m.Name()); found {
			return want, true
		}
	}
	return "", false
}

// foldedInArray checks the elements of an array decoded into a slice or
// an array.
func foldedInArray(doc []byte, elem reflect.Type, path *[]string) (string, bool) {
	it, _ := IterElements(doc)
	for n := 0; ; n++ {
		v, more := it.Next()
		if !more {
			return "", false
		}
		if want, found := foldedUnder(v, elem, path, strconv.Itoa(n)); found {
			return want, true
		}
	}
}

// foldedUnder walks one member or element, its reference token pushed on
// path while it is read (and left there when the answer is found in it).
func foldedUnder(doc []byte, t reflect.Type, path *[]string, token string) (string, bool) {
	*path = append(*path, token)
	if want, found := foldedFieldAt(doc, t, path); found {
		return want, true
	}
	*path = (*path)[:len(*path)-1]
	return "", false
}

// fieldSet is what encoding/json can fill in a struct type: each JSON name
// with the type of its field, and the names by their folded forms.
type fieldSet struct {
	exact  map[string]reflect.Type
	folded map[string]string
}

var fieldSets sync.Map // reflect.Type → *fieldSet

// structFields returns the JSON names of struct type t as encoding/json
// sees them (Fields), by name and by folded name. It is computed once per
// type.
func structFields(t reflect.Type) *fieldSet {
	if fs, ok := fieldSets.Load(t); ok {
		return fs.(*fieldSet)
	}
	fs := &fieldSet{exact: map[string]reflect.Type{}, folded: map[string]string{}}
	for _, f := range Fields(t) {
		fs.exact[f.Name] = f.Type
		if _, ok := fs.folded[foldKey(f.Name)]; !ok { // encoding/json: the first folded match
			fs.folded[foldKey(f.Name)] = f.Name
		}
	}
	actual, _ := fieldSets.LoadOrStore(t, fs)
	return actual.(*fieldSet)
}

// FoldedRPCMember returns the JSON-RPC member name that key (raw, as in the
// body) equals under case folding without being equal to it, if any: Go
// decoders would read "ID" as the id that this package's exact reader does
// not see. It allocates only for keys with escapes or non-ASCII bytes.
func FoldedRPCMember(key []byte) (string, bool) {
	for _, name := range [...]string{"jsonrpc", "id", "method", "params", "result", "error"} {
		if foldsTo(key, name) {
			return name, true
		}
	}
	return "", false
}

// foldsTo reports whether the raw key equals the ASCII name under case
// folding but not exactly.
func foldsTo(key []byte, name string) bool {
	// A letter is at most six bytes as written (a \uXXXX escape), and never
	// fewer than its ASCII form.
	if len(key) < len(name) || len(key) > 6*len(name) || string(key) == name {
		return false
	}
	ascii := true
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii { // as written is as decoded
		if len(key) != len(name) {
			return false
		}
		for i, c := range key {
			if c|0x20 != name[i] || c|0x20 < 'a' || c|0x20 > 'z' {
				return false
			}
		}
		return true
	}
	return strings.EqualFold(Member{Key: key}.Name(), name)
}
