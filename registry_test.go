package mcpmw_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

func noop(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
	return mcpmw.TextResult("ok"), nil
}

func TestRegistryAddToolsPanics(t *testing.T) {
	t.Parallel()
	valid := mcpmw.Tool{Name: "t", Permission: "read", Call: noop}
	with := func(f func(*mcpmw.Tool)) mcpmw.Tool { tool := valid; f(&tool); return tool }
	for _, tt := range []struct {
		name string
		tool mcpmw.Tool
		want string
	}{
		{"empty name", with(func(t *mcpmw.Tool) { t.Name = "" }), `mcpmw: tool name "" is invalid`},
		{"name with space", with(func(t *mcpmw.Tool) { t.Name = "a b" }), `mcpmw: tool name "a b" is invalid`},
		{"name with slash", with(func(t *mcpmw.Tool) { t.Name = "a/b" }), `mcpmw: tool name "a/b" is invalid`},
		{"name too long", with(func(t *mcpmw.Tool) { t.Name = strings.Repeat("a", 65) }), "is invalid"},
		{"no capability", with(func(t *mcpmw.Tool) { t.Permission = "" }), `mcpmw: tool "t" has no Permission`},
		{"no call", with(func(t *mcpmw.Tool) { t.Call = nil }), `mcpmw: tool "t" has no Call func`},
		{"schema not JSON", with(func(t *mcpmw.Tool) { t.InputSchema = json.RawMessage(`{"type":`) }), `InputSchema is not valid JSON`},
		{"schema not object", with(func(t *mcpmw.Tool) { t.InputSchema = json.RawMessage(`[]`) }), `InputSchema must be a JSON object`},
		{"schema root not object type", with(func(t *mcpmw.Tool) { t.InputSchema = json.RawMessage(`{"type":"string"}`) }), `InputSchema must have "type": "object"`},
		{"output schema not JSON", with(func(t *mcpmw.Tool) { t.OutputSchema = json.RawMessage(`{`) }), `OutputSchema is not valid JSON`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var reg mcpmw.Registry
			defer func() {
				v := recover()
				require.NotNil(t, v, "Add must panic")
				assert.Contains(t, fmt.Sprint(v), tt.want)
				assert.Equal(t, 0, reg.NumTools(), "nothing half-registered")
			}()
			reg.AddTools(tt.tool)
		})
	}

	var reg mcpmw.Registry
	reg.AddTools(valid)
	assert.PanicsWithValue(t, `mcpmw: tool "t" is registered twice`, func() { reg.AddTools(valid) })
	assert.Panics(t, func() {
		reg.AddTools(with(func(t *mcpmw.Tool) { t.Name = "u" }), with(func(t *mcpmw.Tool) { t.Name = "u" }))
	})
	assert.Equal(t, 1, reg.NumTools())
	_, ok := reg.LookupTool("u")
	assert.False(t, ok, "a failed Add registers nothing")
}

