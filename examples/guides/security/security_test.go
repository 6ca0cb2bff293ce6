// Package security_test is the tested source of the snippet of SECURITY.md.
package security_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/ratelimit"
)

// limit sets the rate limit SECURITY.md shows: per token behind per IP.
func limit(opts *mcpmw.Options) {
	// !+bytoken
	byToken := ratelimit.By(300, time.Minute, func(r *http.Request, _ string) string {
		tok := r.Header.Get("Authorization")
		if tok == "" {
			return "" // no token: all such requests share one bucket (an empty key is never exempt)
		}
		sum := sha256.Sum256([]byte(tok)) // never the token itself: a shared counter would store it
		return hex.EncodeToString(sum[:])
	})
	opts.RateLimit = ratelimit.All(ratelimit.PerIP(6000, time.Minute), byToken)
	// !-bytoken
}

func TestLimitPerToken(t *testing.T) {
	t.Parallel()
	var opts mcpmw.Options
	limit(&opts)
	limited := func(token, ip string) bool {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		return opts.RateLimit.Limit(httptest.NewRecorder(), r, ip)
	}
	for i := range 300 {
		if limited("ann", "192.0.2.1") {
			t.Fatalf("request %d of 300 refused", i+1)
		}
	}
	assert.True(t, limited("ann", "192.0.2.1"), "the 301st of one token in a minute")
	assert.True(t, limited("ann", "198.51.100.7"), "the token's budget follows it to another address")
	assert.False(t, limited("bob", "192.0.2.1"), "another token behind the same address has its own budget")
	for range 300 {
		limited("", "192.0.2.9")
	}
	assert.True(t, limited("", "203.0.113.5"), "requests without a token share one bucket")
}
