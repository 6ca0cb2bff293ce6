package mcpmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// wantArgErr asserts that err is an *ArgError for field with problem.
func wantArgErr(t *testing.T, err error, field, problem string) {
	t.Helper()
	var ae *mcpmw.ArgError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, field, ae.Field)
	assert.Equal(t, problem, ae.Problem)
}

func TestArgsAccessors(t *testing.T) {
	t.Parallel()
	type get = func(a *mcpmw.Args) any
	str := func(n string) get { return func(a *mcpmw.Args) any { return a.String(n) } }
	optStr := func(n, d string) get { return func(a *mcpmw.Args) any { return a.OptString(n, d) } }
	boolean := func(n string) get { return func(a *mcpmw.Args) any { return a.Bool(n) } }
	optBool := func(n string, d bool) get { return func(a *mcpmw.Args) any { return a.OptBool(n, d) } }
	integer := func(n string) get { return func(a *mcpmw.Args) any { return a.Int(n) } }
	optInt := func(n string, d int) get { return func(a *mcpmw.Args) any { return a.OptInt(n, d) } }
	float := func(n string) get { return func(a *mcpmw.Args) any { return a.Float(n) } }
	optFloat := func(n string, d float64) get { return func(a *mcpmw.Args) any { return a.OptFloat(n, d) } }
	clamp := func(n string, d, lo, hi int) get { return func(a *mcpmw.Args) any { return a.IntClamp(n, d, lo, hi) } }
	has := func(n string) get { return func(a *mcpmw.Args) any { return a.Has(n) } }

	for _, tt := range []struct {
		name, args string
		get        get
		want       any
		problem    string // "" when no error is expected; the field is always "x"
	}{
		{"String", `{"x":"hi"}`, str("x"), "hi", ""},
		{"String empty", `{"x":""}`, str("x"), "", ""},
		{"String escapes", `{"x":"a\"b\\\u00e9\n"}`, str("x"), "a\"b\\é\n", ""},
		{"String missing", `{"y":"hi"}`, str("x"), "", "is required"},
		{"String null", `{"x":null}`, str("x"), "", "is required"},
		{"String number", `{"x":5}`, str("x"), "", "must be a string, not a number"},
		{"String object", `{"x":{"a":"b"}}`, str("x"), "", "must be a string, not an object"},
		{"String case-sensitive name", `{"X":"hi"}`, str("x"), "", "is required"},
		{"OptString", `{"x":"hi"}`, optStr("x", "d"), "hi", ""},
		{"OptString missing", `{}`, optStr("x", "d"), "d", ""},
		{"OptString null", `{"x":null}`, optStr("x", "d"), "d", ""},
		{"OptString wrong type", `{"x":true}`, optStr("x", "d"), "d", "must be a string, not a boolean"},

		{"Bool true", `{"x":true}`, boolean("x"), true, ""},
		{"Bool false", `{"x":false}`, boolean("x"), false, ""},
		{"Bool missing", `{}`, boolean("x"), false, "is required"},
		{"Bool null", `{"x":null}`, boolean("x"), false, "is required"},
		{"Bool string", `{"x":"true"}`, boolean("x"), false, "must be a boolean, not a string"},
		{"Bool number", `{"x":1}`, boolean("x"), false, "must be a boolean, not a number"},
		{"OptBool", `{"x":false}`, optBool("x", true), false, ""},
		{"OptBool missing", `{}`, optBool("x", true), true, ""},
		{"OptBool null", `{"x":null}`, optBool("x", true), true, ""},
		{"OptBool wrong type", `{"x":[]}`, optBool("x", true), true, "must be a boolean, not an array"},

		{"Int", `{"x":42}`, integer("x"), 42, ""},
		{"Int negative", `{"x":-3}`, integer("x"), -3, ""},
		{"Int negative zero", `{"x":-0}`, integer("x"), 0, ""},
		{"Int 1.0", `{"x":1.0}`, integer("x"), 1, ""},
		{"Int 0.0", `{"x":0.0}`, integer("x"), 0, ""},
		{"Int 1e2", `{"x":1e2}`, integer("x"), 100, ""},
		{"Int 1E+2", `{"x":1E+2}`, integer("x"), 100, ""},
		{"Int 1.5e1", `{"x":1.5e1}`, integer("x"), 15, ""},
		{"Int 100e-2", `{"x":100e-2}`, integer("x"), 1, ""},
		{"Int no float rounding", `{"x":12345678901234567.0}`, integer("x"), 12345678901234567, ""},
		{"Int 2^53+1 as float literal", `{"x":9007199254740993e0}`, integer("x"), 9007199254740993, ""},
		{"Int max", `{"x":9223372036854775807}`, integer("x"), math.MaxInt64, ""},
		{"Int min", `{"x":-9223372036854775808}`, integer("x"), math.MinInt64, ""},
		{"Int min as exponent", `{"x":-92233720368547758.08e2}`, integer("x"), math.MinInt64, ""},
		{"Int 2.5", `{"x":2.5}`, integer("x"), 0, "must be an integer, not 2.5"},
		{"Int 1e-400", `{"x":1e-400}`, integer("x"), 0, "must be an integer, not 1e-400"},
		{"Int 1e400", `{"x":1e400}`, integer("x"), 0, "is out of range"},
		{"Int max+1", `{"x":9223372036854775808}`, integer("x"), 0, "is out of range"},
		{"Int min-1", `{"x":-9223372036854775809}`, integer("x"), 0, "is out of range"},
		{"Int max+1 as float literal", `{"x":9223372036854775808.0}`, integer("x"), 0, "is out of range"},
		{"Int huge exponent", `{"x":1e99999999999999999999}`, integer("x"), 0, "is out of range"},
		{"Int string", `{"x":"5"}`, integer("x"), 0, "must be a number, not a string"},
		{"Int missing", `{}`, integer("x"), 0, "is required"},
		{"OptInt", `{"x":7}`, optInt("x", 3), 7, ""},
		{"OptInt missing", `{}`, optInt("x", 3), 3, ""},
		{"OptInt null", `{"x":null}`, optInt("x", 3), 3, ""},
		{"OptInt fraction", `{"x":2.5}`, optInt("x", 3), 3, "must be an integer, not 2.5"},
		{"OptInt out of range", `{"x":1e20}`, optInt("x", 3), 3, "is out of range"},

		{"Float", `{"x":2.5}`, float("x"), 2.5, ""},
		{"Float integer", `{"x":1}`, float("x"), 1.0, ""},
		{"Float exponent", `{"x":-1.5e-3}`, float("x"), -0.0015, ""},
		{"Float underflow", `{"x":1e-400}`, float("x"), 0.0, ""},
		{"Float overflow", `{"x":1e400}`, float("x"), 0.0, "is out of range"},
		{"Float string", `{"x":"2.5"}`, float("x"), 0.0, "must be a number, not a string"},
		{"Float missing", `{}`, float("x"), 0.0, "is required"},
		{"OptFloat", `{"x":0.25}`, optFloat("x", 9), 0.25, ""},
		{"OptFloat missing", `{}`, optFloat("x", 9), 9.0, ""},
		{"OptFloat overflow", `{"x":-1e400}`, optFloat("x", 9), 9.0, "is out of range"},

		{"IntClamp in range", `{"x":7}`, clamp("x", 20, 1, 50), 7, ""},
		{"IntClamp above", `{"x":51}`, clamp("x", 20, 1, 50), 50, ""},
		{"IntClamp below", `{"x":0}`, clamp("x", 20, 1, 50), 1, ""},
		{"IntClamp negative", `{"x":-5}`, clamp("x", 20, 1, 50), 1, ""},
		{"IntClamp 1e2", `{"x":1e2}`, clamp("x", 20, 1, 500), 100, ""},
		{"IntClamp huge", `{"x":1e400}`, clamp("x", 20, 1, 50), 50, ""},
		{"IntClamp huge negative", `{"x":-1e400}`, clamp("x", 20, 1, 50), 1, ""},
		{"IntClamp max+1", `{"x":9223372036854775808}`, clamp("x", 20, 1, 50), 50, ""},
		{"IntClamp min-1", `{"x":-9223372036854775809}`, clamp("x", 20, 1, 50), 1, ""},
		{"IntClamp missing", `{}`, clamp("x", 20, 1, 50), 20, ""},
		{"IntClamp null", `{"x":null}`, clamp("x", 20, 1, 50), 20, ""},
		{"IntClamp default clamped", `{}`, clamp("x", 99, 1, 50), 50, ""},
		{"IntClamp default clamped up", `{}`, clamp("x", -1, 1, 50), 1, ""},
		{"IntClamp fraction", `{"x":2.5}`, clamp("x", 20, 1, 50), 20, "must be an integer, not 2.5"},
		{"IntClamp string", `{"x":"7"}`, clamp("x", 20, 1, 50), 20, "must be a number, not a string"},

		{"Has", `{"x":0}`, has("x"), true, ""},
		{"Has false bool", `{"x":false}`, has("x"), true, ""},
		{"Has empty string", `{"x":""}`, has("x"), true, ""},
		{"Has null", `{"x":null}`, has("x"), false, ""},
		{"Has missing", `{"y":1}`, has("x"), false, ""},
		{"Has escaped name", `{"\u0078":1}`, has("x"), true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := mcpmw.NewArgs([]byte(tt.args))
			require.NoError(t, a.Err())
			assert.Equal(t, tt.want, tt.get(a))
			if tt.problem == "" {
				assert.NoError(t, a.Err())
				return
			}
			wantArgErr(t, a.Err(), "x", tt.problem)
		})
	}
}

