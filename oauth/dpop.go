package oauth

import (
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// DefaultDPoPAlgs are the JWS algorithms a DPoPVerifier accepts for
// proofs unless told otherwise: every registered asymmetric one that
// go-jose verifies, the list of the MCP DPoP conformance scenario's
// reference server. Never none, never an HMAC (RFC 9449 §11.6).
var DefaultDPoPAlgs = []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"}

// asymmetric is every algorithm DPoPOptions.Algs may name: a proof
// signed with a shared secret proves nothing about a key the client
// holds, so HMACs are not among them, nor is none.
var asymmetric = map[string]jose.SignatureAlgorithm{
	"ES256": jose.ES256, "ES384": jose.ES384, "ES512": jose.ES512,
	"RS256": jose.RS256, "RS384": jose.RS384, "RS512": jose.RS512,
	"PS256": jose.PS256, "PS384": jose.PS384, "PS512": jose.PS512,
	"EdDSA": jose.EdDSA,
}

// DPoPOptions configures a DPoPVerifier. The zero value (or nil) is valid:
// every asymmetric algorithm, the request's own URL, DPOPX's ±5 minutes,
// an in-memory replay cache and no server nonces.
type DPoPOptions struct {
	// Algs are the JWS algorithms accepted for proofs, and advertised as
	// algs in DPoP challenges. Default DefaultDPoPAlgs. A name that is not
	// an asymmetric algorithm (none, HS256, a typo) panics in
	// NewDPoPVerifier.
	Algs []string

	// BaseURL is the scheme and authority (and any path prefix a proxy
	// strips) by which clients reach this server, e.g.
	// "https://mcp.example.com": a proof's htu must be it followed by the
	// request's path. Set it behind a proxy or load balancer, where the
	// request as received names another host or scheme than the client
	// used. Empty: the request's own (https when it came over TLS, its
	// Host header), unless TrustForwarded.
	BaseURL string

	// TrustForwarded takes the scheme and host of the request URL from
	// X-Forwarded-Proto and X-Forwarded-Host (their last value, the one
	// the nearest proxy wrote) when BaseURL is empty. Set it only when a
	// proxy you run always sets both: a client can send them too.
	TrustForwarded bool

	// MaxAge is how long after its iat a proof is accepted. Default 5
	// minutes, DPOPX's window; shorter is allowed.
	MaxAge time.Duration

	// Leeway is how far in the future a proof's iat may be, for clients
	// whose clocks run ahead, and a server nonce's issue time, for
	// instances whose clocks do. Default 5 minutes, DPOPX's window.
	Leeway time.Duration

	// Replay remembers the proofs accepted, so that each is accepted once
	// (RFC 9449 §11.1). Nil: an in-memory cache of DefaultReplayEntries
	// proofs, which protects one instance only; give every instance the
	// same shared one (mcpredis.NewReplayCache) to refuse a proof replayed
	// against another instance.
	Replay ReplayCache

	// NonceKey turns on server nonces (RFC 9449 §9): every proof must
	// carry a nonce this server issued, at most NonceLifetime ago, or it
	// is refused with use_dpop_nonce and a fresh nonce to send in the
	// DPoP-Nonce header. A nonce is the time it was issued, sealed with
	// HMAC-SHA256 under this key, so that any instance given the same key
	// checks it with no shared state. At least 32 random bytes; nil: no
	// nonces.
	NonceKey []byte

	// NonceLifetime is how long a nonce is accepted after it is issued.
	// Default 5 minutes.
	NonceLifetime time.Duration

	// Now returns the current time. Nil: time.Now. For tests.
	Now func() time.Time
}

// DefaultDPoPWindow is the default of DPoPOptions.MaxAge, Leeway and
// NonceLifetime: DPOPX's ±5 minutes.
const DefaultDPoPWindow = 5 * time.Minute

// replayMargin is how much longer than its acceptance window a proof is
// remembered: another instance whose clock runs behind accepts it that
// much later.
const replayMargin = time.Minute

// maxProofBytes bounds a DPoP header value, so that a client cannot make
// the server decode and hash megabytes: an RSA-4096 proof is under 2 KiB.
const maxProofBytes = 8 << 10

// A DPoPVerifier checks DPoP proofs (RFC 9449) at the resource server, as
// AUTH.md §8.1 orders the checks: exactly one well-formed proof, its typ,
// an allowed asymmetric alg, a public jwk, the signature by that jwk, the
// required claims, htm, htu, iat, ath, the token's binding to the key
// (cnf.jkt), the server nonce when nonces are on, and last, that the proof
// was not accepted before. It does not verify the access token: that is
// the token verifier's job, done first, so that only holders of a valid
// token can spend entries of the replay cache.
//
// A DPoPVerifier is safe for concurrent use.
type DPoPVerifier struct {
	algs      []jose.SignatureAlgorithm
	algsParam string // Algs space-separated, for challenges
	base      string // BaseURL normalised, without a trailing '/'
	forwarded bool
	maxAge    time.Duration
	leeway    time.Duration
	replay    ReplayCache
	nonces    *nonces // nil: no nonces
	now       func() time.Time
}

// NewDPoPVerifier returns a verifier configured by opts (nil: defaults).
// It panics on a setup mistake, naming it: an algorithm that is not
// asymmetric, a BaseURL that is not an absolute http(s) URL, a negative
// duration, or a NonceKey shorter than 32 bytes.
func NewDPoPVerifier(opts *DPoPOptions) *DPoPVerifier {
	var o DPoPOptions
	if opts != nil {
		o = *opts
	}
	v := &DPoPVerifier{forwarded: o.TrustForwarded, maxAge: o.MaxAge, leeway: o.Leeway, replay: o.Replay, now: o.Now}
	names := o.Algs
	if len(names) == 0 {
		names = DefaultDPoPAlgs
	}
	for _, name := range names {
		alg, ok := asymmetric[name]
		if !ok {
			panic(fmt.Sprintf("oauth: NewDPoPVerifier: DPoPOptions.Algs names %q: want asymmetric JWS algorithms among %s", name, strings.Join(DefaultDPoPAlgs, " ")))
		}
		v.algs = append(v.algs, alg)
	}
	v.algsParam = strings.Join(names, " ")
	if o.BaseURL != "" {
		base, err := normalURL(o.BaseURL)
		if err != nil {
			panic(fmt.Sprintf("oauth: NewDPoPVerifier: DPoPOptions.BaseURL %q: %v", o.BaseURL, err))
		}
		v.base = strings.TrimSuffix(base, "/")
	}
	for name, d := range map[string]time.Duration{"MaxAge": o.MaxAge, "Leeway": o.Leeway, "NonceLifetime": o.NonceLifetime} {
		if d < 0 {
			panic(fmt.Sprintf("oauth: NewDPoPVerifier: DPoPOptions.%s is %v: want a positive duration, or 0 for the default", name, d))
		}
	}
	if v.maxAge == 0 {
		v.maxAge = DefaultDPoPWindow
	}
	if v.leeway == 0 {
		v.leeway = DefaultDPoPWindow
	}
	if v.now == nil {
		v.now = time.Now
	}
	if v.replay == nil {
		v.replay = NewMemoryReplayCache(DefaultReplayEntries)
	}
	if o.NonceKey != nil {
		v.nonces = newNonces(o.NonceKey, o.NonceLifetime, v.leeway)
	}
	return v
}

// Algs returns the accepted algorithms, space-separated: the value of the
// algs parameter of a DPoP challenge (RFC 9449 §7.1) and, split, of
// dpop_signing_alg_values_supported in the resource metadata.
func (v *DPoPVerifier) Algs() string { return v.algsParam }

// Nonce returns a fresh server nonce, for a DPoP-Nonce header on any
// response (RFC 9449 §8.2: clients use the newest), or "" when nonces are
// off.
func (v *DPoPVerifier) Nonce() string {
	if v.nonces == nil {
		return ""
	}
	return v.nonces.issue(v.now())
}

// proofHeader is what the checks read of a proof's JOSE header before
// go-jose parses it, so that each defect is named in its turn.
type proofHeader struct {
	Typ string          `json:"typ"`
	Alg string          `json:"alg"`
	JWK json.RawMessage `json:"jwk"`
}

// proofClaims are the proof's claims (RFC 9449 §4.2). iat is a pointer so
// that a missing one is told from 0.
type proofClaims struct {
	JTI   string   `json:"jti"`
	HTM   string   `json:"htm"`
	HTU   string   `json:"htu"`
	IAT   *float64 `json:"iat"`
	ATH   string   `json:"ath"`
	Nonce string   `json:"nonce"`
}

// privateMembers are the JWK members that carry a private or secret key
// (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2).
var privateMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// Check verifies the DPoP proof of r for the access token token, bound to
// the key whose RFC 7638 thumbprint is jkt (the token's cnf.jkt, from its
// claims or its introspection). It returns nil when the proof is good and
// was never accepted before, having recorded it; else a *DPoPError: 401
// invalid_dpop_proof for a defect of the proof, 401 invalid_token when the
// token is not bound to the proof's key (an empty jkt included: a token
// bound to no key is no DPoP token), 401 use_dpop_nonce when nonces are on
// and the proof has no valid one, or 503 when the replay cache cannot
// answer (the proof is refused: see DPoPError).
func (v *DPoPVerifier) Check(r *http.Request, token, jkt string) error {
	values := r.Header.Values("DPoP")
	switch {
	case len(values) == 0:
		return v.invalidProof("no DPoP proof", "the request has no DPoP header")
	case len(values) > 1:
		return v.invalidProof("more than one DPoP proof", fmt.Sprintf("the request has %d DPoP headers", len(values)))
	}
	proof := values[0]
	hdr, err := parseProofHeader(proof)
	if err != nil {
		return v.invalidProof("malformed DPoP proof", "the DPoP header is not one compact JWS: "+err.Error())
	}
	if !dpopType(hdr.Typ) {
		return v.invalidProof("wrong typ", fmt.Sprintf("the proof's typ is %q, not dpop+jwt", clip(hdr.Typ)))
	}
	if !v.allowed(hdr.Alg) {
		return v.invalidProof("unsupported alg", fmt.Sprintf("the proof's alg %q is not one of %s", clip(hdr.Alg), v.algsParam))
	}
	if len(hdr.JWK) == 0 || string(hdr.JWK) == "null" {
		return v.invalidProof("no jwk", "the proof's header has no jwk")
	}
	if m := privateMember(hdr.JWK); m != "" {
		return v.invalidProof("private key in jwk", "the proof's jwk carries the private member "+m)
	}
	payload, key, err := v.verifySignature(proof, hdr)
	if err != nil {
		return v.invalidProof("bad signature", "the proof's signature does not verify with its jwk: "+err.Error())
	}
	var claims proofClaims
	if err := json.Unmarshal(payload, &claims); err != nil {
		return v.invalidProof("malformed claims", "the proof's claims are not a JSON object of the right types: "+err.Error())
	}
	if missing := claims.missing(); missing != "" {
		return v.invalidProof("missing "+missing, "the proof has no "+missing+" claim")
	}
	if claims.HTM != r.Method {
		return v.invalidProof("htm does not match", fmt.Sprintf("the proof's htm %q is not the request's method %s", clip(claims.HTM), r.Method))
	}
	want, err := v.requestURL(r)
	if err != nil {
		return v.invalidProof("htu does not match", "the request's URL cannot be compared: "+err.Error())
	}
	if got, err := normalURL(claims.HTU); err != nil || got != want {
		return v.invalidProof("htu does not match", fmt.Sprintf("the proof's htu %q is not the request's URL %s", clip(claims.HTU), want))
	}
	now := v.now()
	iat, ok := unixTime(*claims.IAT)
	switch {
	case !ok:
		return v.invalidProof("bad iat", fmt.Sprintf("the proof's iat %v is no time", *claims.IAT))
	case iat.Before(now.Add(-v.maxAge)):
		return v.invalidProof("iat too old", fmt.Sprintf("the proof was issued %v ago, more than %v", now.Sub(iat).Round(time.Second), v.maxAge))
	case iat.After(now.Add(v.leeway)):
		return v.invalidProof("iat in the future", fmt.Sprintf("the proof was issued %v from now, more than %v", iat.Sub(now).Round(time.Second), v.leeway))
	}
	if claims.ATH != tokenHash(token) {
		return v.invalidProof("ath does not match", "the proof's ath is not the hash of the access token")
	}
	thumb, err := key.Thumbprint(crypto.SHA256)
	if err != nil {
		return v.invalidProof("bad jwk", "the proof's jwk has no thumbprint: "+err.Error())
	}
	if got := base64.RawURLEncoding.EncodeToString(thumb); jkt == "" || got != jkt {
		return v.invalidToken(jkt, got)
	}
	if v.nonces != nil {
		if why := v.nonces.check(claims.Nonce, now); why != "" {
			return &DPoPError{Code: "use_dpop_nonce", Description: "Resource server requires nonce in DPoP proof", Reason: why, Nonce: v.nonces.issue(now), Status: http.StatusUnauthorized, algs: v.algsParam}
		}
	}
	return v.spend(r, thumb, claims.JTI, iat.Add(v.maxAge).Sub(now)+replayMargin)
}

// verifySignature parses proof with go-jose, which takes only the
// allowed algorithms and a public jwk, checks that it read the header as
// parseProofHeader did (so that no two readings of one header differ),
// verifies the signature with the jwk and returns the payload.
func (v *DPoPVerifier) verifySignature(proof string, hdr proofHeader) ([]byte, *jose.JSONWebKey, error) {
	jws, err := jose.ParseSignedCompact(proof, v.algs)
	if err != nil {
		return nil, nil, err
	}
	h := jws.Signatures[0].Protected
	if h.Algorithm != hdr.Alg || h.ExtraHeaders["typ"] != hdr.Typ || h.JSONWebKey == nil || !h.JSONWebKey.Valid() || !h.JSONWebKey.IsPublic() {
		return nil, nil, errors.New("its header reads two ways")
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		return nil, nil, err
	}
	return payload, h.JSONWebKey, nil
}

// missing names the first required claim c lacks (RFC 9449 §4.2; ath
// because the proof goes with an access token), or "".
func (c *proofClaims) missing() string {
	switch {
	case c.JTI == "":
		return "jti"
	case c.HTM == "":
		return "htm"
	case c.HTU == "":
		return "htu"
	case c.IAT == nil:
		return "iat"
	case c.ATH == "":
		return "ath"
	}
	return ""
}

// spend records the proof, identified by its key's thumbprint and its jti,
// for ttl, and refuses it when it was recorded before. The key is the
// SHA-256 of both, so that two clients' jtis never collide, a client
// cannot spend another's (it would need the other's key), and every entry
// has one size whatever the jti's.
func (v *DPoPVerifier) spend(r *http.Request, thumb []byte, jti string, ttl time.Duration) error {
	h := sha256.New()
	h.Write(thumb)
	h.Write([]byte{0})
	h.Write([]byte(jti))
	key := base64.RawURLEncoding.EncodeToString(h.Sum(nil))
	first, err := v.replay.Once(r.Context(), key, ttl)
	switch {
	case err != nil:
		return &DPoPError{Description: "replay check unavailable", Reason: "the replay cache cannot tell whether the proof is new: " + err.Error(), Status: http.StatusServiceUnavailable, Err: err, algs: v.algsParam}
	case !first:
		return v.invalidProof("proof replayed", fmt.Sprintf("a proof with jti %q and this key was accepted before", clip(jti)))
	}
	return nil
}

func (v *DPoPVerifier) allowed(alg string) bool {
	for _, a := range v.algs {
		if string(a) == alg {
			return true
		}
	}
	return false
}

// parseProofHeader checks that proof is one compact JWS of bounded size
// and decodes its header.
func parseProofHeader(proof string) (proofHeader, error) {
	var h proofHeader
	if len(proof) > maxProofBytes {
		return h, fmt.Errorf("it is %d bytes, more than %d", len(proof), maxProofBytes)
	}
	head, rest, ok := strings.Cut(proof, ".")
	if !ok || strings.Count(rest, ".") != 1 {
		return h, errors.New("it is not three dot-separated parts")
	}
	// Go's base64 decoders skip CR and LF: refused, so that a proof is read
	// only in the form it was signed in.
	if strings.ContainsAny(proof, "\r\n") {
		return h, errors.New("it holds a line break")
	}
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return h, fmt.Errorf("its header is not base64url: %w", err)
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return h, fmt.Errorf("its header is not a JSON object: %w", err)
	}
	return h, nil
}

