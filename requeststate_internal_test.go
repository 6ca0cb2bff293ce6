package mcpmw

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	stateKey1 = bytes.Repeat([]byte{0x11}, 32)
	stateKey2 = bytes.Repeat([]byte{0x22}, 32)
	stateT0   = time.Unix(1_800_000_000, 0)
)

func mustRing(t testing.TB, keys ...[]byte) *KeyRing {
	t.Helper()
	r, err := NewKeyRing(keys...)
	require.NoError(t, err)
	return r
}

func testBinding() *stateBinding {
	return &stateBinding{
		callerID: "alice",
		endpoint: endpointName{path: "/mcp", requested: "/mcp"},
		revision: "2026-07-28",
		method:   "tools/call",
		target:   "book_flight",
		args:     argsDigest([]byte(`{"from":"AMS","to":"LIS"}`)),
	}
}

func mustSeal(t testing.TB, r *KeyRing, b *stateBinding, payload []byte) string {
	t.Helper()
	s, err := r.seal(b, payload, stateT0, 10*time.Minute)
	require.NoError(t, err)
	return s
}

// requireRefused checks that open refused with want (any *stateError when
// want is nil).
func requireRefused(t *testing.T, want *stateError, payload []byte, err error, msgAndArgs ...any) {
	t.Helper()
	var se *stateError
	require.ErrorAs(t, err, &se, msgAndArgs...)
	assert.Nil(t, payload, msgAndArgs...)
	if want != nil {
		assert.Same(t, want, se, msgAndArgs...)
	}
}

func TestRequestStateRoundTrip(t *testing.T) {
	t.Parallel()
	sealer := mustRing(t, stateKey1)
	other := mustRing(t, stateKey1) // another instance, the same key
	for _, tt := range []struct {
		name    string
		payload []byte
	}{
		{"empty", nil},
		{"200 bytes", bytes.Repeat([]byte("x"), 200)},
		{"binary", []byte{0, 1, 2, 0xff, '"', '\\', '\n'}},
		{"largest", bytes.Repeat([]byte{7}, maxStatePayload)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := mustSeal(t, sealer, testBinding(), tt.payload)
			assert.LessOrEqual(t, len(s), maxSealedState)
			assert.Regexp(t, `^[A-Za-z0-9_-]+$`, s, "base64url, no padding: travels in JSON unescaped")
			for name, r := range map[string]*KeyRing{"sealer": sealer, "other instance": other} {
				got, err := r.open(testBinding(), s, stateT0.Add(time.Minute))
				require.NoError(t, err, name)
				assert.Equal(t, string(tt.payload), string(got), name)
			}
			again := mustSeal(t, sealer, testBinding(), tt.payload)
			assert.NotEqual(t, s, again, "a fresh nonce per seal")
		})
	}
}

func TestRequestStateLayout(t *testing.T) {
	t.Parallel()
	r := mustRing(t, stateKey1)
	payload := []byte("hello")
	s, err := r.seal(testBinding(), payload, stateT0, 90*time.Second)
	require.NoError(t, err)
	blob, err := stateEncoding.DecodeString(s)
	require.NoError(t, err)
	require.Len(t, blob, stateOverhead+len(payload))
	assert.Equal(t, byte(1), blob[0], "version")
	assert.Equal(t, r.keys[0].id[:], blob[1:5], "key id")
	assert.Equal(t, uint64(stateT0.Unix()+90), binary.BigEndian.Uint64(blob[5:13]), "expiry")
	assert.NotContains(t, string(blob), "hello", "the payload is encrypted")
}

func TestRequestStateRotation(t *testing.T) {
	t.Parallel()
	old := mustRing(t, stateKey1)
	rotated := mustRing(t, stateKey2, stateKey1)
	retired := mustRing(t, stateKey2)
	now := stateT0.Add(time.Minute)

	byOld := mustSeal(t, old, testBinding(), []byte("p"))
	got, err := rotated.open(testBinding(), byOld, now)
	require.NoError(t, err, "the rotated ring opens what the old key sealed")
	assert.Equal(t, "p", string(got))
	got, err = retired.open(testBinding(), byOld, now)
	requireRefused(t, errStateUnknownKey, got, err)

	byRotated := mustSeal(t, rotated, testBinding(), []byte("q"))
	got, err = retired.open(testBinding(), byRotated, now)
	require.NoError(t, err, "the rotated ring seals with its first key")
	assert.Equal(t, "q", string(got))
	got, err = old.open(testBinding(), byRotated, now)
	requireRefused(t, errStateUnknownKey, got, err)
}

