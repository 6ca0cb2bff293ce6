package mcpmw_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpmw/mcpmw"
)

// statusErr is an authentication failure with its own HTTP status.
type statusErr int

func (e statusErr) Error() string   { return fmt.Sprintf("status %d", int(e)) }
func (e statusErr) HTTPStatus() int { return int(e) }

func discardRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func TestAuthenticatorStatuses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err       error
		status    int
		challenge string
	}{
		{mcpmw.ErrUnauthorized, 401, `Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource"`},
		{fmt.Errorf("revoked: %w", mcpmw.ErrUnauthorized), 401, `Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource"`},
		{fmt.Errorf("suspended: %w", mcpmw.ErrForbidden), 403, ""},
		{fmt.Errorf("quota: %w", mcpmw.ErrTooManyRequests), 429, ""},
		{statusErr(451), 451, ""},
		{fmt.Errorf("wrapped: %w", statusErr(503)), 503, ""},
		{statusErr(200), 401, `Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource"`}, // not an error status: fail closed
	} {
		t.Run(tt.err.Error(), func(t *testing.T) {
			t.Parallel()
			a := &spy{}
			h := mcpmw.New(nil, mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return nil, tt.err }), a,
				&mcpmw.Options{Challenge: `Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource"`})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, modern("1", "server/discover", ""))
			assert.Equal(t, tt.status, w.Code)
			assert.Equal(t, tt.challenge, w.Header().Get("WWW-Authenticate"))
			assert.Equal(t, mcpmw.CodeInvalidRequest, decode(t, w).Error.Code)
			if assert.Len(t, a.records(), 1) {
				assert.Equal(t, tt.err, a.records()[0].AuthError)
				assert.Equal(t, mcpmw.OutcomeDenied, a.records()[0].Outcome)
			}
		})
	}
}

func TestAuthenticatorSeesNoBodyRead(t *testing.T) {
	t.Parallel()
	h := mcpmw.New(nil, mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		return nil, mcpmw.ErrUnauthorized
	}), &spy{}, nil)
	r := modern("1", "server/discover", "")
	size := r.ContentLength
	h.ServeHTTP(httptest.NewRecorder(), r)
	rest, err := io.ReadAll(r.Body)
	assert.NoError(t, err)
	assert.EqualValues(t, size, len(rest), "an anonymous request costs no body read")
}

func TestRateLimiterSeesClientIP(t *testing.T) {
	t.Parallel()
	var seen string
	h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{
		ClientIP: func(r *http.Request) string { return r.Header.Get("X-Test-IP") },
		RateLimit: mcpmw.RateLimiterFunc(func(w http.ResponseWriter, r *http.Request, ip string) bool {
			seen = ip
			return false
		}),
	})
	h.ServeHTTP(httptest.NewRecorder(), modern("1", "server/discover", "", "X-Test-IP", "203.0.113.9"))
	assert.Equal(t, "203.0.113.9", seen)
}
