package mcpmw_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// tokenError is an Authenticator's failure that chooses its challenges,
// and its status when status is set: the shape an OAuth verifier's error
// has.
type tokenError struct {
	why        string // for the audit record only
	status     int
	challenges []mcpmw.Challenge
}

func (e *tokenError) Error() string                 { return e.why }
func (e *tokenError) Challenges() []mcpmw.Challenge { return e.challenges }
func (e *tokenError) HTTPStatus() int               { return e.status }
func failWith(err error) mcpmw.AuthenticatorFunc {
	return func(*http.Request) (mcpmw.Caller, error) { return nil, err }
}
func challenged(cs ...mcpmw.Challenge) *tokenError {
	return &tokenError{why: "refused", challenges: cs}
}
func challengedStatus(st int, cs ...mcpmw.Challenge) error {
	return &tokenError{why: "refused", status: st, challenges: cs}
}

// dpopUser is a Caller whose token came with the DPoP scheme.
type dpopUser struct{ user }

func (*dpopUser) TokenScheme() string { return "DPoP" }

// schemeUser is a Caller that names a scheme, any string.
type schemeUser struct {
	user
	scheme string
}

func (u *schemeUser) TokenScheme() string { return u.scheme }

const challengeMetadata = "https://api.example.com/.well-known/oauth-protected-resource/mcp"

