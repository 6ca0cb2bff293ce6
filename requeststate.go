package mcpmw

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// On 2026-07-28 a tool (or prompt, or resource read) may answer
// input_required: "ask the user this, then call me again", with an opaque
// requestState that the client echoes on its retry. The server keeps
// nothing between the two requests, and the retry may reach another
// instance, so everything the handler needs to resume travels in the state,
// sealed here.
//
// The threat model: the client holds the state. It may read it, change it,
// replay it, or hand it to someone else. So the state is encrypted and
// authenticated with AES-256-GCM (the client can neither read nor alter it)
// and bound, through the AEAD's additional data, to what it is valid for:
// the caller's identity, the endpoint, the revision, the JSON-RPC method,
// the target and a digest of the arguments. It carries an expiry in its
// authenticated header. What the seal cannot stop is replay by the same
// caller of the same request before the expiry: a stateless server keeps
// no list of used states, so a handler must treat a state as "the server
// said this, for this request, recently", never as "this has not happened
// yet".
//
// Every instance of a horizontally scaled service seals and opens with the
// same KeyRing; nothing in a state, a refusal or a log line ever contains a
// key, and no refusal reason contains the payload.

// requestStateVersion is the first byte of every sealed state; a new layout
// gets a new number, and open refuses the ones it does not know.
const requestStateVersion = 1

// The layout of a sealed state, before base64url (no padding):
//
//	offset  size  field
//	0       1     version (1)
//	1       4     key id: which key of the ring sealed it
//	5       8     expiry, unix seconds, big-endian
//	13      12    nonce, random per seal
//	25      n     ciphertext of the n-byte payload
//	25+n    16    GCM tag
//
// Bytes 0–12 (the header) are authenticated as additional data along with
// the binding; the nonce is authenticated by GCM itself.
const (
	stateKeyIDLen    = 4
	stateHeaderLen   = 1 + stateKeyIDLen + 8
	stateNonceLen    = 12
	stateTagLen      = 16
	stateOverhead    = stateHeaderLen + stateNonceLen + stateTagLen
	stateKeyLen      = 32
	stateDigestLen   = sha256.Size
	stateKeyInfo     = "mcpmw requestState v1 AES-256-GCM key"
	stateKeyIDInfo   = "mcpmw requestState v1 key id"
	stateKeyHexChars = 2 * stateKeyLen
)

// maxSealedState caps a sealed state, as the base64url string that travels
// in JSON: 16 KiB. The state rides in every retry through the client, its
// logs and its model host, so it is for small things (which round this is,
// the answers so far, an id), not documents: bigger data belongs in the
// application's store with a handle in the state. The cap is checked before
// any decoding or crypto work, so a client cannot make an instance decrypt
// more than this per request.
const maxSealedState = 16 << 10

// maxStatePayload is the largest payload whose sealed state fits
// maxSealedState.
const maxStatePayload = maxSealedState/4*3 - stateOverhead

// maxStateTTL caps how long a state stays valid: long enough for a person
// to answer an elicitation (find a code, think), short because the state can
// be replayed by its caller until it expires.
const maxStateTTL = time.Hour

// maxStateClockSkew is how far ahead of this instance's clock, beyond
// maxStateTTL, an opened state's expiry may lie: another instance's clock may
// run a little fast. A state whose expiry lies further ahead was sealed under
// other rules and is refused.
const maxStateClockSkew = 5 * time.Minute

// stateEncoding is base64url without padding, strict: exactly one string
// encodes a given blob (open also refuses the CR and LF the decoder would
// skip), so "byte for byte" is what the client must echo.
var stateEncoding = base64.RawURLEncoding.Strict()

// A KeyRing holds the keys that seal and open request state. The first key
// seals; every key opens. To rotate, put the new key first and keep the old
// ones until the state they sealed has expired (an hour at most); every
// instance of a service must hold the same ring, or a retry that reaches
// another instance is refused.
//
// A KeyRing keeps no raw key: it keeps, per key, an AES-256-GCM cipher built
// once from a subkey derived with HKDF-SHA-256 (so a key the application
// also uses for something else is never used as is here), and a 4-byte key
// id derived the same way, which a sealed state names so that opening tries
// one key, not all. Printing a KeyRing shows the key ids only.
//
// A KeyRing is safe for concurrent use. The zero value holds no key: it
// seals nothing and opens nothing.
//
// GCM's nonces are random (96 bits), so one key should seal well under 2³²
// states (NIST SP 800-38D); at a sustained thousand input_required answers
// a second that is about fifty days, so rotate keys more often than that.
type KeyRing struct {
	keys []ringKey
}

type ringKey struct {
	id   [stateKeyIDLen]byte
	aead cipher.AEAD
}