func TestArgsFirstErrorKept(t *testing.T) {
	t.Parallel()
	a := mcpmw.NewArgs([]byte(`{"b":"x","c":2.5,"ok":"fine"}`))
	assert.Empty(t, a.String("a"))          // first problem: missing
	assert.Equal(t, 0, a.Int("b"))          // second: wrong type
	assert.Equal(t, 9, a.OptInt("c", 9))    // third: fraction
	assert.Equal(t, "fine", a.String("ok")) // a good read does not clear it
	assert.Equal(t, 4, a.IntClamp("d", 4, 1, 5))
	wantArgErr(t, a.Err(), "a", "is required")
	assert.EqualError(t, a.Err(), `argument "a" is required`)
	assert.Same(t, a.Err(), a.Err())
}

func TestNewArgs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, raw, wantRaw string
		field, problem     string // problem "" means no error
	}{
		{name: "nil", raw: "", wantRaw: "{}"},
		{name: "null", raw: "null", wantRaw: "{}"},
		{name: "null with spaces", raw: " \n null\t", wantRaw: "{}"},
		{name: "spaces only", raw: "  ", wantRaw: "{}"},
		{name: "empty object", raw: "{}", wantRaw: "{}"},
		{name: "object kept as sent", raw: ` { "a" : 1 } `, wantRaw: ` { "a" : 1 } `},
		{name: "array", raw: `[1,2]`, wantRaw: `[1,2]`, problem: "arguments must be a JSON object, not an array"},
		{name: "string", raw: ` "x"`, wantRaw: ` "x"`, problem: "arguments must be a JSON object, not a string"},
		{name: "number", raw: `5`, wantRaw: `5`, problem: "arguments must be a JSON object, not a number"},
		{name: "boolean", raw: `true`, wantRaw: `true`, problem: "arguments must be a JSON object, not a boolean"},
		{name: "invalid", raw: `{"a":`, wantRaw: `{"a":`, problem: "arguments are not valid JSON"},
		{name: "invalid starting like null", raw: `nope`, wantRaw: `nope`, problem: "arguments are not valid JSON"},
		{name: "null then garbage", raw: `null x`, wantRaw: `null x`, problem: "arguments are not valid JSON"},
		{name: "duplicate member", raw: `{"a":1,"b":2,"a":3}`, wantRaw: `{"a":1,"b":2,"a":3}`, field: "a", problem: "appears more than once"},
		{name: "duplicate spelled with escape", raw: `{"path":"x","p\u0061th":"y"}`, wantRaw: `{"path":"x","p\u0061th":"y"}`, field: "path", problem: "appears more than once"},
		{name: "duplicate escaped from its first byte", raw: `{"a":1,"\u0061":2}`, wantRaw: `{"a":1,"\u0061":2}`, field: "a", problem: "appears more than once"},
		{name: "duplicate nested", raw: `{"o":{"team":"a","team":"b"}}`, wantRaw: `{"o":{"team":"a","team":"b"}}`, field: "/o/team", problem: "appears more than once"},
		{name: "duplicate name with pointer escapes", raw: `{"a/b~c":1,"a/b~c":2}`, wantRaw: `{"a/b~c":1,"a/b~c":2}`, field: "a/b~c", problem: "appears more than once"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var raw []byte
			if tt.name != "nil" {
				raw = []byte(tt.raw)
			}
			a := mcpmw.NewArgs(raw)
			assert.Equal(t, tt.wantRaw, string(a.Raw()))
			if tt.problem == "" {
				assert.NoError(t, a.Err())
				assert.Equal(t, "d", a.OptString("zz", "d"))
				return
			}
			wantArgErr(t, a.Err(), tt.field, tt.problem)
			first := a.Err()
			assert.Empty(t, a.String("zz")) // accessors give zero values and keep the first error
			assert.Equal(t, 3, a.OptInt("zy", 3))
			assert.Same(t, first, a.Err())
		})
	}
}

