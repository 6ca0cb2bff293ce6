package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/internal/testproc"
	"github.com/mcpmw/mcpmw/oauth"
)

// patience bounds every wait on the app, generous for a busy machine.
const patience = 30 * time.Second

// The contract of examples/oauth (issue 30), tested from outside: the
// program built as a user builds it, run with its environment, and asked
// over HTTP.

var buildOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "oauth-example-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "oauth")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
})

// lockedBuffer is an io.Writer the process and the test may use at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// app is the example program, running.
type app struct {
	cmd      *exec.Cmd
	out      lockedBuffer // its stderr: start-up lines, then one audit record per line
	exited   chan struct{}
	exitErr  error
	endpoint string
	metadata string
	sent     int // requests sent to the endpoint, each audited once
}

// launch starts the program with env and, unless it is expected to fail,
// waits until it serves its metadata.
func launch(t *testing.T, env ...string) *app {
	t.Helper()
	bin, err := buildOnce()
	require.NoError(t, err)
	a := &app{cmd: exec.Command(bin), exited: make(chan struct{})}
	a.cmd.Env = append(os.Environ(), env...)
	a.cmd.Stdout, a.cmd.Stderr = &a.out, &a.out
	a.cmd.SysProcAttr = testproc.SysProcAttr()
	require.NoError(t, a.cmd.Start())
	go func() { a.exitErr = a.cmd.Wait(); close(a.exited) }()
	t.Cleanup(func() {
		select {
		case <-a.exited:
		default:
			_ = a.cmd.Process.Kill()
			<-a.exited
		}
	})
	return a
}

// serve runs the program on a free port and waits until it answers.
func serve(t *testing.T, env ...string) *app {
	t.Helper()
	addr := freeAddr(t)
	a := launch(t, append([]string{"ADDR=" + addr}, env...)...)
	a.endpoint = "http://" + addr + "/mcp"
	a.metadata = "http://" + addr + "/.well-known/oauth-protected-resource/mcp"
	client := &http.Client{Timeout: patience}
	for deadline := time.Now().Add(patience); ; {
		select {
		case <-a.exited:
			require.FailNow(t, "the app exited", "%v:\n%s", a.exitErr, a.out.String())
		default:
		}
		resp, err := client.Get(a.metadata)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return a
			}
		}
		require.True(t, time.Now().Before(deadline), "the app did not answer within %v:\n%s", patience, a.out.String())
		time.Sleep(50 * time.Millisecond)
	}
}

// fails runs the program with env and returns what it said as it exited
// with an error.
func fails(t *testing.T, env ...string) string {
	t.Helper()
	a := launch(t, append([]string{"ADDR=" + freeAddr(t)}, env...)...)
	select {
	case <-a.exited:
	case <-time.After(patience):
		require.FailNow(t, "the app did not exit", a.out.String())
	}
	require.Error(t, a.exitErr, a.out.String())
	return a.out.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// records are the audit records the program wrote so far.
func (a *app) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(a.out.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == "mcp request" {
			out = append(out, rec)
		}
	}
	return out
}

// answer is an HTTP answer of the program.
type answer struct {
	status    int
	challenge string
	header    http.Header
	body      map[string]any
}

// call sends a 2026-07-28 tools/call with the given Authorization values.
func (a *app) call(t *testing.T, tool, args string, authorization ...string) answer {
	t.Helper()
	h := http.Header{}
	for _, v := range authorization {
		h.Add("Authorization", v)
	}
	return a.send(t, tool, args, h)
}

