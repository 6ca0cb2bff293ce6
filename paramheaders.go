package mcpmw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// On 2026-07-28 a tool may ask clients to mirror some arguments in HTTP
// headers, so that gateways can route or police calls without reading the
// body: an input-schema property annotated "x-mcp-header": "Region" is sent
// as Mcp-Param-Region. The handler checks every such header against the
// body, because anything that trusted the header would otherwise act on a
// value the tool never sees.

// headerParam is one argument mirrored in an Mcp-Param-* header.
type headerParam struct {
	path   []string // property names from the schema root
	header string   // canonical header name, "Mcp-Param-" + the annotation
	typ    string   // "string", "integer" or "boolean"
	// sensitive marks an argument of Tool.Sensitive: its header carries
	// the same secret, so no message quotes the header's value.
	sensitive bool
}

// headerParams finds the x-mcp-header annotations of a tool's input schema
// and panics on one the specification does not allow: not a non-empty
// RFC 9110 token, not unique (case-insensitively), on a property that is
// not a single string, integer or boolean, or reachable from the root
// other than through "properties". red marks the ones that are sensitive.
func headerParams(tool string, schema []byte, red *redaction) []headerParam {
	if !bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		panic(fmt.Sprintf("mcpmw: tool %q: InputSchema: %v", tool, err))
	}
	var out []headerParam
	seen := map[string]bool{}
	var walk func(node any, path []string, reachable bool)
	walk = func(node any, path []string, reachable bool) {
		switch n := node.(type) {
		case []any:
			for _, v := range n {
				walk(v, path, false)
			}
		case map[string]any:
			keys := make([]string, 0, len(n))
			for k := range n {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				v := n[k]
				switch {
				case k == "x-mcp-header":
					out = append(out, checkHeaderParam(tool, n, v, path, reachable, seen))
				case k == "properties" && reachable:
					props, _ := v.(map[string]any)
					names := make([]string, 0, len(props))
					for name := range props {
						names = append(names, name)
					}
					sort.Strings(names)
					for _, name := range names {
						walk(props[name], append(path[:len(path):len(path)], name), true)
					}
				default:
					walk(v, path, false)
				}
			}
		}
	}
	walk(root, nil, true)
	for i := range out {
		out[i].sensitive = red.covers(out[i].path)
	}
	return out
}

func checkHeaderParam(tool string, prop map[string]any, annotation any, path []string, reachable bool, seen map[string]bool) headerParam {
	where := "arguments." + strings.Join(path, ".")
	name, ok := annotation.(string)
	switch {
	case !reachable || len(path) == 0:
		panic(fmt.Sprintf("mcpmw: tool %q: x-mcp-header may only annotate a property reached from the root through \"properties\" (not items, $defs, $ref or a combinator)", tool))
	case !ok || !isToken(name):
		panic(fmt.Sprintf("mcpmw: tool %q: x-mcp-header of %s must be a non-empty header token (letters, digits and !#$%%&'*+-.^_`|~), not %v", tool, where, annotation))
	case seen[strings.ToLower(name)]:
		panic(fmt.Sprintf("mcpmw: tool %q: x-mcp-header %q is used twice", tool, name))
	}
	typ, _ := prop["type"].(string)
	if typ != "string" && typ != "integer" && typ != "boolean" {
		panic(fmt.Sprintf("mcpmw: tool %q: x-mcp-header %q is on %s, whose type must be string, integer or boolean", tool, name, where))
	}
	seen[strings.ToLower(name)] = true
	return headerParam{path: path, header: http.CanonicalHeaderKey("Mcp-Param-" + name), typ: typ}
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// checkParamHeaders compares each Mcp-Param-* header of a request with the
// argument of its target that it mirrors. A header that is sent must carry the argument's
// value, and the argument must be present and not null. When required (on
// 2026-07-28, where clients must mirror), a header must also be present
// whenever its argument is; the legacy revisions do not know the headers,
// but one sent anyway is still checked, so that no gateway acting on it is
// shown a value the tool does not get. The arguments are a valid JSON
// object whose keys are unique at every depth (checkKeys), so each value
// read here is the one every other reader reads.
func checkParamHeaders(t *Target, req *Request) *answer {
	if len(t.params) == 0 {
		return nil
	}
	args, h, required := req.param("arguments"), req.Header, req.revision().requiresHeaders()
	var ms []jsonwire.Member
	for _, p := range t.params {
		val := args
		for _, name := range p.path {
			var ok bool
			if ms, ok = jsonwire.ObjectMembers(val, ms[:0]); !ok {
				val = nil
				break
			}
			val = jsonwire.Lookup(ms, name)
		}
		where := "arguments." + strings.Join(p.path, ".")
		vals := h[p.header]
		bodyPresent := jsonwire.KindOf(val) != jsonwire.KindNone && jsonwire.KindOf(val) != jsonwire.KindNull
		switch {
		case len(vals) > 1:
			return headerError(p.header + " appears more than once")
		case len(vals) == 0 && bodyPresent && required:
			return headerError(p.header + " header is missing but " + where + " is present")
		case len(vals) == 0:
			continue
		case !bodyPresent:
			return headerError(p.header + " header is present but " + where + " is not")
		}
		hv, err := decodeHeaderValue(strings.Trim(vals[0], " \t"))
		if err != nil {
			return headerError(p.header + " " + err.Error())
		}
		if !paramMatches(p.typ, hv, val) {
			shown := quoteEcho(hv) + " "
			if p.sensitive {
				shown = ""
			}
			return headerError(p.header + " header value " + shown + "does not match " + where)
		}
	}
	return nil
}

// paramMatches compares a decoded header value with the body value it
// mirrors: strings exactly, integers numerically, booleans as true/false.
func paramMatches(typ, header string, body []byte) bool {
	switch typ {
	case "string":
		s, ok := jsonwire.Unquote(body)
		return ok && s == header
	case "integer":
		hb := []byte(header)
		if jsonwire.KindOf(body) != jsonwire.KindNumber || jsonwire.KindOf(hb) != jsonwire.KindNumber || !json.Valid(hb) {
			return false // the header must be a JSON number, as the body is
		}
		b, exact, integral := jsonwire.ParseInt(body)
		h, hexact, hintegral := jsonwire.ParseInt(hb)
		if exact && hexact {
			return integral && hintegral && b == h
		}
		// Beyond int64: compare exactly, for numbers of sane size.
		return integral && hintegral && jsonwire.BigIntegersEqual(body, hb)
	case "boolean":
		return jsonwire.KindOf(body) == jsonwire.KindBool && header == string(body)
	}
	return false
}
