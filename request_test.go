package mcpmw

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The handler's reading of Params belongs to the exact slice it was read
// from: a replacement of the same length, or a sub-slice at the same
// address, is read afresh.
func TestParsedParamsFollowTheirSlice(t *testing.T) {
	t.Parallel()
	params := []byte(`{"name":"aaaa","x":1}`)
	r := &Request{Params: params}
	r.parsed.read(r.Params)
	name, _ := r.StringParam("name")
	assert.Equal(t, "aaaa", name)

	r.Params = []byte(`{"name":"bbbb","x":1}`) // same length, another array
	name, _ = r.StringParam("name")
	assert.Equal(t, "bbbb", name)
	assert.Equal(t, "1", string(r.Param("x")))

	r.Params = params[:len(params)-6] // same address, another length: `{"name":"aaaa"` is not JSON
	assert.Nil(t, r.Param("name"))

	r.Params = nil
	assert.Nil(t, r.Param("name"))
	r.parsed.read(nil)
	r.Params = []byte{}
	assert.Nil(t, r.Param("name"), "empty is not absent, and still has no members")
	r.Params = []byte(`{"name":"cccc"}`)
	name, ok := r.StringParam("name")
	assert.True(t, ok)
	assert.Equal(t, "cccc", name, "a reading of no params does not answer for new ones")
}
