package mcpmw

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewHostSet(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		hosts []string
		want  []string
	}{
		{name: "nil means loopback", hosts: nil, want: []string{"localhost", "127.0.0.1", "::1"}},
		{name: "empty means none", hosts: []string{}, want: []string{}},
		{name: "lower-cased", hosts: []string{"App.Example.COM"}, want: []string{"app.example.com"}},
		{name: "trimmed", hosts: []string{"  app.example.com\t"}, want: []string{"app.example.com"}},
		{name: "bracketed ipv6", hosts: []string{"[::1]", "[FE80::1]"}, want: []string{"::1", "fe80::1"}},
		{name: "bare ipv6", hosts: []string{"2001:db8::1"}, want: []string{"2001:db8::1"}},
		{name: "ipv4", hosts: []string{"10.0.0.1"}, want: []string{"10.0.0.1"}},
		{name: "duplicates merge", hosts: []string{"a.example", "A.EXAMPLE"}, want: []string{"a.example"}},
		{name: "trailing dot kept", hosts: []string{"a.example."}, want: []string{"a.example."}},
		{name: "ip addresses canonical", hosts: []string{"0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"}, want: []string{"::1", "127.0.0.1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			set := newHostSet(tt.hosts)
			got := make([]string, 0, len(set))
			for h := range set {
				got = append(got, h)
			}
			assert.ElementsMatch(t, tt.want, got)
		})
	}
}

func TestNewHostSetPanics(t *testing.T) {
	t.Parallel()
	for _, entry := range []string{
		"", "   ",
		"http://app.example.com", "https://app.example.com", "app.example.com/", "app.example.com/mcp",
		"app.example.com:8080", "localhost:3000", "127.0.0.1:80", "[::1]:3000", "[::1", "fe80::1%eth0",
		"user@app.example.com", "app.example.com?x", "app.example.com#f", "*.example.com", "app example.com",
	} {
		t.Run(entry, func(t *testing.T) {
			t.Parallel()
			want := `mcpmw: AllowedHosts entry "` + strings.ReplaceAll(entry, `"`, `\"`) +
				`" is not a hostname (give a bare name such as "app.example.com", without scheme or port)`
			assert.PanicsWithValue(t, want, func() { newHostSet([]string{"ok.example", entry}) })
		})
	}
	assert.PanicsWithValue(t, `mcpmw: AllowedHosts entry "bücher.example" is not ASCII; browsers send internationalised names in their punycode (xn--) form, so list that`,
		func() { newHostSet([]string{"bücher.example"}) })
}

func TestCheckOrigin(t *testing.T) {
	t.Parallel()
	loopback := newHostSet(nil)
	custom := newHostSet([]string{"App.Example.com", "[2001:DB8::1]"})
	for _, tt := range []struct {
		name, origin string
		set          hostSet
		err          string // "" means allowed
	}{
		{name: "absent", origin: ""},
		{name: "localhost", origin: "http://localhost"},
		{name: "localhost with port", origin: "http://localhost:3000"},
		{name: "localhost https", origin: "https://localhost:8443"},
		{name: "trailing slash", origin: "http://localhost:3000/"},
		{name: "127.0.0.1", origin: "http://127.0.0.1:6274"},
		{name: "ipv6 loopback", origin: "http://[::1]:3000"},
		{name: "ipv6 loopback no port", origin: "https://[::1]"},
		{name: "upper-case scheme and host", origin: "HTTP://LOCALHOST:3000"},
		{name: "other scheme", origin: "chrome-extension://localhost"},
		{name: "custom host", origin: "https://app.example.com", set: custom},
		{name: "custom host mixed case", origin: "https://APP.example.COM:443", set: custom},
		{name: "custom ipv6", origin: "http://[2001:db8::1]:80", set: custom},
		{name: "loopback not in custom list", origin: "http://localhost", set: custom, err: `origin host "localhost" is not allowed`},

		{name: "null", origin: "null", err: `opaque origin "null" is not allowed`},
		{name: "evil", origin: "http://evil.example.com", err: `origin host "evil.example.com" is not allowed`},
		{name: "userinfo trick", origin: "http://localhost@evil.example", err: `malformed Origin "http://localhost@evil.example"`},
		{name: "userinfo with password", origin: "http://localhost:x@evil.example", err: `malformed Origin "http://localhost:x@evil.example"`},
		{name: "suffix look-alike", origin: "http://localhost.evil.example", err: `origin host "localhost.evil.example" is not allowed`},
		{name: "prefix look-alike", origin: "http://evil-localhost", err: `origin host "evil-localhost" is not allowed`},
		{name: "nip.io look-alike", origin: "http://127.0.0.1.nip.io:3000", err: `origin host "127.0.0.1.nip.io" is not allowed`},
		{name: "custom look-alike", origin: "https://app.example.com.evil.example", set: custom, err: `origin host "app.example.com.evil.example" is not allowed`},
		{name: "trailing dot", origin: "http://localhost.:3000", err: `origin host "localhost." is not allowed`},
		{name: "other loopback address", origin: "http://127.0.0.2", err: `origin host "127.0.0.2" is not allowed`},
		{name: "ipv4-mapped ipv6 is the ipv4 address", origin: "http://[::ffff:127.0.0.1]"},
		{name: "ipv6 long-hand", origin: "http://[0:0:0:0:0:0:0:1]:3000"},
		{name: "ipv4-mapped other host", origin: "http://[::ffff:10.0.0.1]", err: `origin host "10.0.0.1" is not allowed`},
		{name: "path", origin: "http://localhost/evil", err: `malformed Origin "http://localhost/evil"`},
		{name: "query", origin: "http://localhost?x=1", err: `malformed Origin "http://localhost?x=1"`},
		{name: "empty query", origin: "http://localhost?", err: `malformed Origin "http://localhost?"`},
		{name: "fragment", origin: "http://localhost#x", err: `malformed Origin "http://localhost#x"`},
		{name: "empty fragment", origin: "http://localhost#", err: `malformed Origin "http://localhost#"`},
		{name: "no scheme", origin: "localhost", err: `malformed Origin "localhost"`},
		{name: "no scheme with port", origin: "localhost:3000", err: `malformed Origin "localhost:3000"`},
		{name: "scheme-relative", origin: "//localhost", err: `malformed Origin "//localhost"`},
		{name: "no host", origin: "http://", err: `malformed Origin "http://"`},
		{name: "port only", origin: "http://:3000", err: `malformed Origin "http://:3000"`},
		{name: "bad port", origin: "http://localhost:abc", err: `malformed Origin "http://localhost:abc"`},
		{name: "unclosed bracket", origin: "http://[::1", err: `malformed Origin "http://[::1"`},
		{name: "space inside", origin: "http://local host", err: `malformed Origin "http://local host"`},
		{name: "control character", origin: "http://localhost\x00.evil", err: `malformed Origin "http://localhost\x00.evil"`},
		{name: "opaque", origin: "data:text/html,hi", err: `malformed Origin "data:text/html,hi"`},
		{name: "long origin capped", origin: "http://" + strings.Repeat("a", 200) + ".example",
			err: `origin host "` + strings.Repeat("a", 100) + `…" is not allowed`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			set := tt.set
			if set == nil {
				set = loopback
			}
			err := set.checkOrigin(tt.origin)
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.err, err.Error())
		})
	}
}