// Each shape of challenge an OAuth resource server sends (AUTH.md §3, §4,
// §8.2), chosen by the Authenticator's error, with the status it implies.
func TestAuthenticatorErrorChallenges(t *testing.T) {
	t.Parallel()
	const rm = `resource_metadata="` + challengeMetadata + `"`
	for _, tt := range []struct {
		name      string
		err       error
		status    int
		challenge string
	}{
		{"401 invalid_token with error_description", challenged(mcpmw.Challenge{Error: "invalid_token", Description: "The access token expired"}),
			401, `Bearer error="invalid_token", error_description="The access token expired", ` + rm},
		{"401 with two schemes, Bearer and DPoP", challenged(mcpmw.Challenge{}, mcpmw.Challenge{Scheme: "DPoP", Params: map[string]string{"algs": "ES256 PS256"}}),
			401, `Bearer ` + rm + `, DPoP algs="ES256 PS256", ` + rm},
		{"401 DPoP proof refused", challenged(mcpmw.Challenge{Scheme: "DPoP", Error: "invalid_dpop_proof", Description: "htu does not match the request URI", Params: map[string]string{"algs": "ES256"}}),
			401, `DPoP error="invalid_dpop_proof", error_description="htu does not match the request URI", algs="ES256", ` + rm},
		{"400 invalid_request, from the error code", challenged(mcpmw.Challenge{Error: "invalid_request", Description: "two Authorization headers"}),
			400, `Bearer error="invalid_request", error_description="two Authorization headers", ` + rm},
		{"400 invalid_request, from the error code of a later challenge", challenged(mcpmw.Challenge{Scheme: "Basic"}, mcpmw.Challenge{Error: "invalid_request"}),
			400, `Basic ` + rm + `, Bearer error="invalid_request", ` + rm},
		{"403 insufficient_scope, from the error code", challenged(mcpmw.Challenge{Error: "insufficient_scope", Scope: "files:read files:write"}),
			403, `Bearer error="insufficient_scope", scope="files:read files:write", ` + rm},
		{"the first code that implies a status decides", challenged(mcpmw.Challenge{Error: "invalid_token"}, mcpmw.Challenge{Error: "insufficient_scope"}, mcpmw.Challenge{Error: "invalid_request"}),
			403, `Bearer error="invalid_token", ` + rm + `, Bearer error="insufficient_scope", ` + rm + `, Bearer error="invalid_request", ` + rm},
		{"HTTPStatus decides over the error code", challengedStatus(401, mcpmw.Challenge{Error: "invalid_request"}),
			401, `Bearer error="invalid_request", ` + rm},
		{"a 400 HTTPStatus with its challenge", challengedStatus(400, mcpmw.Challenge{Error: "invalid_request"}),
			400, `Bearer error="invalid_request", ` + rm},
		{"a sentinel decides over the error code", fmt.Errorf("suspended: %w: %w", mcpmw.ErrForbidden, challenged(mcpmw.Challenge{Error: "invalid_request"})),
			403, `Bearer error="invalid_request", ` + rm},
		{"429 with the challenge the error chose", fmt.Errorf("quota: %w: %w", mcpmw.ErrTooManyRequests, challenged(mcpmw.Challenge{})),
			429, `Bearer ` + rm},
		{"wrapped, and over ErrInvalidToken", fmt.Errorf("expired: %w: %w", mcpmw.ErrInvalidToken, challenged(mcpmw.Challenge{Error: "invalid_token", Description: "expired"})),
			401, `Bearer error="invalid_token", error_description="expired", ` + rm},
		{"no challenges: the endpoint's", challenged(), 401, `Bearer ` + rm},
		{"no challenges and ErrInvalidToken: the endpoint's, with invalid_token", fmt.Errorf("%w: %w", mcpmw.ErrInvalidToken, challenged()),
			401, `Bearer error="invalid_token", ` + rm},
		{"only a challenge no client could parse: the endpoint's", challenged(mcpmw.Challenge{Scheme: "Bad Scheme"}), 401, `Bearer ` + rm},
		{"no challenges on a 403: none", fmt.Errorf("%w: %w", mcpmw.ErrForbidden, challenged()), 403, ""},
		{"no challenges on a 400: none", challengedStatus(400), 400, ""},
		{"HTTPStatus 599, the last error status", challengedStatus(599, mcpmw.Challenge{Error: "invalid_request"}),
			599, `Bearer error="invalid_request", ` + rm},
		{"HTTPStatus outside 400-599 is no status", challengedStatus(302, mcpmw.Challenge{Error: "invalid_token"}),
			401, `Bearer error="invalid_token", ` + rm},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := &spy{}
			h := mcpmw.New(nil, failWith(tt.err), a, &mcpmw.Options{ResourceMetadata: challengeMetadata})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, modern("1", "server/discover", ""))
			assert.Equal(t, tt.status, w.Code)
			assert.Equal(t, tt.challenge, w.Header().Get("WWW-Authenticate"))
			assert.Len(t, w.Header().Values("WWW-Authenticate"), min(1, len(tt.challenge)), "one header line")
			assert.Equal(t, mcpmw.CodeInvalidRequest, decode(t, w).Error.Code)
			assert.NotContains(t, w.Body.String(), "refused", "the error's text stays in the record")
			if assert.Len(t, a.records(), 1) {
				assert.Equal(t, tt.err, a.records()[0].AuthError)
				assert.Equal(t, mcpmw.OutcomeDenied, a.records()[0].Outcome)
			}
		})
	}
}

// The message of each status an Authenticator's error chooses.
func TestAuthFailureMessages(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err     error
		status  int
		message string
	}{
		{mcpmw.ErrUnauthorized, 401, "Unauthorized: send valid credentials in the Authorization header"},
		{challenged(mcpmw.Challenge{Error: "invalid_request"}), 400, "Bad Request: the credentials are malformed"},
		{mcpmw.ErrForbidden, 403, "Forbidden: these credentials may not use this endpoint"},
		{mcpmw.ErrTooManyRequests, 429, "Too Many Requests"},
	} {
		w := httptest.NewRecorder()
		mcpmw.New(nil, failWith(tt.err), &spy{}, nil).ServeHTTP(w, modern("1", "server/discover", ""))
		assert.Equal(t, tt.status, w.Code)
		assert.Equal(t, tt.message, decode(t, w).Error.Message)
	}
}

