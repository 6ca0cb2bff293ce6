// Package jsonwire is the byte-level JSON of the request path: a scanner
// that reads members, kinds, strings and nesting depth without decoding
// into maps or reflected structs (scan.go); the readers of object keys that
// the request's rules on keys are built from (keys.go); numbers read
// exactly (number.go); and strings and base64 written as encoding/json
// writes them (write.go).
//
// The root package checks a body once with json.Valid and utf8.Valid; after
// that the scanner only has to find where values start and end, so it can
// assume well-formed input. (On invalid UTF-8 it would disagree with
// encoding/json, which reads each bad byte of a key as U+FFFD; the root's
// parseEnvelope and NewArgs refuse such input.) Keys are compared exactly
// (JSON-RPC and MCP member names are case-sensitive, unlike encoding/json's
// matching).
//
// It uses nothing from the root package, and the compiler keeps it so: code
// that cannot reach a Request, its parsed params or an answer reads the
// bytes it is given and nothing else, which the root's one view of the
// arguments (ARCHITECTURE.md, invariant 3) relies on.
package jsonwire
