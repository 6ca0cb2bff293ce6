package typed_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/typed"
)

type embeddedCard struct {
	Number string `json:"number" mcpmw:"sensitive"`
}

type unexportedCard struct {
	Number string `json:"number" mcpmw:"sensitive"`
}

// TestNewToolRefusesSchemaThatNamesOtherMembers: where jsonschema-go and
// encoding/json name a struct's members differently, the derived schema
// would check (and the Sensitive pointers redact) members that Decode does
// not read, so NewTool refuses the type, naming both lists.
func TestNewToolRefusesSchemaThatNamesOtherMembers(t *testing.T) {
	t.Parallel()
	type taggedEmbedded struct {
		embeddedCard `json:"card"` // encoding/json: a member "card"; jsonschema-go: "number" promoted
	}
	type unexportedTagged struct {
		unexportedCard `json:"card"`
	}
	type badTagName struct {
		//lint:ignore SA5008 a tag name encoding/json ignores, on purpose
		Key string `json:"api'key" mcpmw:"sensitive"` // encoding/json ignores the name: "Key"
	}
	type nested struct {
		Inner []badTagName `json:"inner"`
	}
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"tagged embedded struct", func() {
			typed.NewTool("t", "", "read", func(context.Context, mcpmw.Caller, taggedEmbedded) (string, error) { return "", nil })
		}, `reads typed_test.taggedEmbedded as the members ["card"], but its derived schema describes ["number"]`},
		{"unexported tagged embedded struct", func() {
			typed.NewTool("t", "", "read", func(context.Context, mcpmw.Caller, unexportedTagged) (string, error) { return "", nil })
		}, `as the members ["card"], but its derived schema describes ["number"]`},
		{"invalid tag name", func() {
			typed.NewTool("t", "", "read", func(context.Context, mcpmw.Caller, badTagName) (string, error) { return "", nil })
		}, `as the members ["Key"], but its derived schema describes ["api'key"]`},
		{"nested, in a slice", func() {
			typed.NewTool("t", "", "read", func(context.Context, mcpmw.Caller, nested) (string, error) { return "", nil })
		}, `reads typed_test.badTagName as the members ["Key"]`},
		{"in Out", func() {
			typed.NewTool("t", "", "read", func(context.Context, mcpmw.Caller, struct{}) (badTagName, error) { return badTagName{}, nil })
		}, `reads typed_test.badTagName as the members ["Key"]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				msg := fmt.Sprint(recover())
				assert.Contains(t, msg, `mcpmw/typed: tool "t": encoding/json `)
				assert.Contains(t, msg, tt.want)
			}()
			tt.f()
		})
	}
}

// TestNewToolQuotedFieldIsAString: a field with the ",string" option
// travels as a string holding its JSON, so its schema says string, and a
// call that Decode accepts passes validation.
func TestNewToolQuotedFieldIsAString(t *testing.T) {
	t.Parallel()
	type in struct {
		Count int  `json:"count,string" jsonschema:"how many"`
		Limit *int `json:"limit,omitempty,string"`
		//lint:ignore SA5008 ",string" where encoding/json ignores it, on purpose
		List []int `json:"list,omitempty,string"` // not quotable: the option is ignored
	}
	tool := typed.NewTool("q", "", "read", func(_ context.Context, _ mcpmw.Caller, in in) (string, error) {
		return fmt.Sprint(in.Count, *in.Limit, in.List), nil
	})
	assert.JSONEq(t, `{"type":"object","properties":{"count":{"type":"string","description":"how many"},
		"limit":{"type":["null","string"]},"list":{"type":["null","array"],"items":{"type":"integer"}}},
		"required":["count"],"additionalProperties":false}`, string(tool.InputSchema))
	status, resp := call(newHandler(tool), "q", `{"count":"3","limit":"4","list":[5]}`)
	require.Equal(t, http.StatusOK, status)
	require.NotNil(t, resp.Result)
	assert.False(t, resp.Result.IsError, resp.text())
	assert.Equal(t, "3 4 [5]", resp.text())
}

// selfJSON and selfText decode themselves (pointer receivers), so their
// fields say nothing of the members they read: NewTool does not hold the
// schema jsonschema-go derives for them to encoding/json's field names.
type selfJSON struct {
	embeddedCard `json:"card"` // would be refused were its fields read
}

func (*selfJSON) UnmarshalJSON([]byte) error { return nil }

type selfText struct {
	embeddedCard `json:"card"`
}

func (*selfText) UnmarshalText([]byte) error { return nil }

func TestNewToolLeavesTypesThatDecodeThemselves(t *testing.T) {
	t.Parallel()
	type in struct {
		J selfJSON  `json:"j"`
		T *selfText `json:"t"`
	}
	assert.NotPanics(t, func() {
		typed.NewTool("t", "", "read", func(context.Context, mcpmw.Caller, in) (string, error) { return "", nil })
	})
}