// Without Options.ResourceMetadata a challenge has none; with
// Options.Challenge set, an error's own challenges still replace it.
func TestErrorChallengesBesideTheEndpointsOptions(t *testing.T) {
	t.Parallel()
	err := challenged(mcpmw.Challenge{Error: "invalid_token"})
	for _, tt := range []struct {
		opts *mcpmw.Options
		err  error
		want string
	}{
		{nil, err, `Bearer error="invalid_token"`},
		{&mcpmw.Options{Challenge: `Basic realm="app"`}, err, `Bearer error="invalid_token"`},
		{&mcpmw.Options{Challenge: `Basic realm="app"`}, mcpmw.ErrUnauthorized, `Basic realm="app"`},
		{&mcpmw.Options{Challenge: `Basic realm="app"`}, mcpmw.ErrInvalidToken, `Basic realm="app", error="invalid_token"`},
		{&mcpmw.Options{Challenge: "Custom"}, mcpmw.ErrInvalidToken, `Custom error="invalid_token"`},
		{&mcpmw.Options{Challenge: "Custom", ResourceMetadata: challengeMetadata}, mcpmw.ErrUnauthorized, "Custom"},
		{nil, mcpmw.ErrInvalidToken, `Bearer error="invalid_token"`},
		{nil, mcpmw.ErrUnauthorized, "Bearer"},
	} {
		w := httptest.NewRecorder()
		mcpmw.New(nil, failWith(tt.err), &spy{}, tt.opts).ServeHTTP(w, modern("1", "server/discover", ""))
		assert.Equal(t, 401, w.Code)
		assert.Equal(t, tt.want, w.Header().Get("WWW-Authenticate"), "%v %v", tt.opts, tt.err)
	}
}