// TestRequestStateBinding: state minted for one request is refused for any
// other caller, endpoint, revision, method, target or arguments, as if
// altered.
func TestRequestStateBinding(t *testing.T) {
	t.Parallel()
	r := mustRing(t, stateKey1)
	s := mustSeal(t, r, testBinding(), []byte("p"))
	for _, tt := range []struct {
		name   string
		change func(b *stateBinding)
	}{
		{"other caller", func(b *stateBinding) { b.callerID = "mallory" }},
		{"caller prefix", func(b *stateBinding) { b.callerID = "alic" }},
		{"other endpoint", func(b *stateBinding) { b.endpoint.path, b.endpoint.requested = "/admin/mcp", "/admin/mcp" }},
		{"other requested path", func(b *stateBinding) { b.endpoint.requested = "/internal/mcp" }},
		{"named endpoint", func(b *stateBinding) { b.endpoint.name = "orders" }},
		{"a name where a path was", func(b *stateBinding) { b.endpoint = endpointName{name: "/mcp", requested: "/mcp"} }},
		{"other revision", func(b *stateBinding) { b.revision = "2027-01-01" }},
		{"other method", func(b *stateBinding) { b.method = "prompts/get" }},
		{"other target", func(b *stateBinding) { b.target = "cancel_flight" }},
		{"other arguments", func(b *stateBinding) { b.args = argsDigest([]byte(`{"from":"AMS","to":"LHR"}`)) }},
		{"arguments re-encoded", func(b *stateBinding) { b.args = argsDigest([]byte(`{"from": "AMS", "to": "LIS"}`)) }},
		{"no arguments", func(b *stateBinding) { b.args = argsDigest(nil) }},
		{"a byte moved between fields", func(b *stateBinding) { b.callerID, b.endpoint.name = "alic", "e" }},
		{"a byte moved into the revision", func(b *stateBinding) { b.endpoint.requested, b.revision = "/mc", "p2026-07-28" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := testBinding()
			tt.change(b)
			got, err := r.open(b, s, stateT0.Add(time.Minute))
			requireRefused(t, errStateAuth, got, err)
		})
	}
}

// TestRequestStateBitFlips flips every bit of the sealed blob, one at a
// time: none opens.
func TestRequestStateBitFlips(t *testing.T) {
	t.Parallel()
	r := mustRing(t, stateKey1)
	s := mustSeal(t, r, testBinding(), bytes.Repeat([]byte("x"), 200))
	blob, err := stateEncoding.DecodeString(s)
	require.NoError(t, err)
	now := stateT0.Add(time.Minute)
	for i := range blob {
		for bit := range 8 {
			flipped := bytes.Clone(blob)
			flipped[i] ^= 1 << bit
			want := errStateAuth
			switch {
			case i == 0:
				want = errStateVersion
			case i <= stateKeyIDLen:
				want = errStateUnknownKey
			}
			got, err := r.open(testBinding(), stateEncoding.EncodeToString(flipped), now)
			requireRefused(t, want, got, err, "byte %d bit %d", i, bit)
		}
	}
}

// TestRequestStateAlteredText changes the string a client echoes: every
// character replaced, every length cut, characters added, the padding and
// line breaks a lenient decoder would skip. Only the exact string opens.
func TestRequestStateAlteredText(t *testing.T) {
	t.Parallel()
	r := mustRing(t, stateKey1)
	s := mustSeal(t, r, testBinding(), bytes.Repeat([]byte("x"), 200))
	now := stateT0.Add(time.Minute)
	open := func(state string) ([]byte, error) { return r.open(testBinding(), state, now) }

	for i := range len(s) {
		for _, c := range []byte{'A', 'B', '_', '-', '0', '=', '+', '/', '.', '\n'} {
			if s[i] == c {
				continue
			}
			altered := s[:i] + string(c) + s[i+1:]
			got, err := open(altered)
			requireRefused(t, nil, got, err, "position %d → %q", i, c)
		}
	}
	for n := range len(s) {
		got, err := open(s[:n])
		requireRefused(t, nil, got, err, "cut to %d", n)
	}
	for _, tail := range []string{"A", "AA", "AAA", "AAAA", "=", "==", "\n", "\r\n", " ", "-TAMPERED"} {
		got, err := open(s + tail)
		requireRefused(t, nil, got, err, "appended %q", tail)
	}
	got, err := open(s[:10] + "\n" + s[10:])
	requireRefused(t, errStateEncoding, got, err, "a line break inside")
	got, err = open("")
	requireRefused(t, errStateShort, got, err)
	got, err = open(strings.Repeat("!", maxSealedState+1))
	requireRefused(t, errStateTooLarge, got, err, "the size is checked before decoding")

	got, err = open(s)
	require.NoError(t, err, "the original still opens")
	assert.Len(t, got, 200)
}