// A "type" that names no JSON Schema type, at any depth of either schema,
// is refused at registration with the JSON pointer to it: sent as is, it
// makes every call fail in a validator, blaming the caller.
func TestRegistryAddToolsRefusesUnknownSchemaTypes(t *testing.T) {
	t.Parallel()
	use := `use "array", "boolean", "integer", "null", "number", "object" or "string"`
	for _, tt := range []struct{ name, in, out, want string }{
		{"misspelt property type", `{"type":"object","properties":{"n":{"type":"integr"}}}`, "",
			`mcpmw: tool "t": InputSchema: /properties/n/type: "integr" is not a JSON Schema type: ` + use},
		{"in a type list", `{"type":"object","properties":{"n":{"type":["null","intger"]}}}`, "", `InputSchema: /properties/n/type: "intger" is not a JSON Schema type`},
		{"empty type list", `{"type":"object","properties":{"n":{"type":[]}}}`, "", `InputSchema: /properties/n/type: an empty array of types allows no value`},
		{"type listed twice", `{"type":"object","properties":{"n":{"type":["string","string"]}}}`, "", `/properties/n/type: "string" is listed twice`},
		{"type not a string", `{"type":"object","properties":{"n":{"type":5}}}`, "", `/properties/n/type: must be a type name or an array of them, not a number`},
		{"type list of numbers", `{"type":"object","properties":{"n":{"type":[5]}}}`, "", `/properties/n/type: must hold type names; item 0 is not a string`},
		{"items", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"strng"}}}}`, "", `/properties/a/items/type: "strng"`},
		{"draft-07 items array", `{"type":"object","properties":{"a":{"items":[{"type":"x"}]}}}`, "", `/properties/a/items/0/type: "x"`},
		{"prefixItems", `{"type":"object","properties":{"a":{"prefixItems":[true,{"type":"x"}]}}}`, "", `/properties/a/prefixItems/1/type`},
		{"additionalProperties", `{"type":"object","additionalProperties":{"type":"x"}}`, "", `/additionalProperties/type`},
		{"patternProperties", `{"type":"object","patternProperties":{"^a/b~":{"type":"x"}}}`, "", `/patternProperties/^a~1b~0/type`},
		{"$defs", `{"type":"object","$defs":{"d":{"type":"x"}}}`, "", `/$defs/d/type`},
		{"definitions", `{"type":"object","definitions":{"d":{"type":"x"}}}`, "", `/definitions/d/type`},
		{"dependentSchemas", `{"type":"object","dependentSchemas":{"a":{"type":"x"}}}`, "", `/dependentSchemas/a/type`},
		{"allOf", `{"type":"object","allOf":[{"type":"object"},{"properties":{"b":{"type":"x"}}}]}`, "", `/allOf/1/properties/b/type`},
		{"anyOf", `{"type":"object","anyOf":[{"type":"x"}]}`, "", `/anyOf/0/type`},
		{"oneOf", `{"type":"object","oneOf":[{"type":"x"}]}`, "", `/oneOf/0/type`},
		{"not", `{"type":"object","not":{"type":"x"}}`, "", `/not/type`},
		{"if", `{"type":"object","if":{"type":"x"}}`, "", `/if/type`},
		{"then", `{"type":"object","then":{"type":"x"}}`, "", `/then/type`},
		{"else", `{"type":"object","else":{"type":"x"}}`, "", `/else/type`},
		{"contains", `{"type":"object","properties":{"a":{"contains":{"type":"x"}}}}`, "", `/properties/a/contains/type`},
		{"propertyNames", `{"type":"object","propertyNames":{"type":"x"}}`, "", `/propertyNames/type`},
		{"unevaluatedProperties", `{"type":"object","unevaluatedProperties":{"type":"x"}}`, "", `/unevaluatedProperties/type`},
		{"unevaluatedItems", `{"type":"object","properties":{"a":{"unevaluatedItems":{"type":"x"}}}}`, "", `/properties/a/unevaluatedItems/type`},
		{"additionalItems", `{"type":"object","properties":{"a":{"additionalItems":{"type":"x"}}}}`, "", `/properties/a/additionalItems/type`},
		{"contentSchema", `{"type":"object","properties":{"a":{"contentSchema":{"type":"x"}}}}`, "", `/properties/a/contentSchema/type`},
		{"draft-07 dependencies", `{"type":"object","dependencies":{"a":["b"],"c":{"type":"x"}}}`, "", `/dependencies/c/type`},
		{"output schema", "", `{"type":"object","properties":{"sum":{"type":"numbr"}}}`, `mcpmw: tool "t": OutputSchema: /properties/sum/type: "numbr"`},
		{"output schema root", "", `{"type":"integr"}`, `mcpmw: tool "t": OutputSchema: /type: "integr"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var reg mcpmw.Registry
			tool := mcpmw.Tool{Name: "t", Permission: "read", Call: noop, InputSchema: json.RawMessage(tt.in), OutputSchema: json.RawMessage(tt.out)}
			defer func() {
				v := recover()
				require.NotNil(t, v, "Add must panic")
				assert.Contains(t, fmt.Sprint(v), tt.want)
				assert.Equal(t, 0, reg.NumTools(), "nothing half-registered")
			}()
			reg.AddTools(tool)
		})
	}
	// Data is not schema: a "type" inside enum, const, default or
	// examples, or a property named "type", is no type keyword.
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "data", Permission: "read", Call: noop, InputSchema: json.RawMessage(`{"type":"object","properties":{
		"type":{"type":"string","enum":[{"type":"integr"}],"default":{"type":"x"},"examples":[{"type":"y"}]},
		"c":{"const":{"type":"z"}},"d":{"type":["integer","null"]}},"dependencies":{"a":["type"]}}`)})
	assert.Equal(t, 1, reg.NumTools())
}

