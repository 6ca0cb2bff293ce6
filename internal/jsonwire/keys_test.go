package jsonwire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDuplicatePointer(t *testing.T) {
	t.Parallel()
	wide := `{"wide":{` + strings.Repeat(`"k":1,`, 0)
	for i := range 40 {
		wide += `"k` + strings.Repeat("x", i) + `":1,`
	}
	for _, tt := range []struct {
		name, doc, want string
	}{
		{"none", `{"a":1,"b":{"a":1},"c":[{"a":1},{"a":1}]}`, ""},
		{"top level", `{"a":1,"b":2,"a":3}`, "/a"},
		{"nested", `{"o":{"team":"blue","team":"red"}}`, "/o/team"},
		{"in an array", `{"list":[{"a":1},{"b":1,"b":2}]}`, "/list/1/b"},
		{"array of arrays", `{"m":[[],[{"x":1,"x":2}]]}`, "/m/1/0/x"},
		{"escaped spelling", `{"path":"x","p\u0061th":"y"}`, "/path"},
		{"escaped from the first byte", `{"a":1,"\u0061":2}`, "/a"},
		{"escaped from the first byte, wide", wide + `"k":1,"\u006b":2}}`, "/wide/k"},
		{"pointer escapes", `{"a/b":{"c~d":1,"c~d":2}}`, "/a~1b/c~0d"},
		{"keys after a closed object", `{"a":{"x":1},"b":{"x":1},"a":2}`, "/a"},
		{"strings with brackets and quotes", `{"s":"{\"a\":1,\"a\":2}","t":"[","s2":"}"}`, ""},
		{"values that look like keys", `{"a":"a","b":"a"}`, ""},
		{"wide object", wide + `"k":2}}`, "/wide/k"},
		{"wide object, no repeat", wide + `"z":2}}`, ""},
		{"deep", strings.Repeat(`{"d":`, 40) + `{"x":1,"x":2}` + strings.Repeat("}", 40), strings.Repeat("/d", 40) + "/x"},
		{"scalar", `1`, ""},
		{"whitespace", " {\n\"a\" : 1 ,\t\"a\" : 2 } ", "/a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.True(t, json.Valid([]byte(tt.doc)))
			got, found := DuplicatePointer([]byte(tt.doc))
			assert.Equal(t, tt.want != "", found)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDuplicatePointerAllocations(t *testing.T) {
	// Not parallel: it counts allocations.
	small := []byte(`{"name":"echo","arguments":{"message":"hi","o":{"a":[1,{"b":2}]}},"_meta":{"progressToken":1}}`)
	assert.Zero(t, testing.AllocsPerRun(10, func() { DuplicatePointer(small) }), "a request's params cost nothing")
	var b strings.Builder
	b.WriteString("{")
	for i := range 10000 {
		b.WriteString(`"k` + strings.Repeat("y", i%7) + string(rune('a'+i%26)) + `":{"v":1},`)
	}
	b.WriteString(`"last":0}`)
	wide := []byte(b.String())
	assert.LessOrEqual(t, testing.AllocsPerRun(5, func() { DuplicatePointer(wide) }), 4.0, "a wide object: the key list once, the sort's index")
}

func TestCaseTwins(t *testing.T) {
	t.Parallel()
	members := func(doc string) []Member {
		ms, ok := ObjectMembers([]byte(doc), nil)
		require.True(t, ok)
		return ms
	}
	var wide strings.Builder
	wide.WriteString("{")
	for i := range 20 {
		wide.WriteString(`"k` + strings.Repeat("x", i) + `":1,`)
	}
	for _, tt := range []struct {
		name, doc, a, b string
	}{
		{"none", `{"name":"x","arguments":{}}`, "", ""},
		{"exact repeats are not twins", `{"a":1,"a":2}`, "", ""},
		{"name and Name", `{"name":"x","Name":"y"}`, "name", "Name"},
		{"Kelvin sign", `{"kind":1,"\u212aind":2}`, "kind", "\u212aind"},
		{"long s", `{"cursor":1,"curſor":2}`, "cursor", "curſor"},
		{"dotless i is no twin", `{"id":1,"ıd":2}`, "", ""},
		{"escaped from the first byte, first", `{"\u004eame":1,"name":2}`, "Name", "name"},
		{"escaped inside, first", `{"n\u0041me":1,"name":2}`, "nAme", "name"},
		{"escaped exact repeat is no twin", `{"\u0061":1,"a":2}`, "", ""},
		{"wide", wide.String() + `"kxx":1,"KXX":2}`, "kxx", "KXX"},
		{"wide, none", wide.String() + `"z":1}`, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b, found := CaseTwins(members(tt.doc))
			assert.Equal(t, tt.a != "", found)
			assert.Equal(t, tt.a, a)
			assert.Equal(t, tt.b, b)
		})
	}
}

func TestFoldKeyAgreesWithEqualFold(t *testing.T) {
	t.Parallel()
	words := []string{"k", "K", "\u212a", "s", "S", "ſ", "ß", "ẞ", "ss", "Σ", "σ", "ς", "i", "I", "ı", "İ", "region", "REGION", "Région", "rÉgion", "µ", "Μ", "μ", "", "a1", "A1"}
	for _, x := range words {
		for _, y := range words {
			assert.Equal(t, strings.EqualFold(x, y), foldKey(x) == foldKey(y), "%q %q", x, y)
		}
	}
}

func TestFoldsTo(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		key, name string
		want      bool
	}{
		{"id", "id", false},
		{"ID", "id", true},
		{"iD", "id", true},
		{`\u0049D`, "id", true},
		{"ıd", "id", false},
		{"jſonrpc", "jsonrpc", true},
		{"i d", "id", false},
		{"idx", "id", false},
		{"I", "id", false},
		{"1D", "id", false},
		{"Method", "method", true},
		{strings.Repeat("x", 40), "method", false},
	} {
		assert.Equal(t, tt.want, foldsTo([]byte(tt.key), tt.name), "%q vs %q", tt.key, tt.name)
	}
}

type foldInner struct {
	Team string `json:"team"`
}

type foldEmbedded struct {
	Zone string `json:"zone"`
}

type foldOuter struct {
	foldEmbedded
	Region string               `json:"region"`
	Plain  int                  // JSON name "Plain"
	Skip   string               `json:"-"`
	O      foldInner            `json:"o"`
	P      *foldInner           `json:"p"`
	List   []foldInner          `json:"list"`
	Arr    [2]foldInner         `json:"arr"`
	M      map[string]foldInner `json:"m"`
	Any    any                  `json:"any"`
	Raw    json.RawMessage      `json:"raw"`
	hidden string               // an unexported field is never filled
}

// ptrDecoder and valDecoder decode themselves: the walk does not look into
// them, though their fields would fold.
type ptrDecoder struct{ Team string }

func (d *ptrDecoder) UnmarshalJSON([]byte) error { return nil }

type valDecoder struct{ Team string }

func (valDecoder) UnmarshalJSON([]byte) error { return nil }

type selfDecoding struct {
	P  ptrDecoder  `json:"p"`
	PP *ptrDecoder `json:"pp"`
	V  valDecoder  `json:"v"`
	VP *valDecoder `json:"vp"`
	O  foldInner   `json:"o"`
}

func TestFoldedFieldLeavesSelfDecodingValues(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[*selfDecoding]()
	for _, doc := range []string{`{"p":{"team":1}}`, `{"pp":{"team":1}}`, `{"v":{"team":1}}`, `{"vp":{"team":1}}`} {
		_, _, found := FoldedField([]byte(doc), typ)
		assert.False(t, found, doc)
	}
	ptr, want, found := FoldedField([]byte(`{"o":{"TEAM":1}}`), typ)
	assert.True(t, found)
	assert.Equal(t, "/o/TEAM", ptr)
	assert.Equal(t, "team", want)
	_, _, found = FoldedField([]byte(`{"team":1}`), reflect.TypeFor[*ptrDecoder]())
	assert.False(t, found, "the target itself decodes itself")
}

func TestFoldedField(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[*foldOuter]()
	for _, tt := range []struct {
		name, doc, ptr, want string
	}{
		{"exact", `{"region":"us","Plain":1,"zone":"z","o":{"team":"a"}}`, "", ""},
		{"folded top", `{"Region":"eu"}`, "/Region", "region"},
		{"folded Go name", `{"plain":1}`, "/plain", "Plain"},
		{"folded embedded", `{"ZONE":"z"}`, "/ZONE", "zone"},
		{"folded nested", `{"o":{"Team":"red"}}`, "/o/Team", "team"},
		{"folded through a pointer", `{"p":{"TEAM":"red"}}`, "/p/TEAM", "team"},
		{"folded in a slice", `{"list":[{"team":"a"},{"tEam":"b"}]}`, "/list/1/tEam", "team"},
		{"folded in an array", `{"arr":[{"Team":"a"}]}`, "/arr/0/Team", "team"},
		{"folded in a map value", `{"m":{"k/1":{"Team":"a"}}}`, "/m/k~11/Team", "team"},
		{"map keys are exact", `{"m":{"Team":{"team":"a"}}}`, "", ""},
		{"interfaces are exact", `{"any":{"Region":1}}`, "", ""},
		{"raw messages are the tool's", `{"raw":{"Region":1}}`, "", ""},
		{"unknown keys are ignored", `{"other":1,"Skip":"x","hidden":"y"}`, "", ""},
		{"unexported fields are not fields", `{"Hidden":"y"}`, "", ""},
		{"Kelvin sign", "{\"\u212aind\":1,\"o\":{\"\u212aeam\":1}}", "", ""},
		{"long s", `{"o":{"team":"a"},"zone":"z","regıon":"x","Zone":"y"}`, "/Zone", "zone"},
		{"not an object", `[1,2]`, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ptr, want, found := FoldedField([]byte(tt.doc), typ)
			assert.Equal(t, tt.ptr != "", found)
			assert.Equal(t, tt.ptr, ptr)
			assert.Equal(t, tt.want, want)
		})
	}
	_ = foldOuter{}.hidden
	_, _, found := FoldedField([]byte(`{"Region":1}`), reflect.TypeFor[*map[string]any]())
	assert.False(t, found)
}

