package typed_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/typed"
)

type secretCard struct {
	Number string `json:"number" mcpmw:"sensitive"`
	Holder string `json:"holder"`
}

// Promoted is embedded in signupIn: its fields are promoted to the top.
type Promoted struct {
	Token string `json:"token" mcpmw:"sensitive"`
	Plain string `json:"plain,omitempty"`
}

// Hidden is embedded in signupIn with the tag: all its fields are sensitive.
type Hidden struct {
	A string `json:"a,omitempty"`
	B string `json:"b,omitempty"`
}

type signupIn struct {
	Password string                `json:"password" mcpmw:"sensitive"`
	Name     string                `json:"name"`
	GoName   string                `mcpmw:"sensitive"` // named as encoding/json names it
	Card     secretCard            `json:"card"`
	Backup   *secretCard           `json:"backup,omitempty"`
	Cards    []secretCard          `json:"cards,omitempty"`
	Pair     [2]secretCard         `json:"pair"`
	ByName   map[string]secretCard `json:"by_name,omitempty"`
	Whole    secretCard            `json:"whole" mcpmw:"sensitive"` // the object, not its members
	Untagged secretCard            // a member named as the field, not promoted
	List     []string              `json:"list,omitempty" mcpmw:"sensitive"`
	Escaped  string                `json:"a/b~c" mcpmw:"sensitive"`
	Skipped  string                `json:"-" mcpmw:"sensitive"` // not an argument
	hidden   string                `mcpmw:"sensitive"`          // not an argument either
	Promoted
	Hidden `mcpmw:"sensitive"`
}

func TestNewToolSensitiveTag(t *testing.T) {
	t.Parallel()
	tool := typed.NewTool("signup", "Signs up.", "read", func(_ context.Context, _ mcpmw.Caller, in signupIn) (string, error) {
		return in.hidden, nil
	})
	assert.Equal(t, []string{
		"/password", "/GoName", "/card/number", "/backup/number", "/cards/*/number", "/pair/*/number", "/by_name/*/number",
		"/whole", "/Untagged/number", "/list", "/a~1b~0c", "/token", "/a", "/b",
	}, tool.Sensitive)
	var reg mcpmw.Registry
	require.NotPanics(t, func() { reg.AddTools(tool) }, "every pointer names a member of the derived schema")
}

func TestNewToolWithoutSensitiveFields(t *testing.T) {
	t.Parallel()
	tool := typed.NewTool("plain", "Plain.", "read", func(_ context.Context, _ mcpmw.Caller, in struct {
		Name string `json:"name"`
	}) (string, error) {
		return in.Name, nil
	})
	assert.Nil(t, tool.Sensitive, "nothing to redact, nothing to pay")
}

func TestNewToolRefusesUnknownSensitiveTagOption(t *testing.T) {
	t.Parallel()
	type in struct {
		Password string `json:"password" mcpmw:"sensitve"`
	}
	type empty struct {
		Password string `json:"password" mcpmw:""`
	}
	for name, build := range map[string]func(){
		"misspelt": func() {
			typed.NewTool("login", "", "read", func(context.Context, mcpmw.Caller, in) (string, error) { return "", nil })
		},
		"empty": func() {
			typed.NewTool("login", "", "read", func(context.Context, mcpmw.Caller, empty) (string, error) { return "", nil })
		},
	} {
		func() {
			defer func() {
				msg := fmt.Sprint(recover())
				assert.Contains(t, msg, `mcpmw/typed: tool "login": field`, name)
				assert.Contains(t, msg, `.Password: tag mcpmw:`, name)
				assert.Contains(t, msg, `the one option is "sensitive"`, name)
			}()
			build()
		}()
	}
}

// TestTypedSensitiveArgumentRedacted drives a typed tool through the
// handler: the record carries "[redacted]" for the tagged field, the
// validation error names the field without the value, and the tool gets
// the value as sent.
func TestTypedSensitiveArgumentRedacted(t *testing.T) {
	t.Parallel()
	type loginIn struct {
		User     string `json:"user"`
		Password string `json:"password" mcpmw:"sensitive"`
	}
	var got string
	tool := typed.NewTool("login", "Logs in.", "read", func(_ context.Context, _ mcpmw.Caller, in loginIn) (string, error) {
		got = in.Password
		return "ok", nil
	})
	var recs []mcpmw.CallRecord
	h := newAuditedHandler(func(rec mcpmw.CallRecord) { recs = append(recs, rec) }, tool)
	status, resp := call(h, "login", `{"user":"ann","password":"hunter2"}`)
	require.Equal(t, 200, status)
	assert.Equal(t, "ok", resp.text())
	assert.Equal(t, "hunter2", got)
	require.Len(t, recs, 1)
	assert.Equal(t, `{"user":"ann","password":"[redacted]"}`, string(recs[0].Arguments))

	_, resp = call(h, "login", `{"user":"ann","password":["hunter2"]}`)
	assert.Equal(t, `Invalid arguments: argument "password" must be a string, not an array. Check the tool's input schema and call it again.`, resp.text())
	require.Len(t, recs, 2)
	assert.Equal(t, `{"user":"ann","password":"[redacted]"}`, string(recs[1].Arguments))
	assert.NotContains(t, recs[1].Summary, "hunter2")
}

