package oauth_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/oauth"
)

// TestDPoPRequestURL: the URL a proof's htu is compared with is the one
// the client used: the request's own, BaseURL's when set, the forwarded
// scheme and host only when trusted; spellings of one URL are one.
func TestDPoPRequestURL(t *testing.T) {
	t.Parallel()
	alice := newClient(t, "ES256")
	plain := func(target string) *http.Request { return httptest.NewRequest(http.MethodPost, target, nil) }
	forwarded := func(proto, host string) func(string) *http.Request {
		return func(target string) *http.Request {
			r := plain(target)
			r.Header.Set("X-Forwarded-Proto", proto)
			r.Header.Set("X-Forwarded-Host", host)
			return r
		}
	}
	for _, tt := range []struct {
		name    string
		opts    oauth.DPoPOptions
		request func(target string) *http.Request
		target  string // the URL the server received
		htu     string // the proof's
		ok      bool
	}{
		{name: "over TLS", request: plain, target: "https://mcp.example.com/mcp", htu: "https://mcp.example.com/mcp", ok: true},
		{name: "plain http", request: plain, target: "http://127.0.0.1:8080/mcp", htu: "http://127.0.0.1:8080/mcp", ok: true},
		{name: "plain http, https claimed", request: plain, target: "http://127.0.0.1:8080/mcp", htu: "https://127.0.0.1:8080/mcp"},
		{name: "default port", request: plain, target: "http://mcp.example.com:80/mcp", htu: "http://mcp.example.com/mcp", ok: true},
		{name: "default port in htu", request: plain, target: "https://mcp.example.com/mcp", htu: "https://mcp.example.com:443/mcp", ok: true},
		{name: "another port", request: plain, target: "https://mcp.example.com/mcp", htu: "https://mcp.example.com:8443/mcp"},
		{name: "case of scheme and host", request: plain, target: "https://mcp.example.com/mcp", htu: "HTTPS://MCP.EXAMPLE.COM/mcp", ok: true},
		{name: "case of the path", request: plain, target: "https://mcp.example.com/mcp", htu: "https://mcp.example.com/MCP"},
		{name: "percent-encoding", request: plain, target: "https://mcp.example.com/a%2fb", htu: "https://mcp.example.com/a%2Fb", ok: true},
		{name: "unreserved encoded", request: plain, target: "https://mcp.example.com/mcp", htu: "https://mcp.example.com/%6d%63%70", ok: true},
		{name: "empty path", request: plain, target: "https://mcp.example.com/", htu: "https://mcp.example.com", ok: true},
		{name: "IPv6", request: plain, target: "http://[::1]:8080/mcp", htu: "http://[::1]:8080/mcp", ok: true},
		{name: "IPv6 default port", request: plain, target: "http://[::1]/mcp", htu: "http://[::1]:80/mcp", ok: true},
		{name: "not http", request: plain, target: "https://mcp.example.com/mcp", htu: "wss://mcp.example.com/mcp"},
		{name: "no host", request: plain, target: "https://mcp.example.com/mcp", htu: "https:///mcp"},
		{name: "user info", request: plain, target: "https://mcp.example.com/mcp", htu: "https://u@mcp.example.com/mcp"},
		{name: "relative", request: plain, target: "https://mcp.example.com/mcp", htu: "/mcp"},
		{name: "bad percent", request: plain, target: "https://mcp.example.com/mcp", htu: "https://mcp.example.com/%zz"},
		{name: "an empty query", request: plain, target: "https://mcp.example.com/mcp", htu: "https://mcp.example.com/mcp?"},
		{name: "behind a proxy, BaseURL", opts: oauth.DPoPOptions{BaseURL: "https://mcp.example.com"}, request: plain, target: "http://10.0.0.5:8080/mcp", htu: "https://mcp.example.com/mcp", ok: true},
		{name: "BaseURL with a prefix", opts: oauth.DPoPOptions{BaseURL: "https://example.com/api/"}, request: plain, target: "http://10.0.0.5:8080/mcp", htu: "https://example.com/api/mcp", ok: true},
		{name: "BaseURL, the internal URL claimed", opts: oauth.DPoPOptions{BaseURL: "https://mcp.example.com"}, request: plain, target: "http://10.0.0.5:8080/mcp", htu: "http://10.0.0.5:8080/mcp"},
		{name: "BaseURL wins over forwarded", opts: oauth.DPoPOptions{BaseURL: "https://mcp.example.com", TrustForwarded: true}, request: forwarded("https", "evil.example"), target: "http://10.0.0.5:8080/mcp", htu: "https://evil.example/mcp"},
		{name: "forwarded, untrusted", request: forwarded("https", "mcp.example.com"), target: "http://10.0.0.5:8080/mcp", htu: "https://mcp.example.com/mcp"},
		{name: "forwarded, trusted", opts: oauth.DPoPOptions{TrustForwarded: true}, request: forwarded("https", "mcp.example.com"), target: "http://10.0.0.5:8080/mcp", htu: "https://mcp.example.com/mcp", ok: true},
		{name: "forwarded, the nearest proxy's", opts: oauth.DPoPOptions{TrustForwarded: true}, request: forwarded("http, https", "evil.example, mcp.example.com"), target: "http://10.0.0.5:8080/mcp", htu: "https://mcp.example.com/mcp", ok: true},
		{name: "forwarded, the client's", opts: oauth.DPoPOptions{TrustForwarded: true}, request: forwarded("http, https", "evil.example, mcp.example.com"), target: "http://10.0.0.5:8080/mcp", htu: "https://evil.example/mcp"},
		{name: "forwarded, an empty element", opts: oauth.DPoPOptions{TrustForwarded: true}, request: forwarded(",https", ",mcp.example.com"), target: "http://10.0.0.5:8080/mcp", htu: "https://mcp.example.com/mcp", ok: true},
		{name: "trusted, none forwarded", opts: oauth.DPoPOptions{TrustForwarded: true}, request: plain, target: "http://10.0.0.5:8080/mcp", htu: "http://10.0.0.5:8080/mcp", ok: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := verifier(&tt.opts)
			r := tt.request(tt.target)
			r.Header.Set("DPoP", alice.sign(t, alice.header(), claims(tt.htu, token, clock), nil))
			err := v.Check(r, token, alice.jkt)
			if tt.ok {
				require.NoError(t, err)
				return
			}
			refusal(t, err, "invalid_dpop_proof", "htu does not match")
		})
	}
}