// send sends a 2026-07-28 tools/call with the headers h besides those of
// every MCP request.
func (a *app) send(t *testing.T, tool, args string, h http.Header) answer {
	t.Helper()
	a.sent++
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, a.endpoint, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	for k, vs := range h {
		req.Header[k] = append(req.Header[k], vs...)
	}
	resp, err := (&http.Client{Timeout: patience}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	ans := answer{status: resp.StatusCode, challenge: resp.Header.Get("WWW-Authenticate"), header: resp.Header}
	_ = json.Unmarshal(raw, &ans.body)
	return ans
}

// refusedOnce checks that the last request, sent after before others
// (app.sent), made exactly one record more, naming reason in its
// auth_error or summary.
func (a *app) refusedOnce(t *testing.T, before int, reason string) {
	t.Helper()
	recs := a.records(t)
	for i := 0; i < 100 && len(recs) <= before; i++ { // the record is written before the answer; stderr may lag
		time.Sleep(20 * time.Millisecond)
		recs = a.records(t)
	}
	require.Len(t, recs, before+1, a.out.String())
	rec := recs[before]
	assert.Contains(t, fmt.Sprint(rec["auth_error"], " ", rec["summary"]), reason)
}

func bearer(tok string) string { return "Bearer " + tok }

// structured is a tools/call result's structuredContent.
func structured(t *testing.T, ans answer) map[string]any {
	t.Helper()
	require.Equal(t, 200, ans.status, "%v", ans.body)
	res, _ := ans.body["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	require.NotNil(t, sc, "%v", ans.body)
	return sc
}

// tokenLine finds the demo token printed for who.
func tokenLine(t *testing.T, out, who string) string {
	t.Helper()
	m := regexp.MustCompile(`token for ` + who + ` \(scope "[a-z ]+"\), valid 1h:\n(\S+)\n`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	return m[1]
}

// Without ISSUER the program is its own issuer and prints two tokens: a
// read token may call whoami, whose structuredContent says who and with
// which scopes, and gets 403 insufficient_scope naming write for shout; a
// write token may call both (write implies read).
func TestDemoMode(t *testing.T) {
	t.Parallel()
	a := serve(t)
	reader, writer := tokenLine(t, a.out.String(), "reader"), tokenLine(t, a.out.String(), "writer")

	no := a.call(t, "whoami", `{}`)
	assert.Equal(t, 401, no.status)
	assert.Equal(t, `Bearer resource_metadata="`+a.metadata+`", `+ // DPOP=allowed by default: both schemes, no error
		`DPoP algs="ES256 ES384 ES512 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA", resource_metadata="`+a.metadata+`"`, no.challenge)

	assert.Equal(t, map[string]any{"sub": "reader", "scopes": []any{"read"}}, structured(t, a.call(t, "whoami", `{}`, bearer(reader))))
	assert.Equal(t, map[string]any{"sub": "writer", "scopes": []any{"write"}}, structured(t, a.call(t, "whoami", `{}`, bearer(writer))))

	before := a.sent
	denied := a.call(t, "shout", `{"message":"hi"}`, bearer(reader))
	assert.Equal(t, 403, denied.status)
	assert.Equal(t, `Bearer error="insufficient_scope", scope="write", resource_metadata="`+a.metadata+`"`, denied.challenge)
	a.refusedOnce(t, before, "write")

	ok := a.call(t, "shout", `{"message":"hi"}`, bearer(writer))
	assert.Equal(t, 200, ok.status)
	assert.Contains(t, fmt.Sprint(ok.body), "HI")

	resp, err := http.Get(a.metadata)
	require.NoError(t, err)
	defer resp.Body.Close()
	var meta map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&meta))
	assert.Equal(t, a.endpoint, meta["resource"])
	assert.Equal(t, []any{"https://auth.example.com"}, meta["authorization_servers"])
	assert.Len(t, meta["dpop_signing_alg_values_supported"], 10, "DPOP=allowed by default: every asymmetric algorithm")
	assert.NotContains(t, meta, "dpop_bound_access_tokens_required", "allowed, not required")
	assert.NotContains(t, a.out.String()[strings.Index(a.out.String(), "mcp request"):], reader, "tokens never reach the audit records")
}

// authServer is an authorization server the test plays: its metadata at
// /.well-known/oauth-authorization-server, its ES256 keys, and an
// introspection endpoint for the client "rs" with secret "rs-secret".
type authServer struct {
	srv    *httptest.Server
	key    *ecdsa.PrivateKey
	kid    string
	mu     sync.Mutex
	opaque map[string]map[string]any
}

func (as *authServer) issueOpaque(token string, answer map[string]any) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.opaque[token] = answer
}

