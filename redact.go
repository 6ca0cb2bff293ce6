package mcpmw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// A tool may declare that some of its arguments are sensitive (a password,
// an API key, a person's data): Tool.Sensitive names them by JSON pointer,
// PromptArgument.Sensitive marks a prompt's. The tool or prompt still gets
// every value as sent. What the library itself carries out of the process
// (the audit record, and so LogValue, JSONAuditor and the Observer; the
// messages and isError texts it builds) holds "[redacted]" instead. The
// pointers are compiled here once, at registration, and a record's
// arguments are redacted when the record is made: a tool without sensitive
// arguments pays nothing.
//
// Redaction does not depend on the client spelling a name right. Where a
// pointer leads (the arguments object, and each object and array on the
// way to what a pointer names), a member that no pointer reaches and that
// the input schema does not name there is redacted whole, as is an element
// it does not cover, and a value of the wrong shape for the pointer to go
// on into: the rule is on Tool.Sensitive, and what the schema names is in
// redactschema.go.

// redactedText stands in for a sensitive value in a message; redactedJSON
// in the arguments of a record.
const (
	redactedText = "[redacted]"
	redactedJSON = `"` + redactedText + `"`
)

// redaction is a tool's compiled Sensitive pointers: each a list of
// reference tokens with RFC 6901's escapes undone, where "*" matches any
// member of an object and any element of an array.
type redaction struct {
	paths  [][]string
	all    []int         // the index of every path: where a walk of the arguments starts
	schema []*schemaNode // the input schema, for what it names (redactschema.go); nil if none
}

// compileSensitive compiles the Sensitive pointers of tool, whose input
// schema is schema (compacted, valid JSON). It panics, naming the tool, on
// a pointer that is not RFC 6901 syntax or that names nothing the schema
// declares. It returns nil when there are none.
func compileSensitive(tool string, pointers []string, schema []byte) *redaction {
	if len(pointers) == 0 {
		return nil
	}
	var root any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	_ = dec.Decode(&root) // prepare has checked it is a JSON object
	r := &redaction{}
	if n := compileSchemaNodes(root, root, map[uintptr]*schemaNode{}); n != nil {
		r.schema = []*schemaNode{n}
	}
	for _, p := range pointers {
		toks, err := parsePointer(p)
		if err != nil {
			panic(fmt.Sprintf("mcpmw: tool %q: Sensitive pointer %q %v", tool, p, err))
		}
		if !declares(root, root, toks, map[schemaVisit]bool{}) {
			panic(fmt.Sprintf("mcpmw: tool %q: Sensitive pointer %q names nothing its InputSchema declares "+
				"(through properties, items, prefixItems, additionalProperties, patternProperties, $ref, allOf, anyOf, oneOf, then, else): "+
				"check its spelling, or declare the argument", tool, p))
		}
		r.all = append(r.all, len(r.paths))
		r.paths = append(r.paths, toks)
	}
	return r
}

// parsePointer splits the JSON pointer p into its reference tokens, with
// "~1" and "~0" decoded. The empty pointer (the whole arguments) is refused:
// a sensitive argument is a member, and "/*" names every one.
func parsePointer(p string) ([]string, error) {
	switch {
	case p == "":
		return nil, errors.New(`is empty: name a member ("/password"), or every top-level member ("/*")`)
	case p[0] != '/':
		return nil, errors.New(`must start with "/" (RFC 6901)`)
	case !utf8.ValidString(p):
		return nil, errors.New("is not valid UTF-8")
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || t[j+1] != '0' && t[j+1] != '1') {
				return nil, errors.New(`has a "~" not followed by 0 or 1 (write "~0" for "~" and "~1" for "/")`)
			}
		}
		toks[i] = pointerUnescaper.Replace(t)
	}
	return toks, nil
}

// pointerUnescaper undoes RFC 6901's escapes in one pass, so "~01" is "~1".
var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// schemaVisit is one subschema (the identity of its decoded object) met
// with so many tokens of a pointer left to find.
type schemaVisit struct {
	schema uintptr
	left   int
}