// NewKeyRing returns a KeyRing holding keys, each exactly 32 bytes, the first
// sealing. It reports an error, naming the key by position, for no key, a
// key of another length, or a key listed twice. The keys are not retained.
func NewKeyRing(keys ...[]byte) (*KeyRing, error) {
	if len(keys) == 0 {
		return nil, errors.New("mcpmw: a KeyRing needs at least one key")
	}
	r := &KeyRing{keys: make([]ringKey, len(keys))}
	for i, k := range keys {
		if len(k) != stateKeyLen {
			return nil, fmt.Errorf("mcpmw: KeyRing key %d of %d is %d bytes, want %d", i+1, len(keys), len(k), stateKeyLen)
		}
		rk, err := newRingKey(k)
		if err != nil {
			return nil, fmt.Errorf("mcpmw: KeyRing key %d of %d: %w", i+1, len(keys), err)
		}
		for j := range i {
			if r.keys[j].id == rk.id {
				// Equal keys, or (once in 2³² pairs) distinct keys with
				// one id: either way a state could not say which opens it.
				return nil, fmt.Errorf("mcpmw: KeyRing key %d of %d has the key id of key %d (the same key twice?)", i+1, len(keys), j+1)
			}
		}
		r.keys[i] = rk
	}
	return r, nil
}

func newRingKey(k []byte) (ringKey, error) {
	var rk ringKey
	sub, err := hkdf.Key(sha256.New, k, nil, stateKeyInfo, stateKeyLen)
	if err != nil {
		return rk, err
	}
	id, err := hkdf.Key(sha256.New, k, nil, stateKeyIDInfo, stateKeyIDLen)
	if err != nil {
		return rk, err
	}
	block, err := aes.NewCipher(sub)
	clear(sub)
	if err != nil {
		return rk, err
	}
	// The standard library's AES-GCM keeps no state between calls, so one
	// AEAD serves every goroutine (golang/go#41689).
	rk.aead, err = cipher.NewGCM(block)
	copy(rk.id[:], id)
	return rk, err
}

// ParseKeyRing parses a KeyRing from a configuration value such as an
// environment variable: keys of 64 hexadecimal digits (32 bytes) separated
// by commas, the first sealing, spaces around each ignored. A key can be
// made with
//
//	openssl rand -hex 32
//
// Its errors name the bad key by position and never quote the value.
func ParseKeyRing(s string) (*KeyRing, error) {
	parts := strings.Split(s, ",")
	keys := make([][]byte, len(parts))
	for i, p := range parts {
		p = strings.Trim(p, " \t\r\n")
		at := "key " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(parts))
		switch {
		case p == "":
			return nil, errors.New("mcpmw: KeyRing " + at + " is empty")
		case len(p) != stateKeyHexChars:
			return nil, fmt.Errorf("mcpmw: KeyRing %s is %d characters, want %d hexadecimal digits", at, len(p), stateKeyHexChars)
		}
		k, err := hex.DecodeString(p)
		if err != nil {
			// hex's own error quotes the offending character: a piece
			// of the key. Say only where it is.
			var bad hex.InvalidByteError
			if errors.As(err, &bad) {
				return nil, fmt.Errorf("mcpmw: KeyRing %s is not hexadecimal (character %d)", at, strings.IndexByte(p, byte(bad))+1)
			}
			return nil, errors.New("mcpmw: KeyRing " + at + " is not hexadecimal")
		}
		keys[i] = k
	}
	r, err := NewKeyRing(keys...)
	for _, k := range keys {
		clear(k)
	}
	return r, err
}

// RandomKeyRing returns a KeyRing holding one random key: for a single
// process, or when no key is configured. State it seals opens only in this
// process, and only until it exits.
func RandomKeyRing() *KeyRing {
	k := make([]byte, stateKeyLen)
	rand.Read(k) // never fails (Go 1.24): it crashes the program rather than return weak bytes
	r, err := NewKeyRing(k)
	clear(k)
	if err != nil {
		panic("mcpmw: RandomKeyRing: " + err.Error()) // unreachable: the key is 32 bytes
	}
	return r
}

// String returns the ring's key ids in hexadecimal, sealing key first, so
// that operators can tell which key seals; never key material.
func (r *KeyRing) String() string {
	var b strings.Builder
	b.WriteString("mcpmw.KeyRing{")
	if r != nil {
		for i, k := range r.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(hex.EncodeToString(k.id[:]))
		}
	}
	b.WriteString("}")
	return b.String()
}

// GoString is String, so that %#v shows no more than %v.
func (r *KeyRing) GoString() string { return r.String() }

