package typed

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpmw/mcpmw"
)

// NewTool returns a tool whose arguments are a value of type In and whose
// result is a value of type Out. Its InputSchema is derived from In, and
// its OutputSchema from Out, here, once, by jsonschema-go (the library the
// official Go SDK uses, so the same struct tags apply: `json:"name"` names
// a member, omitempty or omitzero makes it optional, `jsonschema:"…"`
// describes it; members not in In are refused). Each call validates the
// arguments against the input schema (see Validate), decodes them into In
// with Args.Decode, and runs call.
//
// The schema names exactly the members encoding/json reads: `json:"-,"`
// names the member "-", a field with the ",string" option is described as
// the string it travels as, and NewTool panics on a struct whose members
// jsonschema-go would name otherwise than encoding/json (an embedded
// struct with a json tag name, which encoding/json reads as one member; a
// tag name encoding/json ignores, such as one with an apostrophe; fields
// of one name that hide each other by encoding/json's rules only).
//
// A field tagged `mcpmw:"sensitive"` is a sensitive argument: the tool's
// Sensitive lists its JSON pointer, found here, once, under the name
// encoding/json gives it ("/password"; through a slice or map,
// "/cards/*/number"; a tagged struct, slice or map is sensitive whole, and
// so is each field promoted from a tagged embedded struct). A sensitive
// field that another field of its name hides from encoding/json panics:
// the secret would be decoded into the other. The handler then redacts
// its value from the audit record and from every message it builds,
// validation failures included; call still gets it. See
// mcpmw.Tool.Sensitive.
//
// In must be a struct, or a map with string keys: the arguments are an
// object. Out decides the result:
//   - mcpmw.ToolResult is sent as it is, with no OutputSchema;
//   - string is sent as one text block, with no OutputSchema;
//   - anything else (a struct, a pointer to one, a map, a slice, a number)
//     is sent as StructuredContent, with its JSON text as a text block, and
//     Out's schema is the OutputSchema. Legacy clients get a non-object
//     value as text only, and no OutputSchema for it. A nil pointer
//     returned without an error is a -32603 "Internal error": it would not
//     match the schema.
//
// An error call returns is passed on: an *mcpmw.ArgError becomes an
// isError result naming the argument, an *mcpmw.Error that JSON-RPC error,
// any other -32603 "Internal error" and a log line. Out is ignored then.
//
// The tool is a plain mcpmw.Tool: set Title, ReadOnly, Timeout,
// RequiredClientCapabilities and the rest on it before Registry.AddTools.
// InputSchema is what its Call checks; to declare a schema of your own
// (with minimum, pattern, enum…), build the Tool with Func and wrap it
// with Validate instead. NewTool panics, with a message naming the tool,
// if In or Out has no JSON Schema (channels, funcs, recursive types) or In
// is not an object.
func NewTool[In, Out any](name, description string, perm mcpmw.Permission, call func(ctx context.Context, c mcpmw.Caller, in In) (Out, error)) mcpmw.Tool {
	if call == nil {
		panic(fmt.Sprintf("mcpmw/typed: tool %q has no call func", name))
	}
	t := mcpmw.Tool{Name: name, Description: description, Permission: perm,
		InputSchema: deriveSchema(name, "In", reflect.TypeFor[In]()), Call: Func(call)}
	t.Sensitive = sensitivePointers(name, reflect.TypeFor[In]())
	if form := formOf[Out](); form == structured || form == structuredPtr {
		t.OutputSchema = deriveSchema(name, "Out", derefType(reflect.TypeFor[Out]()))
	}
	return Validate(t)
}

// Func adapts a typed func to a Tool's Call: the arguments are decoded into
// In with Args.Decode (refusing a member repeated at any depth, and a
// member that names a field of In only by case folding), and Out is made
// the result as NewTool describes. It does not validate: set the Tool's
// InputSchema by hand and wrap the Tool with Validate, which does. Func
// panics if call is nil: the tool would panic on every call.
//
//	typed.Validate(mcpmw.Tool{Name: "forecast", Permission: "read",
//		InputSchema: json.RawMessage(`{"type":"object","properties":{"days":{"type":"integer","minimum":1,"maximum":14}}}`),
//		Call:        typed.Func(forecast)})
func Func[In, Out any](call func(ctx context.Context, c mcpmw.Caller, in In) (Out, error)) func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
	if call == nil {
		panic("mcpmw/typed: Func needs a func to call")
	}
	form := formOf[Out]()
	return func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
		var in In
		if err := args.Decode(&in); err != nil {
			return mcpmw.ToolResult{}, err
		}
		out, err := call(ctx, c, in)
		if err != nil {
			return mcpmw.ToolResult{}, err
		}
		switch form {
		case asIs:
			return any(out).(mcpmw.ToolResult), nil
		case text:
			return mcpmw.TextResult(any(out).(string)), nil
		case structuredPtr:
			if reflect.ValueOf(out).IsNil() {
				return mcpmw.ToolResult{}, fmt.Errorf("mcpmw/typed: the tool returned a nil %T and no error", out)
			}
		}
		return mcpmw.StructuredResult(out), nil
	}
}

// resultForm is how a value of Out becomes a ToolResult.
type resultForm uint8

const (
	structured    resultForm = iota // StructuredContent
	structuredPtr                   // StructuredContent, nil refused
	asIs                            // Out is mcpmw.ToolResult
	text                            // Out is string
)

func formOf[Out any]() resultForm {
	t := reflect.TypeFor[Out]()
	switch {
	case t == reflect.TypeFor[mcpmw.ToolResult]():
		return asIs
	case t == reflect.TypeFor[string]():
		return text
	case t.Kind() == reflect.Pointer:
		return structuredPtr
	}
	return structured
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// deriveSchema returns the JSON Schema of t, or panics naming the tool.
func deriveSchema(tool, param string, t reflect.Type) json.RawMessage {
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		panic(fmt.Sprintf("mcpmw/typed: tool %q: no JSON Schema for %s (%s): %v", tool, param, t, err))
	}
	if param == "In" && s.Type != "object" {
		panic(fmt.Sprintf("mcpmw/typed: tool %q: In (%s) must be a struct or a map with string keys: the arguments are a JSON object", tool, t))
	}
	matchJSONNames(tool, t, s)
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("mcpmw/typed: tool %q: encoding the schema of %s (%s): %v", tool, param, t, err))
	}
	return raw
}
