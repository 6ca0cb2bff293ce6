// Package uritemplate holds URI templates (RFC 6570) as MCP resource
// templates use them, in the two forms a template can be matched against
// a URI by: simple string expansion {var} (level 1) and reserved expansion
// {+var} (level 2). A template is parsed once, when it is added, its
// literals put in the normal form URIs are compared in: the percent
// normal form of urisyntax.NormalizePercent, which the root package's
// normal form of a URI (normalURI) is built on too. It uses nothing from
// the root package.
//
// Matching is the exact inverse of expansion: a URI, in normal form,
// matches exactly when it is an expansion of the template, that is when
// some values of the variables expand to it. A simple expansion writes a
// value's unreserved characters as they are and percent-encodes every
// other byte, so its span of the URI holds unreserved characters and
// percent-encoded octets only, never a raw reserved character ('/', '?',
// '#', ':', '@', ...); a reserved expansion also writes the reserved
// characters as they are and passes percent-encoded octets of the value
// through, so its span may hold anything a normal URI holds. A variable
// may expand to nothing (RFC 6570 expands an undefined or empty value to
// nothing): its value is then "".
//
// When several bindings of the variables expand to one URI (a {+path}
// followed by "/secrets/" meets a URI holding "/secrets/" twice; {a}-{b}
// meets "x-y-z"), Match returns the one whose first variable is the
// shortest, then whose second is, and so on: every binding it returns
// expands to the URI again. It finds it in time linear in the URI's
// length times the template's, never by trying splits one after another:
// for each variable from the last, it marks the places in the URI where
// the rest of the template can start (dynamic programming over bit sets),
// then walks forward through the marks.
//
// The values a match gives are percent-decoded, each one exactly as its
// expansion requires: all of a simple variable's octets; those of a
// reserved variable but for the octets of reserved characters and of
// '%', which stay encoded (a reserved expansion of "a/b" writes "a/b", so
// "a%2Fb" can only be the expansion of "a%2Fb" itself). Two variables
// must be separated by a literal, and a variable appears once.
package uritemplate

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf8"

	"github.com/mcpmw/mcpmw/internal/urisyntax"
)

// Template is a parsed RFC 6570 template: len(vars)+1 literals, in
// normal form, around its variables. It is immutable once parsed, so one
// Template may be matched from any number of goroutines.
type Template struct {
	raw   string
	key   string // the template in normal form: literals normalised, expressions as written
	lits  []string
	vars  []templateVar
	names []string // the variables, in order
}

// Key returns the template in normal form (its literals normalised, its
// expressions as written), by which templates are registered and found.
func (t *Template) Key() string { return t.key }

// Names returns the template's variables, in order. The slice is the
// template's own: callers must not modify it.
func (t *Template) Names() []string { return t.names }

// templateVar is one expression of a template.
type templateVar struct {
	name     string
	reserved bool // {+name}: may hold reserved characters, '/' included
}

// Parse parses raw, or says what is wrong with it.
func Parse(raw string) (*Template, error) {
	if raw == "" {
		return nil, errors.New("the template is empty")
	}
	if err := checkChars(raw); err != nil {
		return nil, err
	}
	t := &Template{raw: raw}
	var key strings.Builder
	rest := raw
	for {
		open := strings.IndexAny(rest, "{}")
		lit := rest
		if open >= 0 {
			lit = rest[:open]
		}
		norm, err := t.addLiteral(lit)
		if err != nil {
			return nil, err
		}
		key.WriteString(norm)
		if open < 0 {
			break
		}
		if rest[open] == '}' {
			return nil, fmt.Errorf("'}' at offset %d closes no expression", len(raw)-len(rest)+open)
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("the expression at offset %d is not closed with '}'", len(raw)-len(rest)+open)
		}
		expr := rest[open+1 : open+end]
		rest = rest[open+end+1:]
		if err := t.addVar(expr); err != nil {
			return nil, err
		}
		key.WriteString("{" + expr + "}")
	}
	t.key = key.String()
	return t, nil
}

