// Package pipeline_test is the tested source of the snippets of
// docs/pipeline.md.
package pipeline_test

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
	"github.com/mcpmw/mcpmw/ratelimit"
)

var reader = mcpmwtest.Tokens{"reader-token": &mcpmwtest.User{Name: "reader", Permissions: []mcpmw.Permission{"read"}}}

// buildVersion stands in for the version your build stamps.
var buildVersion = "1.4.0"

func versionMethod() mcpmw.Method {
	// !+method
	version := mcpmw.Method{
		Name: "acme/version", // an extension method of your own
		Handle: func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			return mcpmw.ResultResponse(map[string]any{"version": buildVersion})
		},
	}
	// mcpmw.Options{Methods: []mcpmw.Method{version}}
	// !-method
	return version
}

func TestOwnMethod(t *testing.T) {
	var reg mcpmw.Registry
	rec := mcpmwtest.NewRecorder()
	srv := mcpmwtest.NewServer(t, mcpmw.New(&reg, reader, rec, &mcpmw.Options{Methods: []mcpmw.Method{versionMethod()}}))
	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		c := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision(rev))
		res, err := c.Call(t.Context(), "acme/version", nil)
		require.NoError(t, err, rev)
		assert.Contains(t, string(res.Result), `"version":"1.4.0"`, rev)
		assert.Equal(t, "acme/version", rec.Last().Method, "audited by the same path")

		_, err = c.Call(t.Context(), "acme/other", nil)
		var e *mcpmwtest.Error
		require.ErrorAs(t, err, &e, rev)
		assert.Equal(t, -32601, e.Code, "a method the table does not have")
	}
}

// !+clientip
// clientIPFromXFF returns an Options.ClientIP for a server behind reverse
// proxies whose addresses are in the prefixes proxies: the client is the rightmost
// address of X-Forwarded-For that is not a trusted proxy. A request whose
// peer is not a trusted proxy is its own client, whatever it claims, and
// an address that does not parse stops the walk with "", which the rate
// limiter counts in one shared bucket.
func clientIPFromXFF(proxies ...string) func(r *http.Request) string {
	var trusted []netip.Prefix
	for _, p := range proxies {
		trusted = append(trusted, netip.MustParsePrefix(p)) // a typo panics at startup, not per request
	}
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	parse := func(s string) netip.Addr {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil {
			return netip.Addr{}
		}
		return a.Unmap().WithZone("") // ::ffff:10.0.0.1 is 10.0.0.1
	}
	return func(r *http.Request) string {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			return ""
		}
		peer := parse(host)
		switch {
		case !peer.IsValid():
			return ""
		case !isTrusted(peer):
			return peer.String() // a direct client: X-Forwarded-For is its own claim
		}
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a := parse(hops[i])
			if !a.IsValid() {
				return ""
			}
			if !isTrusted(a) {
				return a.String()
			}
		}
		return "" // every hop a proxy: no client address
	}
}

// !-clientip

func TestClientIPFromXFF(t *testing.T) {
	t.Parallel()
	clientIP := clientIPFromXFF("10.0.0.0/8", "fd00::/8")
	for _, tt := range []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{name: "no proxy", remote: "203.0.113.7:4242", want: "203.0.113.7"},
		{name: "a direct client's claim is ignored", remote: "203.0.113.7:4242", xff: []string{"198.51.100.1"}, want: "203.0.113.7"},
		{name: "through a trusted proxy", remote: "10.0.0.2:80", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "a forged hop left of the client is ignored", remote: "10.0.0.2:80", xff: []string{"1.2.3.4, 198.51.100.1, 10.0.0.9"}, want: "198.51.100.1"},
		{name: "several header lines", remote: "10.0.0.2:80", xff: []string{"1.2.3.4", "198.51.100.1"}, want: "198.51.100.1"},
		{name: "garbage stops the walk", remote: "10.0.0.2:80", xff: []string{"198.51.100.1, nonsense"}, want: ""},
		{name: "only proxies", remote: "10.0.0.2:80", xff: []string{"10.0.0.3"}, want: ""},
		{name: "no header behind a proxy", remote: "10.0.0.2:80", want: ""},
		{name: "IPv6 proxy", remote: "[fd00::1]:80", xff: []string{"2001:db8::7"}, want: "2001:db8::7"},
		{name: "v4-mapped proxy", remote: "[::ffff:10.0.0.2]:80", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "IPv6 proxy with a zone", remote: "[fd00::1%eth0]:80", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "v4-mapped client", remote: "10.0.0.2:80", xff: []string{"::ffff:198.51.100.1"}, want: "198.51.100.1"},
		{name: "RemoteAddr without a port", remote: "203.0.113.7", want: ""},
		{name: "RemoteAddr not an address", remote: "nonsense:80", want: ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := http.NewRequest(http.MethodPost, "http://example.com/mcp", nil)
			require.NoError(t, err)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			assert.Equal(t, tt.want, clientIP(r))
		})
	}
}

func TestClientIPFromXFFRefusesABadPrefix(t *testing.T) {
	t.Parallel()
	assert.Panics(t, func() { clientIPFromXFF("10.0.0.0/33") })
}

// TestClientIPWithoutChi runs the function as Options.ClientIP: the audit
// record holds the client's address, which mcpmwtest's client sends from
// loopback, a trusted proxy here.
func TestClientIPWithoutChi(t *testing.T) {
	var reg mcpmw.Registry
	authn, audit := reader, mcpmwtest.NewRecorder()
	proxies := []string{"127.0.0.1/32"} // mcpmwtest's client plays the proxy
	// !+nethttp
	mcp := mcpmw.New(&reg, authn, audit, &mcpmw.Options{
		ClientIP:  clientIPFromXFF(proxies...), // your proxies' prefixes, such as "10.0.0.0/8"
		RateLimit: ratelimit.PerIP(600, time.Minute),
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp)
	// !-nethttp
	srv := mcpmwtest.NewServer(t, mux)
	_, err := srv.Client(mcpmwtest.Path("/mcp"), mcpmwtest.Bearer("reader-token"), mcpmwtest.Header("X-Forwarded-For", "198.51.100.1")).ListTools(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "198.51.100.1", audit.Last().ClientIP)
}

func TestClientIPWithChi(t *testing.T) {
	var reg mcpmw.Registry
	authn, audit := reader, mcpmwtest.NewRecorder()
	proxies := []string{"127.0.0.1/32"} // mcpmwtest's client plays the proxy
	// !+chi
	mcp := mcpmw.New(&reg, authn, audit, &mcpmw.Options{
		ClientIP:  func(r *http.Request) string { return middleware.GetClientIP(r.Context()) }, // "" when chi cannot decide
		RateLimit: ratelimit.PerIP(600, time.Minute),
	})
	r := chi.NewRouter()
	r.Use(middleware.ClientIPFromXFF(proxies...)) // your proxies' prefixes, such as "10.0.0.0/8"
	r.Handle("/mcp", mcp)
	// !-chi
	srv := mcpmwtest.NewServer(t, r)
	_, err := srv.Client(mcpmwtest.Path("/mcp"), mcpmwtest.Bearer("reader-token"), mcpmwtest.Header("X-Forwarded-For", "198.51.100.1")).ListTools(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "198.51.100.1", audit.Last().ClientIP)
}
