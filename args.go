package mcpmw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// Args gives typed access to a tool call's arguments. Accessors never fail
// loudly: each returns the zero value (or the default) on a problem and
// keeps the first problem for Err, the way bufio.Scanner does, so a tool
// reads all its arguments and checks once:
//
//	msg := args.String("message")
//	limit := args.IntClamp("limit", 20, 1, 50)
//	if err := args.Err(); err != nil {
//		return mcpmw.ToolResult{}, err // an isError result naming the field
//	}
//
// Values are never converted between JSON types: "5" is not an integer and
// 1 is not a string. Only IntClamp bends, and only on magnitude.
type Args struct {
	raw     json.RawMessage
	members []jsonwire.Member
	err     error
}

// NewArgs returns Args over raw, the JSON object of a call's arguments. Nil
// or empty raw means no arguments. It is what the handler uses, and what a
// test uses to call a tool's func directly.
func NewArgs(raw []byte) *Args {
	a := &Args{raw: raw}
	if trimmed := bytes.TrimSpace(raw); len(trimmed) == 0 || string(trimmed) == "null" {
		a.raw = json.RawMessage("{}")
		return a
	}
	if !json.Valid(raw) {
		a.err = &ArgError{Problem: "arguments are not valid JSON"}
		return a
	}
	if !utf8.Valid(raw) { // the handler never passes such arguments on
		a.err = &ArgError{Problem: "arguments are not valid UTF-8"}
		return a
	}
	var ok bool
	if a.members, ok = jsonwire.CollectMembers(raw); !ok {
		a.err = &ArgError{Problem: "arguments must be a JSON object, not " + jsonwire.KindOf(raw[jsonwire.SkipSpace(raw, 0):]).String()}
		return a
	}
	// The accessors read the first of two same-named members and Decode
	// the last; refusing duplicates, at every depth, keeps every reader on
	// the same value. (The handler has refused them already; this is for
	// Args built by hand.)
	if ptr, dup := jsonwire.DuplicatePointer(raw); dup {
		a.err = &ArgError{Field: argField(ptr), Problem: "appears more than once"}
	}
	return a
}

// argField names the argument at JSON pointer ptr in an ArgError: a
// top-level argument by its name, a nested member by its pointer.
func argField(ptr string) string {
	if strings.LastIndexByte(ptr, '/') != 0 {
		return ptr
	}
	// One reference token: the name, with RFC 6901's escapes undone.
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(ptr[1:])
}

// An ArgError reports an argument that is missing or of the wrong type or
// form. A tool that returns one gets an isError result whose text names the
// field, so the model can correct its call.
//
// Some problems the accessors and Decode find quote the value ("must be an
// integer, not 1.5"). For a tool with Sensitive arguments the handler
// sends and records such a problem with "[redacted]" in place of the
// value; a Problem the tool writes itself is sent as written, so keep
// sensitive values out of it.
type ArgError struct {
	Field   string // the argument's name, a JSON pointer such as "/order/id" for a nested member, "" for the arguments as a whole
	Problem string // e.g. "is required", "must be a string, not a number"

	// redacted is Problem with the client's value it quotes replaced by
	// "[redacted]"; "" when Problem quotes none.
	redacted string
}

func (e *ArgError) Error() string {
	if e.Field == "" {
		return "invalid arguments: " + e.Problem
	}
	return fmt.Sprintf("argument %q %s", capEcho(e.Field), e.Problem)
}

// text is e's message for a record: Error, or, when redact is set, Error
// with the value its Problem quotes redacted.
func (e *ArgError) text(redact bool) string {
	if !redact || e.redacted == "" {
		return e.Error()
	}
	c := *e
	c.Problem = e.redacted
	return c.Error()
}

// detail is e's message for an answer that says what is invalid itself
// ("Invalid arguments: …", "Invalid params: …"): text without Error's own
// "invalid arguments: " before a problem of the arguments as a whole.
func (e *ArgError) detail(redact bool) string {
	if e.Field != "" {
		return e.text(redact)
	}
	if redact && e.redacted != "" {
		return e.redacted
	}
	return e.Problem
}

// Err returns the first problem any accessor met, or nil.
func (a *Args) Err() error { return a.err }

// Raw returns the whole arguments object as sent.
func (a *Args) Raw() json.RawMessage { return a.raw }

// Has reports whether the argument is present and not null.
func (a *Args) Has(name string) bool {
	k := jsonwire.KindOf(jsonwire.Lookup(a.members, name))
	return k != jsonwire.KindNone && k != jsonwire.KindNull
}

