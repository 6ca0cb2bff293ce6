package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// frontmatterBlock is the YAML block at the start of a SKILL.md, exactly
// as hosts (and the conformance suite) find it: after an optional
// byte-order mark, between a first line "---" and the next line that
// starts with "---".
var frontmatterBlock = regexp.MustCompile(`^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)`)

// maxFrontmatterJSON bounds the JSON a frontmatter becomes, so that
// aliases repeated within aliases cannot make it grow without end.
const maxFrontmatterJSON = 1 << 20

// frontmatter returns the frontmatter of a SKILL.md as JSON, in the
// author's order, and its name and description: what a host gets when it
// parses the same bytes with a YAML 1.2 parser (the core schema), which
// is how hosts compare it with the entry's. An error says which rule the
// file breaks.
func frontmatter(md []byte) (raw json.RawMessage, name, description string, err error) {
	m := frontmatterBlock.FindSubmatch(bytes.TrimPrefix(md, []byte("\uFEFF")))
	if m == nil {
		return nil, "", "", errors.New(`it does not begin with a YAML frontmatter block ("---" lines)`)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(m[1], &doc); err != nil {
		return nil, "", "", fmt.Errorf("its frontmatter is not YAML: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, "", "", errors.New("its frontmatter is not a YAML mapping")
	}
	w := jsonWriter{}
	if err := w.value(doc.Content[0]); err != nil {
		return nil, "", "", fmt.Errorf("its frontmatter: %w", err)
	}
	top := doc.Content[0].Content
	for i := 0; i < len(top); i += 2 { // a mapping node holds key, value, key, value...
		k, v := resolve(top[i]), resolve(top[i+1])
		if k.Value != "name" && k.Value != "description" {
			continue
		}
		if v.Kind != yaml.ScalarNode || scalarTag(v) != "!!str" || v.Value == "" {
			return nil, "", "", fmt.Errorf("its frontmatter's %s is not a non-empty string", k.Value)
		}
		if k.Value == "name" {
			name = v.Value
		} else {
			description = v.Value
		}
	}
	switch {
	case name == "":
		return nil, "", "", errors.New("its frontmatter has no name")
	case description == "":
		return nil, "", "", errors.New("its frontmatter has no description")
	}
	return w.buf, name, description, nil
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// jsonWriter writes YAML nodes as JSON, in the YAML 1.2 core schema.
type jsonWriter struct{ buf []byte }

func (w *jsonWriter) value(n *yaml.Node) error {
	if len(w.buf) > maxFrontmatterJSON {
		return fmt.Errorf("it is larger than %d bytes as JSON", maxFrontmatterJSON)
	}
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		return w.mapping(n)
	case yaml.SequenceNode:
		w.buf = append(w.buf, '[')
		for i, c := range n.Content {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			if err := w.value(c); err != nil {
				return err
			}
		}
		w.buf = append(w.buf, ']')
		return nil
	case yaml.ScalarNode:
		return w.scalar(n)
	}
	return fmt.Errorf("line %d: a YAML node of kind %d has no JSON form", n.Line, n.Kind)
}

func (w *jsonWriter) mapping(n *yaml.Node) error {
	seen := map[string]bool{}
	w.buf = append(w.buf, '{')
	for i := 0; i < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k.Kind != yaml.ScalarNode || scalarTag(k) != "!!str" {
			return fmt.Errorf("line %d: a key that is not a string", k.Line)
		}
		if seen[k.Value] {
			return fmt.Errorf("line %d: the key %q appears twice", k.Line, k.Value)
		}
		seen[k.Value] = true
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		key, _ := json.Marshal(k.Value)
		w.buf = append(append(w.buf, key...), ':')
		if err := w.value(n.Content[i+1]); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, '}')
	return nil
}

// The YAML 1.2 core schema's plain scalars (YAML 1.2.2 §10.3.2). go-yaml
// resolves some plain scalars as YAML 1.1 did (0777 an octal, 1_000 and
// 0b101 numbers), so a plain scalar's tag is resolved here instead.
var (
	coreNull  = regexp.MustCompile(`^(?:null|Null|NULL|~|)$`)
	coreBool  = regexp.MustCompile(`^(?:true|True|TRUE|false|False|FALSE)$`)
	coreInt   = regexp.MustCompile(`^[-+]?[0-9]+$`)
	coreOct   = regexp.MustCompile(`^0o[0-7]+$`)
	coreHex   = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	coreFloat = regexp.MustCompile(`^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$`)
	coreInf   = regexp.MustCompile(`^[-+]?(?:\.inf|\.Inf|\.INF)$`)
	coreNaN   = regexp.MustCompile(`^(?:\.nan|\.NaN|\.NAN)$`)
)

// scalarTag is the core schema's tag of a scalar: its explicit tag, or,
// for a plain scalar, the first pattern it matches; a quoted or block
// scalar is a string.
func scalarTag(n *yaml.Node) string {
	if n.Style&yaml.TaggedStyle != 0 {
		return n.ShortTag()
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return "!!str"
	}
	v := n.Value
	switch {
	case coreNull.MatchString(v):
		return "!!null"
	case coreBool.MatchString(v):
		return "!!bool"
	case coreInt.MatchString(v), coreOct.MatchString(v), coreHex.MatchString(v):
		return "!!int"
	case coreFloat.MatchString(v), coreInf.MatchString(v), coreNaN.MatchString(v):
		return "!!float"
	}
	return "!!str"
}

func (w *jsonWriter) scalar(n *yaml.Node) error {
	v := n.Value
	switch tag := scalarTag(n); tag {
	case "!!str":
		s, _ := json.Marshal(v)
		w.buf = append(w.buf, s...)
		return nil
	case "!!null":
		w.buf = append(w.buf, "null"...)
		return nil
	case "!!bool":
		b, err := strconv.ParseBool(strings.ToLower(v))
		if err != nil {
			return fmt.Errorf("line %d: %q is not a boolean", n.Line, v)
		}
		w.buf = strconv.AppendBool(w.buf, b)
		return nil
	case "!!int", "!!float":
		f, ok := number(v)
		if !ok || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("line %d: %q is not a number JSON can carry", n.Line, v)
		}
		num, _ := json.Marshal(f) // as JavaScript writes a number: hosts read it as one
		w.buf = append(w.buf, num...)
		return nil
	default:
		return fmt.Errorf("line %d: the tag %s is not one of the YAML 1.2 core schema", n.Line, tag)
	}
}

// number is the value of a core-schema int or float, as the float64
// JavaScript would hold.
func number(v string) (float64, bool) {
	base := 10
	switch {
	case strings.HasPrefix(v, "0o"):
		v, base = v[2:], 8
	case strings.HasPrefix(v, "0x"):
		v, base = v[2:], 16
	case coreInf.MatchString(v) || coreNaN.MatchString(v):
		return 0, false
	}
	if base == 10 { // ParseFloat keeps -0, as JavaScript's parseInt does
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil
	}
	i, ok := new(big.Int).SetString(v, base)
	if !ok {
		return 0, false
	}
	f, _ := new(big.Float).SetInt(i).Float64()
	return f, true
}