func TestArgErrorMessage(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 150)
	for _, tt := range []struct {
		name string
		err  *mcpmw.ArgError
		want string
	}{
		{"whole arguments", &mcpmw.ArgError{Problem: "arguments are not valid JSON"}, "invalid arguments: arguments are not valid JSON"},
		{"field", &mcpmw.ArgError{Field: "limit", Problem: "is required"}, `argument "limit" is required`},
		{"field quoted", &mcpmw.ArgError{Field: `a"b`, Problem: "is required"}, `argument "a\"b" is required`},
		{"long field capped", &mcpmw.ArgError{Field: long, Problem: "is required"}, `argument "` + strings.Repeat("é", 100) + `…" is required`},
		{"exactly 100 runes", &mcpmw.ArgError{Field: strings.Repeat("a", 100), Problem: "x"}, `argument "` + strings.Repeat("a", 100) + `" x`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.err.Error())
		})
	}

	a := mcpmw.NewArgs([]byte(`{"` + long + `":1}`))
	_ = a.String(long)
	wantArgErr(t, a.Err(), long, "must be a string, not a number") // Field keeps the whole name
	assert.Equal(t, `argument "`+strings.Repeat("é", 100)+`…" must be a string, not a number`, a.Err().Error())

	b := mcpmw.NewArgs([]byte(`{"x":` + strings.Repeat("1", 150) + `.5}`))
	_ = b.Int("x")
	wantArgErr(t, b.Err(), "x", "must be an integer, not "+strings.Repeat("1", 100)+"…")
}

