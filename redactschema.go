package mcpmw

import (
	"reflect"
	"regexp"
	"slices"
)

// What the input schema names, for redaction. A record must not depend on
// the client spelling a sensitive name right: "apiKey" sent for the
// sensitive "api_key" is refused by the schema, and would otherwise be
// recorded as sent. So where a Sensitive pointer leads (the arguments
// object, and every object or array on the way to a sensitive value), a
// member or element that neither a pointer reaches nor the schema names
// is redacted whole; see Tool.Sensitive for the rule.

// schemaNode is one subschema of an input schema, reduced to what names a
// member or an element of the value it applies to.
type schemaNode struct {
	props      map[string]*schemaNode // "properties"; a property whose schema is false names nothing
	patterns   []patternNode          // "patternProperties"
	additional *schemaNode            // "additionalProperties", when a schema other than false
	items      *schemaNode            // "items", when a schema other than false
	prefix     []*schemaNode          // "prefixItems", or draft-07's array form of "items"
	alts       []*schemaNode          // local "$ref", "allOf", "anyOf", "oneOf", "then", "else": the same value, another schema
}

// patternNode is one member of "patternProperties": re is nil when the
// pattern is not a Go regular expression, and then it names nothing.
type patternNode struct {
	re   *regexp.Regexp
	node *schemaNode
}

// anySchema is the schema true (or {}): it allows everything and names
// nothing inside.
var anySchema = &schemaNode{}

// compileSchemaNodes returns the node of the decoded schema s (within root).
// nodes holds those made, by the identity of their decoded object, so a
// $ref cycle ends and a subschema is compiled once.
func compileSchemaNodes(s, root any, nodes map[uintptr]*schemaNode) *schemaNode {
	switch v := s.(type) {
	case bool:
		if v {
			return anySchema
		}
		return nil
	case map[string]any:
		id := reflect.ValueOf(v).Pointer()
		if n, ok := nodes[id]; ok {
			return n
		}
		n := &schemaNode{}
		nodes[id] = n
		n.fill(v, root, nodes)
		return n
	}
	return nil
}

// fill reads the keywords of the decoded object schema s into n.
func (n *schemaNode) fill(s map[string]any, root any, nodes map[uintptr]*schemaNode) {
	sub := func(v any) *schemaNode { return compileSchemaNodes(v, root, nodes) }
	if props, ok := s["properties"].(map[string]any); ok {
		n.props = make(map[string]*schemaNode, len(props))
		for name, p := range props {
			if c := sub(p); c != nil {
				n.props[name] = c
			}
		}
	}
	patterns, _ := s["patternProperties"].(map[string]any)
	for pat, p := range patterns {
		if c := sub(p); c != nil {
			re, _ := regexp.Compile(pat) // nil: names nothing
			n.patterns = append(n.patterns, patternNode{re, c})
		}
	}
	n.additional = sub(s["additionalProperties"])
	switch items := s["items"].(type) {
	case []any: // draft-07's tuple
		for _, it := range items {
			n.prefix = append(n.prefix, sub(it))
		}
	default:
		n.items = sub(items)
	}
	if prefix, ok := s["prefixItems"].([]any); ok {
		for _, it := range prefix {
			n.prefix = append(n.prefix, sub(it))
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		if t, ok := localRef(root, ref); ok {
			n.addAlt(sub(t))
		}
	}
	for _, k := range [...]string{"allOf", "anyOf", "oneOf"} {
		list, _ := s[k].([]any)
		for _, alt := range list {
			n.addAlt(sub(alt))
		}
	}
	for _, k := range [...]string{"then", "else"} {
		n.addAlt(sub(s[k]))
	}
}

func (n *schemaNode) addAlt(alt *schemaNode) {
	if alt != nil {
		n.alts = append(n.alts, alt)
	}
}

// expand returns the schemas that apply to one value: those of nodes and,
// through their alternatives, every schema they lead to, each once. Without
// alternatives it is nodes itself, and allocates nothing.
func expand(nodes []*schemaNode) []*schemaNode {
	alts := false
	for _, n := range nodes {
		alts = alts || len(n.alts) > 0
	}
	if !alts {
		return nodes
	}
	var out []*schemaNode
	var add func(n *schemaNode)
	add = func(n *schemaNode) {
		if slices.Contains(out, n) { // a handful of schemas: a scan is cheaper than a set
			return
		}
		out = append(out, n)
		for _, a := range n.alts {
			add(a)
		}
	}
	for _, n := range nodes {
		add(n)
	}
	return out
}

// member returns the schemas of the member name of an object that the
// schemas in nodes (expanded) apply to, and whether one of them names it
// ("properties", "patternProperties"). A schema that does not name it
// gives its "additionalProperties", if a schema: it applies, but names
// nothing. With want unset it only says whether the member is named, and
// allocates nothing.
func member(nodes []*schemaNode, name string, want bool) (children []*schemaNode, named bool) {
	for _, n := range nodes {
		own := false
		if c, ok := n.props[name]; ok {
			own = true
			if want {
				children = append(children, c)
			}
		}
		for _, p := range n.patterns {
			if p.re != nil && p.re.MatchString(name) {
				own = true
				if want {
					children = append(children, p.node)
				}
			}
		}
		if want && !own && n.additional != nil {
			children = append(children, n.additional)
		}
		named = named || own
	}
	return children, named
}

// element is member for the element at index i of an array: "prefixItems"
// or "items" name it.
func element(nodes []*schemaNode, i int, want bool) (children []*schemaNode, named bool) {
	for _, n := range nodes {
		var c *schemaNode
		if i < len(n.prefix) {
			c = n.prefix[i]
		} else {
			c = n.items
		}
		if c != nil {
			named = true
			if want {
				children = append(children, c)
			}
		}
	}
	return children, named
}