// dpopType reports whether typ names the media type application/dpop+jwt:
// a typ without a '/' has "application/" understood before it (RFC 7515
// §4.1.9), and media types compare case-blind (RFC 9110 §8.3.1).
func dpopType(typ string) bool {
	return strings.EqualFold(typ, "dpop+jwt") || strings.EqualFold(typ, "application/dpop+jwt")
}

// privateMember returns the first member of jwk that carries a private
// key, or "" when it has none (or is not an object, which go-jose refuses
// next).
func privateMember(jwk json.RawMessage) string {
	var members map[string]json.RawMessage
	if json.Unmarshal(jwk, &members) != nil {
		return ""
	}
	for _, m := range privateMembers {
		if _, ok := members[m]; ok {
			return m
		}
	}
	return ""
}

// tokenHash is the ath of token: base64url(SHA-256(token)) (RFC 9449
// §4.2).
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// unixTime is the time of a NumericDate, or false when it names none
// within the years a proof could (NaN, infinities, ±35,000 years).
func unixTime(sec float64) (time.Time, bool) {
	if math.IsNaN(sec) || math.Abs(sec) > 1<<40 {
		return time.Time{}, false
	}
	whole, frac := math.Modf(sec)
	return time.Unix(int64(whole), int64(frac*1e9)), true
}

// clip shortens a client's value for a reason, which goes to the audit
// record: enough to recognise it, never its whole size.
func clip(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}
