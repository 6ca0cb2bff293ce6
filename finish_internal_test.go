package mcpmw

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAppendCompleted(t *testing.T) {
	t.Parallel()
	meta := []byte(`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}`)
	info := `"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}`
	for _, tt := range []struct{ in, want string }{
		{`{}`, `{"resultType":"complete",` + string(meta) + `}`},
		{`{"a":1}`, `{"resultType":"complete","a":1,` + string(meta) + `}`},
		{`{ "a" : [1, {"b":"}"}] }`, `{"resultType":"complete","a":[1, {"b":"}"}],` + string(meta) + `}`},
		{`{"resultType":"input_required","requestState":"x"}`, `{"resultType":"input_required","requestState":"x",` + string(meta) + `}`},
		{`{"_meta":{}}`, `{"resultType":"complete","_meta":{` + info + `}}`},
		{`{"_meta":{"k":"v"},"z":0}`, `{"resultType":"complete","_meta":{` + info + `,"k":"v"},"z":0}`},
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"other"}}}`, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"other"}}}`},
	} {
		got := appendCompleted(nil, []byte(tt.in), meta)
		assert.Equal(t, tt.want, string(got), tt.in)
		assert.True(t, json.Valid(got), tt.in)
	}
}

func TestAppendErrorMessage(t *testing.T) {
	t.Parallel()
	e := &Error{Code: -32022, Message: "Unsupported \"v\"", Data: map[string]any{"requested": "v"}}
	assert.Equal(t, `{"jsonrpc":"2.0","id":"a","error":{"code":-32022,"message":"Unsupported \"v\"","data":{"requested":"v"}}}`,
		string(appendErrorMessage(nil, json.RawMessage(`"a"`), e)))
	e = &Error{Code: -32603, Message: "x", Data: func() {}} // unencodable data is dropped
	assert.Equal(t, `{"jsonrpc":"2.0","error":{"code":-32603,"message":"x"}}`, string(appendErrorMessage(nil, nil, e)))
}
