package mcpmw

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// folded is the refusal of a member spelled like name in another case.
func folded(name string) string {
	return `Invalid Request: a member is spelled like "` + name + `" in another case; JSON-RPC member names are case-sensitive`
}

func TestParseEnvelope(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, body string
		code       int    // 0: accepted
		msg        string // the error message, when code is set
		id         string // the id as kept (echoed), "" for none
		method     string
		params     string
		response   bool
	}{
		// -32700: not JSON at all.
		{name: "empty body", body: ``, code: CodeParseError, msg: "Parse error: the body is not valid JSON"},
		{name: "spaces only", body: " \n\t", code: CodeParseError, msg: "Parse error: the body is not valid JSON"},
		{name: "truncated", body: `{"jsonrpc":"2.0","id":1,"method":"ping"`, code: CodeParseError, msg: "Parse error: the body is not valid JSON"},
		{name: "trailing garbage", body: `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, code: CodeParseError, msg: "Parse error: the body is not valid JSON"},
		{name: "two objects", body: `{"jsonrpc":"2.0","id":1,"method":"a"}{"jsonrpc":"2.0","id":2,"method":"b"}`, code: CodeParseError, msg: "Parse error: the body is not valid JSON"},
		{name: "single quotes", body: `{'jsonrpc':'2.0'}`, code: CodeParseError, msg: "Parse error: the body is not valid JSON"},
		{name: "byte order mark", body: "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}", code: CodeParseError, msg: "Parse error: the body is not valid JSON"},
		{name: "invalid UTF-8 in a string", body: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":{\"s\":\"P\xaeAY\"}}", code: CodeParseError, msg: "Parse error: the body is not valid UTF-8"},
		{name: "invalid UTF-8 in a key", body: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"\xcc\":1}", code: CodeParseError, msg: "Parse error: the body is not valid UTF-8"},
		{name: "surrogate half encoded raw", body: "{\"jsonrpc\":\"2.0\",\"id\":\"\xed\xa0\x80\",\"method\":\"a\"}", code: CodeParseError, msg: "Parse error: the body is not valid UTF-8"},

		// -32600: JSON, but not one request.
		{name: "batch", body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, code: CodeInvalidRequest,
			msg: "Invalid Request: batches are not supported; send one JSON-RPC message per POST"},
		{name: "empty batch", body: ` [ ] `, code: CodeInvalidRequest,
			msg: "Invalid Request: batches are not supported; send one JSON-RPC message per POST"},
		{name: "string body", body: `"hello"`, code: CodeInvalidRequest, msg: "Invalid Request: the body must be a JSON-RPC object"},
		{name: "number body", body: `42`, code: CodeInvalidRequest, msg: "Invalid Request: the body must be a JSON-RPC object"},
		{name: "null body", body: `null`, code: CodeInvalidRequest, msg: "Invalid Request: the body must be a JSON-RPC object"},
		{name: "true body", body: `true`, code: CodeInvalidRequest, msg: "Invalid Request: the body must be a JSON-RPC object"},
		{name: "empty object", body: `{}`, code: CodeInvalidRequest, msg: `Invalid Request: "jsonrpc" must be "2.0"`},
		{name: "jsonrpc missing", body: `{"id":1,"method":"ping"}`, code: CodeInvalidRequest, id: "1", msg: `Invalid Request: "jsonrpc" must be "2.0"`},
		{name: "jsonrpc 1.0", body: `{"jsonrpc":"1.0","id":1,"method":"ping"}`, code: CodeInvalidRequest, id: "1", msg: `Invalid Request: "jsonrpc" must be "2.0"`},
		{name: "jsonrpc number", body: `{"jsonrpc":2.0,"id":"a","method":"ping"}`, code: CodeInvalidRequest, id: `"a"`, msg: `Invalid Request: "jsonrpc" must be "2.0"`},
		{name: "jsonrpc padded", body: `{"jsonrpc":" 2.0","id":1,"method":"ping"}`, code: CodeInvalidRequest, id: "1", msg: `Invalid Request: "jsonrpc" must be "2.0"`},
		{name: "jsonrpc null", body: `{"jsonrpc":null,"id":1,"method":"ping"}`, code: CodeInvalidRequest, id: "1", msg: `Invalid Request: "jsonrpc" must be "2.0"`},
		{name: "Jsonrpc wrong case", body: `{"Jsonrpc":"2.0","id":1,"method":"ping"}`, code: CodeInvalidRequest, id: "1", msg: folded("jsonrpc")},
		// Go decoders read these as the members this reader does not see:
		// "ID" would make a request of what reads here as a notification.
		{name: "ID in upper case", body: `{"jsonrpc":"2.0","ID":1,"method":"tools/call"}`, code: CodeInvalidRequest, msg: folded("id")},
		{name: "Id beside id", body: `{"jsonrpc":"2.0","id":1,"Id":2,"method":"a"}`, code: CodeInvalidRequest, id: "1", msg: folded("id")},
		{name: "Method beside method", body: `{"jsonrpc":"2.0","id":1,"method":"a","Method":"b"}`, code: CodeInvalidRequest, id: "1", msg: folded("method")},
		{name: "PARAMS", body: `{"jsonrpc":"2.0","id":"x","method":"a","PARAMS":{}}`, code: CodeInvalidRequest, id: `"x"`, msg: folded("params")},
		{name: "result with an escape", body: `{"jsonrpc":"2.0","id":1,"r\u0045sult":{}}`, code: CodeInvalidRequest, id: "1", msg: folded("result")},
		{name: "error with a long s", body: `{"jſonrpc":"2.0","id":1,"method":"a"}`, code: CodeInvalidRequest, id: "1", msg: folded("jsonrpc")},
		{name: "ID spelled wholly in escapes", body: `{"jsonrpc":"2.0","\u0049\u0044":1,"method":"a"}`, code: CodeInvalidRequest, msg: folded("id")},
		{name: "the first of two folded members is named", body: `{"jsonrpc":"2.0","id":1,"METHOD":"a","Params":{}}`, code: CodeInvalidRequest, id: "1", msg: folded("method")},
		{name: "ıd is not id", body: `{"jsonrpc":"2.0","ıd":1,"method":"a"}`, method: "a"}, // dotless i folds to nothing ASCII
		{name: "id null", body: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, code: CodeInvalidRequest,
			msg: "Invalid Request: id must not be null; omit it for a notification"},
		{name: "id object", body: `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, code: CodeInvalidRequest,
			msg: "Invalid Request: id must be a string or an integer, not an object"},
		{name: "id bool", body: `{"jsonrpc":"2.0","id":true,"method":"ping"}`, code: CodeInvalidRequest,
			msg: "Invalid Request: id must be a string or an integer, not a boolean"},
		{name: "id array", body: `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, code: CodeInvalidRequest,
			msg: "Invalid Request: id must be a string or an integer, not an array"},
		{name: "method missing", body: `{"jsonrpc":"2.0","id":5}`, code: CodeInvalidRequest, id: "5", msg: "Invalid Request: method is missing"},
		{name: "method missing, params only", body: `{"jsonrpc":"2.0","id":5,"params":{}}`, code: CodeInvalidRequest, id: "5", msg: "Invalid Request: method is missing"},
		{name: "method empty", body: `{"jsonrpc":"2.0","id":5,"method":""}`, code: CodeInvalidRequest, id: "5", msg: "Invalid Request: method must be a non-empty string"},
		{name: "method number", body: `{"jsonrpc":"2.0","id":5,"method":7}`, code: CodeInvalidRequest, id: "5", msg: "Invalid Request: method must be a non-empty string"},
		{name: "method null", body: `{"jsonrpc":"2.0","id":5,"method":null}`, code: CodeInvalidRequest, id: "5", msg: "Invalid Request: method must be a non-empty string"},
		{name: "request with result", body: `{"jsonrpc":"2.0","id":5,"method":"a","result":{}}`, code: CodeInvalidRequest, id: "5",
			msg: "Invalid Request: a request cannot carry result or error"},
		{name: "request with error", body: `{"jsonrpc":"2.0","id":5,"method":"a","error":{"code":1,"message":"x"}}`, code: CodeInvalidRequest, id: "5",
			msg: "Invalid Request: a request cannot carry result or error"},
		{name: "result without id", body: `{"jsonrpc":"2.0","result":{}}`, code: CodeInvalidRequest, msg: "Invalid Request: method is missing"},
		{name: "result with params", body: `{"jsonrpc":"2.0","id":3,"result":{},"params":{}}`, code: CodeInvalidRequest, id: "3", msg: "Invalid Request: method is missing"},
		{name: "params array", body: `{"jsonrpc":"2.0","id":5,"method":"a","params":[1]}`, code: CodeInvalidRequest, id: "5",
			msg: "Invalid Request: params must be an object, not an array"},
		{name: "params string", body: `{"jsonrpc":"2.0","id":5,"method":"a","params":"x"}`, code: CodeInvalidRequest, id: "5",
			msg: "Invalid Request: params must be an object, not a string"},
		{name: "params null", body: `{"jsonrpc":"2.0","id":5,"method":"a","params":null}`, code: CodeInvalidRequest, id: "5",
			msg: "Invalid Request: params must be an object, not null"},

		// Duplicate members, however spelled; the id is still echoed when given once.
		{name: "method twice", body: `{"jsonrpc":"2.0","id":9,"method":"a","method":"b"}`, code: CodeInvalidRequest, id: "9",
			msg: `Invalid Request: member "method" appears twice`},
		{name: "method twice, escaped", body: `{"jsonrpc":"2.0","id":9,"method":"a","m\u0065thod":"b"}`, code: CodeInvalidRequest, id: "9",
			msg: `Invalid Request: member "method" appears twice`},
		{name: "id twice", body: `{"jsonrpc":"2.0","id":1,"method":"a","id":2}`, code: CodeInvalidRequest,
			msg: `Invalid Request: member "id" appears twice`},
		{name: "id twice, escaped", body: `{"jsonrpc":"2.0","\u0069d":1,"method":"a","id":1}`, code: CodeInvalidRequest,
			msg: `Invalid Request: member "id" appears twice`},
		{name: "id twice after another duplicate", body: `{"jsonrpc":"2.0","id":1,"method":"a","method":"a","id":2}`, code: CodeInvalidRequest,
			msg: `Invalid Request: member "method" appears twice`},
		{name: "jsonrpc twice", body: `{"jsonrpc":"2.0","jsonrpc":"2.0","id":"x","method":"a"}`, code: CodeInvalidRequest, id: `"x"`,
			msg: `Invalid Request: member "jsonrpc" appears twice`},
		{name: "params twice", body: `{"jsonrpc":"2.0","id":1,"method":"a","params":{},"par\u0061ms":{}}`, code: CodeInvalidRequest, id: "1",
			msg: `Invalid Request: member "params" appears twice`},
		{name: "result twice", body: `{"jsonrpc":"2.0","id":1,"result":{},"result":{}}`, code: CodeInvalidRequest, id: "1",
			msg: `Invalid Request: member "result" appears twice`},
		{name: "error twice", body: `{"jsonrpc":"2.0","id":1,"error":{},"error":{}}`, code: CodeInvalidRequest, id: "1",
			msg: `Invalid Request: member "error" appears twice`},
		{name: "duplicate with null id", body: `{"jsonrpc":"2.0","id":null,"method":"a","method":"b"}`, code: CodeInvalidRequest,
			msg: `Invalid Request: member "method" appears twice`},

		// Accepted requests and notifications; ids are kept byte for byte.
		{name: "integer id", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, id: "1", method: "tools/list"},
		{name: "string id stays a string", body: `{"jsonrpc":"2.0","id":"7","method":"a"}`, id: `"7"`, method: "a"},
		{name: "empty string id", body: `{"jsonrpc":"2.0","id":"","method":"a"}`, id: `""`, method: "a"},
		{name: "escaped string id kept raw", body: `{"jsonrpc":"2.0","id":"a\u0062\"c","method":"a"}`, id: `"a\u0062\"c"`, method: "a"},
		{name: "id beyond float precision", body: `{"jsonrpc":"2.0","id":9007199254740993,"method":"a"}`, id: "9007199254740993", method: "a"},
		{name: "id negative zero", body: `{"jsonrpc":"2.0","id":-0,"method":"a"}`, id: "-0", method: "a"},
		{name: "id exponent", body: `{"jsonrpc":"2.0","id":1e3,"method":"a"}`, id: "1e3", method: "a"},
		{name: "id huge", body: `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"a"}`, id: "123456789012345678901234567890", method: "a"},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, method: "notifications/initialized"},
		{name: "params kept raw", body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{ "name" : "x" }}`,
			id: "2", method: "tools/call", params: `{ "name" : "x" }`},
		{name: "empty params", body: `{"jsonrpc":"2.0","id":2,"method":"a","params":{}}`, id: "2", method: "a", params: `{}`},
		{name: "escaped method decoded", body: `{"jsonrpc":"2.0","id":2,"method":"tools\/list"}`, id: "2", method: "tools/list"},
		{name: "escaped member names", body: `{"\u006asonrpc":"2.0","\u0069d":4,"m\u0065thod":"a"}`, id: "4", method: "a"},
		{name: "unknown members ignored", body: `{"jsonrpc":"2.0","id":2,"method":"a","extra":[1,{"method":"b"}],"x":null,"x":1}`, id: "2", method: "a"},
		{name: "member order free", body: `{"method":"a","params":{"k":1},"id":"z","jsonrpc":"2.0"}`, id: `"z"`, method: "a", params: `{"k":1}`},
		{name: "whitespace everywhere", body: "\r\n\t { \n\"jsonrpc\" :\t\"2.0\" ,\n \"id\" : 8 , \"method\"\n:\n\"a\" , \"params\" : { } \n} \n",
			id: "8", method: "a", params: "{ }"},

		// Client-sent responses are flagged, not refused.
		{name: "response with result", body: `{"jsonrpc":"2.0","id":3,"result":{"ok":true}}`, id: "3", response: true},
		{name: "response with error", body: `{"jsonrpc":"2.0","id":"s1","error":{"code":-1,"message":"no"}}`, id: `"s1"`, response: true},
		{name: "response with null result", body: `{"jsonrpc":"2.0","id":3,"result":null}`, id: "3", response: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env, err := parseEnvelope([]byte(tt.body))
			if tt.code != 0 {
				require.NotNil(t, err)
				assert.Equal(t, tt.code, err.Code)
				assert.Equal(t, tt.msg, err.Message)
				assert.Nil(t, err.Data)
				assert.False(t, env.response)
			} else {
				require.Nil(t, err)
				assert.Equal(t, tt.method, env.method)
				assert.Equal(t, tt.response, env.response)
			}
			if tt.id == "" {
				assert.Nil(t, env.id)
			} else {
				assert.Equal(t, tt.id, string(env.id))
			}
			if tt.params == "" {
				assert.Nil(t, env.params)
			} else {
				assert.Equal(t, tt.params, string(env.params))
			}
		})
	}
}