func newAuthServer(t *testing.T) *authServer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	as := &authServer{key: key, kid: "k1", opaque: map[string]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": as.srv.URL, "jwks_uri": as.srv.URL + "/jwks",
			"introspection_endpoint": as.srv.URL + "/introspect"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: as.kid, Algorithm: "ES256", Use: "sig"}}})
	})
	mux.HandleFunc("POST /introspect", func(w http.ResponseWriter, r *http.Request) {
		if id, secret, _ := r.BasicAuth(); id != "rs" || secret != "rs-secret" {
			http.Error(w, "who?", http.StatusUnauthorized)
			return
		}
		as.mu.Lock()
		answer, ok := as.opaque[r.PostFormValue("token")]
		as.mu.Unlock()
		if !ok {
			answer = map[string]any{"active": false}
		}
		json.NewEncoder(w).Encode(answer)
	})
	as.srv = httptest.NewUnstartedServer(mux) // as.srv is set before any handler reads it
	as.srv.Start()
	t.Cleanup(as.srv.Close)
	return as
}

func (as *authServer) claims(resource, sub, scope string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": as.srv.URL, "sub": sub, "aud": resource, "scope": scope,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": rand.Text(), "client_id": "c"}
}

func sign(t *testing.T, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", kid))
	require.NoError(t, err)
	payload, err := json.Marshal(claims)
	require.NoError(t, err)
	jws, err := signer.Sign(payload)
	require.NoError(t, err)
	s, err := jws.CompactSerialize()
	require.NoError(t, err)
	return s
}

