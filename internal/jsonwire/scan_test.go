package jsonwire

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pairs renders members as "key=value" strings, keys still escaped.
func pairs(ms []Member) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, string(m.Key)+"="+string(m.Value))
	}
	return out
}

func TestObjectMembers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, doc string
		want      []string // nil with ok false: not an object
		notObject bool
	}{
		{name: "empty", doc: `{}`, want: []string{}},
		{name: "empty with spaces", doc: " \t\r\n{ \n } \n", want: []string{}},
		{name: "scalars", doc: `{"a":1,"b":true,"c":null,"d":"x","e":-1.5e3}`,
			want: []string{"a=1", "b=true", "c=null", "d=\"x\"", "e=-1.5e3"}},
		{name: "whitespace everywhere", doc: "\n{ \"a\" :\t1 ,\r\n\"b\"\n:\n[ 1 , 2 ] }\t",
			want: []string{"a=1", "b=[ 1 , 2 ]"}},
		{name: "nested values", doc: `{"o":{"x":{"y":[1,{"z":[]}]}},"n":2}`,
			want: []string{`o={"x":{"y":[1,{"z":[]}]}}`, "n=2"}},
		{name: "brackets inside strings", doc: `{"s":"}]{[","o":{"k":"]}"},"n":0}`,
			want: []string{`s="}]{["`, `o={"k":"]}"}`, "n=0"}},
		{name: "escaped quotes inside strings", doc: `{"s":"a\"}b","o":{"k\"":"\"]"},"t":"\\"}`,
			want: []string{`s="a\"}b"`, `o={"k\"":"\"]"}`, `t="\\"`}},
		{name: "escaped key kept raw", doc: `{"m\u0065thod":"x","a\\":1}`,
			want: []string{`m\u0065thod="x"`, `a\\=1`}},
		{name: "duplicates kept in order", doc: `{"a":1,"a":2}`, want: []string{"a=1", "a=2"}},
		{name: "array", doc: `[{"a":1}]`, notObject: true},
		{name: "string", doc: `"{}"`, notObject: true},
		{name: "number", doc: `1`, notObject: true},
		{name: "null", doc: `null`, notObject: true},
		{name: "empty doc", doc: ``, notObject: true},
		{name: "spaces only", doc: `   `, notObject: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ms, ok := ObjectMembers([]byte(tt.doc), nil)
			if tt.notObject {
				assert.False(t, ok)
				assert.Empty(t, ms)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want, pairs(ms))
		})
	}
}

func TestObjectMembersAppends(t *testing.T) {
	t.Parallel()
	dst := []Member{{Key: []byte("pre"), Value: []byte("0")}}
	ms, ok := ObjectMembers([]byte(`{"a":1}`), dst)
	require.True(t, ok)
	assert.Equal(t, []string{"pre=0", "a=1"}, pairs(ms))
}

func TestLookup(t *testing.T) {
	t.Parallel()
	ms, ok := ObjectMembers([]byte(`{"a":1,"\u0062":"two","a":3,"Case":4,"n":null}`), nil)
	require.True(t, ok)
	for _, tt := range []struct{ name, key, want string }{
		{name: "first of duplicates", key: "a", want: "1"},
		{name: "escaped key", key: "b", want: `"two"`},
		{name: "case-sensitive miss", key: "case", want: ""},
		{name: "case-sensitive hit", key: "Case", want: "4"},
		{name: "null value", key: "n", want: "null"},
		{name: "absent", key: "zz", want: ""},
		{name: "escape spelling is not the name", key: `\u0062`, want: ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, string(Lookup(ms, tt.key)))
		})
	}
	assert.Nil(t, Lookup(nil, "a"))
}

func TestMemberKeys(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ key, decoded string }{
		{key: `plain`, decoded: "plain"},
		{key: `m\u0065thod`, decoded: "method"},
		{key: `q\"`, decoded: `q"`},
		{key: `\u00e9\ud83d\ude00`, decoded: "é😀"},
		{key: ``, decoded: ""},
	} {
		t.Run(tt.key, func(t *testing.T) {
			t.Parallel()
			m := Member{Key: []byte(tt.key)}
			assert.Equal(t, tt.decoded, m.Name())
			assert.True(t, m.Is(tt.decoded))
			assert.False(t, m.Is(tt.decoded+"x"))
		})
	}
}

