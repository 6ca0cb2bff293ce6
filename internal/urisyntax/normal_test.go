package urisyntax

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every spelling of a URI has the one normal form every lookup and match
// compares; a string with none is refused, saying why.
func TestNormal(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want, err string }{
		{in: "docs://plan", want: "docs://plan"},
		{in: "docs://%70lan", want: "docs://plan"},       // an unreserved octet is decoded
		{in: "docs://%70%6C%61%6e", want: "docs://plan"}, // in either case of hex
		{in: "docs://%2d%2E%5f%7E", want: "docs://-._~"}, // every unreserved punctuation
		{in: "docs://a%2fb%3A", want: "docs://a%2Fb%3A"}, // a reserved one keeps its octet, upper-cased
		{in: "docs://a%2Fb", want: "docs://a%2Fb"},
		{in: "docs://%2a%a0%aa", want: "docs://%2A%A0%AA"}, // 'a' is hex too, first or second       // and is not the same URI as docs://a/b
		{in: "DOCS://Plan", want: "docs://Plan"},           // the scheme is lower-cased, the host is not
		{in: "Docs+X.y-1:Z", want: "docs+x.y-1:Z"},
		{in: "AZaz09:Z", want: "azaz09:Z"},            // the ends of the letter ranges       // every scheme character
		{in: "docs://café", want: "docs://caf%C3%A9"}, // an IRI's characters are encoded (RFC 3987 §3.1)
		{in: "docs://a b\x00\x7f", want: "docs://a%20b%00%7F"},
		{in: `docs://"<>\^` + "`{|}", want: "docs://%22%3C%3E%5C%5E%60%7B%7C%7D"},
		{in: "docs://a:b@c/d?e=f&g#h[i]!$'()*+,;", want: "docs://a:b@c/d?e=f&g#h[i]!$'()*+,;"}, // reserved characters stay
		{in: "plan", want: "plan"},
		{in: "9X:Y", want: "9X:Y"},                                       // a scheme starts with a letter
		{in: ":X", want: ":X"},                                           // no scheme: nothing to lower-case
		{in: "PLAN%41", want: "PLANA"},                                   // but the encoding is normalised all the same
		{in: "x://a/.b/..c/b./c../...", want: "x://a/.b/..c/b./c../..."}, // no dot-segment
		{in: "x://../a", want: "x://../a"},                               // an authority is no path
		{in: "x://a?/../#/./", want: "x://a?/../#/./"},                   // nor are the query and fragment
		{in: "docs://100%", err: "'%' at offset 10 starts no percent-encoded octet"},
		{in: "docs://%4", err: "offset 7"},
		{in: "docs://%zz", err: "offset 7"},
		{in: "docs://%4g", err: "offset 7"},
		{in: "file:///srv/docs/../plan", err: "'..' segment"},
		{in: "file:///srv/docs/%2E%2E/plan", err: "'..' segment"}, // encoded dots are dots
		{in: "file:///srv/./plan", err: "'.' segment"},
		{in: "x://a/..", err: "'..' segment"},
		{in: "x://a/.?q", err: "'.' segment"},
		{in: "x:..", err: "'..' segment"},
		{in: "x:a/./b", err: "'.' segment"},
		{in: "../plan", err: "'..' segment"}, // without a scheme too
	} {
		got, err := Normal(tt.in)
		if tt.err != "" {
			if assert.Error(t, err, tt.in) {
				assert.Contains(t, err.Error(), tt.err, tt.in)
			}
			continue
		}
		if assert.NoError(t, err, tt.in) {
			assert.Equal(t, tt.want, got, tt.in)
			again, _ := Normal(got)
			assert.Equal(t, got, again, "the normal form of %q is its own", tt.in)
		}
	}
}

// A URI already in normal form, the usual case, costs no allocation.
func TestNormalOfANormalURIDoesNotAllocate(t *testing.T) {
	uri := "file:///srv/docs/a%2Fb%C3%A9?q=1#f"
	if allocs := testing.AllocsPerRun(100, func() { _, _ = Normal(uri) }); allocs != 0 {
		t.Errorf("Normal of a normal URI allocates %v times", allocs)
	}
}