// TestDPoPRequestURLOfAServer: behind a real listener, over TLS, the URL
// is the one the client dialled.
func TestDPoPRequestURLOfAServer(t *testing.T) {
	t.Parallel()
	alice := newClient(t, "ES256")
	v := verifier(nil)
	errs := make(chan error, 1)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { errs <- v.Check(r, token, alice.jkt) }))
	defer srv.Close()
	r, err := http.NewRequest(http.MethodPost, srv.URL+"/mcp?session=1", nil)
	require.NoError(t, err)
	r.Header.Set("DPoP", alice.sign(t, alice.header(), claims(srv.URL+"/mcp", token, clock), nil))
	resp, err := srv.Client().Do(r)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.NoError(t, <-errs)
}

// TestNewDPoPVerifierPanics: setup mistakes panic, naming the option.
func TestNewDPoPVerifierPanics(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		opts oauth.DPoPOptions
		want string
	}{
		{oauth.DPoPOptions{Algs: []string{"ES256", "HS256"}}, `oauth: NewDPoPVerifier: DPoPOptions.Algs names "HS256": want asymmetric JWS algorithms among ES256 ES384 ES512 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA`},
		{oauth.DPoPOptions{Algs: []string{"none"}}, `oauth: NewDPoPVerifier: DPoPOptions.Algs names "none": want asymmetric JWS algorithms among ES256 ES384 ES512 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA`},
		{oauth.DPoPOptions{BaseURL: "mcp.example.com"}, `oauth: NewDPoPVerifier: DPoPOptions.BaseURL "mcp.example.com": not an http(s) URL`},
		{oauth.DPoPOptions{BaseURL: "https://mcp.example.com/?x"}, `oauth: NewDPoPVerifier: DPoPOptions.BaseURL "https://mcp.example.com/?x": it has a query or a fragment`},
		{oauth.DPoPOptions{MaxAge: -1}, `oauth: NewDPoPVerifier: DPoPOptions.MaxAge is -1ns: want a positive duration, or 0 for the default`},
		{oauth.DPoPOptions{Leeway: -1}, `oauth: NewDPoPVerifier: DPoPOptions.Leeway is -1ns: want a positive duration, or 0 for the default`},
		{oauth.DPoPOptions{NonceLifetime: -1, NonceKey: make([]byte, 32)}, `oauth: NewDPoPVerifier: DPoPOptions.NonceLifetime is -1ns: want a positive duration, or 0 for the default`},
		{oauth.DPoPOptions{NonceKey: make([]byte, 31)}, `oauth: NewDPoPVerifier: DPoPOptions.NonceKey is 31 bytes: want at least 32 random bytes`},
		{oauth.DPoPOptions{NonceKey: []byte{}}, `oauth: NewDPoPVerifier: DPoPOptions.NonceKey is 0 bytes: want at least 32 random bytes`},
	} {
		assert.PanicsWithValue(t, tt.want, func() { oauth.NewDPoPVerifier(&tt.opts) })
	}
	assert.NotPanics(t, func() { oauth.NewDPoPVerifier(&oauth.DPoPOptions{NonceKey: make([]byte, 32), Algs: []string{"EdDSA"}}) })
	assert.NotPanics(t, func() { oauth.NewDPoPVerifier(nil) })
}
