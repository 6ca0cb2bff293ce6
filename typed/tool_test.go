package typed_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/typed"
)

type address struct {
	Street string `json:"street"`
	Zip    string `json:"zip,omitempty"`
}

type shapes struct {
	Name     string             `json:"name" jsonschema:"who"`
	Nick     string             `json:"nick,omitempty"`
	Age      int                `json:"age,omitzero"`
	Tags     []string           `json:"tags,omitempty"`
	Home     address            `json:"home"`
	Work     *address           `json:"work,omitempty"`
	Scores   map[string]float64 `json:"scores,omitempty"`
	Ignored  string             `json:"-"`
	internal string             //nolint:unused // unexported: not in the schema
}

var _ = shapes{internal: ""}

func TestNewToolSchemas(t *testing.T) {
	t.Parallel()
	tool := typed.NewTool("shapes", "Every shape.", "read",
		func(context.Context, mcpmw.Caller, shapes) (address, error) { return address{}, nil })
	assert.JSONEq(t, `{
		"type":"object",
		"properties":{
			"name":{"type":"string","description":"who"},
			"nick":{"type":"string"},
			"age":{"type":"integer"},
			"tags":{"type":["null","array"],"items":{"type":"string"}},
			"home":{"type":"object","properties":{"street":{"type":"string"},"zip":{"type":"string"}},"required":["street"],"additionalProperties":false},
			"work":{"type":["null","object"],"properties":{"street":{"type":"string"},"zip":{"type":"string"}},"required":["street"],"additionalProperties":false},
			"scores":{"type":"object","additionalProperties":{"type":"number"}}
		},
		"required":["name","home"],
		"additionalProperties":false}`, string(tool.InputSchema))
	assert.JSONEq(t, `{"type":"object","properties":{"street":{"type":"string"},"zip":{"type":"string"}},"required":["street"],"additionalProperties":false}`,
		string(tool.OutputSchema))
	assert.Equal(t, "shapes", tool.Name)
	assert.Equal(t, "Every shape.", tool.Description)
	assert.Equal(t, mcpmw.Permission("read"), tool.Permission)
}

func TestNewToolOutputForms(t *testing.T) {
	t.Parallel()
	type none struct{}
	in := mcpmw.NewArgs(nil)
	for _, tt := range []struct {
		name       string
		tool       mcpmw.Tool
		wantSchema string // "" for none
		wantText   string
		structured any
		wantErr    bool
	}{
		{name: "struct", tool: typed.NewTool("t", "d", "p", func(context.Context, mcpmw.Caller, none) (address, error) {
			return address{Street: "Main"}, nil
		}), wantSchema: `{"type":"object","properties":{"street":{"type":"string"},"zip":{"type":"string"}},"required":["street"],"additionalProperties":false}`,
			structured: address{Street: "Main"}},
		{name: "pointer to struct", tool: typed.NewTool("t", "d", "p", func(context.Context, mcpmw.Caller, none) (*address, error) {
			return &address{Street: "Main"}, nil
		}), wantSchema: `{"type":"object","properties":{"street":{"type":"string"},"zip":{"type":"string"}},"required":["street"],"additionalProperties":false}`,
			structured: &address{Street: "Main"}},
		{name: "nil pointer is a tool failure", tool: typed.NewTool("t", "d", "p", func(context.Context, mcpmw.Caller, none) (*address, error) {
			return nil, nil
		}), wantSchema: `{"type":"object","properties":{"street":{"type":"string"},"zip":{"type":"string"}},"required":["street"],"additionalProperties":false}`,
			wantErr: true},
		{name: "string is text", tool: typed.NewTool("t", "d", "p", func(context.Context, mcpmw.Caller, none) (string, error) {
			return "hi", nil
		}), wantText: "hi"},
		{name: "ToolResult as is", tool: typed.NewTool("t", "d", "p", func(context.Context, mcpmw.Caller, none) (mcpmw.ToolResult, error) {
			return mcpmw.ErrorResult("no such city"), nil
		}), wantText: "no such city"},
		{name: "number", tool: typed.NewTool("t", "d", "p", func(context.Context, mcpmw.Caller, none) (int, error) {
			return 7, nil
		}), wantSchema: `{"type":"integer"}`, structured: 7},
		{name: "slice", tool: typed.NewTool("t", "d", "p", func(context.Context, mcpmw.Caller, none) ([]string, error) {
			return []string{"a"}, nil
		}), wantSchema: `{"type":["null","array"],"items":{"type":"string"}}`, structured: []string{"a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.wantSchema == "" {
				assert.Nil(t, tt.tool.OutputSchema)
			} else {
				assert.JSONEq(t, tt.wantSchema, string(tt.tool.OutputSchema))
			}
			res, err := tt.tool.Call(t.Context(), allowAll{}, in)
			if tt.wantErr {
				require.Error(t, err)
				assert.NotErrorAs(t, err, new(*mcpmw.ArgError))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantText, res.AllText())
			assert.Equal(t, tt.structured, res.StructuredContent)
			if tt.structured != nil {
				assert.NoError(t, typed.CheckOutput(tt.tool, res))
			}
		})
	}
}