// declares reports whether the schema node (within root) declares what
// toks names: each token a member its "properties" list (or any member,
// for "*"), a member "additionalProperties" or "patternProperties" cover,
// or, for an index or "*", an element "items" or "prefixItems" cover,
// looking through local $refs, allOf, anyOf, oneOf, then and else. $refs
// make a schema a graph, which may have cycles: seen holds the visits
// made, each tried once, so the walk ends, and costs at most the number of
// subschemas times the length of the pointer.
func declares(node, root any, toks []string, seen map[schemaVisit]bool) bool {
	if len(toks) == 0 {
		return true
	}
	s, ok := node.(map[string]any)
	if !ok {
		return false
	}
	visit := schemaVisit{reflect.ValueOf(s).Pointer(), len(toks)}
	if seen[visit] {
		return false // under way further up, or found wanting
	}
	seen[visit] = true
	var alts []any
	if ref, ok := s["$ref"].(string); ok {
		if t, ok := localRef(root, ref); ok {
			alts = append(alts, t)
		}
	}
	for _, k := range [...]string{"allOf", "anyOf", "oneOf"} {
		list, _ := s[k].([]any)
		alts = append(alts, list...)
	}
	for _, k := range [...]string{"then", "else"} {
		if c, ok := s[k]; ok {
			alts = append(alts, c)
		}
	}
	for _, alt := range alts { // the same value, against another schema
		if declares(alt, root, toks, seen) {
			return true
		}
	}
	for _, c := range childSchemas(s, toks[0]) {
		if declares(c, root, toks[1:], seen) {
			return true
		}
	}
	return false
}

// childSchemas returns the subschemas of the object schema s that apply
// to the member or element named by the reference token tok.
func childSchemas(s map[string]any, tok string) []any {
	var out []any
	props, _ := s["properties"].(map[string]any)
	if tok == "*" {
		for _, c := range props {
			out = append(out, c)
		}
	} else if c, ok := props[tok]; ok {
		out = append(out, c)
	}
	if c, ok := s["additionalProperties"].(map[string]any); ok {
		out = append(out, c)
	}
	patterns, _ := s["patternProperties"].(map[string]any)
	for _, c := range patterns {
		out = append(out, c)
	}
	if tok != "*" && !isArrayIndex(tok) {
		return out
	}
	if c, ok := s["items"].(map[string]any); ok {
		out = append(out, c)
	}
	var tuple []any // 2020-12 prefixItems, or draft-07's array form of items
	for _, k := range [...]string{"prefixItems", "items"} {
		list, _ := s[k].([]any)
		tuple = append(tuple, list...)
	}
	if tok == "*" {
		return append(out, tuple...)
	}
	if n, err := strconv.Atoi(tok); err == nil && n < len(tuple) { // err: an index beyond int
		out = append(out, tuple[n])
	}
	return out
}

// isArrayIndex reports whether tok is an array index as RFC 6901 writes
// one: decimal digits, no leading zero.
func isArrayIndex(tok string) bool {
	if tok == "" || len(tok) > 1 && tok[0] == '0' {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return false
		}
	}
	return true
}

// localRef returns what ref, a JSON pointer fragment into root ("#",
// "#/$defs/card"), refers to.
func localRef(root any, ref string) (any, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	frag, err := url.PathUnescape(frag)
	if err != nil || frag == "" {
		return root, err == nil
	}
	toks, err := parsePointer(frag)
	if err != nil {
		return nil, false
	}
	node := root
	for _, t := range toks {
		switch n := node.(type) {
		case map[string]any:
			if node, ok = n[t]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(n) {
				return nil, false
			}
			node = n[i]
		default:
			return nil, false
		}
	}
	return node, true
}

// arguments returns the arguments raw, as a record shows them: each value
// a pointer reaches replaced by "[redacted]" (a null stays null: it holds
// nothing), and each value a pointer cannot go on into (a string where it
// names a member of an object, say) replaced whole, so a secret sent in the
// wrong shape is not recorded either. Member names are matched to the
// pointers decoded and case-insensitively, so "Password" and
// "\u0070assword" are redacted with "password", and every copy of a
// repeated member is. Where a pointer leads (the arguments object, and
// each object and array on the way to what it names), a member or element
// that no pointer reaches and the input schema does not name there is
// replaced whole too: a misspelt "apiKey" sent for "api_key" (see
// Tool.Sensitive). A redacted member is named as decoded (the auditor
// reads "password", however it was spelt), the others as sent. raw is
// returned as it is when r is nil or raw is empty; anything that is not
// valid JSON is redacted whole.
func (r *redaction) arguments(raw json.RawMessage) json.RawMessage {
	if r == nil || len(raw) == 0 {
		return raw
	}
	raw = bytes.TrimSpace(raw)
	if !json.Valid(raw) {
		return json.RawMessage(redactedJSON)
	}
	return r.value(make([]byte, 0, len(raw)), raw, r.all, 0, r.schema)
}

// value appends v, reached by the paths in active (their first depth
// tokens matched) and described by schemas, with what they name redacted,
// and what neither they nor the schemas name.
func (r *redaction) value(dst, v []byte, active []int, depth int, schemas []*schemaNode) []byte {
	switch jsonwire.KindOf(v) {
	case jsonwire.KindNull:
		return append(dst, v...)
	case jsonwire.KindObject:
		return r.object(dst, v, active, depth, expand(schemas))
	case jsonwire.KindArray:
		if r.indexes(active, depth) {
			return r.array(dst, v, active, depth, expand(schemas))
		}
	}
	return append(dst, redactedJSON...) // a pointer cannot go on into it
}

