package oauth_test

import (
	"context"
	"crypto/subtle"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/oauth"
)

// nopWriter is a reusable http.ResponseWriter, so that the harness stays
// out of the allocation counts.
type nopWriter struct {
	hdr    http.Header
	status int
}

func (w *nopWriter) Header() http.Header         { return w.hdr }
func (w *nopWriter) WriteHeader(status int)      { w.status = status }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// staticCaller and staticToken are the README's authenticator: one token,
// compared in constant time; the baseline every other case is a ratio of.
type staticCaller struct{}

func (staticCaller) Can(mcpmw.Permission) bool { return true }
func (staticCaller) String() string            { return "reader" }

func staticToken(r *http.Request) (mcpmw.Caller, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(token), []byte("reader-token")) != 1 {
		return nil, mcpmw.ErrUnauthorized
	}
	return staticCaller{}, nil
}

// BenchmarkRequest is one tools/call through an mcpmw handler, in process,
// with no network on the hot path, for each way of authenticating it:
//
//   - static: the README's one-token authenticator (the baseline);
//   - jwt-repeated: a JWT seen before (its Token cached; the bound
//     is 1.3x static);
//   - introspected-cached: an opaque token whose introspection answer is
//     cached (bound: 1.1x static);
//   - jwt-first: a JWT not seen before, its signature (ES256) verified
//     (two tokens alternate through a cache of one, so each is new);
//   - dpop: a DPoP-bound JWT seen before, with a proof (ES256) verified
//     whole, as every DPoP request's is: 100 proofs made beforehand take
//     turns, and a replay cache that finds each new (fresh) leaves the
//     cache's own cost out (BenchmarkMemoryReplayCacheOnce here,
//     mcpredis's BenchmarkReplayCacheOnce for Redis's round trip).
//
// Compare the ratios of one run, taken together (-count 5 and the medians),
// never figures from different runs or machines.
func BenchmarkRequest(b *testing.B) {
	for _, c := range requestCases(b) {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c.serve(i)
				i++
			}
		})
	}
}

// BenchmarkRequestRatios runs the cases of BenchmarkRequest interleaved,
// in batches of 100 requests, one batch of each case in turn, and reports
// each case's cost as a ratio of the static baseline's: the fastest batch
// of each (the one least disturbed by whatever else the machine ran)
// divided by the fastest static batch. That is the figure the issue
// bounds (jwt-repeated/static at most 1.3, introspected-cached/static at
// most 1.1): two cases taken in one run, side by side, rather than
// figures from two runs of a shared machine.
func BenchmarkRequestRatios(b *testing.B) {
	cases := requestCases(b)
	best := make([]time.Duration, len(cases))
	const batch = 100
	for b.Loop() {
		for k, c := range cases {
			start := time.Now()
			for i := range batch {
				c.serve(i)
			}
			if d := time.Since(start); best[k] == 0 || d < best[k] {
				best[k] = d
			}
		}
	}
	for k, c := range cases[1:] {
		b.ReportMetric(float64(best[k+1])/float64(best[0]), c.name+"/static")
	}
	b.ReportMetric(float64(best[0].Nanoseconds())/batch, "static-ns/req")
}

// requestCase is one way of authenticating a tools/call, ready to serve.
type requestCase struct {
	name  string
	serve func(i int) // the i-th request
}

// requestCases are the cases of BenchmarkRequest, each warmed (keys
// fetched, the introspection answer cached), static first.
func requestCases(b *testing.B) []requestCase {
	is := newTestIssuer(b)
	newAuth := func(edit func(*oauth.Config)) *oauth.Authenticator {
		c := oauth.Config{Issuer: is.srv.URL, Resource: resource, Logger: slog.New(slog.DiscardHandler)}
		if edit != nil {
			edit(&c)
		}
		a, err := oauth.New(c)
		if err != nil {
			b.Fatal(err)
		}
		return a
	}
	jwtA, jwtB := is.sign(b, is.claims(resource), nil), is.sign(b, is.claims(resource), nil)
	as := &introspectionAS{answers: map[string]map[string]any{"opaque-token-1234567890": active(is, nil)}}
	is.introspect = as.serve
	intro := newAuth(func(c *oauth.Config) {
		c.Introspection = &oauth.Introspection{ClientID: "rs:1", ClientSecret: "s&cret", CacheTTL: time.Hour}
	})
	holder := newClient(b, "ES256")
	boundClaims := is.claims(resource)
	boundClaims["cnf"] = map[string]any{"jkt": holder.jkt}
	bound := is.sign(b, boundClaims, nil)
	proofs := make([]string, 100)
	for i := range proofs {
		proofs[i] = holder.sign(b, holder.header(), claims(resource, bound, time.Now()), nil)
	}
	dpop := newAuth(func(c *oauth.Config) {
		c.DPoP = oauth.DPoPAllowed
		c.DPoPVerifier = oauth.NewDPoPVerifier(&oauth.DPoPOptions{Replay: fresh{}})
	})
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"whoami","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	var out []requestCase
	for _, tt := range []struct {
		name   string
		authn  mcpmw.Authenticator
		tokens []string
		scheme string   // "Bearer" when empty
		proofs []string // DPoP headers, one per request in turn
	}{
		{name: "static", authn: mcpmw.AuthenticatorFunc(staticToken), tokens: []string{"reader-token"}},
		{name: "jwt-repeated", authn: newAuth(nil), tokens: []string{jwtA}},
		{name: "introspected-cached", authn: intro, tokens: []string{"opaque-token-1234567890"}},
		{name: "jwt-first", authn: newAuth(func(c *oauth.Config) { c.CacheSize = 1 }), tokens: []string{jwtA, jwtB}},
		{name: "dpop", authn: dpop, tokens: []string{bound}, scheme: "DPoP", proofs: proofs},
	} {
		var reg mcpmw.Registry
		reg.AddTools(tools()...)
		h := mcpmw.New(&reg, tt.authn, mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}), nil)
		reqs := make([]*http.Request, len(tt.tokens))
		bodies := make([]*strings.Reader, len(tt.tokens))
		scheme := tt.scheme
		if scheme == "" {
			scheme = "Bearer"
		}
		for i, tok := range tt.tokens {
			reqs[i] = toolCall("whoami", scheme+" "+tok)
			bodies[i] = strings.NewReader("")
		}
		w := &nopWriter{hdr: http.Header{}}
		serve := func(i int) {
			if tt.proofs != nil {
				reqs[i%len(reqs)].Header["Dpop"] = tt.proofs[i%len(tt.proofs) : i%len(tt.proofs)+1]
			}
			i %= len(reqs)
			bodies[i].Reset(body)
			reqs[i].Body = io.NopCloser(bodies[i])
			clear(w.hdr)
			w.status = 0
			h.ServeHTTP(w, reqs[i])
			if w.status != 0 && w.status != http.StatusOK {
				b.Fatalf("%s: status %d", tt.name, w.status)
			}
		}
		for i := range tt.tokens {
			serve(i)
		}
		out = append(out, requestCase{tt.name, serve})
	}
	return out
}
