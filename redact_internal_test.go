package mcpmw

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// redactSchema declares every member the redaction tests name.
const redactSchema = `{"type":"object","properties":{"password":{"type":"string"},"a":{},` +
	`"card":{"type":"object","properties":{"number":{"type":"string"},"exp":{"type":"string"}}},` +
	`"tokens":{"type":"array","items":{"type":"string"}},"pairs":{"type":"array","items":{"type":"array","items":{"type":"string"}}},` +
	`"rows":{"type":"array","items":{"type":"object","properties":{"cvc":{"type":"string"}}}},` +
	`"env":{"type":"object","additionalProperties":{"type":"string"}},"a/b":{},"m~n":{}}}`

func TestRedactionArguments(t *testing.T) {
	t.Parallel()
	r := compileSensitive("t", []string{"/password", "/card/number", "/tokens/*", "/rows/1/cvc", "/env/*", "/a~1b", "/m~0n", "/pairs/*/0"}, []byte(redactSchema))
	for _, tc := range []struct{ name, in, want string }{
		{"top-level member", `{"password":"x","a":1}`, `{"password":"[redacted]","a":1}`},
		{"spacing dropped", " { \"password\" : \"x\" ,\n \"a\" : [ 1 , 2 ] } ", `{"password":"[redacted]","a":[ 1 , 2 ]}`},
		{"escaped, other case, repeated; null kept", `{"\u0070assword":"x","PASSWORD":"y","password":null,"password":"z"}`,
			`{"password":"[redacted]","PASSWORD":"[redacted]","password":null,"password":"[redacted]"}`},
		{"a redacted member is named as decoded, others as sent", `{"c\u0061rd":{"numb\u0065r":"1","\u0065xp":"2"}}`, `{"c\u0061rd":{"number":"[redacted]","\u0065xp":"2"}}`},
		{"any kind of value", `{"password":{"a":[1]},"a":true}`, `{"password":"[redacted]","a":true}`},
		{"nested member", `{"card":{"number":"4111","exp":"12/30"}}`, `{"card":{"number":"[redacted]","exp":"12/30"}}`},
		{"every element", `{"tokens":["a","b",null]}`, `{"tokens":["[redacted]","[redacted]",null]}`},
		{"one element", `{"rows":[{"cvc":"1","x":3},{"cvc":"2"},{"cvc":"3"}]}`, `{"rows":[{"cvc":"1","x":3},{"cvc":"[redacted]"},{"cvc":"3"}]}`},
		{"every member of a map", `{"env":{"A":"1","B":{"c":2}}}`, `{"env":{"A":"[redacted]","B":"[redacted]"}}`},
		{"array in array", `{"pairs":[["k","v"],["k2"],[]]}`, `{"pairs":[["[redacted]","v"],["[redacted]"],[]]}`},
		{"escaped pointer tokens", `{"a/b":1,"m~n":2,"a":3}`, `{"a/b":"[redacted]","m~n":"[redacted]","a":3}`},
		{"a scalar where an object was named", `{"card":"4111","card":12,"card":true,"card":null}`, `{"card":"[redacted]","card":"[redacted]","card":"[redacted]","card":null}`},
		{"an array where a member was named", `{"card":["4111"]}`, `{"card":"[redacted]"}`},
		{"an object where an element was named", `{"tokens":{"0":"a","x":"b"}}`, `{"tokens":{"0":"[redacted]","x":"[redacted]"}}`},
		{"an index token reads an object's member too", `{"rows":{"1":{"cvc":"2"}}}`, `{"rows":{"1":{"cvc":"[redacted]"}}}`},
		{"an index token does not fold", `{"rows":[{"cvc":"1"}]}`, `{"rows":[{"cvc":"1"}]}`},
		{"untouched", `{"a":{"x":"y","password":"z"},"tokens":null}`, `{"a":{"x":"y","password":"z"},"tokens":null}`},
		{"empty object", `{}`, `{}`},
		{"null arguments", `null`, `null`},
		{"a string", `"4111"`, `"[redacted]"`},
		{"a number", `42`, `"[redacted]"`},
		{"an array", `["4111"]`, `"[redacted]"`},
		{"not JSON", `{"password":`, `"[redacted]"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := r.arguments(json.RawMessage(tc.in))
			assert.Equal(t, tc.want, string(got))
			assert.True(t, json.Valid(got), "valid JSON")
		})
	}
	var none *redaction
	assert.Equal(t, `{"password":"x"}`, string(none.arguments(json.RawMessage(`{"password":"x"}`))), "nil: as sent")
	assert.Nil(t, r.arguments(nil), "absent stays absent")
}

func TestRedactionArrayRoot(t *testing.T) {
	t.Parallel()
	// Arguments are an object, but a pointer that indexes the root still
	// reads an array there.
	r := compileSensitive("t", []string{"/1"}, []byte(`{"items":{}}`))
	assert.Equal(t, `[0,"[redacted]",2]`, string(r.arguments(json.RawMessage(`[0, 1 ,2]`))))
	r = compileSensitive("t", []string{"/1"}, []byte(`{"prefixItems":[{},{}],"items":false}`))
	assert.Equal(t, `[0,"[redacted]","[redacted]"]`, string(r.arguments(json.RawMessage(`[0, 1 ,2]`))), "an element the schema does not name")
	r = &redaction{paths: [][]string{{"*"}}, all: []int{0}}
	assert.Equal(t, `["[redacted]","[redacted]"]`, string(r.arguments(json.RawMessage(`[0,1]`))))
}

func TestParsePointer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{"/a", []string{"a"}, ""},
		{"/a/0/*", []string{"a", "0", "*"}, ""},
		{"/a~1b/m~0n/~01", []string{"a/b", "m~n", "~1"}, ""},
		{"/", []string{""}, ""},
		{"", nil, "is empty"},
		{"a", nil, `must start with "/"`},
		{"/a~2", nil, `"~" not followed by 0 or 1`},
		{"/a~", nil, `"~" not followed by 0 or 1`},
		{"/\xff", nil, "not valid UTF-8"},
	} {
		got, err := parsePointer(tc.in)
		if tc.err != "" {
			require.Error(t, err, tc.in)
			assert.Contains(t, err.Error(), tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestSensitivePointerDeclared(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, schema, ptr string
		ok                bool
	}{
		{"property", `{"properties":{"p":{}}}`, "/p", true},
		{"boolean subschema", `{"properties":{"p":true}}`, "/p", true},
		{"missing", `{"properties":{"p":{}}}`, "/q", false},
		{"case matters", `{"properties":{"p":{}}}`, "/P", false},
		{"beyond a boolean subschema", `{"properties":{"p":true}}`, "/p/q", false},
		{"beyond a leaf", `{"properties":{"p":{"type":"string"}}}`, "/p/q", false},
		{"nested", `{"properties":{"p":{"properties":{"q":{}}}}}`, "/p/q", true},
		{"star over properties", `{"properties":{"p":{"properties":{"q":{}}}}}`, "/*/q", true},
		{"star over no properties", `{"properties":{"p":{}}}`, "/p/*", false},
		{"additionalProperties", `{"additionalProperties":{"properties":{"q":{}}}}`, "/any/q", true},
		{"additionalProperties star", `{"additionalProperties":{}}`, "/*", true},
		{"additionalProperties true declares nothing", `{"additionalProperties":true}`, "/x", false},
		{"patternProperties", `{"patternProperties":{"^x":{}}}`, "/xa", true},
		{"items", `{"properties":{"a":{"items":{"properties":{"n":{}}}}}}`, "/a/*/n", true},
		{"items by index", `{"properties":{"a":{"items":{}}}}`, "/a/3", true},
		{"items by name", `{"properties":{"a":{"items":{}}}}`, "/a/x", false},
		{"items by leading zero", `{"properties":{"a":{"items":{}}}}`, "/a/01", false},
		{"prefixItems", `{"properties":{"a":{"prefixItems":[{},{"properties":{"n":{}}}]}}}`, "/a/1/n", true},
		{"prefixItems too short", `{"properties":{"a":{"prefixItems":[{}]}}}`, "/a/1", false},
		{"prefixItems, an index beyond int", `{"properties":{"a":{"prefixItems":[{}]}}}`, "/a/99999999999999999999", false},
		{"prefixItems star", `{"properties":{"a":{"prefixItems":[{},{"properties":{"n":{}}}]}}}`, "/a/*/n", true},
		{"draft-07 items array", `{"properties":{"a":{"items":[{},{"properties":{"n":{}}}]}}}`, "/a/1/n", true},
		{"$ref", `{"$defs":{"c":{"properties":{"n":{}}}},"properties":{"c":{"$ref":"#/$defs/c"}}}`, "/c/n", true},
		{"$ref percent-encoded", `{"$defs":{"a c":{"properties":{"n":{}}}},"properties":{"c":{"$ref":"#/$defs/a%20c"}}}`, "/c/n", true},
		{"$ref to the root", `{"properties":{"a":{"$ref":"#"},"n":{}}}`, "/a/a/n", true},
		{"$ref through an array", `{"allOf":[{"properties":{"n":{}}}],"properties":{"c":{"$ref":"#/allOf/0"}}}`, "/c/n", true},
		{"$ref through a bad index", `{"allOf":[{}],"properties":{"c":{"$ref":"#/allOf/1"}}}`, "/c/n", false},
		{"$ref through a name into an array", `{"allOf":[{"properties":{"n":{}}}],"properties":{"c":{"$ref":"#/allOf/x"}}}`, "/c/n", false},
		{"$ref through a negative index", `{"allOf":[{"properties":{"n":{}}}],"properties":{"c":{"$ref":"#/allOf/-1"}}}`, "/c/n", false},
		{"$ref through a scalar", `{"x":1,"properties":{"c":{"$ref":"#/x/y"}}}`, "/c/n", false},
		{"$ref dangling", `{"properties":{"c":{"$ref":"#/$defs/none"}}}`, "/c/n", false},
		{"$ref remote", `{"properties":{"c":{"$ref":"https://example.com/s"}}}`, "/c/n", false},
		{"$ref bad escape", `{"properties":{"c":{"$ref":"#/a~2"}}}`, "/c/n", false},
		{"$ref bad percent", `{"properties":{"c":{"$ref":"#/%zz"}}}`, "/c/n", false},
		{"$ref loop", `{"$defs":{"a":{"$ref":"#/$defs/a"}},"properties":{"c":{"$ref":"#/$defs/a"}}}`, "/c/n", false},
		{"allOf", `{"allOf":[{},{"properties":{"p":{}}}]}`, "/p", true},
		{"anyOf", `{"anyOf":[{"properties":{"p":{}}}]}`, "/p", true},
		{"oneOf", `{"oneOf":[{"properties":{"p":{}}}]}`, "/p", true},
		{"then", `{"if":{},"then":{"properties":{"p":{}}}}`, "/p", true},
		{"else", `{"if":{},"else":{"properties":{"p":{}}}}`, "/p", true},
		{"if declares nothing", `{"if":{"properties":{"p":{}}}}`, "/p", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var root any
			require.NoError(t, json.Unmarshal([]byte(tc.schema), &root))
			toks, err := parsePointer(tc.ptr)
			require.NoError(t, err)
			assert.Equal(t, tc.ok, declares(root, root, toks, map[schemaVisit]bool{}))
		})
	}
}

func TestSensitivePointerCycles(t *testing.T) {
	t.Parallel()
	// n and m refer to each other through anyOf without going deeper, and
	// n's member x is n again: the walk must end, and still find /x/x.
	schema := `{"$defs":{"n":{"anyOf":[{"$ref":"#/$defs/m"},{"$ref":"#/$defs/m"}],"properties":{"x":{"$ref":"#/$defs/n"}}},` +
		`"m":{"anyOf":[{"$ref":"#/$defs/n"},{"$ref":"#/$defs/n"}]}},"$ref":"#/$defs/n"}`
	var root any
	require.NoError(t, json.Unmarshal([]byte(schema), &root))
	assert.False(t, declares(root, root, []string{"x", "x", "x", "x", "x", "x", "y"}, map[schemaVisit]bool{}))
	assert.True(t, declares(root, root, []string{"x", "x"}, map[schemaVisit]bool{}))
}

func TestRedactionCovers(t *testing.T) {
	t.Parallel()
	r := &redaction{paths: [][]string{{"password"}, {"card", "*"}, {"deep", "a", "b"}, {"wallet"}}}
	for _, tc := range []struct {
		path []string
		want bool
	}{
		{[]string{"password"}, true},
		{[]string{"Password"}, true},
		{[]string{"card", "number"}, true},
		{[]string{"card"}, false},
		{[]string{"deep", "a"}, false},
		{[]string{"deep", "a", "b"}, true},
		{[]string{"deep", "x", "b"}, false},
		{[]string{"user"}, false},
		{[]string{"wallet", "number"}, true}, // inside what a pointer names
		{[]string{"Wallet", "a", "b"}, true},
		{[]string{"card", "number", "digits"}, true},
		{[]string{"walle"}, false},
	} {
		assert.Equal(t, tc.want, r.covers(tc.path), "%v", tc.path)
	}
	var none *redaction
	assert.False(t, none.covers([]string{"password"}))
}

func TestIsArrayIndex(t *testing.T) {
	t.Parallel()
	for tok, want := range map[string]bool{"0": true, "7": true, "9": true, "10": true, "90": true, "": false, "01": false, "-1": false, "1a": false, "*": false, "/": false, ":": false} {
		assert.Equal(t, want, isArrayIndex(tok), "%q", tok)
	}
}

func TestArgErrorText(t *testing.T) {
	t.Parallel()
	a := NewArgs([]byte(`{"pin":1.5}`))
	a.Int("pin")
	var ae *ArgError
	require.ErrorAs(t, a.Err(), &ae)
	assert.Equal(t, `argument "pin" must be an integer, not 1.5`, ae.text(false))
	assert.Equal(t, `argument "pin" must be an integer, not [redacted]`, ae.text(true))
	assert.Equal(t, "must be an integer, not 1.5", ae.Problem, "the tool sees the value")
	plain := &ArgError{Field: "pin", Problem: "is required"}
	assert.Equal(t, `argument "pin" is required`, plain.text(true), "a problem quoting nothing stays")
}

// TestSealedStateCarriesNoArgumentDigest checks what SECURITY.md says of
// requestState and sensitive arguments: the arguments' digest binds the
// state as additional data only, so neither it nor the arguments are in
// what the client holds (and may log); without the ring's key, a state
// tells nothing about them.
func TestSealedStateCarriesNoArgumentDigest(t *testing.T) {
	t.Parallel()
	args := []byte(`{"password":"hunter2"}`)
	b := testBinding()
	b.args = argsDigest(args)
	s := mustSeal(t, mustRing(t, stateKey1), b, []byte("round 2"))
	blob, err := stateEncoding.DecodeString(s)
	require.NoError(t, err)
	assert.NotContains(t, string(blob), string(b.args[:]), "no digest")
	assert.NotContains(t, string(blob), "hunter2")
	assert.NotContains(t, s, "hunter2")
	assert.Len(t, blob, stateOverhead+len("round 2"), "header, nonce, ciphertext and tag: nothing else")
}

// unnamedSchema declares what TestRedactionUnnamedMembers sends, through
// each keyword that names a member or an element.
const unnamedSchema = `{"type":"object","properties":{"api_key":{"type":"string"},"user":{"type":"string"},` +
	`"card":{"type":"object","properties":{"number":{"type":"string"},"exp":{"type":"string"}},"additionalProperties":false},` +
	`"conf":{"type":"object","properties":{"token":{}},"additionalProperties":{"type":"string"}},` +
	`"vault":{"type":"object","properties":{"key":{}},"patternProperties":{"^note_":{},"(?<=x)y":{}}},` +
	`"ref":{"$ref":"#/$defs/cred"},"either":{"anyOf":[{"properties":{"pin":{}}},{"properties":{"hint":{}}}]},` +
	`"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"string"}],"items":false},` +
	`"rows":{"type":"array","items":{"type":"object","properties":{"cvc":{},"label":{}}}},` +
	`"deny":false},` +
	`"$defs":{"cred":{"allOf":[{"properties":{"pin":{}}},{"properties":{"label":{}}}]}}}`

// TestRedactionUnnamedMembers: where a Sensitive pointer leads, a member
// or element the input schema does not name is redacted whole, so a
// misspelt secret is not recorded; off those paths the arguments are
// recorded as sent.
func TestRedactionUnnamedMembers(t *testing.T) {
	t.Parallel()
	r := compileSensitive("t", []string{"/api_key", "/card/number", "/conf/token", "/vault/key", "/ref/pin", "/either/pin",
		"/pair/0", "/rows/*/cvc"}, []byte(unnamedSchema))
	for _, tc := range []struct{ name, in, want string }{
		{"misspelt at the top", `{"apiKey":"s","user":"ann"}`, `{"apiKey":"[redacted]","user":"ann"}`},
		{"misspelt, named as decoded", `{"api\u004bey":"s"}`, `{"apiKey":"[redacted]"}`},
		{"a case twin of a declared member", `{"User":"s","user":"ann"}`, `{"User":"[redacted]","user":"ann"}`},
		{"a case twin of the sensitive one", `{"API_KEY":"s"}`, `{"API_KEY":"[redacted]"}`},
		{"an unnamed null holds nothing", `{"apiKey":null}`, `{"apiKey":null}`},
		{"misspelt nested", `{"card":{"nubmer":"4111","exp":"12/30"}}`, `{"card":{"nubmer":"[redacted]","exp":"12/30"}}`},
		{"misspelt parent", `{"crad":{"number":"4111"}}`, `{"crad":"[redacted]"}`},
		{"under a case twin of the parent", `{"Card":{"number":"4111","exp":"12/30"}}`, `{"Card":{"number":"[redacted]","exp":"[redacted]"}}`},
		{"additionalProperties admits, names nothing", `{"conf":{"token":"t","tokne":"s"}}`, `{"conf":{"token":"[redacted]","tokne":"[redacted]"}}`},
		{"patternProperties names", `{"vault":{"key":"k","note_1":"n","notes":"s","xy":"s"}}`,
			`{"vault":{"key":"[redacted]","note_1":"n","notes":"[redacted]","xy":"[redacted]"}}`},
		{"through $ref and allOf", `{"ref":{"pin":1,"label":"l","lable":"s"}}`, `{"ref":{"pin":"[redacted]","label":"l","lable":"[redacted]"}}`},
		{"through anyOf, either branch", `{"either":{"pin":1,"hint":"h","hnit":"s"}}`, `{"either":{"pin":"[redacted]","hint":"h","hnit":"[redacted]"}}`},
		{"an element beyond the tuple", `{"pair":["k","v","s"]}`, `{"pair":["[redacted]","v","[redacted]"]}`},
		{"an element off the pointer, named by items", `{"rows":[{"cvc":"1","label":"a","lable":"s"},{"cvc":"2"}]}`,
			`{"rows":[{"cvc":"[redacted]","label":"a","lable":"[redacted]"},{"cvc":"[redacted]"}]}`},
		{"a property whose schema is false names nothing", `{"deny":"s"}`, `{"deny":"[redacted]"}`},
		{"a wrong type where an object was expected", `{"card":"4111","conf":["s"],"ref":7}`, `{"card":"[redacted]","conf":"[redacted]","ref":"[redacted]"}`},
		{"an object where an array was expected", `{"pair":{"0":"k","1":"s"}}`, `{"pair":{"0":"[redacted]","1":"[redacted]"}}`},
		{"off every path, as sent", `{"user":{"apiKey":"s"}}`, `{"user":{"apiKey":"s"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := r.arguments(json.RawMessage(tc.in))
			assert.Equal(t, tc.want, string(got))
			assert.True(t, json.Valid(got), "valid JSON")
		})
	}
}

// TestRedactionSchemaCycle: a recursive schema (a $ref to an ancestor)
// is compiled once per subschema, and names members at every depth.
func TestRedactionSchemaCycle(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"secret":{},"next":{"$ref":"#"}}}`
	r := compileSensitive("t", []string{"/next/next/secret"}, []byte(schema))
	assert.Equal(t, `{"next":{"next":{"secret":"[redacted]","next":{"x":1}},"x":"[redacted]"}}`,
		string(r.arguments(json.RawMessage(`{"next":{"next":{"secret":"s","next":{"x":1}},"x":"s"}}`))))
}

// TestUnknownToolArgumentsRedacted: a call naming no tool has every
// argument redacted while some tool of the Registry has sensitive ones (a
// misspelt tool name), and costs nothing otherwise.
func TestUnknownToolArgumentsRedacted(t *testing.T) {
	t.Parallel()
	var reg Registry
	call := func(context.Context, Caller, *Args) (ToolResult, error) { return TextResult("ok"), nil }
	schema := json.RawMessage(`{"type":"object","properties":{"password":{"type":"string"}}}`)
	reg.AddTools(Tool{Name: "plain", Permission: "read", Call: call})
	assert.Nil(t, reg.toolRedaction("logn"), "no sensitive tool: nothing to redact")
	reg.AddTools(Tool{Name: "login", Permission: "read", Call: call, InputSchema: schema, Sensitive: []string{"/password"}})
	assert.Nil(t, reg.toolRedaction("plain"))
	assert.Equal(t, `{"password":"[redacted]","n":null,"list":"[redacted]"}`,
		string(reg.toolRedaction("logn").arguments(json.RawMessage(`{"password":"s","n":null,"list":[1]}`))))
	assert.Equal(t, `["[redacted]"]`, string(reg.toolRedaction("logn").arguments(json.RawMessage(`["s"]`))))
	reg.RemoveTools("login")
	assert.Nil(t, reg.toolRedaction("logn"), "the sensitive tool gone")
	var none *Registry
	assert.Nil(t, none.toolRedaction("logn"))
}

// Naming a member or an element against the schema allocates nothing: the
// subschemas are gathered only for what a pointer goes on into. Members
// and elements named and left as sent (a, rows[2], rows[3]) cost no more
// than their absence.
func TestRedactionAllocatesOnlyItsOutput(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's own allocations vary")
	}
	r := compileSensitive("t", []string{"/password", "/card/number", "/rows/1/cvc"}, []byte(redactSchema))
	small := json.RawMessage(`{"password":"a-long-enough-secret","card":{"number":"4111111111111111"},"rows":[{"cvc":"1"},{"cvc":"22222222222222"}]}`)
	wide := json.RawMessage(`{"password":"a-long-enough-secret","a":{"x":1},"card":{"number":"4111111111111111"},` +
		`"rows":[{"cvc":"1"},{"cvc":"22222222222222"},{"cvc":"3"},{"cvc":"4"}]}`)
	assert.Equal(t, `{"password":"[redacted]","a":{"x":1},"card":{"number":"[redacted]"},"rows":[{"cvc":"1"},{"cvc":"[redacted]"},{"cvc":"3"},{"cvc":"4"}]}`,
		string(r.arguments(wide)))
	base := testing.AllocsPerRun(100, func() { r.arguments(small) })
	more := testing.AllocsPerRun(100, func() { r.arguments(wide) })
	assert.Equal(t, base, more)
	// What small costs: the buffer, its names decoded (password, card,
	// number, rows, cvc), and the paths going on and the subschemas they
	// go on into at each level (root, card, rows, rows[1]); the schema has
	// no alternatives, so gathering what applies at a level costs nothing.
	assert.LessOrEqual(t, base, 11.0)
}

// A member an "additionalProperties" schema admits, where no pointer goes
// on into it, costs nothing either: its subschema is not gathered.
func TestRedactionAdmittedMemberAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's own allocations vary")
	}
	r := compileSensitive("t", []string{"/conf/token"}, []byte(unnamedSchema))
	small := json.RawMessage(`{"conf":{"token":"a-long-enough-secret"}}`)
	wide := json.RawMessage(`{"conf":{"token":"a-long-enough-secret","a":"longer-than-it","b":"longer-than-it","c":"longer-than-it","d":"longer-than-it"}}`)
	base := testing.AllocsPerRun(100, func() { r.arguments(small) })
	more := testing.AllocsPerRun(100, func() { r.arguments(wide) })
	assert.Equal(t, `{"conf":{"token":"[redacted]","a":"[redacted]","b":"[redacted]","c":"[redacted]","d":"[redacted]"}}`, string(r.arguments(wide)))
	assert.Equal(t, base, more, "four more members, admitted and redacted, allocate nothing")
}
