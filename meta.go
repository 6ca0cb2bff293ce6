package mcpmw

import (
	"encoding/json"
	"fmt"
)

// The _meta of a definition (a tool, a prompt, a resource, a template) or
// of a resource's contents is where extensions put what they add: MCP
// Apps names the UI of a tool there. The root knows nothing of what it
// holds; it encodes it, once per definition, as the last member of the
// object.

// appendMetaMember inserts `,"_meta":{...}` before the closing brace of
// obj, a JSON object just encoded, when meta is not empty.
func appendMetaMember(obj []byte, meta map[string]any) ([]byte, error) {
	if len(meta) == 0 {
		return obj, nil
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		return obj, fmt.Errorf("its Meta cannot be encoded as JSON: %w", err)
	}
	obj = obj[:len(obj)-1] // obj ends with its closing brace
	if obj[len(obj)-1] != '{' {
		obj = append(obj, ',')
	}
	obj = append(obj, `"_meta":`...)
	return append(append(obj, raw...), '}'), nil
}

// appendMeta is appendMetaMember for a definition registered now: a Meta
// that cannot be encoded is a setup mistake, and panics naming what.
func appendMeta(obj []byte, meta map[string]any, what string) []byte {
	obj, err := appendMetaMember(obj, meta)
	if err != nil {
		panic("mcpmw: " + what + ": " + err.Error())
	}
	return obj
}
