package typed

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// Most tools take a flat object: named members of simple types, some
// required, nothing else allowed. Such a schema (what NewTool derives from
// a struct of strings, numbers and booleans) is checked here directly,
// without jsonschema-go, which costs some thirty allocations a call. The
// check is a sound shortcut and no more: arguments it passes conform to
// the schema; arguments it does not pass go through the full validator,
// which finds and words the problem exactly as it would have anyway.

// flatSchema is an object schema made only of properties with a type (and
// numeric bounds), a required list and additionalProperties.
type flatSchema struct {
	props    map[string]flatProp
	required []string
	closed   bool // additionalProperties: false
}

// flatProp is what a flat property allows.
type flatProp struct {
	types    jsonTypes
	min, max *float64
	required bool
}

// jsonTypes is a set of JSON Schema type names.
type jsonTypes uint8

const (
	typeNull jsonTypes = 1 << iota
	typeBoolean
	typeInteger
	typeNumber
	typeString
)

// flatten returns the flat form of the schema raw, or nil when it has any
// keyword beyond those a flat schema may use.
func flatten(raw json.RawMessage) *flatSchema {
	var root map[string]json.RawMessage
	if json.Unmarshal(raw, &root) != nil {
		return nil
	}
	f := &flatSchema{props: map[string]flatProp{}}
	for k, v := range root {
		switch k {
		case "type":
			if string(v) != `"object"` {
				return nil
			}
		case "$schema", "title", "description":
		case "required":
			if json.Unmarshal(v, &f.required) != nil {
				return nil
			}
		case "additionalProperties":
			switch string(bytes.TrimSpace(v)) {
			case "false":
				f.closed = true
			case "true":
			default:
				return nil // a schema for the other members: not flat
			}
		case "properties":
			var props map[string]json.RawMessage
			if json.Unmarshal(v, &props) != nil {
				return nil
			}
			for name, ps := range props {
				p, ok := flattenProp(ps)
				if !ok {
					return nil
				}
				f.props[name] = p
			}
		default:
			return nil
		}
	}
	for _, name := range f.required {
		p, ok := f.props[name]
		if !ok {
			return nil // required but not described: leave it to the validator
		}
		p.required = true
		f.props[name] = p
	}
	return f
}

// flattenProp reads one property's schema, if it is flat.
func flattenProp(raw json.RawMessage) (flatProp, bool) {
	var s map[string]json.RawMessage
	if json.Unmarshal(raw, &s) != nil {
		return flatProp{}, false
	}
	var p flatProp
	for k, v := range s {
		switch k {
		case "title", "description":
		case "type":
			var names []string
			if json.Unmarshal(v, &names) != nil {
				var one string
				if json.Unmarshal(v, &one) != nil {
					return flatProp{}, false
				}
				names = []string{one}
			}
			for _, n := range names {
				t := map[string]jsonTypes{"null": typeNull, "boolean": typeBoolean, "integer": typeInteger, "number": typeNumber, "string": typeString}[n]
				if t == 0 {
					return flatProp{}, false // object, array: not flat
				}
				p.types |= t
			}
		case "minimum", "maximum":
			var n float64
			if json.Unmarshal(v, &n) != nil {
				return flatProp{}, false
			}
			if k == "minimum" {
				p.min = &n
			} else {
				p.max = &n
			}
		default:
			return flatProp{}, false
		}
	}
	return p, p.types != 0
}

// passes reports whether args, a valid JSON object with no repeated member
// (Args has checked both), certainly conforms to the schema. False means
// "not certain": the full validator decides. It walks the members in
// place, allocating nothing; a member name with an escape in it is left to
// the full validator.
func (f *flatSchema) passes(args []byte) bool {
	i := skipSpace(args, 0)
	if i >= len(args) || args[i] != '{' {
		return false
	}
	required := 0
	for i = skipSpace(args, i+1); i < len(args) && args[i] == '"'; {
		end := stringEnd(args, i)
		key := args[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipSpace(args, skipSpace(args, end)+1) // past the colon
		vend := valueEnd(args, i)
		p, known := f.props[string(key)]
		switch {
		case !known && f.closed:
			return false
		case known && !p.allows(args[i:vend]):
			return false
		case known && p.required:
			required++
		}
		if i = skipSpace(args, vend); i < len(args) && args[i] == ',' {
			i = skipSpace(args, i+1)
		}
	}
	return required == len(f.required)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string that starts at b[i].
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the valid JSON value at b[i].
func valueEnd(b []byte, i int) int {
	switch {
	case i >= len(b):
		return i
	case b[i] == '"':
		return stringEnd(b, i)
	case b[i] == '{' || b[i] == '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return len(b)
}

// allows reports whether the value v is one of the property's types,
// within its bounds.
func (p flatProp) allows(v json.RawMessage) bool {
	switch v[0] {
	case 'n':
		return p.types&typeNull != 0
	case 't', 'f':
		return p.types&typeBoolean != 0
	case '"':
		return p.types&typeString != 0
	case '{', '[':
		return false
	}
	n, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(n, 0) {
		return false
	}
	switch {
	case p.types&typeNumber != 0:
	case p.types&typeInteger != 0 && n == math.Trunc(n):
	default:
		return false
	}
	return (p.min == nil || n >= *p.min) && (p.max == nil || n <= *p.max)
}
