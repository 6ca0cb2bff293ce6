//lint:file-ignore SA5008 the tags are encoding/json's odd cases on purpose, to hold Fields to them

package jsonwire

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fieldsInner struct {
	Number string `json:"number"`
}

type fieldsUnexported struct {
	Secret string `json:"secret"`
}

type fieldsDeep struct {
	Deep string `json:"deep"`
}

type fieldsTwiceA struct {
	Twice string `json:"twice"`
	fieldsDeep
}

type fieldsViaB struct{ fieldsTwiceA }

type fieldsViaC struct{ fieldsTwiceA }

type fieldsTie1 struct {
	Tie  string
	Left string
}

type fieldsTie2 struct {
	Tie   string
	Right string `json:"Left"`
}

type fieldsUntagged struct{ Name string }

// fieldsTaggedFirst and fieldsUntaggedLater give one name at one depth,
// the tagged field first in field order.
type fieldsTaggedFirst struct {
	Other string `json:"Zed"`
}

type fieldsUntaggedLater struct{ Zed string }

type fieldsTaggedWins struct {
	Other string `json:"Name"`
}

type fieldsNonStruct string

type fieldsNamedPtr *int

// fieldsAll has one field for each of encoding/json's naming rules.
type fieldsAll struct {
	Dash             string         `json:"-,"`       // named "-"
	Skip             string         `json:"-"`        // no member
	N                int            `json:"n,string"` // quoted
	P                *int           `json:"p,omitempty,string"`
	Q                bool           `json:",string"`  // the Go name, quoted
	S                []int          `json:"s,string"` // not quotable
	Bad              string         `json:"a'b"`      // an invalid tag name: the Go name
	Odd              string         `json:"$x-y.z"`   // punctuation encoding/json accepts
	Card             fieldsInner    // a member named as the field
	hidden           string         // unexported
	Named            fieldsNamedPtr `json:"named,string"` // a named pointer type is not followed: not quoted
	fieldsInner                     // promoted: "number"
	fieldsUnexported `json:"u"`     // unexported but a struct, tagged: a member
	*fieldsDeep                     // promoted through a pointer
	fieldsNonStruct                 // unexported, not a struct: no member
}

// fieldsTies embeds structs whose names collide.
type fieldsTies struct {
	fieldsTie1 // the two Tie hide each other, at the same depth, equally tagged;
	fieldsTie2 // Left is fieldsTie2's, the tagged one
	fieldsUntagged
	fieldsTaggedWins // "Name" tagged beats the untagged Name at the same depth
	fieldsTaggedFirst
	fieldsUntaggedLater // "Zed" is fieldsTaggedFirst's, whichever comes first
	fieldsViaB          // fieldsTwiceA embedded twice one level down: its own
	fieldsViaC          // fields hide each other, its embedded ones (deep) do not
}

// TestFieldsAgreeWithEncodingJSON checks Fields against what
// encoding/json writes for the same types: the same members in the same
// order, each from the field at its Index.
func TestFieldsAgreeWithEncodingJSON(t *testing.T) {
	t.Parallel()
	one := 1
	for _, tt := range []struct {
		name  string
		value any
		want  []string
	}{
		{"every rule", fieldsAll{P: &one, fieldsDeep: &fieldsDeep{}, hidden: "h", fieldsNonStruct: "x"},
			[]string{"-", "n", "p", "Q", "s", "Bad", "$x-y.z", "Card", "named", "number", "u", "deep"}},
		{"ties", fieldsTies{}, []string{"Left", "Name", "Zed", "deep"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			typ := reflect.TypeOf(tt.value)
			var names []string
			for _, f := range Fields(typ) {
				names = append(names, f.Name)
				assert.Equal(t, typ.FieldByIndex(f.Index).Type, f.Type, f.Name)
			}
			assert.Equal(t, tt.want, names)
			b, err := json.Marshal(tt.value)
			require.NoError(t, err)
			var written []string
			it, _ := IterMembers(b)
			for m, more := it.Next(); more; m, more = it.Next() {
				written = append(written, m.Name())
			}
			assert.Equal(t, written, names, "encoding/json wrote %s", b)
		})
	}
}