func TestRequestStateExpiry(t *testing.T) {
	t.Parallel()
	r := mustRing(t, stateKey1)
	s, err := r.seal(testBinding(), []byte("p"), stateT0, 10*time.Minute)
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		at   time.Duration // after sealing
		want *stateError
	}{
		{name: "at once", at: 0},
		{name: "a clock behind the sealer's", at: -maxStateClockSkew},
		{name: "as far behind as allowed", at: 10*time.Minute - maxStateTTL - maxStateClockSkew},
		{name: "last second", at: 10*time.Minute - time.Second},
		{name: "last instant", at: 10*time.Minute - time.Nanosecond},
		{name: "at expiry", at: 10 * time.Minute, want: errStateExpired},
		{name: "a day later", at: 24 * time.Hour, want: errStateExpired},
		{name: "a clock too far behind", at: 10*time.Minute - maxStateTTL - maxStateClockSkew - time.Second, want: errStateFarExpiry},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := r.open(testBinding(), s, stateT0.Add(tt.at))
			if tt.want == nil {
				require.NoError(t, err)
				assert.Equal(t, "p", string(got))
				return
			}
			requireRefused(t, tt.want, got, err)
		})
	}
}

func TestRequestStateSealErrors(t *testing.T) {
	t.Parallel()
	r := mustRing(t, stateKey1)
	for _, tt := range []struct {
		name    string
		ring    *KeyRing
		caller  string
		payload int
		ttl     time.Duration
		want    string
	}{
		{name: "no caller id", ring: r, ttl: time.Minute, want: "needs a caller with a CallerID"},
		{name: "no ttl", ring: r, caller: "a", want: "outside [1s, 1h0m0s]"},
		{name: "under a second", ring: r, caller: "a", ttl: 999 * time.Millisecond, want: "outside"},
		{name: "negative ttl", ring: r, caller: "a", ttl: -time.Minute, want: "outside"},
		{name: "over an hour", ring: r, caller: "a", ttl: time.Hour + time.Second, want: "outside"},
		{name: "payload too large", ring: r, caller: "a", ttl: time.Minute, payload: maxStatePayload + 1, want: "over the"},
		{name: "zero ring", ring: &KeyRing{}, caller: "a", ttl: time.Minute, want: "no key"},
		{name: "nil ring", caller: "a", ttl: time.Minute, want: "no key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := testBinding()
			b.callerID = tt.caller
			s, err := tt.ring.seal(b, make([]byte, tt.payload), stateT0, tt.ttl)
			require.Error(t, err)
			assert.Empty(t, s)
			assert.Contains(t, err.Error(), tt.want)
			var se *stateError
			assert.False(t, errors.As(err, &se), "a seal error is the server's, not the client's")
		})
	}
	_, err := r.seal(&stateBinding{}, nil, stateT0, time.Minute)
	assert.ErrorIs(t, err, errStateNoCaller)
	_, err = r.seal(testBinding(), nil, stateT0, maxStateTTL)
	assert.NoError(t, err, "exactly the cap")
}

// TestRequestStateOpenNoRing: a ring without keys opens nothing.
func TestRequestStateOpenNoRing(t *testing.T) {
	t.Parallel()
	s := mustSeal(t, mustRing(t, stateKey1), testBinding(), []byte("p"))
	for name, r := range map[string]*KeyRing{"nil": nil, "zero": {}} {
		got, err := r.open(testBinding(), s, stateT0)
		requireRefused(t, errStateUnknownKey, got, err, name)
	}
}

// TestRequestStateAnonymous: a caller without a CallerID can open no state,
// not even one sealed (by a bug, or by an old version) for the empty id.
func TestRequestStateAnonymous(t *testing.T) {
	t.Parallel()
	r := mustRing(t, stateKey1)
	s := mustSeal(t, r, testBinding(), []byte("p"))
	b := testBinding()
	b.callerID = ""
	got, err := r.open(b, s, stateT0)
	requireRefused(t, errStateAnonymous, got, err)
}

