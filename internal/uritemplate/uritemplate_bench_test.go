package uritemplate

import (
	"strconv"
	"testing"
)

// BenchmarkURITemplateMatch matches URIs of growing length against a
// template of one variable (the usual case, no marks to keep) and against
// the hostile one of TestURITemplateMatchTimeIsBounded: time grows
// linearly with the URI, and nothing is allocated below a few hundred
// bytes (the marks fit on the stack).
func BenchmarkURITemplateMatch(b *testing.B) {
	simple, err := Parse("bench://note/{id}")
	if err != nil {
		b.Fatal(err)
	}
	hostile, err := Parse(hostileTemplate)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("one variable", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !simple.Match("bench://note/42", nil) {
				b.Fatal("no match")
			}
		}
	})
	for _, n := range []int{64, 1 << 10, 64 << 10} {
		uri := hostileURI(n)
		b.Run("hostile/bytes="+strconv.Itoa(len(uri)), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(uri)))
			for b.Loop() {
				if hostile.Match(uri, nil) {
					b.Fatal("a match")
				}
			}
		})
	}
}
