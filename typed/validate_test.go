package typed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/typed"
)

// echoArgs is a raw tool that echoes its arguments, for wrapping.
func echoArgs(schema string) mcpmw.Tool {
	return mcpmw.Tool{Name: "t", Description: "d", Permission: "p", InputSchema: json.RawMessage(schema),
		Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult(string(args.Raw())), nil
		}}
}

const orderSchema = `{
	"type":"object",
	"$defs":{"qty":{"type":"integer","minimum":1}},
	"properties":{
		"days":{"type":"integer","minimum":1,"maximum":14},
		"city":{"type":"string","minLength":2,"maxLength":5,"pattern":"^[A-Z]"},
		"unit":{"enum":["C","F"]},
		"kind":{"const":"order"},
		"ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1,"multipleOf":0.25},
		"tags":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2,"uniqueItems":true},
		"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}]},
		"lines":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"},"qty":{"$ref":"#/$defs/qty"}},"required":["sku"],"additionalProperties":false}},
		"refs":{"type":"array","items":{"$ref":"#/$defs/qty"}},
		"meta":{"type":"object","additionalProperties":{"type":"integer"}},
		"labels":{"type":"object","patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false},
		"either":{"anyOf":[{"type":"string"},{"type":"integer"}]},
		"a/b":{"type":"boolean"},
		"props":{"type":"object","minProperties":1,"maxProperties":1},
		"dep":{"type":"object","dependentRequired":{"a":["b"]}}
	},
	"required":["days"],
	"additionalProperties":false
}`

func TestValidateNamesTheFailingValue(t *testing.T) {
	t.Parallel()
	tool := typed.Validate(echoArgs(orderSchema))
	for _, tt := range []struct{ args, field, problem string }{
		{`{}`, "days", "is required"},
		{`{"days":0}`, "days", "must be >= 1"},
		{`{"days":15}`, "days", "must be <= 14"},
		{`{"days":1.5}`, "days", "must be an integer, not a number"},
		{`{"days":"1"}`, "days", "must be an integer, not a string"},
		{`{"days":1,"extra":1}`, "extra", "is not allowed: the schema has no such member"},
		{`{"days":1,"City":"Oslo"}`, "City", `is not an argument name: names are case-sensitive (the tool reads "city")`},
		{`{"days":1,"city":"O"}`, "city", "must be at least 2 characters long"},
		{`{"days":1,"city":"Oslooo"}`, "city", "must be at most 5 characters long"},
		{`{"days":1,"city":"oslo"}`, "city", `must match the pattern "^[A-Z]"`},
		{`{"days":1,"unit":"K"}`, "unit", `must be one of ["C","F"]`},
		{`{"days":1,"kind":"x"}`, "kind", `must be "order"`},
		{`{"days":1,"ratio":0}`, "ratio", "must be > 0"},
		{`{"days":1,"ratio":1}`, "ratio", "must be < 1"},
		{`{"days":1,"ratio":0.3}`, "ratio", "must be a multiple of 0.25"},
		{`{"days":1,"tags":[]}`, "tags", "must have at least 1 item"},
		{`{"days":1,"tags":["a","b","c"]}`, "tags", "must have at most 2 items"},
		{`{"days":1,"tags":["a","a"]}`, "tags", "must not hold two equal items"},
		{`{"days":1,"tags":["a",2]}`, "/tags/1", "must be a string, not an integer"},
		{`{"days":1,"pair":["a","b"]}`, "/pair/1", "must be an integer, not a string"},
		{`{"days":1,"lines":[{"sku":"a"},{"sku":"b","qty":0}]}`, "/lines/1/qty", "must be >= 1"},
		{`{"days":1,"lines":[{"sku":"a"},{"qty":2}]}`, "/lines/1/sku", "is required"},
		{`{"days":1,"lines":[{"sku":"a","SKU":"b"}]}`, "/lines/0/SKU", `is not an argument name: names are case-sensitive (the tool reads "sku")`},
		{`{"days":1,"refs":[1,2,0]}`, "/refs/2", "must be >= 1"},
		{`{"days":1,"meta":{"a":1,"b":"x"}}`, "/meta/b", "must be an integer, not a string"},
		{`{"days":1,"labels":{"x-a":"1","x-b":2}}`, "/labels/x-b", "must be a string, not an integer"},
		{`{"days":1,"labels":{"x-a":"1","y":"2"}}`, "/labels/y", "is not allowed: the schema has no such member"},
		{`{"days":1,"either":true}`, "either", "does not match the schema (anyOf)"},
		{`{"days":1,"a/b":1}`, "a/b", "must be a boolean, not an integer"},
		{`{"days":1,"props":{}}`, "props", "must have at least 1 member"},
		{`{"days":1,"props":{"a":1,"b":2}}`, "props", "must have at most 1 member"},
		{`{"days":1,"dep":{"a":1}}`, "dep", "lacks a member that another of its members requires"},
		{`{"days":1e400}`, "", "they hold a number out of range"},
		{`[1]`, "", "arguments must be a JSON object, not an array"},
		{`{"days":1,"days":2}`, "days", "appears more than once"},
		{`{"days":1,"lines":[{"sku":"a","sku":"b"}]}`, "/lines/0/sku", "appears more than once"},
	} {
		t.Run(tt.args, func(t *testing.T) {
			t.Parallel()
			_, err := tool.Call(t.Context(), allowAll{}, mcpmw.NewArgs([]byte(tt.args)))
			var ae *mcpmw.ArgError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tt.field, ae.Field)
			assert.Equal(t, tt.problem, ae.Problem)
		})
	}
	for _, args := range []string{`{"days":1}`, `{"days":14,"city":"Oslo","unit":"C","kind":"order","ratio":0.5,"tags":["a"],` +
		`"pair":["a",1,true],"lines":[{"sku":"a","qty":2}],"refs":[1],"meta":{"a":1},"labels":{"x-a":"b"},"either":3,"a/b":true}`} {
		res, err := tool.Call(t.Context(), allowAll{}, mcpmw.NewArgs([]byte(args)))
		require.NoError(t, err, args)
		assert.Equal(t, args, res.AllText())
	}
}

