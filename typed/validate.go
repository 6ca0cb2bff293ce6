package typed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpmw/mcpmw"
)

// Validate returns t with a Call that first checks the arguments against
// t.InputSchema, compiled here, once: call it at startup, where Registry.AddTools
// is called. Arguments that fail get an *mcpmw.ArgError naming the failing
// value (a top-level argument by its name, a nested one by its JSON
// pointer, such as "/order/items/2/qty"), which the handler answers with an
// isError result the model can act on; t.Call does not run.
//
// Validate panics, with a message naming the tool, if t has no Call or if
// its InputSchema is not an object schema this package can bound: see the
// package documentation for what it refuses. An empty InputSchema is the
// no-arguments schema, as in Registry.AddTools.
func Validate(t mcpmw.Tool) mcpmw.Tool {
	if t.Call == nil {
		panic(fmt.Sprintf("mcpmw/typed: tool %q has no Call func", t.Name))
	}
	// The tool keeps its own copy of the schema it is checked against:
	// the caller's bytes may change before Registry.AddTools copies them.
	t.InputSchema = bytes.Clone(t.InputSchema)
	schema := t.InputSchema
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = noArgsSchema
	}
	v := compile(t.Name, "InputSchema", schema, true)
	v.flat = flatten(schema)
	call := t.Call
	t.Call = func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
		if err := v.checkArgs(args); err != nil {
			return mcpmw.ToolResult{}, err
		}
		return call(ctx, c, args)
	}
	return t
}

// checkArgs validates the arguments: the problems Args found first
// (duplicate members, not an object), then the schema.
func (v *validator) checkArgs(args *mcpmw.Args) error {
	if err := args.Err(); err != nil {
		return err
	}
	if v.flat != nil && v.flat.passes(args.Raw()) {
		return nil // certainly valid: see flat.go
	}
	var inst any
	if err := json.Unmarshal(args.Raw(), &inst); err != nil {
		// Valid JSON that encoding/json cannot hold: a number beyond float64.
		return &mcpmw.ArgError{Problem: "they hold a number out of range"}
	}
	if err := v.rs.Validate(inst); err != nil {
		return v.argError(err, inst)
	}
	return nil
}

// ValidateOutput returns t with a Call that checks every successful
// result's StructuredContent against t.OutputSchema, compiled here, once.
// A result that does not conform, or has no StructuredContent, is never
// sent: the call fails with an error that the handler logs and answers
// with -32603 "Internal error". Results with IsError set are passed on
// unchecked. It costs an extra encoding and decoding of each result; tests
// can use CheckOutput instead.
//
// ValidateOutput panics, with a message naming the tool, if t has no Call
// or no OutputSchema, or if the schema is not one Validate would accept
// (its root need not be an object).
func ValidateOutput(t mcpmw.Tool) mcpmw.Tool {
	t.OutputSchema = bytes.Clone(t.OutputSchema) // the tool keeps the schema it checks against, as Validate does
	v := outputValidator(t)
	call := t.Call
	t.Call = func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
		res, err := call(ctx, c, args)
		if err != nil || res.IsError {
			return res, err
		}
		if err := v.checkOutput(res); err != nil {
			return mcpmw.ToolResult{}, err
		}
		return res, nil
	}
	return t
}

// CheckOutput reports whether res, a result of t, conforms to
// t.OutputSchema: nil if it does (or res.IsError is set), an error saying
// where it does not otherwise. It compiles the schema on every call and is
// meant for tests; ValidateOutput checks at run time. It panics as
// ValidateOutput does.
func CheckOutput(t mcpmw.Tool, res mcpmw.ToolResult) error {
	if res.IsError {
		return nil
	}
	return outputValidator(t).checkOutput(res)
}

func outputValidator(t mcpmw.Tool) *validator {
	if t.Call == nil {
		panic(fmt.Sprintf("mcpmw/typed: tool %q has no Call func", t.Name))
	}
	if len(bytes.TrimSpace(t.OutputSchema)) == 0 {
		panic(fmt.Sprintf("mcpmw/typed: tool %q has no OutputSchema to check results against", t.Name))
	}
	return compile(t.Name, "OutputSchema", t.OutputSchema, false)
}

var errNoStructured = errors.New("the result has no StructuredContent")

func (v *validator) checkOutput(res mcpmw.ToolResult) error {
	if res.StructuredContent == nil {
		return fmt.Errorf("mcpmw/typed: tool %q: %w, and the tool declares an OutputSchema", v.tool, errNoStructured)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return fmt.Errorf("mcpmw/typed: tool %q: StructuredContent: %w", v.tool, err)
	}
	var inst any
	if err := json.Unmarshal(raw, &inst); err != nil {
		return fmt.Errorf("mcpmw/typed: tool %q: StructuredContent: %w", v.tool, err)
	}
	if err := v.rs.Validate(inst); err != nil {
		ae := v.argError(err, inst)
		at := ae.Field
		if at == "" {
			at = "the root"
		}
		return fmt.Errorf("mcpmw/typed: tool %q: StructuredContent does not match the OutputSchema: %s %s", v.tool, at, ae.Problem)
	}
	return nil
}
