package typed

import (
	"fmt"
	"reflect"
	"strings"
)

// tagKey is the struct tag that marks a field of a tool's In type whose
// value is sensitive: `mcpmw:"sensitive"`.
const tagKey = "mcpmw"

// sensitivePointers returns the JSON pointers (mcpmw.Tool.Sensitive) of the
// fields of t tagged `mcpmw:"sensitive"`, named as encoding/json names them
// (the json tag's name, else the field's; fields of an embedded struct
// promoted), at any depth: the elements of a slice or array and the values
// of a map are reached through "*" ("/cards/*/number"). A tagged field
// that is itself a struct, slice or map is sensitive whole. It panics,
// naming the tool and the field, on a tag with an option it does not know.
func sensitivePointers(tool string, t reflect.Type) []string {
	var out []string
	collectSensitive(tool, t, "", false, map[reflect.Type]bool{}, &out)
	return out
}

// collectSensitive appends to out the pointers under prefix, the pointer
// of a value of type t; all marks every field of a struct sensitive (an
// embedded struct that was tagged). open holds the structs being walked:
// a recursive type, which NewTool refuses anyway, ends the walk.
func collectSensitive(tool string, t reflect.Type, prefix string, all bool, open map[reflect.Type]bool, out *[]string) {
	t = derefType(t)
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		collectSensitive(tool, t.Elem(), prefix+"/*", false, open, out)
	case reflect.Struct:
		if open[t] {
			return
		}
		open[t] = true
		defer delete(open, t)
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			sensitive := all || sensitiveTag(tool, t, f)
			if f.Anonymous && name == "" && derefType(f.Type).Kind() == reflect.Struct {
				collectSensitive(tool, f.Type, prefix, sensitive, open, out) // promoted fields
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := prefix + "/" + escapeToken(name)
			if sensitive {
				*out = append(*out, p)
				continue
			}
			collectSensitive(tool, f.Type, p, false, open, out)
		}
	}
}

// sensitiveTag reports whether field f of struct t is tagged sensitive,
// and panics on an option other than "sensitive": a misspelt one would
// leave a secret unredacted without a word.
func sensitiveTag(tool string, t reflect.Type, f reflect.StructField) bool {
	tag, ok := f.Tag.Lookup(tagKey)
	if !ok {
		return false
	}
	sensitive := false
	for _, opt := range strings.Split(tag, ",") {
		if opt != "sensitive" {
			panic(fmt.Sprintf("mcpmw/typed: tool %q: field %s.%s: tag %s:%q has the option %q; the one option is \"sensitive\"",
				tool, t, f.Name, tagKey, tag, opt))
		}
		sensitive = true
	}
	return sensitive
}