// key returns the ring's key with this id, or nil.
func (r *KeyRing) key(id []byte) *ringKey {
	for i := range r.keys {
		if string(r.keys[i].id[:]) == string(id) {
			return &r.keys[i]
		}
	}
	return nil
}

// A stateBinding is what a sealed state is valid for: opening it under any
// other binding fails as if it had been tampered with.
type stateBinding struct {
	// callerID is the caller's CallerID (callerID(req.Caller)). It must
	// not be empty: see errStateNoCaller.
	callerID string
	// endpoint tells apart the endpoints of one application that share a
	// key ring (say, /mcp and /admin/mcp), so that state minted by one is
	// not accepted by another that happens to have a target of the same
	// name.
	endpoint endpointName
	// revision is the protocol revision the state was sealed on: what a
	// round's answers mean is the revision's.
	revision string
	// method is the JSON-RPC method: tools/call, prompts/get,
	// resources/read.
	method string
	// target is the tool or prompt name, or the resource URI.
	target string
	// args is argsDigest of the request's arguments.
	args [stateDigestLen]byte
}

// An endpointName is where a request arrived, as the state it resumes is
// bound to it: Options.Endpoint when set; otherwise the URL path the
// handler sees together with the path the client requested (the
// request-target before any '?'). Both are the same on every instance of a
// service; keeping both tells apart two endpoints of one process even
// when an in-process rewrite (http.StripPrefix) shows them one path. Each
// field is authenticated on its own, so a name never reads as a path.
type endpointName struct {
	name      string // Options.Endpoint
	path      string // r.URL.Path
	requested string // r.RequestURI up to '?'
}

// key is the endpoint as one string, for what is bound to it outside a
// sealed state (Task.Endpoint): Options.Endpoint when set, else the URL
// path, followed by the requested path when that differs (it cannot hold
// a space: a request line's target has none).
func (e endpointName) key() string {
	switch {
	case e.name != "":
		return e.name
	case e.requested != e.path:
		return e.path + " " + e.requested
	}
	return e.path
}

// argsDigest returns the digest of a request's arguments that a binding
// holds: SHA-256 of the bytes as given. A client that re-encodes the
// arguments on its retry (other spacing or member order) gets its state
// refused, so the caller may pass a canonical form instead; what matters is
// that sealing and opening pass the same one.
func argsDigest(raw []byte) [stateDigestLen]byte { return sha256.Sum256(raw) }

// aadLen is the length of the additional data for b.
func (b *stateBinding) aadLen() int {
	e := &b.endpoint
	return stateHeaderLen + 7*binary.MaxVarintLen64 + len(b.callerID) + len(e.name) + len(e.path) + len(e.requested) +
		len(b.revision) + len(b.method) + len(b.target) + stateDigestLen
}

// appendAAD appends the additional data authenticated with a state: its
// header, then each field of b prefixed by its length, so that no two
// bindings share an encoding ("ab"+"c" is not "a"+"bc").
func (b *stateBinding) appendAAD(dst, header []byte) []byte {
	dst = append(dst, header...)
	e := &b.endpoint
	for _, s := range [...]string{b.callerID, e.name, e.path, e.requested, b.revision, b.method, b.target} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return append(dst, b.args[:]...)
}

// errStateNoCaller is seal's answer for a caller without a CallerID. State
// bound to "" would be valid for every caller without one, and on an
// endpoint whose Caller has no CallerID that is every caller: state minted
// for one user could be resumed by any other who got hold of it, with the
// first user's answers in it. So such a caller cannot be sent
// input_required at all; the application gives its Caller a CallerID.
var errStateNoCaller = errors.New("mcpmw: requestState needs a caller with a CallerID (the Caller has none, or an empty one)")

// seal returns payload sealed for binding b, valid for ttl from now
// (a second to maxStateTTL; the expiry is kept in whole seconds), as the base64url string to send as
// requestState. Its errors are the server's own mistakes (a payload over
// maxStatePayload, a ttl out of range, a caller without an id, an empty
// ring), never the client's.
func (r *KeyRing) seal(b *stateBinding, payload []byte, now time.Time, ttl time.Duration) (string, error) {
	return r.sealNonce(b, payload, now, ttl, nil)
}