// The failure reaches the client as an isError result on 2026-07-28 and on
// the legacy revisions alike, and a long name is capped.
func TestValidateOverTheWire(t *testing.T) {
	t.Parallel()
	h := newHandler(typed.Validate(echoArgs(`{"type":"object","properties":{"days":{"type":"integer","minimum":1}},"additionalProperties":false}`)))
	_, resp := call(h, "t", `{"days":0}`)
	require.NotNil(t, resp.Result)
	assert.True(t, resp.Result.IsError)
	assert.Equal(t, `Invalid arguments: argument "days" must be >= 1. Check the tool's input schema and call it again.`, resp.text())

	long := strings.Repeat("k", 5000)
	_, resp = call(h, "t", `{"days":1,"`+long+`":1}`)
	require.NotNil(t, resp.Result)
	assert.True(t, resp.Result.IsError)
	assert.Less(t, len(resp.text()), 300)
	assert.Contains(t, resp.text(), strings.Repeat("k", 100)+"…")

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"days":0}}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text",
		"text":"Invalid arguments: argument \"days\" must be >= 1. Check the tool's input schema and call it again."}],"isError":true}}`, w.Body.String())
}

func TestValidateRefusesAtConstruction(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, schema, want string }{
		{"remote ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`,
			`$ref "https://example.com/a.json" at /properties/a: only references within the schema ("#/...") are supported; remote schemas are never fetched`},
		{"relative ref", `{"type":"object","properties":{"a":{"$ref":"a.json#/x"}}}`, `remote schemas are never fetched`},
		{"remote ref in defs", `{"type":"object","$defs":{"x":{"$ref":"http://127.0.0.1:1/x"}}}`, `remote schemas are never fetched`},
		{"anchor ref", `{"type":"object","properties":{"a":{"$ref":"#thing"}},"$defs":{"t":{"$anchor":"thing"}}}`, `anchors are not supported`},
		{"dangling ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/nope"}}}`, `it refers to nothing in the schema`},
		{"dynamic ref", `{"type":"object","properties":{"a":{"$dynamicRef":"#x"}}}`, `$dynamicRef at /properties/a is not supported`},
		{"nested id", `{"type":"object","properties":{"a":{"$id":"https://example.com/a","type":"string"}}}`, `$id is only supported at the root`},
		{"recursive", `{"type":"object","properties":{"tree":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`,
			`recursive schemas are not supported`},
		{"self ref", `{"type":"object","allOf":[{"$ref":"#"}]}`, `recursive schemas are not supported`},
		{"too large", bigSchema(11), `expands to more than 1000 subschemas`},
		{"unknown $schema", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object"}`, `$schema "https://json-schema.org/draft/2019-09/schema" is not supported`},
		{"not JSON", `{"type":`, `not a JSON Schema`},
		{"not an object schema", `{"type":"array"}`, `must have "type": "object" at its root`},
		{"bad pattern", `{"type":"object","properties":{"a":{"pattern":"("}}}`, `pattern`},
		{"bad patternProperties", `{"type":"object","patternProperties":{"(":{}}}`, `patternProperties "("`},

		// Not JSON Schema by the 2020-12 meta-schema: the keyword named by
		// its JSON pointer, never by jsonschema-go's Go types.
		{"misspelt type", `{"type":"object","properties":{"n":{"type":"integr"}}}`,
			`InputSchema: /properties/n/type: "integr" is not a JSON Schema type: use "array", "boolean", "integer", "null", "number", "object" or "string"`},
		{"misspelt type deep", `{"type":"object","$defs":{"d":{"allOf":[{"items":{"type":"strng"}}]}}}`, `InputSchema: /$defs/d/allOf/0/items/type: "strng"`},
		{"empty type list", `{"type":"object","properties":{"n":{"type":[]}}}`, `/properties/n/type: an empty array of types allows no value`},
		{"bad keyword value", `{"type":"object","properties":{"n":{"type":"integer","minimum":"one"}}}`, `InputSchema: /properties/n/minimum: must be a number, not "one"`},
		{"negative minLength", `{"type":"object","properties":{"s":{"minLength":-1}}}`, `/properties/s/minLength: must be a non-negative integer, not -1`},
		{"fractional maxItems", `{"type":"object","properties":{"a":{"maxItems":1.5}}}`, `/properties/a/maxItems: must be a non-negative integer, not 1.5`},
		{"multipleOf zero", `{"type":"object","properties":{"n":{"multipleOf":0}}}`, `/properties/n/multipleOf: must be a number greater than 0, not 0`},
		{"required repeats", `{"type":"object","required":["a","a"]}`, `/required: must be an array of distinct strings, not ["a","a"]`},
		{"properties not schemas", `{"type":"object","properties":{"a":"string"}}`, `/properties/a: must be a schema (an object, or true or false), not "string"`},
		{"properties an array", `{"type":"object","properties":[]}`, `/properties: must be an object whose members are schemas, not []`},
		{"empty allOf", `{"type":"object","allOf":[]}`, `/allOf: must be a non-empty array of schemas, not []`},
		{"items array in 2020-12", `{"type":"object","properties":{"a":{"items":[{"type":"string"}]}}}`,
			`/properties/a/items: must be a schema (an array of schemas for the first items is prefixItems in 2020-12), not [{"type":"string"}]`},
		{"enum not an array", `{"type":"object","properties":{"e":{"enum":"a"}}}`, `/properties/e/enum: must be an array, not "a"`},
		{"pattern not a string", `{"type":"object","properties":{"s":{"pattern":5}}}`, `/properties/s/pattern: must be a string, not 5`},
		{"draft-07 checked by its own meta-schema", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"minItems":"2"}}}`,
			`/properties/a/minItems: must be a non-negative integer, not "2"`},

		// JSON Schema, but allowing no value.
		{"empty enum", `{"type":"object","properties":{"e":{"enum":[]}}}`, `/properties/e/enum: an empty enum allows no value`},
		{"enum of another type", `{"type":"object","properties":{"e":{"type":"integer","enum":["1","2"]}}}`, `/properties/e/enum: no value of enum is an integer`},
		{"enum of fractions for integers", `{"type":"object","properties":{"e":{"type":["integer","null"],"enum":[1.5]}}}`, `/properties/e/enum: no value of enum is an integer or null`},
		{"const of another type", `{"type":"object","properties":{"c":{"type":"string","const":1}}}`, `/properties/c/const: const is not a string`},
		{"minimum above maximum", `{"type":"object","properties":{"n":{"minimum":5,"maximum":1}}}`, `/properties/n/maximum: minimum 5 and maximum 1 leave no number between them`},
		{"exclusive bounds meet", `{"type":"object","properties":{"n":{"exclusiveMinimum":1,"maximum":1}}}`, `/properties/n/maximum: exclusiveMinimum 1 and maximum 1 leave no number between them`},
		{"the tighter bound counts", `{"type":"object","properties":{"n":{"minimum":0,"exclusiveMinimum":3,"maximum":9,"exclusiveMaximum":3}}}`,
			`/properties/n/exclusiveMaximum: exclusiveMinimum 3 and exclusiveMaximum 3 leave no number between them`},
		{"minLength above maxLength", `{"type":"object","properties":{"s":{"minLength":3,"maxLength":2}}}`, `/properties/s/maxLength: maxLength 2 is below minLength 3: nothing is allowed`},
		{"minItems above maxItems", `{"type":"object","properties":{"a":{"minItems":3,"maxItems":2}}}`, `/properties/a/maxItems: maxItems 2 is below minItems 3`},
		{"minProperties above maxProperties", `{"type":"object","minProperties":2,"maxProperties":1}`, `/maxProperties: maxProperties 1 is below minProperties 2`},
		{"minContains above maxContains", `{"type":"object","properties":{"a":{"contains":{},"minContains":2,"maxContains":1}}}`, `/properties/a/maxContains: maxContains 1 is below minContains 2`},
		{"required but false", `{"type":"object","properties":{"a":false},"required":["a"]}`, `/required: "a" is required, but its schema in properties is false`},
		{"required misspelt in a closed object", `{"type":"object","properties":{"name":{"type":"string"}},"required":["nme"],"additionalProperties":false}`,
			`/required: "nme" is required, but additionalProperties is false and properties does not name it`},
		{"the higher lower bound counts", `{"type":"object","properties":{"n":{"minimum":5,"exclusiveMinimum":1,"maximum":3}}}`,
			`/properties/n/maximum: minimum 5 and maximum 3 leave no number between them`},
		{"the lower upper bound counts", `{"type":"object","properties":{"n":{"maximum":1,"exclusiveMaximum":9,"minimum":3}}}`,
			`/properties/n/maximum: minimum 3 and maximum 1 leave no number between them`},
		{"an exclusive bound equal to an inclusive one is the tighter", `{"type":"object","properties":{"n":{"minimum":1,"exclusiveMinimum":1,"maximum":1}}}`,
			`/properties/n/maximum: exclusiveMinimum 1 and maximum 1 leave no number between them`},
		{"the same on the upper side", `{"type":"object","properties":{"n":{"maximum":1,"exclusiveMaximum":1,"minimum":1}}}`,
			`/properties/n/exclusiveMaximum: minimum 1 and exclusiveMaximum 1 leave no number between them`},
		{"required misspelt beside patternProperties", `{"type":"object","patternProperties":{"^x-":{}},"required":["y"],"additionalProperties":false}`,
			`/required: "y" is required, but additionalProperties is false and properties does not name it`},
		{"enum of objects for an array", `{"type":"object","properties":{"a":{"type":"array","enum":[{},null,true,"s",1]}}}`, `/properties/a/enum: no value of enum is an array`},
		{"const of an array for an object", `{"type":"object","properties":{"o":{"type":"object","const":[]}}}`, `/properties/o/const: const is not an object`},
		{"const of a number for a boolean", `{"type":"object","properties":{"b":{"type":"boolean","const":0}}}`, `/properties/b/const: const is not a boolean`},
		{"uniqueItems not a boolean", `{"type":"object","properties":{"a":{"uniqueItems":"yes"}}}`, `/properties/a/uniqueItems: must be true or false, not "yes"`},
		{"dependentRequired of strings", `{"type":"object","dependentRequired":{"a":"b"}}`,
			`/dependentRequired: must be an object whose members are arrays of distinct strings, not {"a":"b"}`},
		{"draft-07 empty items array", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"items":[]}}}`,
			`/properties/a/items: must be a schema or an array of schemas, not []`},
		{"a keyword worded by the meta-schema", `{"type":"object","dependencies":5}`, `/dependencies: is not valid in JSON Schema (type: `},
		{"contradiction deep", `{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[{"enum":[]}]}}}}`, `/properties/a/items/anyOf/0/enum: an empty enum allows no value`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				r := recover()
				require.NotNil(t, r, "no panic")
				assert.Contains(t, r, `mcpmw/typed: tool "t": InputSchema: `)
				assert.Contains(t, r, tt.want)
				assert.NotContains(t, r, "schemaWithoutMethods", "jsonschema-go's Go types are no place in a schema")
			}()
			typed.Validate(echoArgs(tt.schema))
		})
	}
	assert.PanicsWithValue(t, `mcpmw/typed: tool "t" has no Call func`, func() { typed.Validate(mcpmw.Tool{Name: "t"}) })
}

