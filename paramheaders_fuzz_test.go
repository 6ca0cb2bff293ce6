package mcpmw

import (
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// paramSchema annotates a string, an integer, a boolean and a nested string.
const paramSchema = `{"type":"object","properties":{
	"project":{"type":"string","x-mcp-header":"Project"},
	"n":{"type":"integer","x-mcp-header":"N"},
	"b":{"type":"boolean","x-mcp-header":"B"},
	"o":{"type":"object","properties":{"inner":{"type":"string","x-mcp-header":"Inner"}}}}}`

// FuzzParamHeaders checks the Mcp-Param-* comparison against an independent
// reading of the arguments (encoding/json, math/big): a header must be
// present exactly when its argument is present and not null, and decode to
// the same value (strings exactly, integers numerically, booleans as
// true/false); anything else is 400 -32020.
func FuzzParamHeaders(f *testing.F) {
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	for _, tt := range []struct {
		args               string
		present            uint8
		project, n, b, inn string
	}{
		{`{"project":"eu-west-1","n":5,"b":true,"o":{"inner":"x"}}`, 15, "eu-west-1", "5", "true", "x"},
		{`{"project":"Zürich","n":1e2}`, 3, b64("Zürich"), "100", "", ""},
		{`{"project":"eu"}`, 1, " eu\t", "", "", ""},
		{`{"n":-0}`, 2, "", "0", "", ""},
		{`{"n":5}`, 2, "", "5.0", "", ""},
		{`{"n":5}`, 2, "", "+5", "", ""},
		{`{"n":123456789012345678901234567890}`, 2, "", "123456789012345678901234567890", "", ""},
		{`{"b":false}`, 4, "", "", "False", ""},
		{`{"project":null}`, 1, "x", "", "", ""},
		{`{}`, 0, "", "", "", ""},
		{`{"o":{"inner":""}}`, 8, "", "", "", ""},
		{`{"project":"a","project":"b"}`, 1, "b", "", "", ""},
	} {
		f.Add([]byte(tt.args), tt.present, tt.project, tt.n, tt.b, tt.inn)
	}
	params := headerParams("t", []byte(paramSchema), nil)
	if len(params) != 4 {
		f.Fatalf("headerParams found %d annotations, want 4", len(params))
	}
	f.Fuzz(func(t *testing.T, args []byte, present uint8, project, n, b, inner string) {
		if !json.Valid(args) || jsonwire.KindOf(args[jsonwire.SkipSpace(args, 0):]) != jsonwire.KindObject {
			return // the handler refuses these before any header check
		}
		h := http.Header{}
		values := map[string]string{"Mcp-Param-Project": project, "Mcp-Param-N": n, "Mcp-Param-B": b, "Mcp-Param-Inner": inner}
		for i, name := range []string{"Mcp-Param-Project", "Mcp-Param-N", "Mcp-Param-B", "Mcp-Param-Inner"} {
			if present&(1<<i) != 0 {
				h[name] = []string{values[name]}
			}
		}
		req := &Request{Params: append(append([]byte(`{"arguments":`), args...), '}'), Header: h, Version: LatestVersion}
		req.parsed.read(req.Params)
		a := checkParamHeaders(&Target{params: params}, req)
		var resp *Response
		if a != nil {
			resp = a.resp
			if a.status != http.StatusBadRequest || resp.Error.Code != CodeHeaderMismatch || len(resp.Error.Message) > 1024 {
				t.Fatalf("refusal %d %+v", a.status, resp)
			}
		}
		want, ambiguous, unknown := true, false, false
		for _, p := range params {
			v, dup := refPath(args, p.path)
			ambiguous = ambiguous || dup
			bodyPresent := v != nil && string(v) != "null"
			hv, hPresent := h[p.header]
			switch {
			case hPresent != bodyPresent:
				want = false
			case !hPresent:
			default:
				dec, err := decodeHeaderValue(strings.Trim(hv[0], " \t"))
				match, known := refParamMatch(p.typ, dec, v)
				want = want && err == nil && (match || !known) // an unknown match is settled below
				unknown = unknown || (err == nil && !known)
			}
		}
		if ambiguous || (unknown && want) {
			return // a duplicate member (the tool refuses the arguments anyway), or a number math/big cannot cheaply expand
		}
		if got := resp == nil; got != want {
			t.Fatalf("args %s, headers %v: accepted %v, want %v (%+v)", args, h, got, want, resp)
		}
	})
}

// refPath reads the value at path with encoding/json; dup reports a
// duplicate member on the way, where readers disagree.
func refPath(doc []byte, path []string) (v json.RawMessage, dup bool) {
	v = doc
	for _, name := range path {
		if ms, ok := jsonwire.ObjectMembers(v, nil); ok {
			_, d := jsonwire.DuplicateKey(ms)
			dup = dup || d
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(v, &m) != nil || m == nil {
			return nil, dup
		}
		v = m[name]
	}
	return v, dup
}

// refParamMatch compares a decoded header value with the body value it
// mirrors; known is false for numbers with an exponent too large to expand.
func refParamMatch(typ, header string, body json.RawMessage) (match, known bool) {
	switch typ {
	case "string":
		var s string
		return len(body) > 0 && body[0] == '"' && json.Unmarshal(body, &s) == nil && s == header, true
	case "boolean":
		return (string(body) == "true" || string(body) == "false") && header == string(body), true
	case "integer":
		if len(body) == 0 || strings.ContainsAny(string(body[:1]), `"tfn[{`) || !json.Valid([]byte(header)) || strings.ContainsAny(header[:1], `"tfn[{`) {
			return false, true
		}
		if bigExponent(string(body)) || bigExponent(header) {
			return false, false
		}
		x, ok1 := new(big.Rat).SetString(string(body))
		y, ok2 := new(big.Rat).SetString(header)
		return ok1 && ok2 && x.IsInt() && y.IsInt() && x.Cmp(y) == 0, true
	}
	return false, true
}

func bigExponent(s string) bool {
	i := strings.IndexAny(s, "eE")
	return i >= 0 && len(strings.TrimLeft(s[i+1:], "+-0")) > 3
}
