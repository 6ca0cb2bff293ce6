package mcpmw_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

func TestParamHeaderAnnotationsAtRegistration(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, schema, panic string
	}{
		{"string", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`, ""},
		{"integer and boolean", `{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"},"b":{"type":"boolean","x-mcp-header":"B"}}}`, ""},
		{"nested through properties", `{"type":"object","properties":{"o":{"type":"object","properties":{"id":{"type":"string","x-mcp-header":"Id"}}}}}`, ""},
		{"number is not allowed", `{"type":"object","properties":{"f":{"type":"number","x-mcp-header":"F"}}}`, "type must be string, integer or boolean"},
		{"type list is not allowed", `{"type":"object","properties":{"f":{"type":["string","null"],"x-mcp-header":"F"}}}`, "type must be string, integer or boolean"},
		{"empty name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, "must be a non-empty header token"},
		{"not a token", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"a b"}}}`, "must be a non-empty header token"},
		{"not a string", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":5}}}`, "must be a non-empty header token"},
		{"duplicate ignoring case", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Id"},"b":{"type":"string","x-mcp-header":"ID"}}}`, "is used twice"},
		{"under items", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"L"}}}}`, "reached from the root"},
		{"under $defs", `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"D"}}}`, "reached from the root"},
		{"under anyOf", `{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, "reached from the root"},
		{"on the root", `{"type":"object","x-mcp-header":"Root"}`, "reached from the root"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var reg mcpmw.Registry
			add := func() {
				reg.AddTools(mcpmw.Tool{Name: "t", Permission: "read", InputSchema: json.RawMessage(tt.schema), Call: noop})
			}
			if tt.panic == "" {
				assert.NotPanics(t, add)
				return
			}
			defer func() { assert.Contains(t, fmt.Sprint(recover()), tt.panic) }()
			add()
			t.Fatal("Add did not panic")
		})
	}
}

