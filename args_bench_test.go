package mcpmw_test

import (
	"strings"
	"testing"

	"github.com/mcpmw/mcpmw"
)

// argsBenchCases are tool-call arguments of typical shapes and sizes.
var argsBenchCases = []struct{ name, raw string }{
	{"message", `{"message":"The quick brown fox jumps over the lazy dog, 0123."}`},
	{"mixed", `{"project":"PAY","summary":"Refund button broken","priority":3,"limit":250,"ratio":0.75,"dryRun":false,"tags":["ui","billing"],"assignee":null}`},
	{"4KiB", `{"message":"` + strings.Repeat("abcd", 1024) + `","limit":20}`},
}

// BenchmarkNewArgs measures building Args over a call's raw arguments: the
// validity check, the member index and the duplicate check.
func BenchmarkNewArgs(b *testing.B) {
	for _, tc := range argsBenchCases {
		raw := []byte(tc.raw)
		if err := mcpmw.NewArgs(raw).Err(); err != nil {
			b.Fatalf("%s: %v", tc.name, err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				mcpmw.NewArgs(raw)
			}
		})
	}
}

// BenchmarkArgsAccess measures reading arguments the way a tool does, on
// Args built once: each accessor, then Err.
func BenchmarkArgsAccess(b *testing.B) {
	mixed := mcpmw.NewArgs([]byte(argsBenchCases[1].raw))
	for _, tc := range []struct {
		name string
		read func(a *mcpmw.Args)
	}{
		{"String", func(a *mcpmw.Args) { _ = a.String("summary") }},
		{"OptString/absent", func(a *mcpmw.Args) { _ = a.OptString("missing", "x") }},
		{"Int", func(a *mcpmw.Args) { _ = a.Int("priority") }},
		{"IntClamp", func(a *mcpmw.Args) { _ = a.IntClamp("limit", 20, 1, 100) }},
		{"Float", func(a *mcpmw.Args) { _ = a.Float("ratio") }},
		{"Bool", func(a *mcpmw.Args) { _ = a.Bool("dryRun") }},
		{"Has", func(a *mcpmw.Args) { _ = a.Has("assignee") }},
		{"all", func(a *mcpmw.Args) {
			_, _, _ = a.String("project"), a.String("summary"), a.Int("priority")
			_, _, _ = a.IntClamp("limit", 20, 1, 100), a.Float("ratio"), a.Bool("dryRun")
			_ = a.Err()
		}},
	} {
		tc.read(mixed)
		if err := mixed.Err(); err != nil {
			b.Fatalf("%s: %v", tc.name, err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tc.read(mixed)
			}
		})
	}
}

// BenchmarkArgsDecode measures Args.Decode into a struct, the alternative to
// the accessors.
func BenchmarkArgsDecode(b *testing.B) {
	type input struct {
		Project  string   `json:"project"`
		Summary  string   `json:"summary"`
		Priority int      `json:"priority"`
		Limit    int      `json:"limit"`
		Ratio    float64  `json:"ratio"`
		DryRun   bool     `json:"dryRun"`
		Tags     []string `json:"tags"`
	}
	a := mcpmw.NewArgs([]byte(argsBenchCases[1].raw))
	var in input
	if err := a.Decode(&in); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		in = input{}
		_ = a.Decode(&in)
	}
}
