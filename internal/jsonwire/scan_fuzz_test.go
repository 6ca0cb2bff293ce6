package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzObjectMembers checks the scanner against encoding/json on any valid
// document: the members, their raw values and decoded keys, Lookup,
// DuplicateKey, CollectMembers, ExceedsDepth and Unquote.
func FuzzObjectMembers(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}] } `, `{"a\"b":"\\","\u0061":2,"a":3}`,
		`{"s":"é\u00e9\ud83d\ude00\u2028<>&","n":-1.5e-3,"t":true,"z":null}`,
		`[1,2]`, `"str"`, `{"x":` + strings.Repeat(`{"a":`, 10) + "1" + strings.Repeat("}", 10) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !json.Valid(doc) || !utf8.Valid(doc) {
			return // the scanner's precondition: the root's parseEnvelope and NewArgs check both
		}
		depth := refDepth(doc)
		for _, limit := range []int{0, 1, 2, 5, depth - 1, depth, 128} { // 128: the root's maxJSONDepth
			if limit < 0 {
				continue
			}
			if got, want := ExceedsDepth(doc, limit), depth > limit; got != want {
				t.Fatalf("exceedsDepth(%q, %d) = %v, depth is %d", doc, limit, got, depth)
			}
		}
		ms, ok := ObjectMembers(doc, nil)
		isObject := KindOf(doc[SkipSpace(doc, 0):]) == KindObject
		if ok != isObject {
			t.Fatalf("objectMembers(%q) ok = %v", doc, ok)
		}
		if collected, _ := CollectMembers(doc); len(collected) != len(ms) {
			t.Fatalf("collectMembers(%q) found %d members, objectMembers %d", doc, len(collected), len(ms))
		}
		if !ok {
			return
		}
		// Walk the object with encoding/json's tokenizer: keys decoded,
		// values raw, in order.
		dec := json.NewDecoder(bytes.NewReader(doc))
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		for i := 0; dec.More(); i++ {
			tok, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			var val json.RawMessage
			if err := dec.Decode(&val); err != nil {
				t.Fatal(err)
			}
			if i >= len(ms) {
				t.Fatalf("%q: encoding/json sees more than %d members", doc, len(ms))
			}
			key := tok.(string)
			m := ms[i]
			if m.Name() != key || !m.Is(key) {
				t.Fatalf("%q: member %d key %q decodes to %q, encoding/json reads %q", doc, i, m.Key, m.Name(), key)
			}
			if !bytes.Equal(m.Value, val) {
				t.Fatalf("%q: member %q value %q, encoding/json reads %q", doc, key, m.Value, val)
			}
			if first := Lookup(ms, key); first == nil || !bytes.Equal(first, firstValue(ms, key)) {
				t.Fatalf("%q: lookup(%q) = %q", doc, key, first)
			}
			if KindOf(val) == KindString {
				var want string
				if err := json.Unmarshal(val, &want); err != nil {
					t.Fatal(err)
				}
				got, ok := Unquote(m.Value)
				if !ok || got != want {
					t.Fatalf("unquote(%q) = %q, %v; encoding/json reads %q", m.Value, got, ok, want)
				}
				checkAppendString(t, got)
			} else if _, ok := Unquote(m.Value); ok {
				t.Fatalf("unquote(%q) accepted a %s", m.Value, KindOf(m.Value))
			}
		}
		if got, dup := DuplicateKey(ms); got != refDuplicateKey(ms) || dup != (got != "" || refHasDuplicate(ms)) {
			t.Fatalf("%q: duplicateKey = %q, %v; want %q", doc, got, dup, refDuplicateKey(ms))
		}
	})
}

// FuzzAppendString checks AppendString against json.Marshal and the round
// trip through Unquote.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href='x'>&amp;</a>", "\x00\x1f\x7f", "é😀\u2028\u2029", "bad \xff\xfe", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkAppendString(t, s) })
}

func checkAppendString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	got := AppendString([]byte("prefix"), s)
	if string(got) != "prefix"+string(want) {
		t.Fatalf("appendString(%q) = %s, json.Marshal gives %s", s, got[len("prefix"):], want)
	}
	var ref string
	if err := json.Unmarshal(want, &ref); err != nil {
		t.Fatal(err)
	}
	back, ok := Unquote(got[len("prefix"):])
	if !ok || back != ref || !utf8.ValidString(back) || (utf8.ValidString(s) && back != s) {
		t.Fatalf("unquote(appendString(%q)) = %q, %v; want %q", s, back, ok, ref)
	}
}

// refDepth is the nesting depth of a valid JSON document, counted by
// encoding/json's tokenizer: the reference ExceedsDepth is checked against.
func refDepth(doc []byte) int {
	dec := json.NewDecoder(bytes.NewReader(doc))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) || err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if depth++; depth > deepest {
				deepest = depth
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

func firstValue(ms []Member, key string) []byte {
	for _, m := range ms {
		if m.Name() == key {
			return m.Value
		}
	}
	return nil
}

func refHasDuplicate(ms []Member) bool {
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.Name()] {
			return true
		}
		seen[m.Name()] = true
	}
	return false
}

// FuzzStringEnd checks the quote-to-quote stringEnd against the plain
// byte loop it replaced, on any input (valid JSON or not): both must find
// the same end.
func FuzzStringEnd(f *testing.F) {
	for _, s := range []string{`""`, `"a"`, `"a\"b"`, `"\\"`, `"\\\""x"`, `"\\\\"`, `"abc`, `"\`, `"x\\\\\"y"z`} {
		f.Add([]byte(s))
	}
	byteLoop := func(doc []byte, i int) int {
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
	f.Fuzz(func(t *testing.T, doc []byte) {
		for i := range doc {
			if doc[i] != '"' {
				continue
			}
			got, want := stringEnd(doc, i), min(byteLoop(doc, i), len(doc))
			if got != want {
				t.Fatalf("stringEnd(%q, %d) = %d, the byte loop says %d", doc, i, got, want)
			}
		}
	})
}

// FuzzElements checks IterElements against encoding/json: the same
// elements, byte for byte, of every valid array, and no array otherwise.
func FuzzElements(f *testing.F) {
	for _, s := range []string{`[]`, ` [ 1 , "]" ,[2,[3]], {"a":"]"} ,null] `, `["\"]",true]`, `{}`, `"["`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !json.Valid(doc) || !utf8.Valid(doc) {
			return // the scanner's precondition
		}
		var want []json.RawMessage
		isArray := KindOf(doc[SkipSpace(doc, 0):]) == KindArray
		it, ok := IterElements(doc)
		if ok != isArray {
			t.Fatalf("IterElements(%q) ok = %v", doc, ok)
		}
		if !ok {
			return
		}
		if err := json.Unmarshal(doc, &want); err != nil {
			t.Fatal(err)
		}
		n := 0
		for v, more := it.Next(); more; v, more = it.Next() {
			if n >= len(want) || !bytes.Equal(v, want[n]) {
				t.Fatalf("IterElements(%q) element %d = %q", doc, n, v)
			}
			n++
		}
		if n != len(want) {
			t.Fatalf("IterElements(%q) found %d elements, encoding/json %d", doc, n, len(want))
		}
	})
}