// TestRequestStateReasons: a refusal says which check failed and nothing
// of the state, so it may go into an audit record.
func TestRequestStateReasons(t *testing.T) {
	t.Parallel()
	for _, e := range []*stateError{errStateTooLarge, errStateEncoding, errStateShort, errStateVersion,
		errStateUnknownKey, errStateAuth, errStateAnonymous, errStateFarExpiry, errStateExpired} {
		assert.True(t, strings.HasPrefix(e.Error(), "mcpmw: requestState refused: "), e.Error())
		assert.Equal(t, e == errStateExpired, strings.Contains(e.Error(), "expired"), "only the expired reason says so: %s", e.Error())
	}
}

// TestRequestStateConcurrent shares one ring between goroutines, as the
// instances' handlers do (run with -race).
func TestRequestStateConcurrent(t *testing.T) {
	t.Parallel()
	r := mustRing(t, stateKey2, stateKey1)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := testBinding()
			b.target = strings.Repeat("t", g)
			for i := range 50 {
				payload := bytes.Repeat([]byte{byte(i)}, i)
				s, err := r.seal(b, payload, stateT0, time.Minute)
				if !assert.NoError(t, err) {
					return
				}
				got, err := r.open(b, s, stateT0)
				if !assert.NoError(t, err) || !assert.Equal(t, payload, got) {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// roundBinding binds a round's state to everything the request acts on:
// changing any one of them (the caller, the endpoint it arrived at by
// name, path or requested path, the revision, the method, the target, the
// arguments) changes the binding, and only what means the same (the
// arguments' spacing) leaves it.
func TestRoundBindingNamesEverythingItActsOn(t *testing.T) {
	t.Parallel()
	base := func() (*Request, string) {
		return &Request{Method: "tools/call", Version: LatestVersion, Caller: idCaller{id: "alice"},
			Params:   []byte(`{"name":"book","arguments":{"to":"LIS"}}`),
			endpoint: endpointName{path: "/mcp", requested: "/mcp"}}, "book"
	}
	aad := func(req *Request, target string) string {
		b := roundBinding(req, target)
		return string(b.appendAAD(nil, make([]byte, stateHeaderLen)))
	}
	want := aad(base())
	for _, tt := range []struct {
		name   string
		change func(r *Request, target *string)
		same   bool
	}{
		{name: "caller", change: func(r *Request, _ *string) { r.Caller = idCaller{id: "mallory"} }},
		{name: "path", change: func(r *Request, _ *string) { r.endpoint.path = "/admin/mcp" }},
		{name: "requested path", change: func(r *Request, _ *string) { r.endpoint.requested = "/admin/mcp" }},
		{name: "endpoint name", change: func(r *Request, _ *string) { r.endpoint.name = "orders" }},
		{name: "revision", change: func(r *Request, _ *string) { r.Version = Version20251125 }},
		{name: "method", change: func(r *Request, _ *string) { r.Method = "prompts/get" }},
		{name: "target", change: func(_ *Request, target *string) { *target = "cancel" }},
		{name: "arguments", change: func(r *Request, _ *string) { r.Params = []byte(`{"name":"book","arguments":{"to":"LHR"}}`) }},
		{name: "no arguments", change: func(r *Request, _ *string) { r.Params = []byte(`{"name":"book"}`) }},
		{name: "spacing", same: true, change: func(r *Request, _ *string) { r.Params = []byte(`{"name":"book","arguments":{ "to" : "LIS" }}`) }},
	} {
		req, target := base()
		tt.change(req, &target)
		if tt.same {
			assert.Equal(t, want, aad(req, target), tt.name)
		} else {
			assert.NotEqual(t, want, aad(req, target), tt.name)
		}
	}
}

// aadLen, by which seal and open size their buffer once, is the length of
// the additional data with room for the longest length prefixes: never
// short (a second allocation, or a panic), and no more than the prefixes'
// unused room over.
func TestRequestStateAADLen(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300)
	header := make([]byte, stateHeaderLen)
	for _, b := range []*stateBinding{
		testBinding(),
		{callerID: "a"},
		{callerID: long, endpoint: endpointName{name: long, path: long, requested: long}, revision: long, method: long, target: long},
		{callerID: "a", endpoint: endpointName{requested: long}, target: strings.Repeat("é", 70000)},
	} {
		aad := b.appendAAD(nil, header)
		spare := b.aadLen() - len(aad)
		assert.GreaterOrEqual(t, spare, 0, "aadLen is never short")
		assert.LessOrEqual(t, spare, 7*(binary.MaxVarintLen64-1), "aadLen is at most the prefixes' room over")
	}
}