// What a Challenge holds is written so that every client can parse it and
// none is told more than 100 characters of anything it sent: values
// quoted and escaped, error and error_description kept to RFC 6750's
// characters and capped, a scheme, a name or a scope list no client could
// read left out, and a parameter written once.
func TestChallengeValuesAreWrittenSafely(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 150)
	for _, tt := range []struct {
		name string
		c    mcpmw.Challenge
		want string
	}{
		{"a description's quote and backslash", mcpmw.Challenge{Error: "invalid_token", Description: `bad "kid" \ here`},
			`Bearer error="invalid_token", error_description="bad ?kid? ? here"`},
		{"a description's control and non-ASCII characters", mcpmw.Challenge{Description: "caf\u00e9\r\nX-Evil: 1\x00\x7f"},
			`Bearer error_description="caf???X-Evil: 1??"`},
		{"a long description, capped", mcpmw.Challenge{Description: long},
			`Bearer error_description="` + long[:100] + `..."`},
		{"a long error code, capped", mcpmw.Challenge{Error: long},
			`Bearer error="` + long[:100] + `..."`},
		{"an error code's odd characters", mcpmw.Challenge{Error: "a\"b~\x7f"},
			`Bearer error="a?b~?"`},
		{"the printable edges of RFC 6750", mcpmw.Challenge{Description: " !#[]}~"}, `Bearer error_description=" !#[]}~"`},
		{"a param value quoted and escaped, not capped", mcpmw.Challenge{Params: map[string]string{"realm": `a "b" \c` + "\t\x01\x1f\x7f" + long}},
			`Bearer realm="a \"b\" \\c` + "\t???" + long + `"`},
		{"params in name order", mcpmw.Challenge{Params: map[string]string{"realm": "r", "algs": "ES256", "error_uri": "https://e.example/x"}},
			`Bearer algs="ES256", error_uri="https://e.example/x", realm="r"`},
		{"a param name no client could parse", mcpmw.Challenge{Params: map[string]string{"bad name": "x", "ok": "y", "": "z", "é": "w"}},
			`Bearer ok="y"`},
		{"params may not repeat the challenge's own", mcpmw.Challenge{Error: "invalid_token", Params: map[string]string{
			"error": "x", "Error_Description": "x", "SCOPE": "x", "resource_metadata": "https://evil.example", "error_uri": "u"}},
			`Bearer error="invalid_token", error_uri="u"`},
		{"a scope list", mcpmw.Challenge{Scope: "a b:c !#~"}, `Bearer scope="a b:c !#~"`},
		{"a scope with a double space", mcpmw.Challenge{Scope: "a  b"}, "Bearer"},
		{"a scope with a leading space", mcpmw.Challenge{Scope: " a"}, "Bearer"},
		{"a scope with a trailing space", mcpmw.Challenge{Scope: "a "}, "Bearer"},
		{"a scope with a quote", mcpmw.Challenge{Scope: `a"`}, "Bearer"},
		{"a scope with a backslash", mcpmw.Challenge{Scope: `a\`}, "Bearer"},
		{"a scope with a control", mcpmw.Challenge{Scope: "a\x7f"}, "Bearer"},
		{"a scope past ASCII", mcpmw.Challenge{Scope: "caf\u00e9"}, "Bearer"},
		{"a scheme of token characters", mcpmw.Challenge{Scheme: "X-Mine_1.0~!"}, "X-Mine_1.0~!"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := httptest.NewRecorder()
			mcpmw.New(nil, failWith(challenged(tt.c)), &spy{}, nil).ServeHTTP(w, modern("1", "server/discover", ""))
			assert.Equal(t, tt.want, w.Header().Get("WWW-Authenticate"))
		})
	}
	// A scheme no client could parse leaves its challenge out.
	for _, scheme := range []string{"Bad Scheme", "Bé", "a,b", `"q"`} {
		w := httptest.NewRecorder()
		mcpmw.New(nil, failWith(challenged(mcpmw.Challenge{Scheme: scheme}, mcpmw.Challenge{Scheme: "DPoP"})), &spy{}, nil).
			ServeHTTP(w, modern("1", "server/discover", ""))
		assert.Equal(t, "DPoP", w.Header().Get("WWW-Authenticate"), scheme)
	}
}

// The gate's 403 is in the scheme the caller's token came with, with the
// permission as the scope and the resource metadata, for Bearer and DPoP
// callers alike (AUTH.md §4, §8.2).
func TestInsufficientScopeNamesTheCallersScheme(t *testing.T) {
	t.Parallel()
	reader := user{name: "r", caps: []mcpmw.Permission{"read"}}
	for _, tt := range []struct {
		name   string
		caller mcpmw.Caller
		opts   *mcpmw.Options
		want   string
	}{
		{"Bearer", &reader, &mcpmw.Options{ResourceMetadata: challengeMetadata},
			`Bearer error="insufficient_scope", scope="write", resource_metadata="` + challengeMetadata + `"`},
		{"DPoP", &dpopUser{reader}, &mcpmw.Options{ResourceMetadata: challengeMetadata},
			`DPoP error="insufficient_scope", scope="write", resource_metadata="` + challengeMetadata + `"`},
		{"DPoP without resource metadata", &dpopUser{reader}, nil, `DPoP error="insufficient_scope", scope="write"`},
		{"a scheme that is no token is Bearer", &schemeUser{reader, "D PoP"}, nil, `Bearer error="insufficient_scope", scope="write"`},
		{"an empty scheme is Bearer", &schemeUser{reader, ""}, nil, `Bearer error="insufficient_scope", scope="write"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var reg mcpmw.Registry
			reg.AddTools(testTools()...)
			authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return tt.caller, nil })
			w := httptest.NewRecorder()
			mcpmw.New(&reg, authn, &spy{}, tt.opts).ServeHTTP(w, modern("1", "tools/call", `"name":"write_it","arguments":{"message":"hi"}`))
			assert.Equal(t, http.StatusForbidden, w.Code)
			assert.Equal(t, tt.want, w.Header().Get("WWW-Authenticate"))
		})
	}
}

