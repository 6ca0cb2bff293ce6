package oauth

import "testing"

// FuzzNormalURL: the normal form of an htu is its own normal form, and is
// an http(s) URL with a path and neither query nor fragment.
func FuzzNormalURL(f *testing.F) {
	for _, s := range []string{"https://mcp.example.com/mcp", "HTTP://[::1]:80/%6d?x#y", "https://a:443", "http://h/a%2fb/../c", "https://u@h/", "https://h:/p"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := normalURL(s)
		if err != nil {
			return
		}
		again, err := normalURL(n)
		if err != nil || again != n {
			t.Fatalf("normalURL(%q) = %q, whose normal form is %q, %v", s, n, again, err)
		}
	})
}
