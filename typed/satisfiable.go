package typed

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpmw/mcpmw/internal/echo"
	"github.com/mcpmw/mcpmw/internal/schemawalk"
)

// A schema that conforms to the meta-schema may still allow no value at
// all where it is plainly a mistake: every call would then fail, blaming
// the caller. These are refused when the tool is built, in any subschema:
//
//   - an empty enum;
//   - an enum or const none of whose values is of the schema's type;
//   - bounds that leave nothing between them (minimum above maximum, or
//     equal with either exclusive; minLength above maxLength, and so for
//     items, properties and contains);
//   - a required member that the same schema forbids: its schema in
//     properties is false, or additionalProperties is false and neither
//     properties nor patternProperties names it (a misspelt name, most
//     often).
//
// Contradictions across subschemas (allOf branches that exclude each
// other) are not looked for.

// unsatisfiable returns the JSON pointer of the first keyword of doc that
// allows no value, and why; bad is false when there is none.
func unsatisfiable(doc any) (ptr, problem string, bad bool) {
	schemawalk.Walk(doc, "", func(at string, s map[string]any) bool {
		ptr, problem = contradiction(s)
		if problem != "" {
			ptr, bad = at+ptr, true
		}
		return !bad
	})
	return ptr, problem, bad
}

// contradiction returns the keyword of the schema s, as a pointer below
// s, that allows no value, and why; "" when there is none.
func contradiction(s map[string]any) (string, string) {
	types, typed := typeNames(s["type"])
	if enum, ok := s["enum"].([]any); ok {
		switch {
		case len(enum) == 0:
			return "/enum", "an empty enum allows no value"
		case typed && !slices.ContainsFunc(enum, func(v any) bool { return ofType(v, types) }):
			return "/enum", "no value of enum is " + strings.Join(withArticles(types), " or ")
		}
	}
	if c, ok := s["const"]; ok && typed && !ofType(c, types) {
		return "/const", "const is not " + strings.Join(withArticles(types), " or ")
	}
	if ptr, p := emptyRange(s); p != "" {
		return ptr, p
	}
	for _, pair := range [...][2]string{{"minLength", "maxLength"}, {"minItems", "maxItems"}, {"minProperties", "maxProperties"}, {"minContains", "maxContains"}} {
		lo, hasLo := s[pair[0]].(float64)
		hi, hasHi := s[pair[1]].(float64)
		if hasLo && hasHi && lo > hi {
			return "/" + pair[1], fmt.Sprintf("%s %s is below %s %s: nothing is allowed", pair[1], num(hi), pair[0], num(lo))
		}
	}
	return forbiddenRequired(s)
}

// emptyRange reports numeric bounds that leave no number between them.
func emptyRange(s map[string]any) (string, string) {
	type bound struct {
		kw        string
		v         float64
		exclusive bool
	}
	var lo, hi *bound
	for _, b := range [...]bound{{"minimum", 0, false}, {"exclusiveMinimum", 0, true}, {"maximum", 0, false}, {"exclusiveMaximum", 0, true}} {
		v, ok := s[b.kw].(float64)
		if !ok {
			continue
		}
		b.v = v
		if strings.HasSuffix(b.kw, "inimum") {
			if lo == nil || v > lo.v || v == lo.v && b.exclusive {
				lo = &b
			}
		} else if hi == nil || v < hi.v || v == hi.v && b.exclusive {
			hi = &b
		}
	}
	if lo == nil || hi == nil || lo.v < hi.v || lo.v == hi.v && !lo.exclusive && !hi.exclusive {
		return "", ""
	}
	return "/" + hi.kw, fmt.Sprintf("%s %s and %s %s leave no number between them", lo.kw, num(lo.v), hi.kw, num(hi.v))
}

// forbiddenRequired reports a required member the same schema forbids.
func forbiddenRequired(s map[string]any) (string, string) {
	required, _ := s["required"].([]any)
	props, _ := s["properties"].(map[string]any)
	closed := s["additionalProperties"] == false
	var patterns []*regexp.Regexp
	if pp, ok := s["patternProperties"].(map[string]any); ok {
		for p := range pp {
			re, err := regexp.Compile(p)
			if err != nil {
				return "", "" // refused later, with the pattern named
			}
			patterns = append(patterns, re)
		}
	}
	for _, r := range required {
		name, _ := r.(string)
		ps, named := props[name]
		switch {
		case named && ps == false:
			return "/required", strconv.Quote(echo.Cap(name)) + " is required, but its schema in properties is false: no value is allowed"
		case !named && closed && !slices.ContainsFunc(patterns, func(re *regexp.Regexp) bool { return re.MatchString(name) }):
			return "/required", strconv.Quote(echo.Cap(name)) + " is required, but additionalProperties is false and properties does not name it"
		}
	}
	return "", ""
}

// typeNames returns the type names of a "type" value, and whether there
// is one. The meta-schema has checked the value: a name, or a non-empty
// array of distinct names.
func typeNames(v any) ([]string, bool) {
	switch v := v.(type) {
	case string:
		return []string{v}, true
	case []any:
		names := make([]string, len(v))
		for i, t := range v {
			names[i], _ = t.(string)
		}
		return names, true
	}
	return nil, false
}

// ofType reports whether the JSON value v is of one of types.
func ofType(v any, types []string) bool {
	var kind string
	switch v := v.(type) {
	case nil:
		kind = "null"
	case bool:
		kind = "boolean"
	case float64:
		if v == math.Trunc(v) && slices.Contains(types, "integer") {
			return true
		}
		kind = "number"
	case string:
		kind = "string"
	case []any:
		kind = "array"
	case map[string]any:
		kind = "object"
	}
	return slices.Contains(types, kind)
}

func withArticles(types []string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = article(t)
	}
	return out
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