// bigSchema doubles its size through $refs n times: 2^n subschemas once
// expanded, from a schema of n definitions.
func bigSchema(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"a":{"$ref":"#/$defs/d0"}},"$defs":{`)
	for i := range n {
		fmt.Fprintf(&b, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"integer"}}}`, n)
	return b.String()
}

func TestValidateAccepts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, schema, valid, invalid string }{
		{"no schema: no arguments", ``, `{}`, `{"a":1}`},
		{"local ref to $defs", `{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, `{"a":"s"}`, `{"a":1}`},
		{"local ref to definitions", `{"type":"object","properties":{"b":{"items":{"$ref":"#/definitions/y"}}},"definitions":{"y":{"type":"integer"}}}`,
			`{"b":[1]}`, `{"b":["s"]}`},
		{"ref to the root's properties", `{"type":"object","properties":{"a":{"type":"string"},"b":{"$ref":"#/properties/a"}}}`, `{"b":"s"}`, `{"b":1}`},
		{"a DAG within bounds", bigSchema(6), `{"a":1}`, `{"a":"x"}`},
		{"root $id", `{"$id":"https://example.com/s","type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, `{"a":"s"}`, `{"a":1}`},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"array","items":[{"type":"string"}]}}}`,
			`{"a":["s",1]}`, `{"a":[1]}`},
		{"x-mcp-header annotations", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`, `{"region":"eu"}`, `{"region":1}`},
		{"bounds that meet inclusively", `{"type":"object","properties":{"n":{"minimum":1,"maximum":1}}}`, `{"n":1}`, `{"n":2}`},
		{"enum with a value of the type", `{"type":"object","properties":{"n":{"type":["integer","null"],"enum":["x",2.0,null]}}}`, `{"n":2}`, `{"n":"x"}`},
		{"required by a pattern in a closed object", `{"type":"object","patternProperties":{"^x-":{"type":"string"}},"required":["x-a"],"additionalProperties":false}`,
			`{"x-a":"s"}`, `{}`},
		{"enums and consts of every type", `{"type":"object","properties":{"b":{"type":"boolean","enum":[true]},"a":{"type":"array","enum":[[1]]},
			"o":{"type":"object","const":{}},"z":{"type":"null","enum":[null]},"n":{"type":"number","enum":[1.5]},"s":{"type":["string"],"const":"s"}}}`,
			`{"b":true,"a":[1],"o":{},"z":null,"n":1.5,"s":"s"}`, `{"b":false}`},
		{"bounds on numbers beside a string type", `{"type":"object","properties":{"s":{"type":"string","minLength":0,"maxLength":0}}}`, `{"s":""}`, `{"s":"a"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tool := typed.Validate(echoArgs(tt.schema))
			_, err := tool.Call(t.Context(), allowAll{}, mcpmw.NewArgs([]byte(tt.valid)))
			require.NoError(t, err)
			_, err = tool.Call(t.Context(), allowAll{}, mcpmw.NewArgs([]byte(tt.invalid)))
			assert.ErrorAs(t, err, new(*mcpmw.ArgError))
		})
	}
}

