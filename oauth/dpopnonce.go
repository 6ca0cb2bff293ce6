package oauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"time"
)

// nonces issues and checks stateless server nonces (RFC 9449 §9): a nonce
// is the second it was issued, sealed with HMAC-SHA256 under the key every
// instance shares, so that any instance checks one any other issued with
// nothing shared but the key. It needs no secrecy, only integrity, so it
// is signed rather than encrypted: a client learns the time it got it.
// base64url(8 bytes of Unix seconds, big-endian, then the first 16 bytes of
// the MAC), 32 characters, all NQCHAR (RFC 9449 §8.1).
type nonces struct {
	key      []byte
	lifetime time.Duration
	skew     time.Duration // how far ahead of this instance's clock another's may be
}

const (
	minNonceKey = 32
	nonceMAC    = 16
	nonceLen    = 8 + nonceMAC
)

func newNonces(key []byte, lifetime, skew time.Duration) *nonces {
	if len(key) < minNonceKey {
		panic(fmt.Sprintf("oauth: NewDPoPVerifier: DPoPOptions.NonceKey is %d bytes: want at least %d random bytes", len(key), minNonceKey))
	}
	if lifetime == 0 {
		lifetime = DefaultDPoPWindow
	}
	return &nonces{key: append([]byte(nil), key...), lifetime: lifetime, skew: skew}
}

// issue returns the nonce of now.
func (n *nonces) issue(now time.Time) string {
	var b [nonceLen]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.Unix()))
	copy(b[8:], n.mac(b[:8]))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (n *nonces) mac(stamp []byte) []byte {
	m := hmac.New(sha256.New, n.key)
	m.Write(stamp)
	return m.Sum(nil)[:nonceMAC]
}

// check returns why nonce is not one this server issued within its
// lifetime before now, or "" when it is.
func (n *nonces) check(nonce string, now time.Time) string {
	if nonce == "" {
		return "the proof has no nonce, and this server requires one"
	}
	// Only the form this server issues: Go's base64 skips CR and LF.
	b, err := base64.RawURLEncoding.Strict().DecodeString(nonce)
	if err != nil || len(nonce) != base64.RawURLEncoding.EncodedLen(nonceLen) || len(b) != nonceLen || !hmac.Equal(b[8:], n.mac(b[:8])) {
		return fmt.Sprintf("the proof's nonce %q is not one this server issued", clip(nonce))
	}
	issued := time.Unix(int64(binary.BigEndian.Uint64(b[:8])), 0)
	switch {
	case issued.Before(now.Add(-n.lifetime)):
		return fmt.Sprintf("the proof's nonce was issued %v ago, more than %v", now.Sub(issued).Round(time.Second), n.lifetime)
	case issued.After(now.Add(n.skew)):
		return fmt.Sprintf("the proof's nonce was issued %v from now", issued.Sub(now).Round(time.Second))
	}
	return ""
}