// object appends the object v for value: each member a path ends at, or
// that no path goes on into and nodes do not name, redacted.
func (r *redaction) object(dst, v []byte, active []int, depth int, nodes []*schemaNode) []byte {
	dst = append(dst, '{')
	it, _ := jsonwire.IterMembers(v)
	n := 0
	for m, more := it.Next(); more; m, more = it.Next() {
		if n++; n > 1 {
			dst = append(dst, ',')
		}
		name := m.Name()
		next, leaf := r.match(active, depth, name, false)
		children, named := member(nodes, name, len(next) > 0)
		if (leaf || !named && len(next) == 0) && jsonwire.KindOf(m.Value) != jsonwire.KindNull {
			// Named as decoded: the value is not as sent anyway, and a
			// reader finds "password" however the client spelt it.
			dst = append(jsonwire.AppendString(dst, name), ':')
			dst = append(dst, redactedJSON...)
			continue
		}
		dst = append(dst, '"')
		dst = append(dst, m.Key...)
		dst = append(dst, '"', ':')
		dst = r.child(dst, m.Value, next, leaf, depth, children)
	}
	return append(dst, '}')
}

// array appends the array v for value: each element a path ends at, or
// that no path goes on into and nodes do not cover, redacted.
func (r *redaction) array(dst, v []byte, active []int, depth int, nodes []*schemaNode) []byte {
	dst = append(dst, '[')
	it, _ := jsonwire.IterElements(v)
	for n := 0; ; n++ {
		e, more := it.Next()
		if !more {
			break
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		next, leaf := r.match(active, depth, strconv.Itoa(n), true)
		children, named := element(nodes, n, len(next) > 0)
		if !leaf && !named && len(next) == 0 && jsonwire.KindOf(e) != jsonwire.KindNull {
			dst = append(dst, redactedJSON...)
		} else {
			dst = r.child(dst, e, next, leaf, depth, children)
		}
	}
	return append(dst, ']')
}

// match returns the paths of active that go on past the member or element
// named tok (an index when index is set) at depth, and whether one ends
// there (leaf).
func (r *redaction) match(active []int, depth int, tok string, index bool) (next []int, leaf bool) {
	for _, i := range active {
		p := r.paths[i]
		if want := p[depth]; want == "*" || want == tok || !index && strings.EqualFold(want, tok) {
			if len(p) == depth+1 {
				leaf = true
			} else {
				next = append(next, i)
			}
		}
	}
	return next, leaf
}

// child appends the member or element v at depth+1, described by
// schemas, that the paths in next go on into, or that one ends at (leaf).
func (r *redaction) child(dst, v []byte, next []int, leaf bool, depth int, schemas []*schemaNode) []byte {
	switch {
	case leaf && jsonwire.KindOf(v) != jsonwire.KindNull:
		return append(dst, redactedJSON...)
	case leaf || len(next) == 0:
		return append(dst, v...)
	}
	return r.value(dst, v, next, depth+1, schemas)
}

// indexes reports whether one of the paths in active can name an element
// of an array at depth: its token there is an index or "*".
func (r *redaction) indexes(active []int, depth int) bool {
	for _, i := range active {
		if t := r.paths[i][depth]; t == "*" || isArrayIndex(t) {
			return true
		}
	}
	return false
}

// covers reports whether the argument at path (member names from the
// root), or a value enclosing it, is sensitive.
func (r *redaction) covers(path []string) bool {
	if r == nil {
		return false
	}
	for _, p := range r.paths {
		if len(p) > len(path) {
			continue
		}
		match := true
		for j, t := range p {
			if t != "*" && !strings.EqualFold(t, path[j]) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// toolRedaction returns the redaction of the tool registered under name,
// nil when it has no sensitive arguments or r is nil. A name no tool has
// gets unknownToolRedaction when some tool has sensitive arguments: a
// misspelt tool name says nothing of what its arguments hold.
func (r *Registry) toolRedaction(name string) *redaction {
	if r == nil {
		return nil
	}
	tab := r.table()
	if e := tab.byKey[name]; e != nil {
		return e.redact
	}
	if tab.sensitive {
		return unknownToolRedaction
	}
	return nil
}

// unknownToolRedaction redacts every argument ("/*") of a call naming no
// tool, each member named and its value "[redacted]".
var unknownToolRedaction = &redaction{paths: [][]string{{"*"}}, all: []int{0}}