func TestNewToolErrorsPassThrough(t *testing.T) {
	t.Parallel()
	type in struct {
		Err string `json:"err"`
	}
	tool := typed.NewTool("fails", "Fails as told.", "read", func(_ context.Context, _ mcpmw.Caller, in in) (address, error) {
		switch in.Err {
		case "arg":
			return address{}, &mcpmw.ArgError{Field: "err", Problem: "is not a city"}
		case "rpc":
			return address{}, &mcpmw.Error{Code: -32042, Message: "busy"}
		}
		return address{}, errors.New("database on fire")
	})
	h := newHandler(tool)
	for _, tt := range []struct {
		err      string
		wantText string // isError result text
		wantCode int    // JSON-RPC error code
	}{
		{err: "arg", wantText: `Invalid arguments: argument "err" is not a city. Check the tool's input schema and call it again.`},
		{err: "rpc", wantCode: -32042},
		{err: "other", wantCode: -32603},
	} {
		t.Run(tt.err, func(t *testing.T) {
			t.Parallel()
			_, resp := call(h, "fails", `{"err":"`+tt.err+`"}`)
			if tt.wantText != "" {
				require.NotNil(t, resp.Result)
				assert.True(t, resp.Result.IsError)
				assert.Equal(t, tt.wantText, resp.text())
				return
			}
			require.NotNil(t, resp.Error)
			assert.Equal(t, tt.wantCode, resp.Error.Code)
			assert.NotContains(t, resp.Error.Message, "fire")
		})
	}
}

// Func decodes through Args.Decode: a repeated member, at any depth, and a
// member naming a field only by case folding are refused, even with no
// schema to catch them.
func TestFuncDecodeRefusals(t *testing.T) {
	t.Parallel()
	type in struct {
		Home address `json:"home"`
	}
	ran := false
	call := typed.Func(func(context.Context, mcpmw.Caller, in) (string, error) { ran = true; return "ok", nil })
	for _, tt := range []struct{ name, args, field, problem string }{
		{name: "case-folded nested member", args: `{"home":{"Street":"x"}}`, field: "/home/Street",
			problem: `is not an argument name: names are case-sensitive (the tool reads "street")`},
		{name: "case-folded top-level member", args: `{"HOME":{}}`, field: "HOME",
			problem: `is not an argument name: names are case-sensitive (the tool reads "home")`},
		{name: "duplicate nested member", args: `{"home":{"street":"a","street":"b"}}`, field: "/home/street", problem: "appears more than once"},
		{name: "wrong type", args: `{"home":{"street":5}}`, field: "home.street", problem: "must be a string, not number"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(t.Context(), allowAll{}, mcpmw.NewArgs([]byte(tt.args)))
			var ae *mcpmw.ArgError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tt.field, ae.Field)
			assert.Equal(t, tt.problem, ae.Problem)
		})
	}
	assert.False(t, ran)
}