func TestRegistryConcurrentAddAndServe(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			reg.AddTools(mcpmw.Tool{Name: fmt.Sprintf("t%d", i), Permission: "read", Call: noop})
		}()
		go func() {
			defer wg.Done()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, modern("1", "tools/list", ""))
			assert.Equal(t, 200, w.Code)
		}()
	}
	wg.Wait()
	assert.Equal(t, 20, reg.NumTools())
}

func TestToolDefinitionsPerRevision(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	schema := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"id":{"$anchor":"id","type":"string"}},"properties":{"id":{"$ref":"#id"}},"additionalProperties":false}`
	reg.AddTools(
		mcpmw.Tool{Name: "full", Title: "Full", Description: "All fields.", Permission: "read",
			InputSchema:  json.RawMessage("{\n  " + schema[1:]),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
			ReadOnly:     mcpmw.HintYes, Destructive: mcpmw.HintNo, Idempotent: mcpmw.HintYes, OpenWorld: mcpmw.HintNo,
			Icons: []mcpmw.Icon{{Src: "https://example.com/i.png", MimeType: "image/png", Sizes: []string{"48x48"}}},
			Call:  noop},
		mcpmw.Tool{Name: "array_out", Description: "Array output.", Permission: "read",
			OutputSchema: json.RawMessage(`{"type":"array","items":{"type":"string"}}`), Call: noop},
		mcpmw.Tool{Name: "plain", Description: "No hints.", Permission: "read", Call: noop},
	)
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	tools := func(w *httptest.ResponseRecorder) map[string]json.RawMessage {
		var res struct {
			Result struct{ Tools []json.RawMessage }
		}
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &res))
		out := map[string]json.RawMessage{}
		for _, raw := range res.Result.Tools {
			var head struct{ Name string }
			require.NoError(t, json.Unmarshal(raw, &head))
			out[head.Name] = raw
		}
		return out
	}
	full := `{"name":"full","title":"Full","description":"All fields.","icons":[{"src":"https://example.com/i.png","mimeType":"image/png","sizes":["48x48"]}],"inputSchema":` + schema +
		`,"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}}`
	fullNoIcons := strings.Replace(full, `"icons":[{"src":"https://example.com/i.png","mimeType":"image/png","sizes":["48x48"]}],`, "", 1)

	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "tools/list", ""))
	got := tools(w)
	assert.Equal(t, full, string(got["full"]), "2026: byte for byte, schema keywords kept")
	assert.JSONEq(t, `{"name":"array_out","description":"Array output.","inputSchema":{"type":"object","additionalProperties":false},"outputSchema":{"type":"array","items":{"type":"string"}}}`, string(got["array_out"]))
	assert.JSONEq(t, `{"name":"plain","description":"No hints.","inputSchema":{"type":"object","additionalProperties":false}}`, string(got["plain"]), "unset hints are left out")

	w = httptest.NewRecorder()
	h.ServeHTTP(w, legacy("2025-11-25", "1", "tools/list", ""))
	got = tools(w)
	assert.Equal(t, full, string(got["full"]))
	assert.NotContains(t, string(got["array_out"]), "outputSchema", "legacy output schemas are object-rooted only")

	w = httptest.NewRecorder()
	h.ServeHTTP(w, legacy("2025-06-18", "1", "tools/list", ""))
	got = tools(w)
	assert.Equal(t, fullNoIcons, string(got["full"]), "2025-06-18 has no icons")
}