func TestParamHeadersAtCallTime(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "ticket", Description: "d", Permission: "read", Call: noop,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"project":{"type":"string","x-mcp-header":"Project"},"n":{"type":"integer","x-mcp-header":"N"},"urgent":{"type":"boolean","x-mcp-header":"Urgent"},"meta":{"type":"object","properties":{"team":{"type":"string","x-mcp-header":"Team"}}}}}`)})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	for _, tt := range []struct {
		name string
		args string
		hdr  []string
		code int // 0: accepted
	}{
		{"all match", `{"project":"PAY","n":42,"urgent":true,"meta":{"team":"core"}}`, []string{"Mcp-Param-Project", "PAY", "Mcp-Param-N", "42", "Mcp-Param-Urgent", "true", "Mcp-Param-Team", "core"}, 0},
		{"absent arguments need no headers", `{}`, nil, 0},
		{"null arguments need no headers", `{"project":null}`, nil, 0},
		{"lower-case header name", `{"project":"PAY"}`, []string{"mcp-param-project", "PAY"}, 0},
		{"surrounding whitespace", `{"project":"PAY"}`, []string{"Mcp-Param-Project", "  PAY "}, 0},
		{"base64 sentinel", `{"project":"Zürich"}`, []string{"Mcp-Param-Project", "=?base64?WsO8cmljaA==?="}, 0},
		{"literal without suffix", `{"project":"=?base64?SGVsbG8="}`, []string{"Mcp-Param-Project", "=?base64?SGVsbG8="}, 0},
		{"integers compare numerically", `{"n":42.0}`, []string{"Mcp-Param-N", "42"}, 0},
		{"missing header", `{"project":"PAY"}`, nil, -32020},
		{"missing nested header", `{"meta":{"team":"core"}}`, nil, -32020},
		{"header without body value", `{}`, []string{"Mcp-Param-Project", "PAY"}, -32020},
		{"mismatch", `{"project":"PAY"}`, []string{"Mcp-Param-Project", "OPS"}, -32020},
		{"case matters in values", `{"project":"PAY"}`, []string{"Mcp-Param-Project", "pay"}, -32020},
		{"bad padding", `{"project":"Hello"}`, []string{"Mcp-Param-Project", "=?base64?SGVsbG8?="}, -32020},
		{"bad base64 characters", `{"project":"Hello"}`, []string{"Mcp-Param-Project", "=?base64?SGVs!!!bG8=?="}, -32020},
		{"raw non-ASCII", `{"project":"Zürich"}`, []string{"Mcp-Param-Project", "Zürich"}, -32020},
		{"integer mismatch", `{"n":42}`, []string{"Mcp-Param-N", "43"}, -32020},
		{"integer header not a number", `{"n":42}`, []string{"Mcp-Param-N", "forty-two"}, -32020},
		{"boolean mismatch", `{"urgent":false}`, []string{"Mcp-Param-Urgent", "true"}, -32020},
		{"boolean spelled differently", `{"urgent":true}`, []string{"Mcp-Param-Urgent", "True"}, -32020},
		{"wrong body type", `{"n":"42"}`, []string{"Mcp-Param-N", "42"}, -32020},
		{"integer header null", `{"n":0}`, []string{"Mcp-Param-N", "null"}, -32020},
		{"integer header empty", `{"n":0}`, []string{"Mcp-Param-N", ""}, -32020},
		{"integer header true", `{"n":0}`, []string{"Mcp-Param-N", "true"}, -32020},
		{"big equal integers", `{"n":123456789012345678901234567890}`, []string{"Mcp-Param-N", "123456789012345678901234567890"}, 0},
		{"big integer in exponent form", `{"n":1e30}`, []string{"Mcp-Param-N", "1000000000000000000000000000000"}, 0},
		{"big unequal integers", `{"n":123456789012345678901234567890}`, []string{"Mcp-Param-N", "123456789012345678901234567891"}, -32020},
		{"huge exponent refused", `{"n":1e1000000}`, []string{"Mcp-Param-N", "1e1000000"}, -32020},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := modern("1", "tools/call", `"name":"ticket","arguments":`+tt.args)
			for i := 0; i+1 < len(tt.hdr); i += 2 {
				r.Header.Set(tt.hdr[i], tt.hdr[i+1])
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			a := decode(t, w)
			if tt.code == 0 {
				assert.Equal(t, 200, w.Code, w.Body.String())
				assert.Nil(t, a.Error)
				return
			}
			assert.Equal(t, 400, w.Code)
			require.NotNil(t, a.Error)
			assert.Equal(t, tt.code, a.Error.Code)
			assert.Contains(t, a.Error.Message, "Mcp-Param-")
		})
	}

	// The legacy revisions do not require the headers.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, legacy("2025-11-25", "1", "tools/call", `"name":"ticket","arguments":{"project":"PAY"}`))
	assert.Equal(t, 200, w.Code)
}

// A gateway that routes or polices by Mcp-* headers must not be bypassed by
// a downgrade: on the legacy revisions the headers are optional, but one
// that is sent must match the body, as on 2026-07-28.
func TestRoutingHeadersCheckedOnEveryRevision(t *testing.T) {
	t.Parallel()
	ran := make(chan string, 16)
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "route", Description: "d", Permission: "read",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`),
		Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			ran <- args.OptString("region", "")
			return mcpmw.TextResult("routed"), nil
		}})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	call := `"name":"route","arguments":{"region":"eu"}`
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		for _, tt := range []struct {
			name string
			hdr  []string
			code int // 0: served
		}{
			{"the review's downgrade", []string{"Mcp-Method", "tools/list", "Mcp-Name", "echo", "Mcp-Param-Region", "us"}, -32020},
			{"method mismatch alone", []string{"Mcp-Method", "tools/list"}, -32020},
			{"method in another case", []string{"Mcp-Method", "TOOLS/CALL"}, -32020},
			{"name mismatch alone", []string{"Mcp-Name", "echo"}, -32020},
			{"param mismatch alone", []string{"Mcp-Param-Region", "us"}, -32020},
			{"param header for an absent argument", []string{"Mcp-Param-Region", "eu"}, 0},
			{"all matching", []string{"Mcp-Method", "tools/call", "Mcp-Name", "route", "Mcp-Param-Region", "eu"}, 0},
			{"none sent", nil, 0},
		} {
			t.Run(v+"/"+tt.name, func(t *testing.T) {
				body := call
				if tt.name == "param header for an absent argument" {
					body = `"name":"route","arguments":{}`
					tt.code = -32020
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, legacy(v, "1", "tools/call", body, tt.hdr...))
				a := decode(t, w)
				if tt.code == 0 {
					require.Equal(t, 200, w.Code, w.Body.String())
					assert.Nil(t, a.Error)
					assert.Equal(t, "eu", <-ran)
					return
				}
				assert.Equal(t, 400, w.Code, w.Body.String())
				require.NotNil(t, a.Error)
				assert.Equal(t, tt.code, a.Error.Code)
				select {
				case got := <-ran:
					t.Fatalf("the tool ran with region %q", got)
				default:
				}
			})
		}
	}
	// A legacy notification that names another method is refused too.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		"MCP-Protocol-Version", "2025-11-25", "Mcp-Method", "tools/call"))
	assert.Equal(t, 400, w.Code)
}