// A denial that is not the gate's (a middleware's rewrite, gated again in
// the method; a middleware's own) is answered in the caller's scheme and
// with the resource metadata too. It names no scope: the Response does
// not say which permission was lacking.
func TestDenialAfterTheGateNamesTheCallersScheme(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	rewrite := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			r := *req
			r.Params = json.RawMessage(`{"name":"write_it","arguments":{"message":"rerouted"}}`)
			return next.Dispatch(ctx, &r)
		})
	}
	deny := func(mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(context.Context, *mcpmw.Request) *mcpmw.Response {
			resp := mcpmw.ErrorResponse(mcpmw.CodeInvalidParams, "no")
			resp.Outcome = mcpmw.OutcomeDenied
			return resp
		})
	}
	reader := user{name: "r", caps: []mcpmw.Permission{"read"}}
	for _, tt := range []struct {
		name       string
		middleware func(mcpmw.Dispatcher) mcpmw.Dispatcher
		caller     mcpmw.Caller
		opts       mcpmw.Options
		want       string
	}{
		// Re-checked after the rewrite: the denial is the gate's own
		// (Denied), naming the permission as the scope.
		{"rewritten, DPoP", rewrite, &dpopUser{reader}, mcpmw.Options{ResourceMetadata: challengeMetadata},
			`DPoP error="insufficient_scope", scope="write", resource_metadata="` + challengeMetadata + `"`},
		{"rewritten, Bearer", rewrite, &reader, mcpmw.Options{}, `Bearer error="insufficient_scope", scope="write"`},
		{"a middleware's denial, DPoP", deny, &dpopUser{reader}, mcpmw.Options{ResourceMetadata: challengeMetadata},
			`DPoP error="insufficient_scope", resource_metadata="` + challengeMetadata + `"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			opts.Middleware = []func(mcpmw.Dispatcher) mcpmw.Dispatcher{tt.middleware}
			authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return tt.caller, nil })
			w := httptest.NewRecorder()
			mcpmw.New(&reg, authn, &spy{}, &opts).ServeHTTP(w, modern("1", "tools/call", `"name":"echo","arguments":{"message":"hi"}`))
			assert.Equal(t, http.StatusForbidden, w.Code, w.Body.String())
			assert.Equal(t, tt.want, w.Header().Get("WWW-Authenticate"))
		})
	}
}

// rawExchange sends raw, an HTTP/1.1 request as bytes, to srv over TCP, as
// curl does, and returns the response as bytes: the status line and
// header lines exactly as a client reads them.
func rawExchange(t *testing.T, srv *httptest.Server, raw string) string {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(mcpmw.Patience)))
	_, err = conn.Write([]byte(raw))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %s\r\n", resp.Status)
	require.NoError(t, resp.Header.Write(&b))
	return b.String()
}

// rawPost is a 2026-07-28 request of method with params, as bytes, with
// the Authorization header authz (none when "").
func rawPost(method, params, authz string, more ...string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: " + method + "\r\nConnection: close\r\n"
	if authz != "" {
		head += "Authorization: " + authz + "\r\n"
	}
	for _, h := range more {
		head += h + "\r\n"
	}
	return head + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// The challenges on the wire, as a client such as curl reads them, through
// a real listener: each status line with its one WWW-Authenticate line.
func TestChallengesOnTheWire(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	reader := user{name: "r", caps: []mcpmw.Permission{"read"}}
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		authz := r.Header.Get("Authorization")
		scheme, token, _ := strings.Cut(authz, " ")
		switch {
		case len(r.Header.Values("Authorization")) > 1:
			return nil, challenged(mcpmw.Challenge{Error: "invalid_request", Description: "send one Authorization header"})
		case authz == "":
			return nil, challenged(mcpmw.Challenge{}, mcpmw.Challenge{Scheme: "DPoP", Params: map[string]string{"algs": "ES256 PS256"}})
		case token == "expired":
			return nil, challenged(mcpmw.Challenge{Scheme: scheme, Error: "invalid_token", Description: `token "` + strings.Repeat("e", 200) + `" expired`})
		case strings.EqualFold(scheme, "DPoP"):
			return &dpopUser{reader}, nil
		default:
			return &reader, nil
		}
	})
	srv := httptest.NewServer(mcpmw.New(&reg, authn, &spy{}, &mcpmw.Options{ResourceMetadata: challengeMetadata}))
	t.Cleanup(srv.Close)
	const rm = `resource_metadata="` + challengeMetadata + `"`
	call := `"name":"write_it","arguments":{"message":"hi"},`
	for _, tt := range []struct {
		name, raw, status, challenge string
	}{
		{"no credentials: both schemes", rawPost("tools/list", "", ""),
			"HTTP/1.1 401 Unauthorized", `Bearer ` + rm + `, DPoP algs="ES256 PS256", ` + rm},
		{"an expired token, its description capped", rawPost("tools/list", "", "DPoP expired"),
			"HTTP/1.1 401 Unauthorized", `DPoP error="invalid_token", error_description="token ?` + strings.Repeat("e", 93) + `...", ` + rm},
		{"two Authorization headers", rawPost("tools/list", "", "Bearer a", "Authorization: Bearer b"),
			"HTTP/1.1 400 Bad Request", `Bearer error="invalid_request", error_description="send one Authorization header", ` + rm},
		{"a Bearer caller lacking the permission", rawPost("tools/call", call, "Bearer reader", "Mcp-Name: write_it"),
			"HTTP/1.1 403 Forbidden", `Bearer error="insufficient_scope", scope="write", ` + rm},
		{"a DPoP caller lacking the permission", rawPost("tools/call", call, "DPoP reader", "Mcp-Name: write_it", "DPoP: proof"),
			"HTTP/1.1 403 Forbidden", `DPoP error="insufficient_scope", scope="write", ` + rm},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := rawExchange(t, srv, tt.raw)
			lines := strings.Split(got, "\r\n")
			assert.Equal(t, tt.status, lines[0])
			var challenges []string
			for _, l := range lines {
				if v, ok := strings.CutPrefix(l, "Www-Authenticate: "); ok {
					challenges = append(challenges, v)
				}
			}
			assert.Equal(t, []string{tt.challenge}, challenges, got)
		})
	}
}

// headerError is a DPoP verifier's refusal that asks for a nonce: its
// challenge and the DPoP-Nonce header field (RFC 9449 §9).
type headerError struct {
	tokenError
	header http.Header
}

func (e *headerError) ChallengeHeader() http.Header { return e.header }

// An error's ChallengeHeader fields are sent with its challenges, but none
// the handler writes itself, and no value a header cannot hold; a wrapped
// error's count, and an error of an HTTP client wrapped beside it (a
// Header method) sends nothing.
func TestChallengeHeaderFields(t *testing.T) {
	t.Parallel()
	nonce := mcpmw.Challenge{Scheme: "DPoP", Error: "use_dpop_nonce", Params: map[string]string{"algs": "ES256"}}
	for _, tt := range []struct {
		name   string
		header http.Header
		want   http.Header
	}{
		{"a nonce", http.Header{"DPoP-Nonce": {"n-1"}}, http.Header{"Dpop-Nonce": {"n-1"}}},
		{"names in any case, values in order", http.Header{"dpop-nonce": {"a", "b"}, "Retry-After": {"3"}},
			http.Header{"Dpop-Nonce": {"a", "b"}, "Retry-After": {"3"}}},
		{"the handler's own fields are left out", http.Header{
			"Www-Authenticate": {"Basic"}, "Content-Type": {"text/html"}, "Content-Length": {"1"}, "Content-Encoding": {"gzip"},
			"Transfer-Encoding": {"chunked"}, "Connection": {"close"}, "Trailer": {"X"}, "Upgrade": {"h2c"},
			"Set-Cookie": {"a=b"}, "Mcp-Session-Id": {"x"}, "Dpop-Nonce": {"kept"}}, http.Header{"Dpop-Nonce": {"kept"}}},
		{"a name that is no token is left out", http.Header{"Bad Name": {"x"}, "Dpop-Nonce": {"kept"}}, http.Header{"Dpop-Nonce": {"kept"}}},
		{"a value with a control character is left out", http.Header{"Dpop-Nonce": {"a\r\nX-Evil: 1", "ok\tfine", "del\x7f", "nul\x00", "us\x1f", "a space", "~"}},
			http.Header{"Dpop-Nonce": {"ok\tfine", "a space", "~"}}},
		{"nothing left", http.Header{"Connection": {"close"}}, http.Header{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := fmt.Errorf("wrapped: %w", &headerError{tokenError{why: "refused", challenges: []mcpmw.Challenge{nonce}}, tt.header})
			w := httptest.NewRecorder()
			mcpmw.New(nil, failWith(err), &spy{}, nil).ServeHTTP(w, modern("1", "server/discover", ""))
			assert.Equal(t, 401, w.Code)
			assert.Equal(t, []string{`DPoP error="use_dpop_nonce", algs="ES256"`}, w.Header().Values("WWW-Authenticate"))
			got := http.Header{}
			for name, v := range w.Header() {
				if name != "Www-Authenticate" && name != "Content-Type" {
					got[name] = v
				}
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
		})
	}
}

// upstreamError is an HTTP client's error an Authenticator wraps: its
// Header holds the upstream answer's fields, never sent.
type upstreamError struct{}

func (upstreamError) Error() string       { return "introspection endpoint answered 500" }
func (upstreamError) Header() http.Header { return http.Header{"X-Upstream": {"secret"}} }

func TestAnUpstreamErrorsHeaderIsNotSent(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("%w: %w", upstreamError{}, mcpmw.ErrInvalidToken)
	w := httptest.NewRecorder()
	mcpmw.New(nil, failWith(err), &spy{}, nil).ServeHTTP(w, modern("1", "server/discover", ""))
	assert.Equal(t, 401, w.Code)
	assert.Empty(t, w.Header().Get("X-Upstream"))
	assert.Equal(t, `Bearer error="invalid_token"`, w.Header().Get("WWW-Authenticate"))
}

// scopedUser is a Caller whose permissions need other scopes than their
// names: ScopesFor says which.
type scopedUser struct {
	user
	scopes map[mcpmw.Permission][]string
}

func (u *scopedUser) ScopesFor(p mcpmw.Permission) []string { return u.scopes[p] }

// The 403 names every scope the permission needs, as the caller's
// ScopesFor says; nothing when it names none or something that is not
// scope tokens.
func TestInsufficientScopeNamesEveryScopeNeeded(t *testing.T) {
	t.Parallel()
	reader := user{name: "r", caps: []mcpmw.Permission{"read"}}
	for _, tt := range []struct {
		name   string
		scopes []string
		want   string
	}{
		{"two scopes", []string{"notes:read", "notes:write"}, `Bearer error="insufficient_scope", scope="notes:read notes:write"`},
		{"one other scope", []string{"notes:write"}, `Bearer error="insufficient_scope", scope="notes:write"`},
		{"none", nil, `Bearer error="insufficient_scope"`},
		{"one is no scope token", []string{"notes:write", "a b"}, `Bearer error="insufficient_scope"`},
		{"an empty one", []string{"notes:write", ""}, `Bearer error="insufficient_scope"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var reg mcpmw.Registry
			reg.AddTools(testTools()...)
			c := &scopedUser{reader, map[mcpmw.Permission][]string{"write": tt.scopes}}
			authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return c, nil })
			w := httptest.NewRecorder()
			mcpmw.New(&reg, authn, &spy{}, nil).ServeHTTP(w, modern("1", "tools/call", `"name":"write_it","arguments":{"message":"hi"}`))
			assert.Equal(t, http.StatusForbidden, w.Code)
			assert.Equal(t, tt.want, w.Header().Get("WWW-Authenticate"))
		})
	}
}
