package mcpmw

import (
	"fmt"
	"strings"
)

// URI templates (RFC 6570) as resource templates use them, in the two
// forms a template can be matched against a URI by: simple string
// expansion {var} (level 1), whose value is percent-encoded and so never
// holds '/', '?' or '#', and reserved expansion {+var} (level 2), whose
// value may hold any character, '/' included. A template is parsed once,
// when it is added; matching a URI reads it once, left to right.
//
// Matching is the inverse of expansion: a variable takes one or more
// characters up to the leftmost place where the literal after it follows,
// and the last literal must end the URI. The value is percent-decoded. Two
// variables must be separated by a literal (otherwise no URI says where
// one ends), and a variable appears once.

// uriTemplate is a parsed RFC 6570 template: literals and variables in
// order.
type uriTemplate struct {
	raw   string
	parts []templatePart
	names []string // the variables, in order
}

// templatePart is a literal (name == "") or a variable.
type templatePart struct {
	lit      string
	name     string
	reserved bool // {+name}: may hold reserved characters, '/' included
}

// parseURITemplate parses raw, or says what is wrong with it.
func parseURITemplate(raw string) (*uriTemplate, error) {
	t := &uriTemplate{raw: raw}
	if raw == "" {
		return nil, fmt.Errorf("the template is empty")
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7f || strings.IndexByte(`"'<>\\^`+"`|", c) >= 0 {
			return nil, fmt.Errorf("the character %q at offset %d may not appear in a URI template", c, i)
		}
	}
	rest := raw
	for rest != "" {
		open := strings.IndexAny(rest, "{}")
		lit := rest
		if open >= 0 {
			lit = rest[:open]
		}
		if !validPercent(lit) {
			return nil, fmt.Errorf("the literal %q has a '%%' that starts no pct-encoded octet (write %%25 for a '%%')", lit)
		}
		if open < 0 {
			t.parts = append(t.parts, templatePart{lit: rest})
			break
		}
		if rest[open] == '}' {
			return nil, fmt.Errorf("'}' at offset %d closes no expression", len(raw)-len(rest)+open)
		}
		if open > 0 {
			t.parts = append(t.parts, templatePart{lit: rest[:open]})
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("the expression at offset %d is not closed with '}'", len(raw)-len(rest)+open)
		}
		expr := rest[open+1 : open+end]
		rest = rest[open+end+1:]
		p := templatePart{name: expr}
		if strings.HasPrefix(expr, "+") {
			p.name, p.reserved = expr[1:], true
		}
		if err := checkVarName(p.name, expr); err != nil {
			return nil, err
		}
		for _, n := range t.names {
			if n == p.name {
				return nil, fmt.Errorf("the variable %q appears twice", p.name)
			}
		}
		if k := len(t.parts); k > 0 && t.parts[k-1].name != "" {
			return nil, fmt.Errorf("the variables %q and %q must be separated by a literal", t.parts[k-1].name, p.name)
		}
		t.parts = append(t.parts, p)
		t.names = append(t.names, p.name)
	}
	return t, nil
}

// checkVarName checks the name of an expression: RFC 6570 varname
// (ALPHA / DIGIT / "_" / pct-encoded, dots between), without the
// operators and modifiers of levels 3 and 4.
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
		case c == '%' && i+2 < len(name) && isHex(name[i+1]) && isHex(name[i+2]):
			i += 2
		default:
			return fmt.Errorf("the variable name %q is invalid: use letters, digits, '_' and inner dots", name)
		}
	}
	return nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// match reports whether uri is an expansion of t. When vars is not nil it
// receives the variables' values, percent-decoded.
func (t *uriTemplate) match(uri string, vars map[string]string) bool {
	rest := uri
	for i, p := range t.parts {
		if p.name == "" {
			if !strings.HasPrefix(rest, p.lit) {
				return false
			}
			rest = rest[len(p.lit):]
			continue
		}
		var val string
		switch {
		case i+1 == len(t.parts): // the last part: the rest of the URI
			val, rest = rest, ""
		case i+2 == len(t.parts): // only a literal after it: it ends the URI
			lit := t.parts[i+1].lit
			if len(rest) <= len(lit) || !strings.HasSuffix(rest, lit) {
				return false
			}
			val, rest = rest[:len(rest)-len(lit)], rest[len(rest)-len(lit):]
		default: // the leftmost place the next literal follows a valid value
			lit := t.parts[i+1].lit
			n := valueSpan(rest, p.reserved)
			bad := badPercent(rest[:n], rest)
			at := -1
			for from := 1; from <= bad; { // one pass: each candidate is checked in O(1)
				j := strings.Index(rest[from:], lit)
				if j < 0 || from+j > bad {
					break
				}
				if c := from + j; rest[c-1] != '%' && (c < 2 || rest[c-2] != '%') {
					at = c
					break
				}
				from += j + 1
			}
			if at < 0 {
				return false
			}
			val, rest = rest[:at], rest[at:]
		}
		if val == "" || valueSpan(val, p.reserved) != len(val) || !validPercent(val) {
			return false
		}
		if vars != nil {
			vars[p.name] = percentDecode(val)
		}
	}
	return rest == ""
}

// valueSpan returns the length of the longest prefix of s a variable's
// value can be: up to a '/', '?' or '#' for a simple variable, the whole
// of s for a reserved one.
func valueSpan(s string, reserved bool) int {
	if reserved {
		return len(s)
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		return i
	}
	return len(s)
}

// badPercent returns the offset in span, a prefix of s, of the first '%'
// that is not followed in s by two hex digits, or len(span): no value can
// reach past it.
func badPercent(span, s string) int {
	for i := 0; i < len(span); i++ {
		if span[i] == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return i
			}
			i += 2
		}
	}
	return len(span)
}

// validPercent reports whether every '%' in s starts a pct-encoded octet.
func validPercent(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0; {
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return false
		}
		next := strings.IndexByte(s[i+3:], '%')
		if next < 0 {
			break
		}
		i += 3 + next
	}
	return true
}

// percentDecode decodes the pct-encoded octets of s, which validPercent
// accepted.
func percentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// expand returns the URI t names with vars: each value percent-encoded,
// but for the unreserved characters (and, in a reserved expansion, the
// reserved ones). A '%' is always encoded, so that match gives back the
// values exactly. A variable without a value expands to nothing.
func (t *uriTemplate) expand(vars map[string]string) string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.name == "" {
			b.WriteString(p.lit)
			continue
		}
		v := vars[p.name]
		for i := 0; i < len(v); i++ {
			c := v[i]
			if unreserved(c) || p.reserved && reservedChar(c) {
				b.WriteByte(c)
				continue
			}
			const hex = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
	}
	return b.String()
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func reservedChar(c byte) bool { return strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0 }
