package mcpmw_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpmw/mcpmw"
)

// FuzzArgs runs every Args accessor on arbitrary arguments and checks each
// against encoding/json (and math/big for integers): values are never
// converted between JSON types, a problem is an *ArgError naming the field,
// and nothing panics.
func FuzzArgs(f *testing.F) {
	for _, tt := range []struct {
		raw, name string
		def, lo   int
		hi        int
	}{
		{`{"message":"hi"}`, "message", 0, 0, 10},
		{`{"limit":25}`, "limit", 20, 1, 50},
		{`{"limit":1e2}`, "limit", 20, 1, 50},
		{`{"limit":-99999999999999999999999}`, "limit", 20, 1, 50},
		{`{"limit":2.5}`, "limit", 20, 1, 50},
		{`{"n":1e400}`, "n", 0, 0, 1},
		{`{"flag":true,"flag":false}`, "flag", 0, 0, 1},
		{`{"m\u0065ssage":"x"}`, "message", 0, 0, 1},
		{`[1]`, "x", 0, 0, 0},
		{`null`, "x", 0, 0, 0},
		{`{"a":`, "a", 0, 0, 0},
		{`{"x":null}`, "x", 7, 0, 5},
	} {
		f.Add([]byte(tt.raw), tt.name, tt.def, tt.lo, tt.hi)
	}
	f.Fuzz(func(t *testing.T, raw []byte, name string, def, lo, hi int) {
		if lo > hi {
			lo, hi = hi, lo
		}
		// Every accessor on one Args: nothing panics, Err is the first problem.
		all := mcpmw.NewArgs(raw)
		all.String(name)
		all.OptString(name, "d")
		all.Bool(name)
		all.OptBool(name, true)
		all.Float(name)
		all.OptFloat(name, 1.5)
		all.Int(name)
		all.OptInt(name, def)
		all.IntClamp(name, def, lo, hi)
		all.Has(name)
		_ = all.Raw()
		var anything map[string]any
		_ = all.Decode(&anything)
		if err := all.Err(); err != nil {
			if ae := (*mcpmw.ArgError)(nil); !errors.As(err, &ae) {
				t.Fatalf("Err() = %T %v, want an *ArgError", err, err)
			}
			if len(err.Error()) > 1024 {
				t.Fatalf("the problem echoes %d bytes", len(err.Error()))
			}
		}

		trimmed := strings.TrimSpace(string(raw))
		if trimmed == "" || trimmed == "null" {
			a := mcpmw.NewArgs(raw)
			if a.Err() != nil || string(a.Raw()) != "{}" || a.Has(name) {
				t.Fatalf("empty arguments %q: err %v, raw %s", raw, a.Err(), a.Raw())
			}
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			if mcpmw.NewArgs(raw).Err() == nil {
				t.Fatalf("arguments %q are not a JSON object, yet no problem", raw)
			}
			return
		}
		if mcpmw.NewArgs(raw).Err() != nil {
			return // a duplicate member: refused as a whole
		}
		v, present := m[name]
		absent := !present || string(v) == "null"
		kind := jsonKind(v)
		wantProblem := func(a *mcpmw.Args, want bool, what string) {
			t.Helper()
			err := a.Err()
			if (err != nil) != want {
				t.Fatalf("%s on %q (value %s): err = %v, want a problem: %v", what, raw, v, err, want)
			}
			var ae *mcpmw.ArgError
			if err != nil && (!errors.As(err, &ae) || ae.Field != name) {
				t.Fatalf("%s on %q: %v does not name %q", what, raw, err, name)
			}
		}

		a := mcpmw.NewArgs(raw)
		s := a.String(name)
		wantProblem(a, kind != "string", "String")
		if kind == "string" {
			var want string
			_ = json.Unmarshal(v, &want)
			if s != want {
				t.Fatalf("String(%q) = %q, want %q", name, s, want)
			}
		}
		a = mcpmw.NewArgs(raw)
		if s := a.OptString(name, "dflt"); absent && s != "dflt" {
			t.Fatalf("OptString default: %q", s)
		}
		wantProblem(a, !absent && kind != "string", "OptString")

		a = mcpmw.NewArgs(raw)
		b := a.Bool(name)
		wantProblem(a, kind != "bool", "Bool")
		if kind == "bool" && b != (string(v) == "true") {
			t.Fatalf("Bool(%q) = %v for %s", name, b, v)
		}
		a = mcpmw.NewArgs(raw)
		if b := a.OptBool(name, true); absent && !b {
			t.Fatal("OptBool default lost")
		}
		wantProblem(a, !absent && kind != "bool", "OptBool")

		a = mcpmw.NewArgs(raw)
		fl := a.Float(name)
		if kind == "number" {
			want, err := strconv.ParseFloat(string(v), 64)
			wantProblem(a, err != nil, "Float")
			if err == nil && fl != want && !(math.IsNaN(fl) && math.IsNaN(want)) {
				t.Fatalf("Float(%q) = %v, want %v", name, fl, want)
			}
		} else {
			wantProblem(a, true, "Float")
		}

		a = mcpmw.NewArgs(raw)
		n := a.Int(name)
		exact, integral, known := refInt(v)
		switch {
		case kind != "number":
			wantProblem(a, true, "Int")
		case !known:
			// An exponent too large to check with math/big: Int must still
			// not panic, which it did not.
		case integral && exact != nil:
			wantProblem(a, false, "Int")
			if int64(n) != exact.Int64() {
				t.Fatalf("Int(%q) = %d for %s", name, n, v)
			}
		default:
			wantProblem(a, true, "Int")
		}

		a = mcpmw.NewArgs(raw)
		c := a.IntClamp(name, def, lo, hi)
		if c < lo || c > hi {
			t.Fatalf("IntClamp(%q, %d, %d, %d) = %d, outside the range", name, def, lo, hi, c)
		}
		switch {
		case absent:
			wantProblem(a, false, "IntClamp")
			if c != min(max(def, lo), hi) {
				t.Fatalf("IntClamp default: %d", c)
			}
		case kind != "number":
			wantProblem(a, true, "IntClamp")
		case known && integral:
			wantProblem(a, false, "IntClamp")
			want := lo
			if exact != nil {
				want = min(max(int(exact.Int64()), lo), hi)
			} else if !strings.HasPrefix(string(v), "-") {
				want = hi
			}
			if c != want {
				t.Fatalf("IntClamp(%q, %d, %d, %d) = %d for %s, want %d", name, def, lo, hi, c, v, want)
			}
		case known:
			wantProblem(a, true, "IntClamp")
		}

		if got := mcpmw.NewArgs(raw).Has(name); got != !absent {
			t.Fatalf("Has(%q) = %v for %q", name, got, raw)
		}
	})
}

func jsonKind(v json.RawMessage) string {
	if len(v) == 0 {
		return "absent"
	}
	switch v[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "bool"
	case '"':
		return "string"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	return "number"
}

// refInt reads the JSON number v exactly with math/big. known is false when
// the exponent is too large to expand cheaply; exact is nil when the value
// is an integer beyond int64.
func refInt(v json.RawMessage) (exact *big.Int, integral, known bool) {
	s := string(v)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 400 || e < -400 {
			return nil, false, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, false, false
	}
	if !r.IsInt() {
		return nil, false, true
	}
	if n := r.Num(); n.IsInt64() && strconv.IntSize == 64 {
		return n, true, true
	}
	return nil, true, true
}