// sealNonce is seal with the nonce given, for tests that need the same
// state in every process (a fuzzer's workers); nil means a random one, as
// it must be for anything sent.
func (r *KeyRing) sealNonce(b *stateBinding, payload []byte, now time.Time, ttl time.Duration, nonce []byte) (string, error) {
	switch {
	case r == nil || len(r.keys) == 0:
		return "", errors.New("mcpmw: requestState: the KeyRing has no key")
	case b.callerID == "":
		return "", errStateNoCaller
	case ttl < time.Second || ttl > maxStateTTL:
		return "", fmt.Errorf("mcpmw: requestState lifetime %v is outside [1s, %v]", ttl, maxStateTTL)
	case len(payload) > maxStatePayload:
		return "", fmt.Errorf("mcpmw: requestState payload is %d bytes, over the %d that fit %d sealed", len(payload), maxStatePayload, maxSealedState)
	}
	k := &r.keys[0]
	// One buffer: the blob, then the additional data beyond it.
	n := stateOverhead + len(payload)
	buf := make([]byte, n, n+b.aadLen())
	buf[0] = requestStateVersion
	copy(buf[1:], k.id[:])
	binary.BigEndian.PutUint64(buf[1+stateKeyIDLen:], uint64(now.Add(ttl).Unix()))
	if nonce == nil {
		rand.Read(buf[stateHeaderLen : stateHeaderLen+stateNonceLen]) // never fails (Go 1.24)
	} else {
		copy(buf[stateHeaderLen:stateHeaderLen+stateNonceLen], nonce)
	}
	nonce = buf[stateHeaderLen : stateHeaderLen+stateNonceLen]
	aad := b.appendAAD(buf[n:], buf[:stateHeaderLen])
	body := buf[stateHeaderLen+stateNonceLen : stateHeaderLen+stateNonceLen : n]
	k.aead.Seal(body, nonce, payload, aad)
	return stateEncoding.EncodeToString(buf), nil
}

// A stateError is why open refused a requestState. The client sent it, so
// every stateError maps to one JSON-RPC error, -32602, never a result; the
// reason is for the audit record and says only which check failed, never
// any of the state's content or key material. Only the reason tells a
// genuine state past its expiry (errStateExpired) from an invalid one.
type stateError struct {
	reason string
}

func (e *stateError) Error() string { return "mcpmw: requestState refused: " + e.reason }

var (
	errStateTooLarge   = &stateError{reason: "over " + strconv.Itoa(maxSealedState) + " characters"}
	errStateEncoding   = &stateError{reason: "not base64url"}
	errStateShort      = &stateError{reason: "too short to be sealed state"}
	errStateVersion    = &stateError{reason: "unknown version"}
	errStateUnknownKey = &stateError{reason: "sealed with a key this server does not have"}
	errStateAuth       = &stateError{reason: "integrity check failed: altered, or sealed for another caller, endpoint, revision, method, target or arguments"}
	errStateAnonymous  = &stateError{reason: "the caller has no CallerID, so no state can be its own"}
	errStateFarExpiry  = &stateError{reason: "expiry further ahead than this server allows"}
	errStateExpired    = &stateError{reason: "expired"}
)

// open returns the payload of state if it was sealed by a key of r for
// binding b and has not expired at now; otherwise a *stateError. The
// payload aliases a buffer of open's own.
//
// The size is checked before any decoding, and the expiry only after the
// tag: an altered header is "integrity check failed", never "expired".
func (r *KeyRing) open(b *stateBinding, state string, now time.Time) ([]byte, error) {
	if len(state) > maxSealedState {
		return nil, errStateTooLarge
	}
	if b.callerID == "" {
		return nil, errStateAnonymous
	}
	n := stateEncoding.DecodedLen(len(state))
	if n < stateOverhead {
		return nil, errStateShort
	}
	buf := make([]byte, n, n+b.aadLen())
	m, err := stateEncoding.Decode(buf, []byte(state))
	if err != nil || stateEncoding.EncodedLen(m) != len(state) {
		return nil, errStateEncoding // the second test catches skipped CR and LF
	}
	blob := buf[:m]
	if m < stateOverhead {
		return nil, errStateShort
	}
	if blob[0] != requestStateVersion {
		return nil, errStateVersion
	}
	var k *ringKey
	if r != nil {
		k = r.key(blob[1 : 1+stateKeyIDLen])
	}
	if k == nil {
		return nil, errStateUnknownKey
	}
	aad := b.appendAAD(buf[m:], blob[:stateHeaderLen])
	nonce := blob[stateHeaderLen : stateHeaderLen+stateNonceLen]
	sealed := blob[stateHeaderLen+stateNonceLen:]
	payload, err := k.aead.Open(sealed[:0], nonce, sealed, aad)
	if err != nil {
		return nil, errStateAuth
	}
	exp := int64(binary.BigEndian.Uint64(blob[1+stateKeyIDLen:]))
	switch sec := now.Unix(); {
	case sec >= exp:
		return nil, errStateExpired
	case exp-sec > int64((maxStateTTL+maxStateClockSkew)/time.Second):
		return nil, errStateFarExpiry
	}
	return payload, nil
}
