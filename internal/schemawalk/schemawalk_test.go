package schemawalk

import (
	"encoding/json"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Walk visits every schema object below the root, depth first, in the
// order of the keywords' names and then of the names or indices under
// them, with their JSON pointers; data (enum, const, default, examples)
// and draft-07's string-array dependencies are never visited.
func TestWalkVisitsEverySubschemaWithItsPointer(t *testing.T) {
	t.Parallel()
	doc := decode(t, `{
		"properties":{"b":{"items":{"x":1}},"a/~":{}},
		"allOf":[{},true,{"not":{}}],
		"items":[{"y":1}],
		"prefixItems":[{}],
		"$defs":{"d":{}},
		"dependencies":{"p":["q"],"r":{}},
		"additionalProperties":false,
		"enum":[{"type":"integr"}],"const":{"a":{}},"default":{"b":{}},"examples":[{"c":{}}],
		"if":{},"then":{},"else":{},"contains":{},"propertyNames":{},"contentSchema":{},
		"unevaluatedItems":{},"unevaluatedProperties":{},"additionalItems":{},"dependentSchemas":{"s":{}},
		"patternProperties":{"^x":{}},"definitions":{"e":{}},"anyOf":[{}],"oneOf":[{}]
	}`)
	var got []string
	Walk(doc, "", func(ptr string, _ map[string]any) bool {
		got = append(got, ptr)
		return true
	})
	want := []string{"", "/$defs/d", "/additionalItems", "/allOf/0", "/allOf/2", "/allOf/2/not", "/anyOf/0", "/contains", "/contentSchema",
		"/definitions/e", "/dependencies/r", "/dependentSchemas/s", "/else", "/if", "/items/0", "/oneOf/0",
		"/patternProperties/^x", "/prefixItems/0", "/properties/a~1~0", "/properties/b", "/properties/b/items", "/propertyNames", "/then",
		"/unevaluatedItems", "/unevaluatedProperties"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("visited\n%v\nwant\n%v", got, want)
	}
}

// A schema items keyword is one subschema; its array form is several.
func TestWalkItemsBothForms(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		`{"items":{"a":1}}`:            " /items",
		`{"items":[{"a":1},{"b":2}]}`:  " /items/0 /items/1",
		`{"allOf":{"not":"an array"}}`: "",
		`{"properties":[{"a":1}]}`:     "",
	} {
		got := ""
		Walk(decode(t, doc), "", func(ptr string, _ map[string]any) bool {
			if ptr != "" {
				got += " " + ptr
			}
			return true
		})
		if got != want {
			t.Errorf("%s: visited %q, want %q", doc, got, want)
		}
	}
}

// Walk and Children stop when told to, and say so.
func TestWalkStops(t *testing.T) {
	t.Parallel()
	doc := decode(t, `{"allOf":[{"a":1},{"b":2}],"not":{},"properties":{"p":{},"q":{}},"items":[{},{}]}`)
	for stopAt, want := range map[string]string{"": "", "/allOf/0": " /allOf/0", "/allOf/1": " /allOf/0 /allOf/1",
		"/items/0": " /allOf/0 /allOf/1 /items/0", "/not": " /allOf/0 /allOf/1 /items/0 /items/1 /not",
		"/properties/p": " /allOf/0 /allOf/1 /items/0 /items/1 /not /properties/p"} {
		got := ""
		done := Walk(doc, "", func(ptr string, _ map[string]any) bool {
			if ptr != "" {
				got += " " + ptr
			}
			return ptr != stopAt
		})
		if done || got != want {
			t.Errorf("stopping at %q: visited %q (through: %v), want %q", stopAt, got, done, want)
		}
	}
	if !Walk(doc, "", func(string, map[string]any) bool { return true }) {
		t.Error("a walk that is never stopped goes through")
	}
	if !Walk(true, "/x", func(string, map[string]any) bool { t.Error("a boolean schema has nothing to visit"); return false }) {
		t.Error("a boolean schema is walked through")
	}
}

func TestEscape(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"a": "a", "a/b": "a~1b", "~": "~0", "~/": "~0~1", "/~1": "~1~01"} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTypeProblem(t *testing.T) {
	t.Parallel()
	use := `use "array", "boolean", "integer", "null", "number", "object" or "string"`
	for _, tt := range []struct{ typ, want string }{
		{`"integer"`, ""},
		{`"null"`, ""},
		{`["string","null"]`, ""},
		{`["array","boolean","integer","null","number","object","string"]`, ""},
		{`"integr"`, `"integr" is not a JSON Schema type: ` + use},
		{`"Integer"`, `"Integer" is not a JSON Schema type: ` + use},
		{`[]`, `an empty array of types allows no value: ` + use},
		{`["string","intger"]`, `"intger" is not a JSON Schema type: ` + use},
		{`["string",1]`, `must hold type names; item 1 is not a string`},
		{`["string","null","string"]`, `"string" is listed twice`},
		{`5`, `must be a type name or an array of them, not a number`},
		{`true`, `must be a type name or an array of them, not a boolean`},
		{`null`, `must be a type name or an array of them, not null`},
		{`{}`, `must be a type name or an array of them, not an object`},
	} {
		if got := TypeProblem(decode(t, tt.typ)); got != tt.want {
			t.Errorf("TypeProblem(%s) = %q, want %q", tt.typ, got, tt.want)
		}
	}
}

// Children gives every value at a subschema's place, schema or not (a
// caller checking schemas must see what is wrong there), except
// draft-07's dependencies that are lists of names.
func TestChildrenGivesWhatIsAtEachPlace(t *testing.T) {
	t.Parallel()
	s := decode(t, `{"dependencies":{"a":["b"],"c":{}},"properties":{"p":[1],"q":"x"},"not":5}`).(map[string]any)
	var got []string
	Children(s, func(ptr string, c any) bool {
		b, _ := json.Marshal(c)
		got = append(got, ptr+"="+string(b))
		return true
	})
	want := "/dependencies/c={} /not=5 /properties/p=[1] /properties/q=\"x\""
	if strings.Join(got, " ") != want {
		t.Errorf("gave %v, want %s", got, want)
	}
}
