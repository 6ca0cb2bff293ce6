package mcpmw

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// FuzzParseEnvelope checks parseEnvelope against encoding/json: it never
// panics, refuses exactly what is not JSON with -32700, and whatever it
// accepts reads the same id, method and params encoding/json reads.
func FuzzParseEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"\u006asonrpc":"2.0","id":1e3,"method":"a","params":{"k":[1,{"x":null}]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","params":` + nested(130) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		env, perr := parseEnvelope(body)
		if !json.Valid(body) || !utf8.Valid(body) {
			if perr == nil || perr.Code != CodeParseError {
				t.Fatalf("invalid JSON or UTF-8 %q: got %+v, want -32700", body, perr)
			}
			if env.id != nil || env.method != "" || env.params != nil || env.response {
				t.Fatalf("invalid JSON %q filled in the envelope: %+v", body, env)
			}
			return
		}
		if perr != nil && perr.Code != CodeInvalidRequest {
			t.Fatalf("valid JSON %q: code %d, want -32600 or success", body, perr.Code)
		}
		if perr != nil && perr.Message == "" {
			t.Fatalf("%q: an error without a message", body)
		}
		if env.id != nil {
			if k := jsonwire.KindOf(env.id); k != jsonwire.KindString && k != jsonwire.KindNumber || !json.Valid(env.id) || !bytes.Contains(body, env.id) {
				t.Fatalf("%q: echoed id %q is not a string or number from the body", body, env.id)
			}
		}
		if perr == nil && jsonwire.ExceedsDepth(body, maxJSONDepth) { // FuzzObjectMembers checks ExceedsDepth against encoding/json
			t.Fatalf("%q: accepted a body more than %d levels deep", body, maxJSONDepth)
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil {
			// Not an object: only the two "not a JSON-RPC object" answers fit.
			if perr == nil {
				t.Fatalf("%q: a non-object was accepted", body)
			}
			return
		}
		if perr != nil {
			return
		}
		// Accepted: encoding/json must read the same message. (No member
		// it knows appears twice, so the map holds the one value.)
		if v := m["jsonrpc"]; string(v) != `"2.0"` && !jsonStringIs(v, "2.0") {
			t.Fatalf("%q: accepted jsonrpc %s", body, v)
		}
		if !bytes.Equal(env.id, m["id"]) {
			t.Fatalf("%q: id %q, encoding/json reads %q", body, env.id, m["id"])
		}
		if env.response {
			if env.id == nil || m["method"] != nil || (m["result"] == nil && m["error"] == nil) {
				t.Fatalf("%q: flagged as a response", body)
			}
			return
		}
		var method string
		if err := json.Unmarshal(m["method"], &method); err != nil || method != env.method || method == "" {
			t.Fatalf("%q: method %q, encoding/json reads %q (%v)", body, env.method, method, err)
		}
		if !bytes.Equal(env.params, m["params"]) || (env.params != nil && jsonwire.KindOf(env.params) != jsonwire.KindObject) {
			t.Fatalf("%q: params %q, encoding/json reads %q", body, env.params, m["params"])
		}
		if m["result"] != nil || m["error"] != nil {
			t.Fatalf("%q: a request with result or error was accepted", body)
		}
	})
}

// nested returns n levels of {"a": ... }.
func nested(n int) string {
	b := bytes.Repeat([]byte(`{"a":`), n)
	b = append(b, '1')
	return string(append(b, bytes.Repeat([]byte("}"), n)...))
}

func jsonStringIs(raw []byte, want string) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil && s == want
}