// checkChars refuses a byte no URI template holds, literal or expression
// (RFC 6570 §2.1).
func checkChars(raw string) error {
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7f || strings.IndexByte(`"'<>\\^`+"`|", c) >= 0 {
			return fmt.Errorf("the character %q at offset %d may not appear in a URI template", c, i)
		}
	}
	return nil
}

// addLiteral appends the literal lit to t in normal form, the scheme of
// the first one lower-cased, and returns that form.
func (t *Template) addLiteral(lit string) (string, error) {
	scheme := 0
	if len(t.lits) == 0 {
		scheme = urisyntax.SchemeLen(lit)
	}
	norm, err := urisyntax.NormalizePercent(lit, scheme)
	if err != nil {
		return "", fmt.Errorf("the literal %q: %v", lit, err)
	}
	t.lits = append(t.lits, norm)
	return norm, nil
}

// addVar appends the variable of the expression expr (the text between
// its braces) to t: a level 1 or 2 expression, of a variable not seen
// before, after a literal that is not empty unless it is the first.
func (t *Template) addVar(expr string) error {
	v := templateVar{name: expr}
	if strings.HasPrefix(expr, "+") {
		v.name, v.reserved = expr[1:], true
	}
	if err := checkVarName(v.name, expr); err != nil {
		return err
	}
	for _, n := range t.names {
		if n == v.name {
			return fmt.Errorf("the variable %q appears twice", v.name)
		}
	}
	if k := len(t.lits); k > 1 && t.lits[k-1] == "" {
		return fmt.Errorf("the variables %q and %q must be separated by a literal", t.names[k-2], v.name)
	}
	t.vars = append(t.vars, v)
	t.names = append(t.names, v.name)
	return nil
}

// Key returns the normal form of the template raw, as Template.Key does,
// or raw itself when it does not parse: the root package finds a template
// by it (a completion's ref, a removal), and an unparsable raw then names
// no registered template.
func Key(raw string) string {
	t, err := Parse(raw)
	if err != nil {
		return raw
	}
	return t.key
}

// checkVarName checks the name of an expression: RFC 6570 varname
// (ALPHA / DIGIT / "_" / pct-encoded, dots between), without the
// operators and modifiers of levels 3 and 4. It stays whole (its
// cyclomatic count is the character switch's): the switch is the ABNF's
// varname rule case for case, each case's condition saying where in the
// name its character may stand, and read beside the RFC it reads best so.
func checkVarName(name, expr string) error {
	if name == "" {
		return fmt.Errorf("the expression {%s} names no variable", expr)
	}
	if strings.ContainsAny(expr[:1], "#./;?&=,!@|") || strings.ContainsAny(name, ",:*") {
		return fmt.Errorf("the expression {%s} uses an operator or modifier this package does not match: use {name} or {+name}", expr)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
		case c == '.' && i > 0 && i < len(name)-1 && name[i-1] != '.':
		case c == '%' && i+2 < len(name) && urisyntax.IsHex(name[i+1]) && urisyntax.IsHex(name[i+2]):
			i += 2
		default:
			return fmt.Errorf("the variable name %q is invalid: use letters, digits, '_' and inner dots", name)
		}
	}
	return nil
}

// Match reports whether uri, in normal form (NormalizePercent's; the
// root's normalURI gives it), is an expansion of t. When vars is not nil
// it receives the values of the binding described in the package
// documentation, percent-decoded. A URI not in normal form gets an answer
// that means nothing, but no panic.
func (t *Template) Match(uri string, vars map[string]string) bool {
	first, last := t.lits[0], t.lits[len(t.lits)-1]
	if len(t.vars) == 0 {
		return uri == first
	}
	if len(uri) < len(first)+len(last) || !strings.HasPrefix(uri, first) || !strings.HasSuffix(uri, last) {
		return false
	}
	// The literals hold whole percent-encoded octets, so the URI between
	// them starts on an octet; spanOK checks where it ends.
	m := uri[len(first) : len(uri)-len(last)]
	if len(t.vars) == 1 {
		v := t.vars[0]
		if !spanOK(m, v.reserved) {
			return false
		}
		if vars != nil {
			vars[v.name] = decodeValue(m, v.reserved)
		}
		return true
	}
	return t.matchInner(m, vars)
}