// TestParseEnvelopeAliasesBody checks that id and params are slices of the
// body, not copies: the handler echoes them without re-encoding.
func TestParseEnvelopeAliasesBody(t *testing.T) {
	t.Parallel()
	body := []byte(`{"jsonrpc":"2.0","id":12,"method":"a","params":{"k":"v"}}`)
	env, err := parseEnvelope(body)
	require.Nil(t, err)
	body[len(`{"jsonrpc":"2.0","id":`)] = '9'
	assert.Equal(t, "92", string(env.id))
}

func TestParseEnvelopeDepthLimit(t *testing.T) {
	t.Parallel()
	// The body is level 1 and params level 2, so arguments nested n deep
	// reach n+3 levels.
	body := func(levels int) []byte {
		inner := strings.Repeat(`{"a":`, levels-3) + "1" + strings.Repeat("}", levels-3)
		return []byte(`{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"x","arguments":{"v":` + inner + `}}}`)
	}
	env, err := parseEnvelope(body(maxJSONDepth))
	require.Nil(t, err)
	assert.Equal(t, "tools/call", env.method)

	env, err = parseEnvelope(body(maxJSONDepth + 1))
	require.NotNil(t, err)
	assert.Equal(t, CodeInvalidRequest, err.Code)
	assert.Equal(t, "Invalid Request: JSON nesting is deeper than 128 levels", err.Message)
	assert.Equal(t, `"deep"`, string(env.id), "the id is still echoed")

	// Arrays count as much as objects, anywhere in the body.
	_, err = parseEnvelope([]byte(`{"jsonrpc":"2.0","id":1,"method":"a","x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`))
	require.NotNil(t, err)
	assert.Equal(t, CodeInvalidRequest, err.Code)

	// Beyond encoding/json's own limit (10000) the body is not JSON to it.
	_, err = parseEnvelope([]byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001)))
	require.NotNil(t, err)
	assert.Equal(t, CodeParseError, err.Code)

	// Brackets inside strings are not nesting.
	_, err = parseEnvelope([]byte(`{"jsonrpc":"2.0","id":1,"method":"a","params":{"s":"` + strings.Repeat("[{", 300) + `"}}`))
	assert.Nil(t, err)
}

func TestParseEnvelopeWideBodyAllocatesNothing(t *testing.T) {
	// Not parallel: it counts allocations.
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"a"`)
	for i := range 10000 {
		b.WriteString(`,"m` + strconv.Itoa(i) + `":0`)
	}
	b.WriteString("}")
	body := []byte(b.String())
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := parseEnvelope(body); err != nil {
			t.Fatal(err)
		}
	})
	assert.LessOrEqual(t, allocs, 4.0, "ten thousand unknown members are walked, not collected")
}