func TestArgsDecode(t *testing.T) {
	t.Parallel()
	type in struct {
		Message string `json:"message"`
		Limit   int    `json:"limit"`
		Opts    struct {
			N bool `json:"n"`
		} `json:"opts"`
		At time.Time `json:"at"`
	}
	for _, tt := range []struct {
		name, args     string
		want           in
		field, problem string // problem "" means no error
	}{
		{name: "fields", args: `{"message":"hi","limit":5,"opts":{"n":true},"extra":1}`, want: in{Message: "hi", Limit: 5, Opts: struct {
			N bool `json:"n"`
		}{N: true}}},
		{name: "empty", args: ``},
		{name: "wrong type", args: `{"limit":"ten"}`, field: "limit", problem: "must be an integer, not string"},
		{name: "fraction", args: `{"limit":2.5}`, field: "limit", problem: "must be an integer, not number 2.5"},
		{name: "nested", args: `{"opts":{"n":1}}`, field: "opts.n", problem: "must be a boolean, not number"},
		{name: "string field", args: `{"message":[1]}`, field: "message", problem: "must be a string, not array"},
		{name: "huge number capped", args: `{"limit":` + strings.Repeat("9", 150) + `}`, field: "limit",
			problem: "must be an integer, not number " + strings.Repeat("9", 93) + "…"},
		{name: "custom unmarshaler", args: `{"at":"yesterday"}`, field: "",
			problem: `parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		{name: "not an object", args: `[]`, problem: "arguments must be a JSON object, not an array"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := mcpmw.NewArgs([]byte(tt.args))
			var got in
			err := a.Decode(&got)
			if tt.problem == "" {
				require.NoError(t, err)
				assert.NoError(t, a.Err())
				assert.Equal(t, tt.want, got)
				return
			}
			wantArgErr(t, err, tt.field, tt.problem)
			assert.Same(t, err, a.Err())
		})
	}
}

func TestArgsDecodeKeepsEarlierError(t *testing.T) {
	t.Parallel()
	a := mcpmw.NewArgs([]byte(`{"limit":"ten"}`))
	_ = a.Bool("flag")
	var v struct {
		Limit int `json:"limit"`
	}
	err := a.Decode(&v)
	wantArgErr(t, err, "flag", "is required")
	assert.Same(t, err, a.Err())
}

func TestArgsDecodeNonPointerIsNotArgError(t *testing.T) {
	t.Parallel()
	a := mcpmw.NewArgs([]byte(`{"limit":1}`))
	var v struct{ Limit int }
	err := a.Decode(v)
	var ie *json.InvalidUnmarshalError
	require.ErrorAs(t, err, &ie)
	var ae *mcpmw.ArgError
	assert.False(t, errors.As(err, &ae), "a tool's own bug must not be reported to the model as a bad argument")
	assert.Same(t, err, a.Err())
}

func TestNewArgsRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	// encoding/json would read both keys as U+FFFD, the accessors as two
	// different keys: such arguments are refused as a whole.
	a := mcpmw.NewArgs([]byte("{\"\xcc\":1,\"\xcd\":2}"))
	wantArgErr(t, a.Err(), "", "arguments are not valid UTF-8")
	assert.False(t, a.Has("\uFFFD"))
}

// NewArgs of ten thousand members costs a fixed number of allocations,
// not one per member or per doubling (the members are collected into one
// slice of the right size: jsonwire.CollectMembers).
func TestNewArgsOfAWideObjectAllocatesOnce(t *testing.T) {
	// Not parallel: it counts allocations.
	members := make(map[string]int, 10000)
	for i := range 10000 {
		members["k"+strconv.Itoa(i)] = i
	}
	doc, err := json.Marshal(members)
	require.NoError(t, err)
	assert.LessOrEqual(t, testing.AllocsPerRun(5, func() { mcpmw.NewArgs(doc) }), 12.0, "NewArgs: the Args, a few small slices, one of the right size, the duplicate check")
}

// TestArgErrorAnswerSaysInvalidOnce: an *ArgError about the arguments as
// a whole is answered "Invalid arguments: <problem>", by a tool, and
// "Invalid params: <problem>" by a prompt, not with Error's own
// "invalid arguments: " a second time; the record keeps Error's text.
func TestArgErrorAnswerSaysInvalidOnce(t *testing.T) {
	t.Parallel()
	const suffix = ". Check the tool's input schema and call it again."
	var reg mcpmw.Registry
	decodeInto := func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
		var v struct {
			When time.Time `json:"when"`
		}
		return mcpmw.TextResult("ok"), args.Decode(&v)
	}
	reg.AddTools(
		mcpmw.Tool{Name: "whole", Permission: "read", Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.ToolResult{}, &mcpmw.ArgError{Problem: "the dates are in the wrong order"}
		}},
		mcpmw.Tool{Name: "decodes", Permission: "read", Call: decodeInto,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"when":{"type":"string"}}}`)},
		mcpmw.Tool{Name: "decodes_secret", Permission: "read", Call: decodeInto, Sensitive: []string{"/when"},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"when":{"type":"string"}}}`)},
	)
	reg.AddPrompts(mcpmw.Prompt{Name: "p", Permission: "read",
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{}, &mcpmw.ArgError{Problem: "the dates are in the wrong order"}
		}})
	a := &spy{}
	h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{Logger: slog.New(slog.DiscardHandler)})
	for i, tt := range []struct {
		name, tool, args, want, summary string
	}{
		{"the tool's own", "whole", `{}`, "Invalid arguments: the dates are in the wrong order" + suffix,
			"invalid arguments: the dates are in the wrong order"},
		{"Decode", "decodes", `{"when":"soon"}`, `Invalid arguments: parsing time "soon" as "2006-01-02T15:04:05Z07:00": cannot parse "soon" as "2006"` + suffix,
			`invalid arguments: parsing time "soon" as "2006-01-02T15:04:05Z07:00": cannot parse "soon" as "2006"`},
		{"Decode, redacted", "decodes_secret", `{"when":"soon"}`, "Invalid arguments: a value could not be decoded: [redacted]" + suffix,
			"invalid arguments: a value could not be decoded: [redacted]"},
	} {
		w := serve(h, modern("1", "tools/call", `"name":"`+tt.tool+`","arguments":`+tt.args))
		got := decode(t, w)
		require.NotNil(t, got.Result, tt.name)
		content, _ := got.Result["content"].([]any)
		require.Len(t, content, 1, tt.name)
		assert.Equal(t, tt.want, content[0].(map[string]any)["text"], tt.name)
		recs := a.records()
		require.Len(t, recs, i+1, tt.name)
		assert.Equal(t, tt.summary, recs[i].Summary, tt.name)
	}
	w := serve(h, modern("1", "prompts/get", `"name":"p"`, "Mcp-Name", "p"))
	got := decode(t, w)
	require.NotNil(t, got.Error)
	assert.Equal(t, "Invalid params: the dates are in the wrong order", got.Error.Message)
}