// matchInner matches m against the variables of t and the literals
// between them (not the first and last). For each variable i but the
// last, ends[i] marks the places e where its value may end: the literal
// after it follows at e, and the rest of m matches the rest of the
// template after that literal. They are found from the last variable
// back, each from the one after it; the binding is then read forward,
// each value ending at the first mark it can reach. Time O(len(m) ×
// len(t.raw)); memory one bit per place and variable, on the stack for a
// URI of a few hundred bytes.
func (t *Template) matchInner(m string, vars map[string]string) bool {
	n := len(t.vars)
	var stack [64]uint64
	ends := marks{words: len(m)/64 + 1} // bits 0..len(m)
	if need := n * ends.words; need <= len(stack) {
		ends.buf = stack[:need]
	} else {
		ends.buf = make([]uint64, need)
	}
	if !boundary(m, len(m)) {
		return false
	}
	starts := ends.of(n - 1) // where the last variable may start: its value is the rest of m
	t.markLastStarts(m, starts)
	for i := n - 2; i >= 0; i-- {
		t.markEnds(m, i, starts, ends.of(i))
		// starts becomes where variable i may start. ends.of(n-1) is
		// reused for it: the last variable's starts are read only above.
		t.markStarts(m, i, ends.of(i), starts)
	}
	if !starts.has(0) {
		return false
	}
	if vars != nil {
		t.bind(m, ends, vars)
	}
	return true
}

// marks holds a bitset of places in m for each variable, words words
// each, in one buffer.
type marks struct {
	buf   []uint64
	words int
}

// of returns the bitset of variable i.
func (k marks) of(i int) bitset { return k.buf[i*k.words : (i+1)*k.words] }

// markLastStarts marks in starts the places where the last variable may
// start: its value is the rest of m, which a simple one may hold only
// after the last raw reserved character.
func (t *Template) markLastStarts(m string, starts bitset) {
	from := 0
	if !t.vars[len(t.vars)-1].reserved {
		from = lastReserved(m) + 1
	}
	for p := from; p <= len(m); p++ {
		if boundary(m, p) {
			starts.set(p)
		}
	}
}

// markEnds marks in e the places where variable i's value may end: the
// literal after it follows, and the rest of the template may start after
// that literal (a mark of starts, variable i+1's).
func (t *Template) markEnds(m string, i int, starts, e bitset) {
	lit := t.lits[i+1]
	for off := 0; ; {
		j := strings.Index(m[off:], lit)
		if j < 0 {
			break
		}
		at := off + j
		if boundary(m, at) && starts.has(at+len(lit)) {
			e.set(at)
		}
		off = at + 1
	}
}

// markStarts sets starts to the places where variable i may start: a
// place p from which its value reaches a mark of e, a reserved value
// always, a simple one only across no raw reserved character.
func (t *Template) markStarts(m string, i int, e, starts bitset) {
	starts.clear()
	next, stop := -1, len(m) // the first mark at p or after; the first raw reserved character at p or after
	for p := len(m); p >= 0; p-- {
		if e.has(p) {
			next = p
		}
		if p < len(m) && urisyntax.Reserved(m[p]) {
			stop = p
		}
		if next >= 0 && (t.vars[i].reserved || next <= stop) && boundary(m, p) {
			starts.set(p)
		}
	}
}

// bind reads the binding forward, each value ending at the first mark of
// ends it can reach, and puts the values, decoded, in vars.
func (t *Template) bind(m string, ends marks, vars map[string]string) {
	n, p := len(t.vars), 0
	for i := 0; i < n-1; i++ {
		e := ends.of(i).next(p) // reachable: starts.has(p) said so
		vars[t.vars[i].name] = decodeValue(m[p:e], t.vars[i].reserved)
		p = e + len(t.lits[i+1])
	}
	vars[t.vars[n-1].name] = decodeValue(m[p:], t.vars[n-1].reserved)
}