func TestFieldsQuotedAndIndex(t *testing.T) {
	t.Parallel()
	quoted := map[string]bool{}
	tagged := map[string]bool{}
	index := map[string][]int{}
	for _, f := range Fields(reflect.TypeFor[fieldsAll]()) {
		quoted[f.Name] = f.Quoted
		tagged[f.Name] = f.Tagged
		index[f.Name] = f.Index
	}
	assert.Equal(t, map[string]bool{"-": true, "n": true, "p": true, "Q": false, "s": true, "Bad": false, "$x-y.z": true,
		"Card": false, "named": true, "number": true, "u": true, "deep": true}, tagged)
	assert.Equal(t, map[string]bool{"-": false, "n": true, "p": true, "Q": true, "s": false, "Bad": false, "$x-y.z": false,
		"Card": false, "named": false, "number": false, "u": false, "deep": false}, quoted)
	assert.Equal(t, []int{11, 0}, index["number"])
	assert.Equal(t, []int{13, 0}, index["deep"])
	assert.Equal(t, []int{12}, index["u"])

	ties := map[string][]int{}
	for _, f := range Fields(reflect.TypeFor[fieldsTies]()) {
		ties[f.Name] = f.Index
	}
	assert.Equal(t, map[string][]int{"Left": {1, 1}, "Name": {3, 0}, "Zed": {4, 0}, "deep": {6, 0, 1, 0}}, ties)
	var hidden []string
	for _, f := range HiddenFields(reflect.TypeFor[fieldsTies]()) {
		hidden = append(hidden, f.Name+fmt.Sprint(f.Index))
	}
	assert.Equal(t, []string{"Tie[0 0]", "Left[0 1]", "Tie[1 0]", "Name[2 0]", "Zed[5 0]", "twice[6 0 0]", "twice[6 0 0]"}, hidden,
		"the fields hidden, a twice-embedded struct's twice")
	assert.Empty(t, HiddenFields(reflect.TypeFor[fieldsAll]()))

	// Decoding fills the field at Index from the member of its name.
	var v fieldsAll
	require.NoError(t, json.Unmarshal([]byte(`{"-":"d","n":"7","u":{"secret":"s"},"Bad":"b","a'b":"no"}`), &v))
	assert.Equal(t, fieldsAll{Dash: "d", N: 7, Bad: "b", fieldsUnexported: fieldsUnexported{Secret: "s"}}, v)
}

func TestFieldsIsComputedOnce(t *testing.T) {
	t.Parallel()
	a := Fields(reflect.TypeFor[fieldsAll]())
	b := Fields(reflect.TypeFor[fieldsAll]())
	assert.Same(t, &a[0], &b[0])
}

// TestFoldedFieldReadsMembersAsEncodingJSON: FoldedField knows the members
// encoding/json fills (Fields), so a folded spelling of any of them is
// found, and "-," is a name.
func TestFoldedFieldReadsMembersAsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ doc, ptr, want string }{
		{`{"u":{"SECRET":"s"}}`, "/u/SECRET", "secret"}, // an unexported embedded struct with a tag name
		{`{"bad":"x"}`, "/bad", "Bad"},                  // a tag name encoding/json ignores
		{`{"a'b":"x"}`, "", ""},                         // ...is no member
		{`{"N":"1"}`, "/N", "n"},
		{`{"-":"x","Number":"1"}`, "/Number", "number"},
		{`{"Skip":"x"}`, "", ""},
	} {
		ptr, want, found := FoldedField([]byte(tt.doc), reflect.TypeFor[*fieldsAll]())
		assert.Equal(t, tt.ptr != "", found, tt.doc)
		assert.Equal(t, tt.ptr, ptr, tt.doc)
		assert.Equal(t, tt.want, want, tt.doc)
	}
	ptr, want, _ := FoldedField([]byte(`{"LEFT":"x"}`), reflect.TypeFor[*fieldsTies]())
	assert.Equal(t, "/LEFT", ptr)
	assert.Equal(t, "Left", want)
}
