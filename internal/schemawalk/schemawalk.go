// Package schemawalk finds the subschemas of a JSON Schema decoded by
// encoding/json (2020-12, and the draft-07 forms 2020-12 replaced), each
// with its JSON pointer, and checks the one keyword both mcpmw and
// mcpmw/typed refuse at registration: "type". It uses the standard
// library only, so the root package may import it.
package schemawalk

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Keywords whose value is one subschema, an object of subschemas by name,
// or an array of subschemas. "items" is either (an array in draft-07),
// "dependencies" holds subschemas and string arrays (draft-07).
var (
	single   = []string{"additionalItems", "additionalProperties", "contains", "contentSchema", "else", "if", "items", "not", "propertyNames", "then", "unevaluatedItems", "unevaluatedProperties"}
	byName   = []string{"$defs", "definitions", "dependencies", "dependentSchemas", "patternProperties", "properties"}
	inArrays = []string{"allOf", "anyOf", "items", "oneOf", "prefixItems"}
)

// Children calls f with each immediate subschema of the schema s, and its
// JSON pointer below s ("/properties/a", "/allOf/0"), in the order of
// the keywords' names and then of the names or indices under them. A
// subschema is any value at a place the keywords give to one (an object or
// a boolean in a valid schema; whatever is there otherwise). Values that
// are data (enum, const, default, examples) are never visited. It stops
// when f returns false, and reports whether it went through.
func Children(s map[string]any, f func(ptr string, c any) bool) bool {
	for _, k := range slices.Sorted(maps.Keys(s)) {
		v := s[k]
		switch arr, isArr := v.([]any); {
		case slices.Contains(inArrays, k) && isArr:
			for i, c := range arr {
				if !f("/"+k+"/"+strconv.Itoa(i), c) {
					return false
				}
			}
		case slices.Contains(single, k):
			if !f("/"+k, v) {
				return false
			}
		case slices.Contains(byName, k):
			m, _ := v.(map[string]any)
			for _, n := range slices.Sorted(maps.Keys(m)) {
				if _, isList := m[n].([]any); k == "dependencies" && isList {
					continue // draft-07: the names another member requires
				}
				if !f("/"+k+"/"+Escape(n), m[n]) {
					return false
				}
			}
		}
	}
	return true
}

// Walk calls f with s, at pointer ptr, and then with every schema object
// below it, depth first, as Children orders them. It stops when f returns
// false, and reports whether it went through.
func Walk(s any, ptr string, f func(ptr string, s map[string]any) bool) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return true // a boolean schema, or no schema: nothing below it
	}
	if !f(ptr, m) {
		return false
	}
	return Children(m, func(p string, c any) bool { return Walk(c, ptr+p, f) })
}

// Escape escapes a name for a JSON pointer (RFC 6901): "~" as "~0", "/"
// as "~1".
func Escape(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// Types are the JSON Schema type names, in the order messages list them.
var Types = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// TypeProblem returns what is wrong with v as the value of "type": it
// must be one of Types, or a non-empty array of distinct ones. It returns
// "" when nothing is.
func TypeProblem(v any) string {
	use := `use "array", "boolean", "integer", "null", "number", "object" or "string"`
	switch v := v.(type) {
	case string:
		if !slices.Contains(Types, v) {
			return strconv.Quote(v) + " is not a JSON Schema type: " + use
		}
		return ""
	case []any:
		if len(v) == 0 {
			return "an empty array of types allows no value: " + use
		}
		for i, t := range v {
			name, ok := t.(string)
			switch {
			case !ok:
				return "must hold type names; item " + strconv.Itoa(i) + " is not a string"
			case !slices.Contains(Types, name):
				return strconv.Quote(name) + " is not a JSON Schema type: " + use
			case slices.Contains(v[:i], t):
				return strconv.Quote(name) + " is listed twice"
			}
		}
		return ""
	}
	return "must be a type name or an array of them, not " + kind(v)
}

// kind names the JSON type of a decoded value.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case map[string]any:
		return "an object"
	}
	return "a value"
}
