package typed

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// A typed tool's arguments are read three ways: the schema NewTool derives
// (jsonschema-go) checks them, Args.Decode (encoding/json) fills In, and
// the Sensitive pointers (sensitive.go) redact them. The three must name
// the same members. jsonschema-go follows Go's embedding rules and reads
// json tags its own way, so the derived schema is held to encoding/json's
// names (jsonwire.Fields) here, once, when the tool is built.

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// matchJSONNames checks that s, the schema jsonschema-go derived for a
// value of type t, names each struct's members as encoding/json does, and
// describes a field with the ",string" option as the string encoding/json
// reads (jsonschema-go describes its Go type). It panics, naming the tool
// and the struct, when the members differ: a tagged embedded struct (a
// member to encoding/json, promoted fields to the schema), a tag name
// encoding/json ignores, fields that hide each other by encoding/json's
// rules but not Go's.
func matchJSONNames(tool string, t reflect.Type, s *jsonschema.Schema) {
	t = derefType(t)
	if s == nil || decodesItself(t) {
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		matchJSONNames(tool, t.Elem(), s.Items)
	case reflect.Map:
		matchJSONNames(tool, t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
		fields := jsonwire.Fields(t)
		read := make([]string, 0, len(fields))
		for _, f := range fields {
			read = append(read, f.Name)
		}
		described := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			described = append(described, name)
		}
		slices.Sort(read)
		slices.Sort(described)
		if !slices.Equal(read, described) {
			panic(fmt.Sprintf("mcpmw/typed: tool %q: encoding/json reads %s as the members %s, but its derived schema describes %s "+
				"(a tagged embedded struct, a json tag name encoding/json ignores, or fields of one name that hide each other "+
				"differ between the two): change the struct, or build the tool with Func and a schema of your own",
				tool, t, quoteAll(read), quoteAll(described)))
		}
		for _, f := range fields {
			if f.Quoted {
				s.Properties[f.Name] = quotedSchema(s.Properties[f.Name], f.Type)
				continue
			}
			matchJSONNames(tool, f.Type, s.Properties[f.Name])
		}
	}
}

// decodesItself reports whether encoding/json hands a value of type t to
// its own UnmarshalJSON or UnmarshalText, which read what they like.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || p.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// quotedSchema is the schema of a field with the ",string" option, whose
// value is a string holding the JSON of its Go value (null too, for a
// pointer): s, what jsonschema-go derived for the Go type, lends its
// description.
func quotedSchema(s *jsonschema.Schema, t reflect.Type) *jsonschema.Schema {
	q := &jsonschema.Schema{Type: "string"}
	if t.Kind() == reflect.Pointer {
		q = &jsonschema.Schema{Types: []string{"null", "string"}}
	}
	if s != nil {
		q.Description = s.Description
	}
	return q
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "[" + strings.Join(q, " ") + "]"
}