// TestNewToolSensitiveDashCommaField: `json:"-,"` names the member "-"
// (encoding/json, the derived schema and Decode all read it so), and a
// sensitive field of that name is redacted like any other.
func TestNewToolSensitiveDashCommaField(t *testing.T) {
	t.Parallel()
	type in struct {
		//lint:ignore SA5008 the member named "-" is the case under test
		Dash string `json:"-," mcpmw:"sensitive"`
		Skip string `json:"-" mcpmw:"sensitive"` // no member
		User string `json:"user"`
	}
	var got string
	tool := typed.NewTool("dash", "Dash.", "read", func(_ context.Context, _ mcpmw.Caller, in in) (string, error) {
		got = in.Dash
		return "ok", nil
	})
	assert.Equal(t, []string{"/-"}, tool.Sensitive)
	var recs []mcpmw.CallRecord
	h := newAuditedHandler(func(rec mcpmw.CallRecord) { recs = append(recs, rec) }, tool)
	status, resp := call(h, "dash", `{"-":"hunter2","user":"ann"}`)
	require.Equal(t, 200, status)
	assert.Equal(t, "ok", resp.text())
	assert.Equal(t, "hunter2", got, "Decode fills the field from the member \"-\"")
	require.Len(t, recs, 1)
	assert.Equal(t, `{"-":"[redacted]","user":"ann"}`, string(recs[0].Arguments))
}

// Promoted fields of a tagged embedded struct, and the sensitive fields of
// a struct reached through one, are named as encoding/json names them.
type (
	sensitiveLeaf struct {
		Pin  string `json:"pin" mcpmw:"sensitive"`
		Note string `json:"note"`
	}
	sensitiveMid   struct{ sensitiveLeaf }     // promotes pin and note
	sensitiveWrap  struct{ *sensitiveMid }     // through a pointer
	sensitiveAll   struct{ Key, Other string } // embedded with the tag: both sensitive
	sensitiveOuter struct {
		sensitiveWrap
		sensitiveAll `mcpmw:"sensitive"`
		Note         string `json:"note"` // shallower: hides sensitiveLeaf's note, which is not sensitive
	}
)

func TestSensitiveFieldsNamedAsEncodingJSON(t *testing.T) {
	t.Parallel()
	tool := typed.NewTool("o", "", "read", func(context.Context, mcpmw.Caller, sensitiveOuter) (string, error) { return "", nil })
	assert.Equal(t, []string{"/pin", "/Key", "/Other"}, tool.Sensitive)
	var reg mcpmw.Registry
	require.NotPanics(t, func() { reg.AddTools(tool) })
}

// A sensitive field that encoding/json never fills, hidden by another of
// its name, is a mistake: the secret would be decoded into the other
// field and recorded as it came.
func TestNewToolRefusesHiddenSensitiveField(t *testing.T) {
	t.Parallel()
	type shadow struct {
		Token string `mcpmw:"sensitive"`
	}
	type in struct {
		shadow
		Token string // hides shadow's Token
	}
	type tie1 struct {
		Token string `mcpmw:"sensitive"`
	}
	type tie2 struct {
		Token string
	}
	type tied struct { // the two hide each other: no member "Token" at all
		tie1
		tie2
	}
	type wholeShadow struct{ Token string }
	type inWhole struct {
		wholeShadow `mcpmw:"sensitive"`
		Token       string
	}
	for name, build := range map[string]func(){
		"shallower": func() {
			defer func() {
				msg := fmt.Sprint(recover())
				assert.Contains(t, msg, `field typed_test.in.shadow.Token is tagged`, "the field named by its way in")
				panic(msg)
			}()
			typed.NewTool("t", "", "read", func(context.Context, mcpmw.Caller, in) (string, error) { return "", nil })
		},
		"same depth": func() {
			typed.NewTool("t", "", "read", func(context.Context, mcpmw.Caller, tied) (string, error) { return "", nil })
		},
		"a tagged embedded struct's": func() {
			typed.NewTool("t", "", "read", func(context.Context, mcpmw.Caller, inWhole) (string, error) { return "", nil })
		},
	} {
		func() {
			defer func() {
				msg := fmt.Sprint(recover())
				assert.Contains(t, msg, `mcpmw/typed: tool "t": field`, name)
				assert.Contains(t, msg, `Token is tagged mcpmw:"sensitive", but encoding/json never fills it: another field named "`, name)
				assert.NotContains(t, msg, "..", name)
			}()
			build()
		}()
	}
}

// TestNewToolChecksTagsOfEveryField: a misspelt option is refused on a
// field that is no member too, and on an embedded struct's.
func TestNewToolChecksTagsOfEveryField(t *testing.T) {
	t.Parallel()
	type inner struct {
		hidden string `mcpmw:"sensitiv"`
	}
	type in struct {
		Skip string `json:"-" mcpmw:"secret"`
	}
	type embeds struct{ inner }
	type notAMember struct {
		Skip inner  `json:"-"` // no member: its struct is never read, nor its tags
		Name string `json:"name"`
	}
	for name, build := range map[string]func(){
		"json -": func() {
			typed.NewTool("t", "", "read", func(context.Context, mcpmw.Caller, in) (string, error) { return "", nil })
		},
		"embedded": func() {
			typed.NewTool("t", "", "read", func(_ context.Context, _ mcpmw.Caller, e embeds) (string, error) { return e.hidden, nil })
		},
	} {
		func() {
			defer func() {
				assert.Contains(t, fmt.Sprint(recover()), `the one option is "sensitive"`, name)
			}()
			build()
		}()
	}
	assert.NotPanics(t, func() {
		typed.NewTool("t", "", "read", func(_ context.Context, _ mcpmw.Caller, in notAMember) (string, error) { return in.Skip.hidden, nil })
	})
}
