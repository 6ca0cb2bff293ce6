package typed

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpmw/mcpmw/internal/echo"
)

// maxSubschemas bounds the size of a schema with every $ref expanded in
// place. Validation applies each such subschema to each argument value at
// most once, so this times the number of values in the arguments (bounded
// by the handler's MaxBodyBytes) bounds the work of one validation.
const maxSubschemas = 1000

// A validator is a schema compiled once: the resolved schema, and what it
// takes to name the argument value that fails it (see problem.go).
type validator struct {
	tool, field string
	rs          *jsonschema.Resolved
	// byPath maps the schema paths jsonschema-go puts in its errors
	// ("root", "/properties/a/items") to the subschemas.
	byPath map[string]*jsonschema.Schema
	// alone holds the subschemas that apply to array items or object
	// members not named in the schema, each resolved on its own, to find
	// which item or member fails (nil where that is not possible).
	alone map[string]*jsonschema.Resolved
	// patterns holds the compiled patternProperties of each schema path.
	patterns map[string][]*regexp.Regexp
	// flat is the schema's flat form, when it has one (see flat.go).
	flat *flatSchema
}

var noArgsSchema = json.RawMessage(`{"type":"object","additionalProperties":false}`)

// compile parses and resolves a tool's schema, or panics with a message
// naming the tool and the field: a schema that is not JSON Schema (by the
// meta-schema of its dialect), that allows no value (satisfiable.go), that
// refers to anything outside itself, that is recursive or that expands to
// more than maxSubschemas is a setup mistake. The message names the
// keyword at fault by its JSON pointer ("/properties/n/minimum").
func compile(tool, field string, raw json.RawMessage, wantObject bool) *validator {
	fail := func(format string, a ...any) {
		panic(fmt.Sprintf("mcpmw/typed: tool %q: %s: %s", tool, field, fmt.Sprintf(format, a...)))
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		fail("not a JSON Schema: %v", err)
	}
	top, _ := doc.(map[string]any)
	declared, _ := top["$schema"].(string)
	d, ok := dialectOf(declared)
	if !ok {
		fail("$schema %q is not supported: use 2020-12 (or leave $schema out)", echo.Cap(fmt.Sprint(top["$schema"])))
	}
	if ptr, problem, bad := metaProblem(d, doc); bad {
		fail("%s: %s", pointerName(ptr), problem)
	}
	if ptr, problem, bad := unsatisfiable(doc); bad {
		fail("%s: %s", pointerName(ptr), problem)
	}
	root := new(jsonschema.Schema)
	if err := json.Unmarshal(raw, root); err != nil {
		fail("not a JSON Schema: %v", err) // the meta-schema let through what jsonschema-go cannot hold
	}
	if wantObject && root.Type != "object" {
		fail(`must have "type": "object" at its root`)
	}
	v := &validator{tool: tool, field: field, byPath: map[string]*jsonschema.Schema{}, alone: map[string]*jsonschema.Resolved{},
		patterns: map[string][]*regexp.Regexp{}}
	if err := v.index(root, "", root); err != nil {
		fail("%v", err)
	}
	if _, err := expandedSize(root, root, map[*jsonschema.Schema]int{}, map[*jsonschema.Schema]bool{}); err != nil {
		fail("%v", err)
	}
	rs, err := root.Resolve(&jsonschema.ResolveOptions{Loader: refuseRemote})
	if err != nil {
		fail("%v", err)
	}
	v.rs = rs
	v.byPath["root"] = root
	if root.ID != "" {
		v.byPath[root.ID] = root // jsonschema-go names a schema with an $id by it
	}
	for path, s := range v.byPath {
		if !appliesToUnnamed(path) {
			continue
		}
		// Resolved on its own, with the root's definitions beside it, so
		// that "#/$defs/x" still resolves; anything else it refers to
		// leaves it nil and the error names the enclosing value.
		w := &jsonschema.Schema{Schema: root.Schema, Defs: cloneAll(root.Defs), Definitions: cloneAll(root.Definitions),
			AllOf: []*jsonschema.Schema{s.CloneSchemas()}}
		v.alone[path], _ = w.Resolve(&jsonschema.ResolveOptions{Loader: refuseRemote})
	}
	return v
}

