package mcpmw

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A completion result is sized once: encoding one costs a single
// allocation, however many values it carries, with the serverInfo of
// 2026-07-28 or without.
func TestCompletionResultIsSizedOnce(t *testing.T) {
	values := make([]string, 60)
	for i := range values {
		values[i] = "value-" + strconv.Itoa(1000+i)
	}
	c := Completion{Values: values, Total: 200, HasMore: true}
	meta := []byte(`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"a-server-with-a-long-name","version":"1.2.3-and-more"}}`)
	for _, rev := range []revision{rev20260728, rev20251125} {
		var out []byte
		allocs := testing.AllocsPerRun(20, func() { out = appendCompletion(nil, &c, rev, meta) })
		assert.EqualValues(t, 1, allocs, rev.String())
		assert.Contains(t, string(out), `"value-1059"],"total":200,"hasMore":true}`)
	}
}