// bitset is a set of places in a URI.
type bitset []uint64

func (s bitset) set(i int)      { s[i/64] |= 1 << (i % 64) }
func (s bitset) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s bitset) clear()         { clear(s) }

// next returns the first member of s at i or after, or -1.
func (s bitset) next(i int) int {
	for w := i / 64; w < len(s); w++ {
		word := s[w]
		if w == i/64 {
			word &^= 1<<(i%64) - 1
		}
		if word != 0 {
			return w*64 + bits.TrailingZeros64(word)
		}
	}
	return -1
}

// boundary reports whether a value may start or end at offset i of s, a
// piece of a normal URI that starts on an octet: not inside a
// percent-encoded octet.
func boundary(s string, i int) bool {
	return !(i >= 1 && s[i-1] == '%') && !(i >= 2 && s[i-2] == '%')
}

// lastReserved returns the offset of the last raw reserved character in
// s, or -1.
func lastReserved(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if urisyntax.Reserved(s[i]) {
			return i
		}
	}
	return -1
}

// spanOK reports whether s, a piece of a normal URI that starts on an
// octet, is a whole value of a variable: it ends on an octet and, for a
// simple variable, holds no raw reserved character.
func spanOK(s string, reserved bool) bool {
	return boundary(s, len(s)) && (reserved || lastReserved(s) < 0)
}

// decodeValue percent-decodes the value s of a variable: every octet of a
// simple one, those of a reserved one but for reserved characters and
// '%' (see above).
func decodeValue(s string, reserved bool) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if c := urisyntax.Unhex(s[i+1])<<4 | urisyntax.Unhex(s[i+2]); !reserved || c != '%' && !urisyntax.Reserved(c) {
				b = append(b, c)
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

// BadValue returns the first value in vars (a binding Match gave) that
// breaks what the root package promises a template's Read of its
// variables (ResourceTemplate's doc), and why: a simple value
// holding '/', '?' or '#' (decoded from %2F, %3F, %23), or any value
// holding NUL or invalid UTF-8. Such a URI does match (it is an
// expansion of t, so no later template may serve it), but is refused.
func (t *Template) BadValue(vars map[string]string) (name, why string) {
	for _, v := range t.vars {
		s := vars[v.name]
		switch {
		case !v.reserved && strings.ContainsAny(s, "/?#"):
			return v.name, "holds a '/', '?' or '#' (percent-encoded)"
		case strings.IndexByte(s, 0) >= 0:
			return v.name, "holds a NUL (%00)"
		case !utf8.ValidString(s):
			return v.name, "is not valid UTF-8"
		}
	}
	return "", ""
}

// Expand returns the URI t names with vars (RFC 6570 §3.2.2, §3.2.3): in
// a simple expansion each byte of a value but the unreserved ones
// percent-encoded, in a reserved one also the reserved characters and the
// percent-encoded octets of the value written as they are. A variable
// without a value expands to nothing. The literals are written as the
// template has them.
func (t *Template) Expand(vars map[string]string) string {
	var b []byte
	rest := t.raw
	for _, v := range t.vars {
		open := strings.IndexByte(rest, '{')
		b = append(b, rest[:open]...)
		rest = rest[open+strings.IndexByte(rest[open:], '}')+1:]
		s := vars[v.name]
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case urisyntax.Unreserved(c) || v.reserved && urisyntax.Reserved(c):
				b = append(b, c)
			case v.reserved && c == '%' && i+2 < len(s) && urisyntax.IsHex(s[i+1]) && urisyntax.IsHex(s[i+2]):
				b = append(b, s[i:i+3]...)
				i += 2
			default:
				b = urisyntax.AppendPercent(b, c)
			}
		}
	}
	return string(append(b, rest...))
}
