package typed

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/echo"
)

// jsonschema-go reports a failure as a chain of the schema paths it went
// through ("validating root: validating /properties/a/items: minimum: …")
// and says nothing of where in the value it was. The functions here follow
// that chain down the value, to name the failing argument by its JSON
// pointer, and word the problem themselves: the library's own text quotes
// the client's value whole.

// argError turns a validation failure of inst into an ArgError naming the
// failing value.
func (v *validator) argError(err error, inst any) *mcpmw.ArgError {
	paths, leaf := splitChain(err.Error())
	ptr, cur := "", inst
	s, sPath := v.byPath["root"], "" // the schema reached, and its path ("" for the root)
	located := len(paths) > 0 && v.byPath[paths[0]] == s
	for i := 1; located && i < len(paths); i++ {
		next := v.byPath[paths[i]]
		if next == nil {
			located = false
			break
		}
		if step, under := strings.CutPrefix(paths[i], sPath+"/"); under && childAt(s, step) == next {
			tok, val, same, ok := v.descend(paths[i], step, s, sPath, cur)
			if !ok {
				located = false
				break
			}
			if !same {
				ptr += "/" + escapeToken(tok)
				cur = val
			}
		} // else a $ref: the same value against the schema it refers to
		s, sPath = next, paths[i]
	}
	kw := keyword(leaf)
	if !located {
		return &mcpmw.ArgError{Field: field(ptr), Problem: "does not match the schema" + keywordNote(kw)}
	}
	switch kw {
	case "required":
		if name, ok := firstMissing(s, cur); ok {
			return &mcpmw.ArgError{Field: field(ptr + "/" + escapeToken(name)), Problem: "is required"}
		}
	case "additionalProperties":
		if name, ok := v.firstUnknown(sPath, s, cur); ok {
			return &mcpmw.ArgError{Field: field(ptr + "/" + escapeToken(name)), Problem: unknownProblem(s, name)}
		}
	}
	return &mcpmw.ArgError{Field: field(ptr), Problem: problem(kw, s, cur)}
}

// childAt returns the subschema of s that validation applies at path step
// ("properties/a", "items"), or nil; $defs are only reached through a $ref.
func childAt(s *jsonschema.Schema, step string) *jsonschema.Schema {
	name, key, hasKey := strings.Cut(step, "/")
	switch name {
	case "$defs", "definitions":
		return nil
	case "properties", "patternProperties", "dependentSchemas", "dependencies":
		return mapField(s, name)[unescapeToken(key)]
	case "allOf", "anyOf", "oneOf", "prefixItems":
		return indexOf(sliceField(s, name), key)
	case "items":
		if hasKey {
			return indexOf(s.ItemsArray, key)
		}
		return s.Items
	}
	if hasKey {
		return nil
	}
	return singleField(s, name)
}

// splitChain splits jsonschema-go's error text into the schema paths it
// names and the final message.
func splitChain(msg string) (paths []string, leaf string) {
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			return paths, msg
		}
		i := strings.Index(rest, ": ")
		if i < 0 {
			return paths, msg
		}
		paths = append(paths, rest[:i])
		msg = rest[i+2:]
	}
}

// descend follows one step of the schema path from parent (at path) down
// the value cur: to the named member or item, to the first unnamed one that
// fails the subschema, or nowhere (same) for an in-place applicator. ok is
// false when the step cannot be followed.
func (v *validator) descend(path, step string, parent *jsonschema.Schema, parentPath string, cur any) (tok string, val any, same, ok bool) {
	name, key, _ := strings.Cut(step, "/")
	switch name {
	case "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies":
		return "", nil, true, true
	case "properties":
		m, isObj := cur.(map[string]any)
		key = unescapeToken(key)
		val, ok = m[key]
		return key, val, false, isObj && ok
	case "prefixItems", "items":
		arr, isArr := cur.([]any)
		if !isArr {
			return "", nil, false, false
		}
		if key != "" {
			n, err := strconv.Atoi(key)
			if err != nil || n < 0 || n >= len(arr) {
				return "", nil, false, false
			}
			return key, arr[n], false, true
		}
		start := len(parent.PrefixItems)
		return v.firstFailingItem(path, arr, start)
	case "additionalItems":
		arr, isArr := cur.([]any)
		if !isArr {
			return "", nil, false, false
		}
		return v.firstFailingItem(path, arr, len(parent.ItemsArray))
	case "additionalProperties", "patternProperties":
		m, isObj := cur.(map[string]any)
		rs := v.alone[path]
		if !isObj || rs == nil {
			return "", nil, false, false
		}
		for _, k := range sortedKeys(m) {
			if name == "additionalProperties" && v.named(parentPath, parent, k) {
				continue
			}
			if name == "patternProperties" && !v.matches(parentPath, unescapeToken(key), k) {
				continue
			}
			if rs.Validate(m[k]) != nil {
				return k, m[k], false, true
			}
		}
	}
	return "", nil, false, false
}

func (v *validator) firstFailingItem(path string, arr []any, start int) (string, any, bool, bool) {
	rs := v.alone[path]
	if rs == nil {
		return "", nil, false, false
	}
	for i := start; i < len(arr); i++ {
		if rs.Validate(arr[i]) != nil {
			return strconv.Itoa(i), arr[i], false, true
		}
	}
	return "", nil, false, false
}

// named reports whether member k of an object is one that s's properties
// or patternProperties cover.
func (v *validator) named(path string, s *jsonschema.Schema, k string) bool {
	if _, ok := s.Properties[k]; ok {
		return true
	}
	for _, re := range v.patterns[path] {
		if re.MatchString(k) {
			return true
		}
	}
	return false
}