type embeddedByPointer struct{ Zip string }

type EmbeddedTagged struct{ Inner string }

type embeddedDeep struct {
	Region string `json:"region"` // shadowed by foldOuterEmbeds's own region
	Depth  int    `json:"depth"`
}

type embeddedMiddle struct{ embeddedDeep }

// foldOuterEmbeds embeds structs as encoding/json sees them: by pointer,
// under a tag name (then a named field), and a level deeper.
type foldOuterEmbeds struct {
	*embeddedByPointer
	EmbeddedTagged `json:"tagged"`
	embeddedMiddle
	Region string `json:"region"`
}

func TestStructFieldsFollowEmbedding(t *testing.T) {
	t.Parallel()
	fs := structFields(reflect.TypeFor[foldOuterEmbeds]())
	names := make([]string, 0, len(fs.exact))
	for name := range fs.exact {
		names = append(names, name)
	}
	assert.ElementsMatch(t, []string{"Zip", "tagged", "region", "depth"}, names)
	assert.Equal(t, reflect.TypeFor[string](), fs.exact["region"], "the shallower region wins")
	assert.Equal(t, reflect.TypeFor[EmbeddedTagged](), fs.exact["tagged"], "a tagged embedded struct is a field")
	for _, tt := range []struct{ doc, ptr string }{
		{`{"zip":"1"}`, "/zip"},
		{`{"DEPTH":1}`, "/DEPTH"},
		{`{"tagged":{"inner":"x"}}`, "/tagged/inner"},
		{`{"Zip":"1","depth":2,"tagged":{"Inner":"x"},"region":"eu"}`, ""},
	} {
		ptr, _, found := FoldedField([]byte(tt.doc), reflect.TypeFor[*foldOuterEmbeds]())
		assert.Equal(t, tt.ptr != "", found, tt.doc)
		assert.Equal(t, tt.ptr, ptr, tt.doc)
	}
}