func TestCheckOriginEmptyList(t *testing.T) {
	t.Parallel()
	set := newHostSet([]string{})
	require.NoError(t, set.checkOrigin(""))
	assert.EqualError(t, set.checkOrigin("http://localhost"), `origin host "localhost" is not allowed`)
}

func TestCheckHost(t *testing.T) {
	t.Parallel()
	set := newHostSet(nil)
	for _, tt := range []struct {
		host string
		ok   bool
	}{
		{"localhost", true}, {"127.0.0.1", true}, {"::1", true}, {"localhost:8080", true}, {"LOCALHOST:8080", true}, {"127.0.0.1:3001", true},
		{"[::1]:3001", true}, {"[::1]", true}, {"[0:0:0:0:0:0:0:1]:80", true},
		{"evil.example.com", false}, {"evil.example.com:3001", false}, {"localhost.evil.example", false},
		{"", false}, {"127.0.0.2:80", false},
	} {
		err := set.checkHost(tt.host)
		if tt.ok {
			assert.NoError(t, err, tt.host)
		} else {
			assert.Error(t, err, tt.host)
		}
	}
}

// A Host the list names as it is spelt, with or without a port, is
// checked without an allocation: it is on every request of a server with
// CheckHost. Only other spellings (capitals, long IPv6 forms) are
// canonicalised.
func TestCheckHostAllocatesNothingForAListedName(t *testing.T) {
	set := newHostSet(nil)
	for _, host := range []string{"127.0.0.1", "127.0.0.1:3001", "localhost", "localhost:8080", "[::1]:3001", "::1"} {
		assert.Zero(t, testing.AllocsPerRun(5, func() {
			if set.checkHost(host) != nil {
				t.Fatal(host)
			}
		}), host)
	}
}

// An Origin from an allowed page is checked without an allocation, like
// the Host.
func TestCheckOriginAllocatesNothingForAListedHost(t *testing.T) {
	set := newHostSet(nil)
	for _, origin := range []string{"http://localhost:6274", "https://localhost", "http://localhost:65535", "http://127.0.0.1:3000", "http://[::1]:8080", "https://[::1]"} {
		require.True(t, set.listedOrigin(origin), origin)
		assert.Zero(t, testing.AllocsPerRun(5, func() {
			if set.checkOrigin(origin) != nil {
				t.Fatal(origin)
			}
		}), origin)
	}
	for _, origin := range []string{"http://localhost:", "http://localhost:123456", "http://localhost:8a", "http://localhost/", "http://::1", "http://::1:80", "http://[localhost]",
		"ftp://localhost", "HTTP://localhost", "http://LOCALHOST", "http://user@localhost", "http://localhost?x", "http://[0:0:0:0:0:0:0:1]"} {
		assert.False(t, set.listedOrigin(origin), "%s goes the long way", origin)
	}
}

// The short way never allows what the long way refuses.
func FuzzListedOrigin(f *testing.F) {
	for _, s := range []string{"http://localhost:6274", "https://[::1]", "http://[::1]:80", "http://127.0.0.1:", "http://localhost:0x1", "http://[localhost]", "http://::1"} {
		f.Add(s)
	}
	set := newHostSet([]string{"localhost", "127.0.0.1", "::1", "app.example.com"})
	f.Fuzz(func(t *testing.T, origin string) {
		if !set.listedOrigin(origin) {
			return
		}
		host, err := originHost(origin)
		if err != nil {
			t.Fatalf("listedOrigin(%q) allowed what originHost refuses: %v", origin, err)
		}
		if _, ok := set[host]; !ok {
			t.Fatalf("listedOrigin(%q) allowed host %q, which the list does not hold", origin, host)
		}
	})
}