// Decode unmarshals the whole arguments object into v with encoding/json, for
// tools that prefer a struct. A type mismatch becomes an *ArgError naming the
// field; the error is also kept for Err.
//
// Member names match struct fields exactly, unlike plain encoding/json,
// which also fills a field tagged "region" from "Region" or "REGION": such
// a member is an *ArgError. So Decode reads exactly the members that the
// accessors, the handler's Mcp-Param-* check and any gateway read, and a
// client cannot slip a second spelling past them.
func (a *Args) Decode(v any) error {
	if a.err != nil {
		return a.err
	}
	if t := reflect.TypeOf(v); t == nil || t.Kind() != reflect.Pointer {
		// json.Unmarshal reports this, as the tool's bug below.
	} else if ptr, want, folded := jsonwire.FoldedField(a.raw, t); folded {
		a.fail(argField(ptr), "is not an argument name: names are case-sensitive (the tool reads "+strconv.Quote(want)+")")
		return a.err
	}
	if err := json.Unmarshal(a.raw, v); err != nil {
		var te *json.UnmarshalTypeError
		var ie *json.InvalidUnmarshalError
		switch {
		case errors.As(err, &te): // te.Value: "number 1.5", "string"
			a.failQuoting(te.Field, "must be "+jsonTypeName(te.Type.Kind().String())+", not ", te.Value)
		case errors.As(err, &ie): // v is not a non-nil pointer: the tool's bug, not the model's
			a.err = err
		default: // a field's own UnmarshalJSON refused its value, and may quote it
			a.err = &ArgError{Problem: capEcho(err.Error()), redacted: "a value could not be decoded: " + redactedText}
		}
		return a.err
	}
	return nil
}

func jsonTypeName(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "slice", "array":
		return "an array"
	default:
		return "an object"
	}
}

func (a *Args) fail(field, problem string) {
	if a.err == nil {
		a.err = &ArgError{Field: field, Problem: problem}
	}
}

// failQuoting is fail for a problem that ends by quoting the client's
// value, capped; its redacted form has "[redacted]" there instead.
func (a *Args) failQuoting(field, problem, value string) {
	if a.err == nil {
		a.err = &ArgError{Field: field, Problem: problem + capEcho(value), redacted: problem + redactedText}
	}
}

// get returns the raw value of name, recording a problem when it is absent
// (and required) or of the wrong kind. ok is false when no usable value is
// there.
func (a *Args) get(name string, want jsonwire.Kind, required bool) ([]byte, bool) {
	v := jsonwire.Lookup(a.members, name)
	switch k := jsonwire.KindOf(v); k {
	case want:
		return v, true
	case jsonwire.KindNone, jsonwire.KindNull:
		if required {
			a.fail(name, "is required")
		}
		return nil, false
	default:
		a.fail(name, "must be "+want.String()+", not "+k.String())
		return nil, false
	}
}

// String returns the required string argument name.
func (a *Args) String(name string) string { return a.str(name, "", true) }

// OptString returns the string argument name, or def when it is absent or null.
func (a *Args) OptString(name, def string) string { return a.str(name, def, false) }

func (a *Args) str(name, def string, required bool) string {
	v, ok := a.get(name, jsonwire.KindString, required)
	if !ok {
		return def
	}
	s, _ := jsonwire.Unquote(v)
	return s
}

// Bool returns the required boolean argument name.
func (a *Args) Bool(name string) bool {
	v, _ := a.get(name, jsonwire.KindBool, true)
	return len(v) > 0 && v[0] == 't'
}

// OptBool returns the boolean argument name, or def when it is absent or null.
func (a *Args) OptBool(name string, def bool) bool {
	v, ok := a.get(name, jsonwire.KindBool, false)
	if !ok {
		return def
	}
	return v[0] == 't'
}

// Float returns the required number argument name.
func (a *Args) Float(name string) float64 { return a.float(name, 0, true) }

// OptFloat returns the number argument name, or def when it is absent or null.
func (a *Args) OptFloat(name string, def float64) float64 { return a.float(name, def, false) }

func (a *Args) float(name string, def float64, required bool) float64 {
	v, ok := a.get(name, jsonwire.KindNumber, required)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil { // only overflow: JSON numbers are otherwise valid floats
		a.fail(name, "is out of range")
		return def
	}
	return f
}

// Int returns the required integer argument name. A number with a fraction,
// or one beyond the range of int, is a problem.
func (a *Args) Int(name string) int { return a.int(name, 0, true) }

// OptInt returns the integer argument name, or def when it is absent or null.
func (a *Args) OptInt(name string, def int) int { return a.int(name, def, false) }

func (a *Args) int(name string, def int, required bool) int {
	v, ok := a.get(name, jsonwire.KindNumber, required)
	if !ok {
		return def
	}
	n, exact, integral := jsonwire.ParseInt(v)
	switch {
	case !integral:
		a.failQuoting(name, "must be an integer, not ", string(v))
		return def
	case !exact:
		a.fail(name, "is out of range")
		return def
	}
	return n
}

// IntClamp returns the integer argument name clamped to [min, max], or def
// (also clamped) when it is absent or null. Out-of-range values, however
// large, are clamped rather than refused; a value that is not an integer is
// still a problem.
func (a *Args) IntClamp(name string, def, min, max int) int {
	clamp := func(n int) int {
		if n < min {
			return min
		}
		if n > max {
			return max
		}
		return n
	}
	v, ok := a.get(name, jsonwire.KindNumber, false)
	if !ok {
		return clamp(def)
	}
	n, exact, integral := jsonwire.ParseInt(v)
	if !integral {
		a.failQuoting(name, "must be an integer, not ", string(v))
		return clamp(def)
	}
	if !exact { // beyond int: clamp by sign
		if v[0] == '-' {
			return min
		}
		return max
	}
	return clamp(n)
}
