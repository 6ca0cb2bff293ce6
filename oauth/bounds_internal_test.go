package oauth

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bounds of the checks, at their edges: each value here is the last
// one accepted, so that a check moved by one refuses it.

// A NumericDate of 0 (1970) and of 2^40 seconds are times; -1 and 2^40+1
// are not.
func TestNumericDateEdges(t *testing.T) {
	t.Parallel()
	for _, good := range []string{"0", "1099511627776"} {
		var d numericDate
		assert.NoError(t, d.UnmarshalJSON([]byte(good)), good)
	}
	for _, bad := range []string{"-1", "1099511627777"} {
		var d numericDate
		assert.Error(t, d.UnmarshalJSON([]byte(bad)), bad)
	}
}

// The zero Config's durations and sizes are the documented defaults, and
// what a Config sets is kept.
func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	s, err := (&Config{Issuer: "https://as.example.com", Resource: "https://r.example.com"}).check()
	require.NoError(t, err)
	assert.Equal(t, 15*time.Minute, s.refresh)
	assert.Equal(t, 30*time.Second, s.minRefresh)
	assert.Equal(t, 10_000, s.cacheSize)
	assert.Equal(t, 10*time.Second, s.client.Timeout)
	assert.Same(t, slog.Default(), s.logger)

	logger, client := slog.New(slog.DiscardHandler), &http.Client{}
	s, err = (&Config{Issuer: "https://as.example.com", Resource: "https://r.example.com", KeyRefresh: time.Nanosecond,
		MinKeyRefresh: time.Nanosecond, CacheSize: 1, HTTPClient: client, Logger: logger}).check()
	require.NoError(t, err)
	assert.Equal(t, time.Nanosecond, s.refresh)
	assert.Equal(t, time.Nanosecond, s.minRefresh)
	assert.Equal(t, 1, s.cacheSize)
	assert.Same(t, client, s.client)
	assert.Same(t, logger, s.logger)
}

// A 5xx *Error, 500 included, asks for no credentials; a 4xx does.
func TestErrorChallengesBy5xx(t *testing.T) {
	t.Parallel()
	assert.Nil(t, (&Error{Status: 500, Scheme: "Bearer"}).Challenges())
	assert.NotNil(t, (&Error{Status: 499, Scheme: "Bearer"}).Challenges())
}

// '!' and '~', the ends of the printable range, are scope characters.
func TestScopeTokenEdges(t *testing.T) {
	t.Parallel()
	assert.True(t, scopeToken("!~"))
	assert.False(t, scopeToken(" "))
	assert.False(t, scopeToken("\x7f"))
}

// A document of exactly maxDocumentBytes is read; one byte more is not.
func TestDocumentSizeEdge(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := maxDocumentBytes
		if r.URL.Path == "/over" {
			n++
		}
		w.Write([]byte("{}" + strings.Repeat(" ", n-2)))
	}))
	defer srv.Close()
	data, err := getDocument(t.Context(), srv.Client(), srv.URL+"/exact")
	require.NoError(t, err)
	assert.True(t, json.Valid(data))
	_, err = getDocument(t.Context(), srv.Client(), srv.URL+"/over")
	assert.ErrorContains(t, err, "more than")
}