// The returned Tool is a plain value: fields set on it reach the wire.
func TestNewToolIsEditable(t *testing.T) {
	t.Parallel()
	type none struct{}
	tool := typed.NewTool("slow", "Sleeps.", "read", func(ctx context.Context, _ mcpmw.Caller, _ none) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	tool.Title, tool.ReadOnly, tool.Timeout = "Slow", mcpmw.HintYes, 10*time.Millisecond
	h := newHandler(tool)
	status, resp := call(h, "slow", `{}`)
	assert.Equal(t, http.StatusOK, status)
	require.NotNil(t, resp.Result)
	assert.True(t, resp.Result.IsError)
	assert.Contains(t, resp.text(), "did not finish within 10ms")
	var reg mcpmw.Registry
	reg.AddTools(tool)
	got, _ := reg.LookupTool("slow")
	assert.Equal(t, "Slow", got.Title)
	assert.JSONEq(t, `{"type":"object","additionalProperties":false}`, string(got.InputSchema))
}

func TestNewToolPanics(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{name: "In not an object", want: `mcpmw/typed: tool "t": In (string) must be a struct or a map with string keys`,
			f: func() {
				typed.NewTool("t", "d", "p", func(context.Context, mcpmw.Caller, string) (string, error) { return "", nil })
			}},
		{name: "In has no schema", want: `mcpmw/typed: tool "t": no JSON Schema for In`,
			f: func() {
				typed.NewTool("t", "d", "p", func(context.Context, mcpmw.Caller, struct{ C chan int }) (string, error) { return "", nil })
			}},
		{name: "Out recursive", want: `mcpmw/typed: tool "t": no JSON Schema for Out`,
			f: func() {
				typed.NewTool("t", "d", "p", func(context.Context, mcpmw.Caller, struct{}) (node, error) { return node{}, nil })
			}},
		{name: "no call", want: `mcpmw/typed: tool "t" has no call func`,
			f: func() { typed.NewTool[struct{}, string]("t", "d", "p", nil) }},
		{name: "Func of nil", want: `mcpmw/typed: Func needs a func to call`,
			f: func() { typed.Func[struct{}, string](nil) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				r := recover()
				require.NotNil(t, r)
				assert.Contains(t, r, tt.want)
			}()
			tt.f()
		})
	}
}

type node struct {
	Next *node `json:"next"`
}

// A typed tool's schema goes on the wire as derived, and its structured
// result conforms to its output schema.
func TestNewToolOverTheWire(t *testing.T) {
	t.Parallel()
	tool := typed.NewTool("where", "Where someone lives.", "read",
		func(_ context.Context, _ mcpmw.Caller, in shapes) (address, error) { return in.Home, nil })
	h := newHandler(tool)
	status, resp := call(h, "where", `{"name":"al","home":{"street":"Main","zip":"1"},"scores":{"x":1.5}}`)
	assert.Equal(t, http.StatusOK, status)
	require.NotNil(t, resp.Result)
	assert.False(t, resp.Result.IsError, resp.text())
	assert.JSONEq(t, `{"street":"Main","zip":"1"}`, string(resp.Result.StructuredContent))
	var v address
	require.NoError(t, json.Unmarshal(resp.Result.StructuredContent, &v))
	assert.NoError(t, typed.CheckOutput(tool, mcpmw.StructuredResult(v)))
}

// Through a typed tool, validation runs before Decode: a case-folded or
// repeated member is still refused, with Decode's words.
func TestTypedToolRefusesFoldedAndRepeatedMembers(t *testing.T) {
	t.Parallel()
	type in struct {
		Home address `json:"home"`
	}
	h := newHandler(typed.NewTool("t", "d", "p", func(context.Context, mcpmw.Caller, in) (string, error) { return "ran", nil }))
	for _, tt := range []struct{ args, want string }{
		{`{"home":{"street":"a","Street":"b"}}`, `argument "/home/Street" is not an argument name: names are case-sensitive (the tool reads \"street\")`},
		{`{"Home":{"street":"a"}}`, `argument "Home" is not an argument name`},
		{`{"home":{"street":"a"},"home":{"street":"b"}}`, `member '/arguments/home' appears more than once`},
	} {
		status, resp := call(h, "t", tt.args)
		if resp.Error != nil { // the handler refuses repeated members before any tool runs
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Contains(t, resp.Error.Message, tt.want)
			continue
		}
		require.NotNil(t, resp.Result, tt.args)
		assert.True(t, resp.Result.IsError)
		assert.Contains(t, resp.text(), strings.ReplaceAll(tt.want, `\"`, `"`))
	}
}