// The capability gate comes before anything that depends on the tool: a
// caller that may not use it gets 403, never a 400 naming its arguments.
func TestDeniedCallerLearnsNothingFromParamHeaders(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "secret", Description: "d", Permission: "write", Call: noop, RequiredClientCapabilities: []mcpmw.ClientCapability{mcpmw.Capability("sampling")},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"account":{"type":"string","x-mcp-header":"Account"}}}`)})
	a := &spy{}
	h := mcpmw.New(&reg, tokenAuthn, a, nil)
	for _, r := range []*http.Request{
		modern("1", "tools/call", `"name":"secret","arguments":{"account":"a1"}`), // header missing
		modern("1", "tools/call", `"name":"secret","arguments":{}`, "Mcp-Param-Account", "a1"),
		legacy("2025-11-25", "1", "tools/call", `"name":"secret","arguments":{"account":"a1"}`, "Mcp-Param-Account", "zz"),
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, 403, w.Code, w.Body.String())
		assert.NotContains(t, w.Body.String(), "ccount")
		assert.NotContains(t, w.Body.String(), "sampling")
	}
	for _, rec := range a.records() {
		assert.Equal(t, mcpmw.OutcomeDenied, rec.Outcome)
	}
}

// The Mcp-Param-* check, Args' accessors, Args.Decode into a map and into a
// struct read one value or the call is refused: a second spelling of a key
// (another case, or a repeat at any depth) cannot show the check one value
// and the tool another.
func TestParamHeaderAndToolReadTheSameValue(t *testing.T) {
	t.Parallel()
	type input struct {
		Region string `json:"region"`
		O      struct {
			Team string `json:"team"`
		} `json:"o"`
	}
	got := make(chan string, 4)
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "route", Description: "d", Permission: "read",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"o":{"type":"object","properties":{"team":{"type":"string","x-mcp-header":"Team"}}}}}`),
		Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			var in input
			if err := args.Decode(&in); err != nil {
				return mcpmw.ToolResult{}, err
			}
			got <- in.Region + "/" + in.O.Team
			return mcpmw.TextResult("ok"), nil
		}})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	for _, tt := range []struct {
		name, args, wantErr string
		hdr                 []string
		status              int
	}{
		{name: "case twin at the top", args: `{"region":"us","Region":"eu"}`, hdr: []string{"Mcp-Param-Region", "us"},
			status: 200, wantErr: `argument \"Region\" is not an argument name`},
		{name: "lone case variant", args: `{"REGION":"eu"}`, status: 200, wantErr: `argument \"REGION\" is not an argument name`},
		{name: "Kelvin sign folds to k", args: `{"region":"us","o":{"team":"a","Key":1}}`, hdr: []string{"Mcp-Param-Region", "us", "Mcp-Param-Team", "a"}, status: 200, wantErr: ""},
		{name: "nested repeat", args: `{"o":{"team":"blue","team":"red"}}`, hdr: []string{"Mcp-Param-Team", "blue"},
			status: 400, wantErr: `member '/arguments/o/team' appears more than once`},
		{name: "repeat in an array", args: `{"list":[{"a":1},{"b":1,"b":2}]}`, status: 400, wantErr: `member '/arguments/list/1/b' appears more than once`},
		{name: "escaped repeat", args: `{"region":"us","region":"eu"}`, hdr: []string{"Mcp-Param-Region", "us"},
			status: 400, wantErr: `member '/arguments/region' appears more than once`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, modern("1", "tools/call", `"name":"route","arguments":`+tt.args, tt.hdr...))
			require.Equal(t, tt.status, w.Code, w.Body.String())
			if tt.wantErr == "" {
				assert.Equal(t, "us/a", <-got)
				return
			}
			assert.Contains(t, w.Body.String(), tt.wantErr)
			select {
			case v := <-got:
				t.Fatalf("the tool ran with %q", v)
			default:
			}
		})
	}
}