// pointerName is a JSON pointer as messages show it: "" is the root.
func pointerName(ptr string) string {
	if ptr == "" {
		return "the root"
	}
	return ptr
}

// refuseRemote is the loader jsonschema-go calls for a $ref outside the
// schema. compile refuses such refs before it gets there; this keeps it so.
func refuseRemote(u *url.URL) (*jsonschema.Schema, error) {
	return nil, fmt.Errorf("remote $ref %q: schemas are never fetched", u)
}

// appliesToUnnamed reports whether the subschema at path applies to array
// items or object members that its path does not name.
func appliesToUnnamed(path string) bool {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return false
	}
	switch last := path[i+1:]; last {
	case "items", "additionalItems", "additionalProperties":
		return true
	default:
		j := strings.LastIndexByte(path[:i], '/')
		return j >= 0 && path[j+1:i] == "patternProperties"
	}
}

func cloneAll(m map[string]*jsonschema.Schema) map[string]*jsonschema.Schema {
	if m == nil {
		return nil
	}
	c := make(map[string]*jsonschema.Schema, len(m))
	for k, s := range m {
		c[k] = s.CloneSchemas()
	}
	return c
}

// index records s and its subschemas by path, compiles patternProperties,
// and refuses what this package does not follow: a $ref that is not a
// JSON pointer into this schema, $dynamicRef, and $id below the root (it
// would change what "#/..." means under it).
func (v *validator) index(s *jsonschema.Schema, path string, root *jsonschema.Schema) error {
	at := path
	if at == "" {
		at = "the root"
	}
	if s == nil {
		return fmt.Errorf("nil subschema at %s", at)
	}
	if path != "" {
		v.byPath[path] = s
		if s.ID != "" {
			return fmt.Errorf("$id %q at %s: $id is only supported at the root", s.ID, at)
		}
	}
	if s.DynamicRef != "" {
		return fmt.Errorf("$dynamicRef at %s is not supported", at)
	}
	if s.Ref != "" {
		if _, err := refTarget(root, s.Ref); err != nil {
			return fmt.Errorf("$ref %q at %s: %w", s.Ref, at, err)
		}
	}
	if len(s.PatternProperties) > 0 {
		for re := range s.PatternProperties {
			c, err := regexp.Compile(re)
			if err != nil {
				return fmt.Errorf("patternProperties %q at %s: %v", re, at, err)
			}
			v.patterns[path] = append(v.patterns[path], c)
		}
	}
	var err error
	eachChild(s, func(step string, c *jsonschema.Schema, _ bool) bool {
		err = v.index(c, path+"/"+step, root)
		return err == nil
	})
	return err
}

// refTarget returns the subschema of root that ref, a JSON pointer
// fragment ("#" or "#/$defs/name"), refers to.
func refTarget(root *jsonschema.Schema, ref string) (*jsonschema.Schema, error) {
	frag, local := strings.CutPrefix(ref, "#")
	switch {
	case !local:
		return nil, errors.New(`only references within the schema ("#/...") are supported; remote schemas are never fetched`)
	case frag != "" && frag[0] != '/':
		return nil, errors.New(`anchors are not supported: refer by JSON pointer ("#/$defs/name")`)
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, err
	}
	s := root
	tokens := strings.Split(frag, "/")[1:]
	for i := 0; i < len(tokens); i++ {
		var next *jsonschema.Schema
		name := tokens[i]
		var key string
		if i+1 < len(tokens) {
			key = unescapeToken(tokens[i+1])
		}
		switch name {
		case "properties", "patternProperties", "dependentSchemas", "$defs", "definitions", "dependencies":
			next = mapField(s, name)[key]
			i++
		case "allOf", "anyOf", "oneOf", "prefixItems":
			next = indexOf(sliceField(s, name), key)
			i++
		case "items":
			if s.ItemsArray != nil {
				next = indexOf(s.ItemsArray, key)
				i++
			} else {
				next = s.Items
			}
		default:
			next = singleField(s, name)
		}
		if next == nil {
			return nil, errors.New("it refers to nothing in the schema")
		}
		s = next
	}
	return s, nil
}

func indexOf(ss []*jsonschema.Schema, tok string) *jsonschema.Schema {
	n, err := strconv.Atoi(tok)
	if err != nil || n < 0 || n >= len(ss) {
		return nil
	}
	return ss[n]
}

func unescapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
}

func escapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

func mapField(s *jsonschema.Schema, name string) map[string]*jsonschema.Schema {
	switch name {
	case "properties":
		return s.Properties
	case "patternProperties":
		return s.PatternProperties
	case "dependentSchemas":
		return s.DependentSchemas
	case "$defs":
		return s.Defs
	case "definitions":
		return s.Definitions
	case "dependencies":
		return s.DependencySchemas
	}
	return nil
}

func sliceField(s *jsonschema.Schema, name string) []*jsonschema.Schema {
	switch name {
	case "allOf":
		return s.AllOf
	case "anyOf":
		return s.AnyOf
	case "oneOf":
		return s.OneOf
	case "prefixItems":
		return s.PrefixItems
	}
	return nil
}

func singleField(s *jsonschema.Schema, name string) *jsonschema.Schema {
	switch name {
	case "additionalItems":
		return s.AdditionalItems
	case "additionalProperties":
		return s.AdditionalProperties
	case "contains":
		return s.Contains
	case "propertyNames":
		return s.PropertyNames
	case "not":
		return s.Not
	case "if":
		return s.If
	case "then":
		return s.Then
	case "else":
		return s.Else
	case "unevaluatedItems":
		return s.UnevaluatedItems
	case "unevaluatedProperties":
		return s.UnevaluatedProperties
	case "contentSchema":
		return s.ContentSchema
	}
	return nil
}

// eachChild calls f with each subschema of s and its path step as
// jsonschema-go writes it ("properties/a", "allOf/0", "not"); applied is
// false for the ones validation never applies in place ($defs,
// definitions, contentSchema). It stops when f returns false.
func eachChild(s *jsonschema.Schema, f func(step string, c *jsonschema.Schema, applied bool) bool) {
	for _, name := range [...]string{"$defs", "definitions", "dependencies", "dependentSchemas", "patternProperties", "properties"} {
		for k, c := range mapField(s, name) {
			applied := name != "$defs" && name != "definitions"
			if !f(name+"/"+escapeToken(k), c, applied) {
				return
			}
		}
	}
	for _, name := range [...]string{"allOf", "anyOf", "oneOf", "prefixItems"} {
		for i, c := range sliceField(s, name) {
			if !f(name+"/"+strconv.Itoa(i), c, true) {
				return
			}
		}
	}
	for i, c := range s.ItemsArray {
		if !f("items/"+strconv.Itoa(i), c, true) {
			return
		}
	}
	if s.Items != nil && !f("items", s.Items, true) {
		return
	}
	for _, name := range [...]string{"additionalItems", "additionalProperties", "contains", "propertyNames", "not", "if", "then", "else",
		"unevaluatedItems", "unevaluatedProperties", "contentSchema"} {
		if c := singleField(s, name); c != nil && !f(name, c, name != "contentSchema") {
			return
		}
	}
}

// expandedSize returns the number of subschemas of s with every $ref
// expanded in place, or an error if a $ref leads back to a schema that
// contains it (a recursive schema, whose cost would grow with the
// arguments' nesting) or the size passes maxSubschemas.
func expandedSize(s, root *jsonschema.Schema, memo map[*jsonschema.Schema]int, open map[*jsonschema.Schema]bool) (int, error) {
	if n, ok := memo[s]; ok {
		return n, nil
	}
	if open[s] {
		return 0, errors.New("recursive schemas are not supported: a $ref leads back to a schema that contains it")
	}
	open[s] = true
	defer delete(open, s)
	n := 1
	var err error
	add := func(c *jsonschema.Schema) bool {
		var m int
		if m, err = expandedSize(c, root, memo, open); err != nil {
			return false
		}
		if n += m; n > maxSubschemas {
			err = fmt.Errorf("the schema expands to more than %d subschemas ($refs counted where they are used); split the tool", maxSubschemas)
			return false
		}
		return true
	}
	if s.Ref != "" {
		t, _ := refTarget(root, s.Ref) // index has checked it
		if !add(t) {
			return 0, err
		}
	}
	eachChild(s, func(_ string, c *jsonschema.Schema, applied bool) bool {
		return !applied || add(c)
	})
	if err != nil {
		return 0, err
	}
	memo[s] = n
	return n, nil
}