func (v *validator) matches(path, pattern, k string) bool {
	for _, re := range v.patterns[path] {
		if re.String() == pattern {
			return re.MatchString(k)
		}
	}
	return false
}

// firstUnknown returns the first member of cur, in sorted order, that s
// does not name.
func (v *validator) firstUnknown(path string, s *jsonschema.Schema, cur any) (string, bool) {
	m, _ := cur.(map[string]any)
	for _, k := range sortedKeys(m) {
		if !v.named(path, s, k) {
			return k, true
		}
	}
	return "", false
}

func unknownProblem(s *jsonschema.Schema, name string) string {
	for p := range s.Properties {
		if strings.EqualFold(p, name) {
			return "is not an argument name: names are case-sensitive (the tool reads " + strconv.Quote(echo.Cap(p)) + ")"
		}
	}
	return "is not allowed: the schema has no such member"
}

// firstMissing returns the first of s's required members, in the schema's
// order, that cur lacks.
func firstMissing(s *jsonschema.Schema, cur any) (string, bool) {
	m, _ := cur.(map[string]any)
	for _, r := range s.Required {
		if _, ok := m[r]; !ok {
			return r, true
		}
	}
	return "", false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// field names the value at JSON pointer ptr the way mcpmw.ArgError does: a
// top-level argument by its name, a nested value by its pointer, the whole
// arguments by "".
func field(ptr string) string {
	if strings.LastIndexByte(ptr, '/') != 0 {
		return ptr
	}
	return unescapeToken(ptr[1:])
}

// keyword returns the schema keyword a jsonschema-go message starts with
// ("minimum: 0 is less than 1" → "minimum").
func keyword(leaf string) string {
	if strings.HasPrefix(leaf, "unexpected additional properties") {
		return "additionalProperties"
	}
	i := 0
	for i < len(leaf) && ('a' <= leaf[i] && leaf[i] <= 'z' || 'A' <= leaf[i] && leaf[i] <= 'Z') {
		i++
	}
	if i == 0 || i == len(leaf) || (leaf[i] != ':' && leaf[i] != '[') {
		return ""
	}
	return leaf[:i]
}

func keywordNote(kw string) string {
	if kw == "" {
		return ""
	}
	return " (" + kw + ")"
}

// problem words the failure of keyword kw of schema s on value cur; it
// quotes the schema, never the value.
func problem(kw string, s *jsonschema.Schema, cur any) string {
	num := func(p *float64) string { return strconv.FormatFloat(*p, 'g', -1, 64) }
	count := func(p *int, one, many string) string {
		if *p == 1 {
			return "1 " + one
		}
		return strconv.Itoa(*p) + " " + many
	}
	switch {
	case kw == "type" && (s.Type != "" || len(s.Types) > 0):
		types := s.Types
		if s.Type != "" {
			types = []string{s.Type}
		}
		want := make([]string, len(types))
		for i, t := range types {
			want[i] = article(t)
		}
		return "must be " + strings.Join(want, " or ") + ", not " + kindOf(cur)
	case kw == "minimum" && s.Minimum != nil:
		return "must be >= " + num(s.Minimum)
	case kw == "maximum" && s.Maximum != nil:
		return "must be <= " + num(s.Maximum)
	case kw == "exclusiveMinimum" && s.ExclusiveMinimum != nil:
		return "must be > " + num(s.ExclusiveMinimum)
	case kw == "exclusiveMaximum" && s.ExclusiveMaximum != nil:
		return "must be < " + num(s.ExclusiveMaximum)
	case kw == "multipleOf" && s.MultipleOf != nil:
		return "must be a multiple of " + num(s.MultipleOf)
	case kw == "minLength" && s.MinLength != nil:
		return "must be at least " + count(s.MinLength, "character", "characters") + " long"
	case kw == "maxLength" && s.MaxLength != nil:
		return "must be at most " + count(s.MaxLength, "character", "characters") + " long"
	case kw == "pattern":
		return "must match the pattern " + strconv.Quote(echo.Cap(s.Pattern))
	case kw == "enum":
		return "must be one of " + echo.Cap(compactJSON(s.Enum))
	case kw == "const" && s.Const != nil:
		return "must be " + echo.Cap(compactJSON(*s.Const))
	case kw == "minItems" && s.MinItems != nil:
		return "must have at least " + count(s.MinItems, "item", "items")
	case kw == "maxItems" && s.MaxItems != nil:
		return "must have at most " + count(s.MaxItems, "item", "items")
	case kw == "uniqueItems":
		return "must not hold two equal items"
	case kw == "minProperties" && s.MinProperties != nil:
		return "must have at least " + count(s.MinProperties, "member", "members")
	case kw == "maxProperties" && s.MaxProperties != nil:
		return "must have at most " + count(s.MaxProperties, "member", "members")
	case kw == "required":
		return "lacks a required member"
	case kw == "additionalProperties":
		return "has a member the schema does not allow"
	case kw == "dependentRequired":
		return "lacks a member that another of its members requires"
	}
	return "does not match the schema" + keywordNote(kw)
}

// article puts "a" or "an" before a type name: "an integer", "a string";
// null is named alone.
func article(t string) string {
	switch {
	case t == "null":
		return "null"
	case t != "" && strings.ContainsRune("aeiou", rune(t[0])):
		return "an " + t
	}
	return "a " + t
}

// kindOf names the JSON type of a value decoded by encoding/json.
func kindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		if v == float64(int64(v)) {
			return "an integer"
		}
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a value"
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}
