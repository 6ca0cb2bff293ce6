package mcpmw

import "testing"

func TestInstanceOfHandlerIsWhatComesBeforeTheLastSeparator(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"inst~h1":   "inst",
		"a~b~h1":    "a~b", // a Relay id may hold the separator itself
		"~h1":       "",    // a Relay whose id is empty
		"old-style": "old-style",
	} {
		if got := instanceOfHandler(name); got != want {
			t.Errorf("instanceOfHandler(%q) = %q, want %q", name, got, want)
		}
	}
}
