package mcpmw

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzObjectMembers checks the scanner against encoding/json on any valid
// document: the members, their raw values and decoded keys, lookup,
// duplicateKey, collectMembers, exceedsDepth and unquote.
func FuzzObjectMembers(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}] } `, `{"a\"b":"\\","\u0061":2,"a":3}`,
		`{"s":"é\u00e9\ud83d\ude00\u2028<>&","n":-1.5e-3,"t":true,"z":null}`,
		`[1,2]`, `"str"`, `{"x":` + nested(10) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !json.Valid(doc) || !utf8.Valid(doc) {
			return // the scanner's precondition: parseEnvelope and NewArgs check both
		}
		depth := refDepth(doc)
		for _, limit := range []int{0, 1, 2, 5, depth - 1, depth, maxJSONDepth} {
			if limit < 0 {
				continue
			}
			if got, want := exceedsDepth(doc, limit), depth > limit; got != want {
				t.Fatalf("exceedsDepth(%q, %d) = %v, depth is %d", doc, limit, got, depth)
			}
		}
		ms, ok := objectMembers(doc, nil)
		isObject := kindOf(doc[skipSpace(doc, 0):]) == kindObject
		if ok != isObject {
			t.Fatalf("objectMembers(%q) ok = %v", doc, ok)
		}
		if collected, _ := collectMembers(doc); len(collected) != len(ms) {
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
			if m.keyString() != key || !m.is(key) {
				t.Fatalf("%q: member %d key %q decodes to %q, encoding/json reads %q", doc, i, m.key, m.keyString(), key)
			}
			if !bytes.Equal(m.val, val) {
				t.Fatalf("%q: member %q value %q, encoding/json reads %q", doc, key, m.val, val)
			}
			if first := lookup(ms, key); first == nil || !bytes.Equal(first, firstValue(ms, key)) {
				t.Fatalf("%q: lookup(%q) = %q", doc, key, first)
			}
			if kindOf(val) == kindString {
				var want string
				if err := json.Unmarshal(val, &want); err != nil {
					t.Fatal(err)
				}
				got, ok := unquote(m.val)
				if !ok || got != want {
					t.Fatalf("unquote(%q) = %q, %v; encoding/json reads %q", m.val, got, ok, want)
				}
				checkAppendString(t, got)
			} else if _, ok := unquote(m.val); ok {
				t.Fatalf("unquote(%q) accepted a %s", m.val, kindOf(m.val))
			}
		}
		if got, dup := duplicateKey(ms); got != refDuplicateKey(ms) || dup != (got != "" || refHasDuplicate(ms)) {
			t.Fatalf("%q: duplicateKey = %q, %v; want %q", doc, got, dup, refDuplicateKey(ms))
		}
	})
}

// FuzzAppendString checks appendString against json.Marshal and the round
// trip through unquote.
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
	got := appendString([]byte("prefix"), s)
	if string(got) != "prefix"+string(want) {
		t.Fatalf("appendString(%q) = %s, json.Marshal gives %s", s, got[len("prefix"):], want)
	}
	var ref string
	if err := json.Unmarshal(want, &ref); err != nil {
		t.Fatal(err)
	}
	back, ok := unquote(got[len("prefix"):])
	if !ok || back != ref || !utf8.ValidString(back) || (utf8.ValidString(s) && back != s) {
		t.Fatalf("unquote(appendString(%q)) = %q, %v; want %q", s, back, ok, ref)
	}
}

func firstValue(ms []member, key string) []byte {
	for _, m := range ms {
		if m.keyString() == key {
			return m.val
		}
	}
	return nil
}

func refHasDuplicate(ms []member) bool {
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.keyString()] {
			return true
		}
		seen[m.keyString()] = true
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
