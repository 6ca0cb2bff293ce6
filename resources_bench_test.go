package mcpmw_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpmw/mcpmw"
)

// benchResources returns a registry of n text resources of 1 KiB each
// ("bench://doc/00000" ...), and a note template after them.
func benchResources(n int) *mcpmw.Registry {
	var reg mcpmw.Registry
	body := strings.Repeat("abcdefghijklmnop", 64) // 1 KiB
	list := make([]mcpmw.Resource, n)
	for i := range list {
		list[i] = mcpmw.Resource{URI: fmt.Sprintf("bench://doc/%05d", i), Name: fmt.Sprintf("doc %05d", i), MimeType: "text/plain", Permission: "read",
			Read: func(_ context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
				return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", body)}, nil
			}}
	}
	reg.AddResources(list...)
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "bench://note/{id}", Name: "note", Permission: "read",
		Read: func(_ context.Context, _ mcpmw.Caller, uri string, vars map[string]string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", body)}, nil
		}})
	return &reg
}

// BenchmarkServeHTTPResourceRead reads a 1 KiB text resource through the
// whole handler, with 1 and 10,000 resources registered (target: the same
// allocations, flat time), and one read through a template.
func BenchmarkServeHTTPResourceRead(b *testing.B) {
	for _, n := range []int{1, 10000} {
		b.Run("resources="+strconv.Itoa(n), func(b *testing.B) {
			uri := "bench://doc/00000"
			runBench(b, newBenchHandler(benchResources(n), benchCaller{}),
				newBenchCall("resources/read", uri, `"uri":"`+uri+`"`), `"text":"abcdefghijklmnop`)
		})
	}
	b.Run("template", func(b *testing.B) {
		uri := "bench://note/42"
		runBench(b, newBenchHandler(benchResources(100), benchCaller{}),
			newBenchCall("resources/read", uri, `"uri":"`+uri+`"`), `"text":"abcdefghijklmnop`)
	})
}

// BenchmarkServeHTTPResourcesList lists 100 resources on one page.
func BenchmarkServeHTTPResourcesList(b *testing.B) {
	runBench(b, newBenchHandler(benchResources(100), benchCaller{}), newBenchCall("resources/list", "", ""), `"uri":"bench://doc/00099"`)
}

// A read costs the same allocations whether 1 or 10,000 resources are
// registered: the lookup is one map access, and nothing is copied per
// registered resource.
func TestResourceReadAllocsFlat(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not exact under the race detector")
	}
	allocs := func(n int) float64 {
		uri := "bench://doc/00000"
		h := newBenchHandler(benchResources(n), benchCaller{})
		c := newBenchCall("resources/read", uri, `"uri":"`+uri+`"`)
		w := newBenchWriter()
		return testing.AllocsPerRun(200, func() {
			w.reset()
			h.ServeHTTP(w, c.request())
		})
	}
	one, many := allocs(1), allocs(10000)
	if one != many {
		t.Errorf("a read allocates %v times with 1 resource registered, %v with 10,000", one, many)
	}
}