func TestDuplicateKey(t *testing.T) {
	t.Parallel()
	many := func(extra string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range 50 {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		b.WriteString(extra + `"last":0}`)
		return b.String()
	}
	for _, tt := range []struct{ name, doc, dup string }{
		{name: "none", doc: `{"a":1,"b":2}`},
		{name: "empty", doc: `{}`},
		{name: "plain", doc: `{"a":1,"b":2,"a":3}`, dup: "a"},
		{name: "escaped spelling", doc: `{"method":"x","m\u0065thod":"y"}`, dup: "method"},
		{name: "both escaped", doc: `{"\u0061":1,"\u0061":2}`, dup: "a"},
		{name: "case differs", doc: `{"a":1,"A":2}`},
		{name: "many, none", doc: many("")},
		{name: "many, plain", doc: many(`"k7":1,`), dup: "k7"},
		{name: "many, escaped", doc: many(`"k\u0034\u0032":1,`), dup: "k42"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ms, ok := ObjectMembers([]byte(tt.doc), nil)
			require.True(t, ok)
			got, dup := DuplicateKey(ms)
			assert.Equal(t, tt.dup != "", dup)
			assert.Equal(t, tt.dup, got)
		})
	}
}

func TestUnquote(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, in, want string
		ok             bool
	}{
		{name: "plain", in: `"abc"`, want: "abc", ok: true},
		{name: "empty", in: `""`, want: "", ok: true},
		{name: "escapes", in: `"a\"b\\c\/d\n\t\u00e9"`, want: "a\"b\\c/d\n\té", ok: true},
		{name: "surrogate pair", in: `"\ud83d\ude00"`, want: "😀", ok: true},
		{name: "lone surrogate", in: `"\ud83d"`, want: "\uFFFD", ok: true},
		{name: "raw utf-8", in: `"héllo 😀"`, want: "héllo 😀", ok: true},
		{name: "invalid utf-8 replaced", in: "\"a\xffb\"", want: "a\uFFFDb", ok: true},
		{name: "number", in: `5`},
		{name: "null", in: `null`},
		{name: "object", in: `{"a":"b"}`},
		{name: "absent", in: ``},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := Unquote([]byte(tt.in))
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want Kind
		desc string
	}{
		{"", KindNone, "absent"}, {"null", KindNull, "null"}, {"true", KindBool, "a boolean"},
		{"false", KindBool, "a boolean"}, {"-1", KindNumber, "a number"}, {"0.5", KindNumber, "a number"},
		{`"x"`, KindString, "a string"}, {"[]", KindArray, "an array"}, {"{}", KindObject, "an object"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, KindOf([]byte(tt.in)))
			assert.Equal(t, tt.desc, KindOf([]byte(tt.in)).String())
		})
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"", "plain ascii", `quote " and backslash \`, "slash / stays",
		"<script>&amp;</script>", "a>b", "tab\tnew\nline\rcr",
		"\x00\x01\x07\x08\x0b\x0c\x0e\x1f\x7f", "\b\f",
		"héllo wörld", "日本語", "emoji 😀👍🏽", "zwj 👩‍👩‍👧",
		"line\u2028sep\u2029para", "\u2027\u202a",
		"bad \xff utf8", "\xc3", "truncated \xe2\x82", "\xed\xa0\x80 surrogate", "\xf4\x90\x80\x80 beyond",
		"mixed \x00<\xff>\u2028😀\"",
		"\uFFFD already", "\u00a0nbsp", strings.Repeat("long <&> ", 100),
	}
	for i, s := range inputs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			want, err := json.Marshal(s)
			require.NoError(t, err)
			got := AppendString(nil, s)
			assert.Equal(t, string(want), string(got))
			var back string
			require.NoError(t, json.Unmarshal(got, &back))
			assert.Equal(t, string([]rune(s)), back) // one U+FFFD per invalid byte
		})
	}
}

func TestAppendStringAppends(t *testing.T) {
	t.Parallel()
	assert.Equal(t, `{"k":"v\u003c"`, string(AppendString([]byte(`{"k":`), "v<")))
}

func TestDuplicateKeyReportsEarliestRepeat(t *testing.T) {
	t.Parallel()
	// Large objects take the sorting path; it must report the same key the
	// pairwise path would: the earliest member whose key came before.
	var b strings.Builder
	b.WriteString(`{"z":0,"y":0,`)
	for i := range 20 {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	b.WriteString(`"y":1,"z":1,"y":2}`) // y repeats first, although z sorts later and came first
	ms, ok := ObjectMembers([]byte(b.String()), nil)
	require.True(t, ok)
	got, dup := DuplicateKey(ms)
	assert.True(t, dup)
	assert.Equal(t, "y", got)
	assert.Equal(t, got, refDuplicateKey(ms))
}

// refDuplicateKey is duplicateKey's definition, pairwise: the fuzz target and
// the test above compare the sorting implementation against it.
func refDuplicateKey(ms []Member) string {
	for i := 1; i < len(ms); i++ {
		for j := 0; j < i; j++ {
			if ms[i].Name() == ms[j].Name() {
				return ms[i].Name()
			}
		}
	}
	return ""
}

func TestMemberIterAndCollect(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`{}`, ` { } `, `{"a":1}`, `{"a":[1,{"b":2}], "c" : "}" ,"d":{}}`, `[1]`, `"x"`, ``} {
		ms, ok := ObjectMembers([]byte(doc), nil)
		it, itOK := IterMembers([]byte(doc))
		assert.Equal(t, ok, itOK, doc)
		var walked []Member
		for m, more := it.Next(); more; m, more = it.Next() {
			walked = append(walked, m)
		}
		assert.Equal(t, pairs(ms), pairs(walked), doc)
		collected, collectedOK := CollectMembers([]byte(doc))
		assert.Equal(t, ok, collectedOK, doc)
		assert.Equal(t, pairs(ms), pairs(collected), doc)
	}
}

func TestExceedsDepth(t *testing.T) {
	t.Parallel()
	nest := func(n int, open, close string) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	for _, tt := range []struct {
		name string
		doc  string
		want bool
	}{
		{name: "scalar", doc: `1`},
		{name: "at the limit, arrays", doc: nest(8, "[", "]")},
		{name: "over the limit, arrays", doc: nest(9, "[", "]"), want: true},
		{name: "over the limit, objects", doc: strings.Repeat(`{"a":`, 9) + "1" + strings.Repeat("}", 9), want: true},
		{name: "at the limit, mixed", doc: strings.Repeat(`{"a":[`, 4) + strings.Repeat("]}", 4)},
		{name: "wide, not deep", doc: "[" + strings.Repeat("[],", 50) + "[]]"},
		{name: "brackets in strings", doc: `["` + strings.Repeat("[{", 20) + `"]`},
		{name: "escaped quote in string", doc: `["\"[[[[[[[[[[[[", 1]`},
		{name: "escaped backslash ends string", doc: `["\\", ` + nest(8, "[", "]") + `]`, want: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.True(t, json.Valid([]byte(tt.doc)), tt.doc)
			assert.Equal(t, tt.want, ExceedsDepth([]byte(tt.doc), 8))
		})
	}
}

func TestWideObjectsAllocateOnce(t *testing.T) {
	// Not parallel: it counts allocations. Ten thousand members must cost a
	// fixed number of allocations, not one per member or per doubling.
	var b strings.Builder
	b.WriteString("{")
	for i := range 10000 {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	b.WriteString(`"last":0}`)
	doc := []byte(b.String())
	ms, ok := ObjectMembers(doc, nil)
	require.True(t, ok)
	assert.LessOrEqual(t, testing.AllocsPerRun(5, func() { DuplicateKey(ms) }), 4.0, "duplicateKey: one index slice (a few more under -race)")
	collected, ok := CollectMembers(doc)
	require.True(t, ok)
	assert.Equal(t, len(collected), cap(collected), "the members of a wide object fill their slice exactly")
	assert.Equal(t, pairs(ms), pairs(collected))
}

// IterElements walks an array's elements as encoding/json splits them.
func TestElementIter(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`[]`, ` [ ] `, `[1]`, ` [ 1 , "]" ,[2,[3]], {"a":"]"} ,null] `, `[[]]`} {
		var want []json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(doc), &want), doc)
		it, ok := IterElements([]byte(doc))
		require.True(t, ok, doc)
		got := []string{}
		for v, more := it.Next(); more; v, more = it.Next() {
			got = append(got, string(v))
		}
		wantS := []string{}
		for _, v := range want {
			wantS = append(wantS, string(v))
		}
		assert.Equal(t, wantS, got, doc)
	}
	for _, doc := range []string{`{}`, `"[1]"`, ``, `  `, `1`} {
		it, ok := IterElements([]byte(doc))
		assert.False(t, ok, doc)
		_, more := it.Next()
		assert.False(t, more, doc)
	}
}

// A document cut short (which no caller passes: each has parsed its
// request) ends the walk where it ends, without a panic.
func TestElementIterCutShort(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string][]string{
		`[`:       {},
		`[ `:      {},
		`[1`:      {"1"},
		`[1 `:     {"1"},
		`[1,`:     {"1"},
		`[1, `:    {"1"},
		`[1,"a`:   {"1", `"a`},
		`[[1],[2`: {"[1]", "[2"},
	} {
		it, ok := IterElements([]byte(doc))
		require.True(t, ok, doc)
		got := []string{}
		assert.NotPanics(t, func() {
			for v, more := it.Next(); more; v, more = it.Next() {
				got = append(got, string(v))
			}
		}, doc)
		assert.Equal(t, want, got, doc)
	}
}