func TestValidateOutput(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"temp":{"type":"number","minimum":-100},"days":{"type":"array","items":{"type":"integer"}}},"required":["temp"]}`
	result := func(v any) mcpmw.Tool {
		return mcpmw.Tool{Name: "t", Description: "d", Permission: "p", OutputSchema: json.RawMessage(schema),
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				if r, ok := v.(mcpmw.ToolResult); ok {
					return r, nil
				}
				return mcpmw.StructuredResult(v), nil
			}}
	}
	for _, tt := range []struct {
		name string
		out  any
		want string // "" for conforming
	}{
		{"conforms", map[string]any{"temp": 3.5, "days": []int{1}}, ""},
		{"raw JSON conforms", json.RawMessage(`{"temp":1}`), ""},
		{"isError unchecked", mcpmw.ErrorResult("no"), ""},
		{"below minimum", map[string]any{"temp": -101}, `StructuredContent does not match the OutputSchema: temp must be >= -100`},
		{"nested", map[string]any{"temp": 1, "days": []any{1, "x"}}, `/days/1 must be an integer, not a string`},
		{"missing", map[string]any{}, `temp is required`},
		{"no structured content", mcpmw.TextResult("hi"), `the result has no StructuredContent`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tool := result(tt.out)
			res, _ := tool.Call(t.Context(), allowAll{}, mcpmw.NewArgs(nil))
			err := typed.CheckOutput(tool, res)
			var logs bytes.Buffer
			var reg mcpmw.Registry
			reg.AddTools(typed.ValidateOutput(tool))
			h := mcpmw.New(&reg, mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return allowAll{}, nil }),
				mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}), &mcpmw.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			_, resp := call(h, "t", `{}`)
			if tt.want == "" {
				assert.NoError(t, err)
				require.NotNil(t, resp.Result)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			require.NotNil(t, resp.Error, "an invalid result was sent")
			assert.Equal(t, -32603, resp.Error.Code)
			assert.Contains(t, logs.String(), `tool=t error="mcpmw/typed: tool`) // the cause is logged
		})
	}
	assert.PanicsWithValue(t, `mcpmw/typed: tool "t" has no OutputSchema to check results against`,
		func() { typed.ValidateOutput(echoArgs(`{"type":"object"}`)) })
	assert.NotPanics(t, func() {
		typed.ValidateOutput(mcpmw.Tool{Name: "t", OutputSchema: json.RawMessage(`{"type":"integer"}`), Call: result(1).Call})
	})
	assert.PanicsWithValue(t, `mcpmw/typed: tool "t": OutputSchema: /properties/temp/maximum: minimum 10 and maximum -10 leave no number between them`, func() {
		typed.ValidateOutput(mcpmw.Tool{Name: "t", OutputSchema: json.RawMessage(`{"type":"object","properties":{"temp":{"minimum":10,"maximum":-10}}}`), Call: result(1).Call})
	}, "the output schema is checked as the input schema is")
}

