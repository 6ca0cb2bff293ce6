package typed

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpmw/mcpmw/internal/echo"
	"github.com/mcpmw/mcpmw/internal/schemawalk"
)

// A schema is checked against the meta-schema of its dialect before
// anything else: jsonschema-go (v0.4.3) does not do it when it resolves a
// schema, and accepts keyword values the specification does not ("type":
// "integr", "minLength": -1), or fails to decode them with an error that
// names its own Go types rather than the keyword. It does validate
// against a meta-schema given one, so the official documents (as
// json-schema.org publishes them: 2020-12 and its vocabularies, draft-07)
// are embedded here, never fetched, and the same library checks the schema
// with them.

//go:embed metaschema
var metaFS embed.FS

// dialect is a JSON Schema version this package compiles.
type dialect string

const (
	draft202012 dialect = "https://json-schema.org/draft/2020-12/schema"
	draft07     dialect = "http://json-schema.org/draft-07/schema"
)

// dialectOf returns the dialect a $schema value names ("" is 2020-12, as
// MCP specifies), or false for one this package does not compile.
func dialectOf(schema string) (dialect, bool) {
	switch schema {
	case "", string(draft202012):
		return draft202012, true
	case "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#":
		return draft07, true
	}
	return "", false
}

// loadMeta is the loader of the meta-schemas: only the embedded documents.
func loadMeta(u *url.URL) (*jsonschema.Schema, error) {
	v := *u
	v.Fragment = ""
	var file string
	if rest, ok := strings.CutPrefix(v.String(), "https://json-schema.org/draft/2020-12/"); ok {
		file = "metaschema/draft2020-12/" + rest + ".json"
	} else if v.String() == string(draft07) {
		file = "metaschema/draft-07/schema.json"
	} else {
		return nil, fmt.Errorf("%s is not an embedded meta-schema", u)
	}
	raw, err := metaFS.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s := new(jsonschema.Schema)
	return s, json.Unmarshal(raw, s)
}

// metaSchemas are the meta-schemas, resolved once, when a schema is first
// compiled. The embedded documents resolve: a test makes sure.
var metaSchemas = sync.OnceValues(func() (map[dialect]*jsonschema.Resolved, error) {
	m := map[dialect]*jsonschema.Resolved{}
	for _, d := range []dialect{draft202012, draft07} {
		u, _ := url.Parse(string(d))
		root, err := loadMeta(u)
		if err != nil {
			return nil, err
		}
		if m[d], err = root.Resolve(&jsonschema.ResolveOptions{BaseURI: string(d), Loader: loadMeta}); err != nil {
			return nil, fmt.Errorf("the %s meta-schema: %w", d, err)
		}
	}
	return m, nil
})

// metaProblem returns where the schema doc first fails the meta-schema of
// d, as a JSON pointer to the failing keyword ("/properties/n/minimum"),
// and what is wrong there; bad is false when doc conforms.
func metaProblem(d dialect, doc any) (ptr, problem string, bad bool) {
	metas, err := metaSchemas()
	if err != nil {
		panic("mcpmw/typed: " + err.Error())
	}
	meta := metas[d]
	if meta.Validate(doc) == nil {
		return "", "", false
	}
	ptr, problem = locate(meta, d, doc, "")
	return ptr, problem, true
}

// locate finds the failure of node, at ptr, which fails meta: in the first
// subschema that fails on its own (the deepest failure is the one to
// name), else in the first keyword that fails on its own.
func locate(meta *jsonschema.Resolved, d dialect, node any, ptr string) (string, string) {
	obj, ok := node.(map[string]any)
	if !ok {
		return ptr, "must be a schema (an object, or true or false), not " + quoteValue(node)
	}
	at, what := "", ""
	schemawalk.Children(obj, func(p string, c any) bool {
		if meta.Validate(c) == nil {
			return true
		}
		at, what = locate(meta, d, c, ptr+p)
		return false
	})
	if what != "" {
		return at, what
	}
	for _, k := range sortedKeys(obj) {
		if err := meta.Validate(map[string]any{k: obj[k]}); err != nil {
			return ptr + "/" + escapeToken(k), keywordProblem(d, k, obj[k], err)
		}
	}
	_, leaf := splitChain(firstLine(meta.Validate(node).Error()))
	return ptr, "does not match the JSON Schema meta-schema: " + leaf
}

// keywordProblem words why the value v of keyword k fails the meta-schema
// (err, jsonschema-go's account, is the fallback).
func keywordProblem(d dialect, k string, v any, err error) string {
	var want string
	switch k {
	case "type":
		if p := schemawalk.TypeProblem(v); p != "" {
			return p
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		want = "a number"
	case "multipleOf":
		want = "a number greater than 0"
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains":
		want = "a non-negative integer"
	case "required":
		want = "an array of distinct strings"
	case "enum", "examples":
		want = "an array"
	case "uniqueItems", "readOnly", "writeOnly", "deprecated":
		want = "true or false"
	case "pattern", "format", "title", "description", "$comment", "$ref", "$id", "$anchor", "$dynamicRef", "$dynamicAnchor",
		"contentEncoding", "contentMediaType", "$schema":
		want = "a string"
	case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
		want = "an object whose members are schemas"
	case "allOf", "anyOf", "oneOf", "prefixItems":
		want = "a non-empty array of schemas"
	case "dependentRequired":
		want = "an object whose members are arrays of distinct strings"
	case "items":
		want = "a schema or an array of schemas"
		if d == draft202012 {
			want = "a schema (an array of schemas for the first items is prefixItems in 2020-12)"
		}
	}
	if want == "" {
		_, leaf := splitChain(firstLine(err.Error()))
		return "is not valid in JSON Schema (" + leaf + ")"
	}
	return "must be " + want + ", not " + quoteValue(v)
}

// quoteValue shows a schema's own value in a message, capped.
func quoteValue(v any) string { return echo.Cap(compactJSON(v)) }

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