func TestRequiredClientCapabilities(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "ask", Description: "d", Permission: "read", RequiredClientCapabilities: []mcpmw.ClientCapability{mcpmw.Capability("elicitation", "form"), mcpmw.Capability("sampling", "tools")}, Call: noop})
	assert.Panics(t, func() {
		reg.AddTools(mcpmw.Tool{Name: "bad", Permission: "read", RequiredClientCapabilities: []mcpmw.ClientCapability{mcpmw.Capability("sampling", "")}, Call: noop})
	})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	for _, tt := range []struct {
		caps string
		ok   bool
	}{
		{`{"elicitation":{},"sampling":{"tools":{}}}`, true},
		{`{"elicitation":{"form":{}},"sampling":{"tools":{}}}`, true},
		{`{"elicitation":{"url":{}},"sampling":{"tools":{}}}`, false},
		{`{"elicitation":{},"sampling":{}}`, false},
		{`{"sampling":{"tools":{}}}`, false},
		{`{}`, false},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + tt.caps + `}}}`
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "ask"))
		a := decode(t, w)
		if tt.ok {
			assert.Equal(t, http.StatusOK, w.Code, tt.caps)
			continue
		}
		assert.Equal(t, http.StatusBadRequest, w.Code, tt.caps)
		if assert.NotNil(t, a.Error, tt.caps) {
			assert.Equal(t, mcpmw.CodeMissingRequiredClientCapability, a.Error.Code)
			assert.JSONEq(t, `{"requiredCapabilities":{"elicitation":{"form":{}},"sampling":{"tools":{}}}}`, string(a.Error.Data))
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, legacy("2025-11-25", "1", "tools/call", `"name":"ask"`))
	assert.Equal(t, 200, w.Code, "legacy requests carry no capabilities to check")
}

// TestSensitivePointerCoversParamHeadersInside: a Sensitive pointer covers
// everything inside what it names, so an Mcp-Param-* header that mirrors
// /card/number is never quoted when /card, /card/* or /* is sensitive:
// not in the mismatch error, not in the record. A header of an argument
// no pointer covers is quoted, so the test is not vacuous.
func TestSensitivePointerCoversParamHeadersInside(t *testing.T) {
	t.Parallel()
	const schema = `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},` +
		`"card":{"type":"object","properties":{"number":{"type":"string","x-mcp-header":"Card-Number"},` +
		`"cvc":{"type":"object","properties":{"code":{"type":"integer","x-mcp-header":"Cvc"}}}}}}}`
	const secret, code = "hdr-s3cr3t-4111", "987654"
	for _, tt := range []struct {
		name      string
		sensitive []string
		quoted    bool // the card's headers are quoted
	}{
		{"the parent", []string{"/card"}, false},
		{"every member of the parent", []string{"/card/*"}, false},
		{"every argument", []string{"/*"}, false},
		{"another member only", []string{"/region"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var reg mcpmw.Registry
			reg.AddTools(mcpmw.Tool{Name: "pay", Permission: "read", Call: noop, InputSchema: json.RawMessage(schema), Sensitive: tt.sensitive})
			a := &spy{}
			h := mcpmw.New(&reg, tokenAuthn, a, nil)
			for i, hdr := range [][]string{
				{"Mcp-Param-Card-Number", secret, "Mcp-Param-Cvc", "1"},
				{"Mcp-Param-Card-Number", "4111", "Mcp-Param-Cvc", code},
			} {
				r := modern("1", "tools/call", `"name":"pay","arguments":{"card":{"number":"4111","cvc":{"code":1}}}`, hdr...)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				ans := decode(t, w)
				require.Equal(t, 400, w.Code, w.Body.String())
				require.NotNil(t, ans.Error)
				recs := a.records()
				require.Len(t, recs, i+1)
				shown := hdr[1]
				if i == 1 {
					shown = hdr[3]
				}
				assert.Contains(t, ans.Error.Message, "does not match arguments.card.")
				assert.Equal(t, tt.quoted, strings.Contains(ans.Error.Message, shown), "the answer: %s", ans.Error.Message)
				assert.Equal(t, tt.quoted, strings.Contains(recs[i].Summary, shown), "the record: %s", recs[i].Summary)
				assert.NotContains(t, string(recs[i].Arguments), shown)
			}
		})
	}
}