// Where the failure cannot be followed down (an items schema that refers
// outside $defs), the nearest enclosing value is named.
func TestValidateNamesEnclosingValue(t *testing.T) {
	t.Parallel()
	tool := typed.Validate(echoArgs(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"$ref":"#/properties/a"}}}}`))
	_, err := tool.Call(t.Context(), allowAll{}, mcpmw.NewArgs([]byte(`{"b":["x",1]}`)))
	var ae *mcpmw.ArgError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "b", ae.Field)
	assert.Equal(t, "does not match the schema (type)", ae.Problem)
}

// Validate and ValidateOutput keep their own copy of the schema they
// compiled: the caller changing its bytes before Registry.AddTools must not
// make the tool declare one schema and check another.
func TestValidateKeepsTheSchemaItChecks(t *testing.T) {
	t.Parallel()
	in := []byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	out := []byte(`{"type":"object","properties":{"sum":{"type":"integer"}}}`)
	tool := echoArgs(string(in))
	tool.InputSchema, tool.OutputSchema = in, out
	tool = typed.ValidateOutput(typed.Validate(tool))
	copy(in[bytes.Index(in, []byte("integer")):], "string\" ")
	copy(out[bytes.Index(out, []byte("integer")):], "string\" ")
	assert.JSONEq(t, `{"type":"object","properties":{"n":{"type":"integer"}}}`, string(tool.InputSchema))
	assert.JSONEq(t, `{"type":"object","properties":{"sum":{"type":"integer"}}}`, string(tool.OutputSchema))
}
