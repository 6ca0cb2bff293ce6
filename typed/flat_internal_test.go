package typed

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpmw/mcpmw"
)

const flatTestSchema = `{"type":"object","properties":{"message":{"type":"string","description":"d"},"n":{"type":"integer","minimum":0,"maximum":255},"f":{"type":"number"},"b":{"type":"boolean"},"p":{"type":["null","string"]}},"required":["message","b"],"additionalProperties":false}`

func TestFlatten(t *testing.T) {
	t.Parallel()
	f := flatten(json.RawMessage(flatTestSchema))
	if assert.NotNil(t, f) {
		assert.True(t, f.closed)
		assert.Len(t, f.props, 5)
	}
	for _, s := range []string{
		`{"type":"object","properties":{"o":{"type":"object"}}}`,
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}`,
		`{"type":"object","properties":{"s":{"type":"string","pattern":"^a"}}}`,
		`{"type":"object","properties":{"s":{"type":"string","enum":["a"]}}}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object","required":["ghost"]}`,
		`{"type":"object","allOf":[{"required":["a"]}]}`,
		`{"type":"object","properties":{"s":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`,
	} {
		assert.Nil(t, flatten(json.RawMessage(s)), s)
	}
}

// The shortcut is sound: whatever it passes, the full validator passes.
// It need not pass everything the validator would; what it declines, the
// validator decides.
func TestFlatPassesOnlyWhatConforms(t *testing.T) {
	t.Parallel()
	f := flatten(json.RawMessage(flatTestSchema))
	v := compile("t", "InputSchema", json.RawMessage(flatTestSchema), true)
	for _, tt := range []struct {
		args   string
		passes bool
	}{
		{`{"message":"hi","b":true}`, true},
		{` { "message" : "hi" , "b" : false , "n" : 3 , "f" : 1.5 , "p" : null } `, true},
		{`{"message":"hi","b":true,"n":1.0}`, true},
		{`{"message":"hi","b":true,"n":1e2}`, true},
		{`{"message":"hi","b":true,"p":"x"}`, true},
		{`{"message":"hi"}`, false},                    // b is required
		{`{"b":true}`, false},                          // message is required
		{`{"message":null,"b":true}`, false},           // not a string
		{`{"message":"hi","b":"true"}`, false},         // not a boolean
		{`{"message":"hi","b":true,"n":1.5}`, false},   // not an integer
		{`{"message":"hi","b":true,"n":256}`, false},   // above the maximum
		{`{"message":"hi","b":true,"n":-1}`, false},    // below the minimum
		{`{"message":"hi","b":true,"f":"1"}`, false},   // not a number
		{`{"message":"hi","b":true,"extra":1}`, false}, // not allowed
		{`{"message":"hi","b":true,"p":{}}`, false},    // neither null nor a string
		{`{"m\u0065ssage":"hi","b":true}`, false},      // an escaped name: the validator decides
		{`{"message":"hi","b":true,"n":1e400}`, false}, // out of range
		{`{"message":["hi"],"b":true}`, false},         // an array
		{`{}`, false},
	} {
		got := f.passes([]byte(tt.args))
		assert.Equal(t, tt.passes, got, tt.args)
		if got {
			assert.NoError(t, v.checkArgs(mcpmw.NewArgs([]byte(tt.args))), "the validator agrees: %s", tt.args)
		}
	}
}

func FuzzFlatIsSound(f *testing.F) {
	for _, s := range []string{`{"message":"hi","b":true}`, `{"message":"hi","b":true,"n":255,"f":-1e-3,"p":null,"x":[{"y":"}"}]}`, `{}`} {
		f.Add(s)
	}
	open := `{"type":"object","properties":{"message":{"type":"string"},"n":{"type":"integer","minimum":0,"maximum":255},"f":{"type":"number"},"b":{"type":"boolean"},"p":{"type":["null","string"]}},"required":["message","b"]}`
	schemas := []string{flatTestSchema, open}
	flats := []*flatSchema{flatten(json.RawMessage(flatTestSchema)), flatten(json.RawMessage(open))}
	vs := []*validator{compile("t", "InputSchema", json.RawMessage(schemas[0]), true), compile("t", "InputSchema", json.RawMessage(schemas[1]), true)}
	f.Fuzz(func(t *testing.T, args string) {
		a := mcpmw.NewArgs([]byte(args))
		if a.Err() != nil {
			return // the handler refuses these before any tool runs
		}
		for i, fl := range flats {
			if fl.passes(a.Raw()) {
				if err := vs[i].checkArgs(a); err != nil {
					t.Fatalf("the shortcut passed %s, the validator says %v", args, err)
				}
			}
		}
	})
}

// In an open schema an unknown member passes, so a shortcut that read a
// name written with an escape as unknown would let {"\u006e":1.5} through
// where {"n":1.5} fails: the shortcut declines such names, and the full
// validator, which decodes them, refuses both alike.
func TestFlatDeclinesEscapedNamesInAnOpenSchema(t *testing.T) {
	t.Parallel()
	open := `{"type":"object","properties":{"n":{"type":"integer"}}}`
	f := flatten(json.RawMessage(open))
	if assert.NotNil(t, f, "a flat schema") {
		assert.False(t, f.closed)
	}
	v := compile("t", "InputSchema", json.RawMessage(open), true)
	v.flat = f
	for _, args := range []string{`{"n":1.5}`, `{"\u006e":1.5}`, `{"\u006E":1.5}`} {
		assert.False(t, f.passes([]byte(args)), "the shortcut passes %s", args)
		var ae *mcpmw.ArgError
		if assert.ErrorAs(t, v.checkArgs(mcpmw.NewArgs([]byte(args))), &ae, args) {
			assert.Equal(t, "n", ae.Field, args)
		}
	}
	assert.NoError(t, v.checkArgs(mcpmw.NewArgs([]byte(`{"\u006e":1}`))))
}
