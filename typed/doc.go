// Package typed builds mcpmw tools from Go types, and checks tool
// arguments against their JSON Schema. It is a separate package so that
// applications that write their schemas by hand never compile it or its
// dependency, github.com/google/jsonschema-go.
//
// # Typed tools
//
// [NewTool] derives a tool's input schema from a struct, and its output
// schema from the result type, once, when the tool is built:
//
//	type weatherIn struct {
//		City string `json:"city" jsonschema:"the city"`
//		Days int    `json:"days,omitempty" jsonschema:"how many days, 1 by default"`
//	}
//	weather := typed.NewTool("weather", "Forecast for a city.", "read",
//		func(ctx context.Context, c mcpmw.Caller, in weatherIn) (Forecast, error) {
//			return forecasts.For(ctx, in.City, max(in.Days, 1))
//		})
//	weather.ReadOnly = mcpmw.HintYes
//	reg.AddTools(weather)
//
// The result is a plain [mcpmw.Tool]: the fields NewTool does not set are
// set on it, as on any other tool, so this package adds no options of its
// own.
//
// # Validation
//
// [Validate] wraps any tool, typed or hand-written, so that its arguments
// are checked against its InputSchema before its Call runs; NewTool does it
// for the schema it derives. A failure is an *mcpmw.ArgError, which the
// handler answers, on every revision, with an isError result naming the
// failing value (argument "days" must be >= 1; argument "/stops/2/city"
// is required), as the specification asks for invalid arguments. The
// message quotes the schema, never the client's value. [ValidateOutput]
// checks results against the OutputSchema at run time, and
// [CheckOutput] does it in tests.
//
// # Sensitive arguments
//
// A field tagged `mcpmw:"sensitive"` holds a value the audit trail must not
// keep (a password, an API key, a person's data):
//
//	type loginIn struct {
//		User     string `json:"user"`
//		Password string `json:"password" mcpmw:"sensitive"`
//	}
//
// NewTool resolves the tags once into the tool's mcpmw.Tool.Sensitive, as
// JSON pointers under the names encoding/json uses ("/password"; "/-" for
// `json:"-,"`; a nested struct's field "/card/number"; through a slice,
// array or map "/cards/*/number"; a tagged struct, slice or map is
// sensitive whole). The
// handler then records "[redacted]" in their place and quotes them in no
// message; the tool still gets every value. A tag option other than
// "sensitive" panics. A tool built with Func and Validate lists its
// pointers in Sensitive by hand, as its schema is.
//
// # What a schema may hold, and what validation costs
//
// Schemas are compiled when the tool is built, and refused then (a panic
// naming the tool, the schema and the JSON pointer of the keyword at
// fault, like mcpmw's other setup mistakes) unless they are JSON Schema,
// can be satisfied, and their cost is bounded.
//
// A schema must conform to the meta-schema of its dialect: JSON Schema
// 2020-12 (what MCP specifies, and what a schema without $schema is), or
// draft-07 when its $schema says so. The official meta-schema documents
// are embedded in this package and checked with jsonschema-go itself, so
// nothing is fetched. A misspelt type ("integr"), a keyword value of the
// wrong kind ("minimum": "one", "minLength": -1) or an array of items
// schemas under 2020-12 (prefixItems) is refused, named by its pointer
// (/properties/n/minimum). A keyword JSON Schema does not know
// ("minimun") is an annotation by the specification and is not refused.
//
// A schema that conforms may still allow no value where that is plainly
// a mistake, so that every call would fail blaming the caller. These are
// refused too, in any subschema: an empty enum; an enum or const with no
// value of the schema's type; bounds that leave nothing between them
// (minimum above maximum, or equal with either exclusive; minLength above
// maxLength, and likewise for items, properties and contains); and a
// required member that the same schema forbids (its schema in properties
// is false, or additionalProperties is false and neither properties nor
// patternProperties names it: a misspelt name, most often).
// Contradictions between subschemas (allOf branches that exclude each
// other) are not looked for.
//
// What validation costs is bounded:
//
//   - A $ref must be a JSON pointer into the same schema ("#/$defs/item").
//     A remote or relative $ref is refused: schemas are never fetched (nor
//     would jsonschema-go fetch one: it only loads through a loader, and
//     the one this package gives it refuses). Anchors, $dynamicRef and $id
//     below the root are refused too.
//   - A recursive schema (a $ref leading back to a schema that contains it)
//     is refused: with anyOf in the loop, its cost would double with each
//     level of nesting of the arguments.
//   - The schema, with each $ref expanded where it is used, may hold at
//     most 1,000 subschemas.
//
// Validation applies each of those subschemas at most once to each value
// in the arguments, and the handler has already bounded the arguments
// (Options.MaxBodyBytes, 4 MiB by default, and 128 levels of nesting).
// Patterns are Go regular expressions, which run in linear time (and
// differ from ECMA 262: no back-references). "format" is not checked.
// Numbers are compared as float64: a bound beyond 2^53 is approximate.
//
// jsonschema-go's errors quote the failing value whole and say where in
// the schema, not where in the value, it failed; this package names the
// value itself. Where it cannot follow the failure down (under anyOf,
// oneOf, not, contains, or an items schema that refers outside $defs), it
// names the nearest enclosing value.
package typed
