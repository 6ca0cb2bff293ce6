package typed

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// tagKey is the struct tag that marks a field of a tool's In type whose
// value is sensitive: `mcpmw:"sensitive"`.
const tagKey = "mcpmw"

// sensitivePointers returns the JSON pointers (mcpmw.Tool.Sensitive) of the
// fields of t tagged `mcpmw:"sensitive"`, named exactly as encoding/json
// names them (jsonwire.Fields: the json tag's name, "-" for `json:"-,"`,
// else the field's; fields of an untagged embedded struct promoted), at
// any depth: the elements of a slice or array and the values of a map are
// reached through "*" ("/cards/*/number"). A tagged field that is itself a
// struct, slice or map is sensitive whole, and so is every field promoted
// from a tagged embedded struct. It panics, naming the tool and the field,
// on a tag with an option it does not know, and on a sensitive field that
// encoding/json never fills because a field of the same name hides it
// (the secret would arrive in the other, unredacted).
func sensitivePointers(tool string, t reflect.Type) []string {
	var out []string
	collectSensitive(tool, t, "", map[reflect.Type]bool{}, &out)
	return out
}

// collectSensitive appends to out the pointers under prefix, the pointer
// of a value of type t. open holds the structs being walked: a recursive
// type, which NewTool refuses anyway, ends the walk.
func collectSensitive(tool string, t reflect.Type, prefix string, open map[reflect.Type]bool, out *[]string) {
	t = derefType(t)
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		collectSensitive(tool, t.Elem(), prefix+"/*", open, out)
	case reflect.Struct:
		if open[t] {
			return
		}
		open[t] = true
		defer delete(open, t)
		checkTags(tool, t, map[reflect.Type]bool{})
		for _, h := range jsonwire.HiddenFields(t) {
			if f, ok := sensitiveAlong(tool, t, h.Index); ok {
				panic(fmt.Sprintf("mcpmw/typed: tool %q: field %s.%s is tagged %s:\"sensitive\", but encoding/json never fills it: "+
					"another field named %q hides it, and would take the secret unredacted; rename one of them",
					tool, t, f, tagKey, h.Name))
			}
		}
		for _, f := range jsonwire.Fields(t) {
			p := prefix + "/" + escapeToken(f.Name)
			if _, sensitive := sensitiveAlong(tool, t, f.Index); sensitive {
				*out = append(*out, p)
				continue
			}
			collectSensitive(tool, f.Type, p, open, out)
		}
	}
}

// sensitiveAlong reports whether a field on the way to the field of struct
// t at index (a field of an embedded struct, through it) is tagged
// sensitive, and names the one at index (Outer.Inner.Field).
func sensitiveAlong(tool string, t reflect.Type, index []int) (name string, sensitive bool) {
	for i, st := range index {
		if i > 0 {
			t = derefType(t)
			name += "."
		}
		f := t.Field(st)
		name += f.Name
		sensitive = sensitiveTag(tool, t, f) || sensitive
		t = f.Type
	}
	return name, sensitive
}

// checkTags checks the mcpmw tag of every field of struct t and of the
// structs it embeds, members or not: a misspelt option is a mistake
// wherever it is.
func checkTags(tool string, t reflect.Type, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		sensitiveTag(tool, t, f)
		if et := derefType(f.Type); f.Anonymous && et.Kind() == reflect.Struct {
			checkTags(tool, et, seen)
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