// AddTools, AddPrompts and AddResourceTemplates keep their own copies of what
// they are given: editing the caller's slices and maps afterwards (or
// what LookupTool returned) changes nothing a request sees. A required prompt
// argument stays required, a tool's required capability stays the one
// registered, a Completer stays the registered one.
func TestAddKeepsItsOwnCopies(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	caps := []mcpmw.ClientCapability{mcpmw.Capability("sampling")}
	icons := []mcpmw.Icon{{Src: "https://example.com/t.png", Sizes: []string{"48x48"}}}
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	reg.AddTools(mcpmw.Tool{Name: "needs_sampling", Permission: "read", Call: noop, InputSchema: schema,
		RequiredClientCapabilities: caps, Icons: icons})
	args := []mcpmw.PromptArgument{{Name: "who", Required: true}}
	suggest := func(v string) mcpmw.Completer {
		return func(context.Context, mcpmw.Caller, mcpmw.CompletionRequest) (mcpmw.Completion, error) {
			return mcpmw.Completion{Values: []string{v}}, nil
		}
	}
	promptCompleters := map[string]mcpmw.Completer{"who": suggest("registered")}
	reg.AddPrompts(mcpmw.Prompt{Name: "greet", Permission: "read", Arguments: args, Complete: promptCompleters,
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("hi"))}}, nil
		}})
	templateCompleters := map[string]mcpmw.Completer{"id": suggest("registered")}
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "docs://{id}", Name: "doc", Permission: "read", Complete: templateCompleters,
		Read: func(_ context.Context, _ mcpmw.Caller, uri string, _ map[string]string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "x")}, nil
		}})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	serveAll := func() []string {
		var out []string
		for _, r := range []*http.Request{
			// The client declares sampling only: the tool must still need exactly that.
			req(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"needs_sampling","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`,
				"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "needs_sampling"),
			modern("2", "tools/call", `"name":"needs_sampling"`),
			legacy("2025-11-25", "3", "prompts/get", `"name":"greet"`),
			legacy("2025-11-25", "4", "completion/complete", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":""}`),
			legacy("2025-11-25", "5", "completion/complete", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"added","value":""}`),
			legacy("2025-11-25", "6", "completion/complete", `"ref":{"type":"ref/resource","uri":"docs://{id}"},"argument":{"name":"id","value":""}`),
			legacy("2025-11-25", "7", "tools/list", ""),
			legacy("2025-11-25", "8", "prompts/list", ""),
		} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			out = append(out, fmt.Sprint(w.Code, " ", strings.TrimSpace(w.Body.String())))
		}
		tool, ok := reg.LookupTool("needs_sampling")
		require.True(t, ok)
		return append(out, fmt.Sprintf("%s %v %s", tool.InputSchema, tool.RequiredClientCapabilities, toJSON(t, tool.Icons)))
	}
	before := serveAll()
	require.Contains(t, before[1], "-32021", "the tool needs sampling")
	require.Contains(t, before[2], `needs argument \"who\"`)

	caps[0].Path[0] = "roots" // inside the path: a clone of the list alone would share it
	icons[0].Src, icons[0].Sizes[0] = "https://evil.example/x.png", "any"
	schema[2] = 'X'
	args[0].Required, args[0].Name = false, "whom"
	promptCompleters["who"] = suggest("swapped")
	promptCompleters["added"] = suggest("added after registration")
	templateCompleters["id"] = suggest("swapped")
	looked, _ := reg.LookupTool("needs_sampling")
	looked.RequiredClientCapabilities[0].Path[0], looked.Icons[0].Sizes[0], looked.InputSchema[2] = "elicitation", "16x16", 'Y'

	assert.Equal(t, before, serveAll())
}