// With ISSUER, tokens are verified with the keys its metadata names, and
// opaque ones introspected; every refused token is a 401 invalid_token
// with one audit record naming the reason.
func TestWithAnIssuer(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t)
	addr := freeAddr(t)
	resource := "http://" + addr + "/mcp"
	a := launch(t, "ADDR="+addr, "ISSUER="+as.srv.URL, "INTROSPECTION_CLIENT_ID=rs", "INTROSPECTION_CLIENT_SECRET=rs-secret")
	a.endpoint, a.metadata = resource, "http://"+addr+"/.well-known/oauth-protected-resource/mcp"
	waitFor(t, a)

	good := sign(t, jose.ES256, as.key, as.kid, as.claims(resource, "ann", "read"))
	assert.Equal(t, map[string]any{"sub": "ann", "scopes": []any{"read"}}, structured(t, a.call(t, "whoami", `{}`, bearer(good))))

	as.issueOpaque("opaque-token", map[string]any{"active": true, "iss": as.srv.URL, "sub": "bea", "aud": resource,
		"scope": "write", "exp": time.Now().Add(time.Hour).Unix()})
	assert.Equal(t, map[string]any{"sub": "bea", "scopes": []any{"write"}}, structured(t, a.call(t, "whoami", `{}`, bearer("opaque-token"))))
	ok := a.call(t, "shout", `{"message":"x"}`, bearer("opaque-token"))
	assert.Equal(t, 200, ok.status)

	der, err := x509.MarshalPKIXPublicKey(&as.key.PublicKey)
	require.NoError(t, err)
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	expired := as.claims(resource, "ann", "read")
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	parts := strings.Split(good, ".")
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"at+jwt","kid":"k1"}`)) + "." + parts[1] + "."
	for _, tt := range []struct{ name, token, desc, reason string }{
		{"another audience", sign(t, jose.ES256, as.key, as.kid, as.claims("https://other.example.com/mcp", "ann", "read")),
			"The access token is not for this resource", "does not contain"},
		{"expired", sign(t, jose.ES256, as.key, as.kid, expired), "The access token expired", "exp"},
		{"badly signed", sign(t, jose.ES256, other, as.kid, as.claims(resource, "ann", "read")), "The access token's signature is invalid", "signature"},
		{"alg none", none, "The access token is malformed or signed with an algorithm not accepted", "none"},
		{"HS256 keyed with the public key", sign(t, jose.HS256, der, as.kid, as.claims(resource, "ann", "read")),
			"The access token is malformed or signed with an algorithm not accepted", "HS256"},
		{"inactive", "revoked-token", "The access token is not active", "active: false"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := a.sent
			ans := a.call(t, "whoami", `{}`, bearer(tt.token))
			assert.Equal(t, 401, ans.status)
			assert.Equal(t, `Bearer error="invalid_token", error_description="`+tt.desc+`", resource_metadata="`+a.metadata+`"`, ans.challenge)
			a.refusedOnce(t, before, tt.reason)
		})
	}

	before := a.sent
	two := a.call(t, "whoami", `{}`, bearer(good), bearer(good))
	assert.Equal(t, 400, two.status)
	assert.Contains(t, two.challenge, `error="invalid_request"`)
	a.refusedOnce(t, before, "2 Authorization headers")

	before = a.sent
	denied := a.call(t, "shout", `{"message":"x"}`, bearer(good))
	assert.Equal(t, 403, denied.status)
	assert.Equal(t, `Bearer error="insufficient_scope", scope="write", resource_metadata="`+a.metadata+`"`, denied.challenge)
	a.refusedOnce(t, before, "write")
}

func waitFor(t *testing.T, a *app) {
	t.Helper()
	for deadline := time.Now().Add(patience); ; {
		select {
		case <-a.exited:
			require.FailNow(t, "the app exited", "%v:\n%s", a.exitErr, a.out.String())
		default:
		}
		if resp, err := http.Get(a.metadata); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		require.True(t, time.Now().Before(deadline), a.out.String())
		time.Sleep(50 * time.Millisecond)
	}
}

// JWKS_FILE: the keys are the file's, fixed, and the issuer is ISSUER (or
// the demo issuer without it).
func TestJWKSFile(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	data, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "f1", Algorithm: "ES256", Use: "sig"}}})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "jwks.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	a := serve(t, "JWKS_FILE="+path)
	assert.NotContains(t, a.out.String(), "token for reader", "no demo tokens with a JWKS_FILE")
	claims := map[string]any{"iss": "https://auth.example.com", "sub": "fay", "aud": a.endpoint, "scope": "read",
		"exp": time.Now().Add(time.Hour).Unix()}
	assert.Equal(t, "fay", structured(t, a.call(t, "whoami", `{}`, bearer(sign(t, jose.ES256, key, "f1", claims))))["sub"])
	assert.Equal(t, 401, a.call(t, "whoami", `{}`, bearer(sign(t, jose.ES256, key, "f2", claims))).status)
}

// Anything invalid stops the program with a message naming the variable.
func TestInvalidEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"keys":[]}`), 0o600))
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	for _, tt := range []struct {
		env  []string
		want string
	}{
		{[]string{"RESOURCE=mcp"}, "RESOURCE"},
		{[]string{"RESOURCE=http://h/mcp#x"}, "RESOURCE"},
		{[]string{"ISSUER=auth.example.com"}, "ISSUER"},
		{[]string{"ISSUER=" + down.URL}, "ISSUER"},
		{[]string{"INTROSPECTION_CLIENT_ID=rs"}, "INTROSPECTION_CLIENT_SECRET"},
		{[]string{"INTROSPECTION_CLIENT_SECRET=x"}, "INTROSPECTION_CLIENT_ID"},
		{[]string{"INTROSPECTION_CLIENT_ID=rs", "INTROSPECTION_CLIENT_SECRET=x"}, "ISSUER"},
		{[]string{"DPOP=sometimes"}, "DPOP"},
		{[]string{"REDIS_URL=localhost:6379"}, "REDIS_URL"},
		{[]string{"REDIS_URL=redis://u:hunter2@127.0.0.1:6379/notadb"}, "REDIS_URL"},
		{[]string{"REDIS_URL=redis://" + freeAddr(t) + "/0"}, "REDIS_URL"}, // nothing listens there
		{[]string{"REDIS_TIMEOUT=soon"}, "REDIS_TIMEOUT"},
		{[]string{"REDIS_TIMEOUT=-1s"}, "REDIS_TIMEOUT"},
		{[]string{"JWKS_FILE=" + filepath.Join(dir, "missing.json")}, "JWKS_FILE"},
		{[]string{"JWKS_FILE=" + bad}, "JWKS_FILE"},
	} {
		t.Run(tt.want+" "+strings.Join(tt.env, " "), func(t *testing.T) {
			t.Parallel()
			out := fails(t, tt.env...)
			assert.True(t, strings.HasPrefix(out, "oauth: "), out)
			assert.Contains(t, out, tt.want)
			assert.NotContains(t, out, "hunter2", "a REDIS_URL's password is never printed")
		})
	}
	assert.Contains(t, fails(t, "ADDR=nonsense"), "ADDR")
}

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := configFromEnv(env(nil))
	require.NoError(t, err)
	assert.Equal(t, config{addr: "127.0.0.1:8080", resource: "http://127.0.0.1:8080/mcp", dpop: oauth.DPoPAllowed}, c)
	c, err = configFromEnv(env(map[string]string{"ADDR": ":9000", "RESOURCE": "https://mcp.example.com/mcp",
		"ISSUER": "https://login.example.com", "JWKS_FILE": "/etc/jwks.json", "DPOP": "required", "REDIS_URL": "redis://u:pw@r:6379/2",
		"REDIS_TIMEOUT": "2s", "INTROSPECTION_CLIENT_ID": "rs", "INTROSPECTION_CLIENT_SECRET": "s"}))
	require.NoError(t, err)
	require.NotNil(t, c.redis)
	assert.Equal(t, "r:6379", c.redis.Addr)
	assert.Equal(t, 2, c.redis.DB)
	assert.Equal(t, "pw", c.redis.Password)
	assert.True(t, c.redis.ContextTimeoutEnabled, "mcpredis refuses a client without it")
	assert.Equal(t, -1, c.redis.MaxRetries, "a SET NX retried could call its own proof a replay")
	c.redis = nil
	assert.Equal(t, config{addr: ":9000", resource: "https://mcp.example.com/mcp", issuer: "https://login.example.com",
		jwksFile: "/etc/jwks.json", dpop: oauth.DPoPRequired, redisTimeout: 2 * time.Second, introID: "rs", introSecret: "s"}, c)
	c, err = configFromEnv(env(map[string]string{"DPOP": "off"}))
	require.NoError(t, err)
	assert.Equal(t, oauth.DPoPOff, c.dpop)
	assert.Nil(t, c.redis)
	c, err = configFromEnv(env(map[string]string{"DPOP": "allowed", "REDIS_URL": "rediss://r:6380/0", "REDIS_TIMEOUT": "1ns"}))
	require.NoError(t, err)
	assert.Equal(t, oauth.DPoPAllowed, c.dpop)
	require.NotNil(t, c.redis, "rediss: Redis over TLS")
	assert.NotNil(t, c.redis.TLSConfig)
	assert.Equal(t, time.Nanosecond, c.redisTimeout)
	for _, bad := range []map[string]string{{"REDIS_TIMEOUT": "0s"}, {"REDIS_URL": "http://r:6379/0"}, {"REDIS_URL": "redis:///0"}} {
		_, err := configFromEnv(env(bad))
		assert.Error(t, err, "%v", bad)
	}
}

func TestOrigin(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "https://mcp.example.com", origin("https://mcp.example.com/a/mcp"))
	assert.Equal(t, "http://127.0.0.1:8080", origin("http://127.0.0.1:8080/mcp"))
}

func TestResourcePath(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "/mcp", resourcePath("https://api.example.com/mcp"))
	assert.Equal(t, "/", resourcePath("https://api.example.com"))
	assert.Equal(t, "/a/mcp/", resourcePath("https://api.example.com:8443/a/mcp/"))
}
