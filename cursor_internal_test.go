package mcpmw

import "testing"

// A cursor of one list is no cursor of another: each list reads only its
// own prefix.
func TestCursorsAreNotInterchangeable(t *testing.T) {
	t.Parallel()
	prefixes := []string{"tools:", "prompts:", "resources:", "templates:"}
	for _, issued := range prefixes {
		c := encodeListCursor(issued, 3)
		for _, read := range prefixes {
			n, ok := decodeListCursor(read, c)
			if want := issued == read; ok != want || (ok && n != 3) {
				t.Errorf("a %s cursor read as a %s cursor: %d, %v; want ok=%v", issued, read, n, ok, want)
			}
		}
	}
}
