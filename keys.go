package mcpmw

// Object keys are where JSON readers disagree. Given {"a":1,"a":2} this
// package's scanner reads the first member and encoding/json the last;
// given {"region":"us","Region":"eu"} encoding/json fills a field tagged
// "region" from "Region", because it matches names case-insensitively,
// while every exact reader (the Mcp-Param-* check, Args' accessors, a
// gateway) sees "us". Two readers of one request must never act on two
// values, so the request path keeps three rules:
//
//   - no object anywhere in params has the same key twice (-32602, naming
//     the JSON pointer of the repeat);
//   - the protocol's own members (params and params._meta, where
//     applications' middleware decode with encoding/json) have no two keys
//     that differ only in case;
//   - Args.Decode matches keys exactly: a key that encoding/json would fill
//     a struct field from only by folding case is refused, as the official
//     Go SDK refuses it, so the tool reads exactly the members the checks
//     read. (Refusing every case-insensitive pair in arguments instead would
//     still let a lone "Region" fill the field tagged "region" unseen.)
