package oauth

import (
	"net/http"

	"github.com/mcpmw/mcpmw"
)

// An Error is an Authenticator's refusal of a request. The handler answers
// it with Status and the challenges it carries (see mcpmw.Challenge); its
// text, the Reason, goes to the audit record only. Tests and middleware
// read it with errors.As.
type Error struct {
	// Status is the HTTP status: 401 for missing or refused credentials,
	// 400 for a malformed request, 503 when the issuer could not be asked.
	Status int
	// Code is the challenge's error (RFC 6750 §3.1, RFC 9449 §7.1):
	// invalid_request, invalid_token or invalid_dpop_proof; empty for a
	// request that sent no credentials, which RFC 6750 §3.1 says gets no
	// error information.
	Code string
	// Description is the challenge's error_description: a few words the
	// client's developer can act on ("The access token expired"). It is
	// sent, so it never holds the token, a key or the issuer's answer.
	Description string
	// Reason is the whole story, for the audit record.
	Reason string
	// Scheme is the challenge's scheme: "Bearer" or "DPoP".
	Scheme string

	params map[string]string // the challenge's other auth-params: DPoP's algs
	more   []mcpmw.Challenge // further challenges, e.g. DPoP's beside Bearer's
}

// Error is the reason, for the audit record.
func (e *Error) Error() string { return "oauth: " + e.Reason }

// HTTPStatus is e.Status (see mcpmw.Authenticator).
func (e *Error) HTTPStatus() int { return e.Status }

// Challenges are the WWW-Authenticate challenges of the answer; none for
// a 5xx, which is the server's trouble and no request for credentials.
func (e *Error) Challenges() []mcpmw.Challenge {
	if e.Status >= 500 {
		return nil
	}
	return append([]mcpmw.Challenge{{Scheme: e.Scheme, Error: e.Code, Description: e.Description, Params: e.params}}, e.more...)
}

// Unwrap makes a refused token mcpmw.ErrInvalidToken and missing
// credentials mcpmw.ErrUnauthorized, for errors.Is.
func (e *Error) Unwrap() error {
	switch {
	case e.Status >= 500:
		return nil
	case e.Code == "":
		return mcpmw.ErrUnauthorized
	case e.Code == "invalid_request":
		return nil
	}
	return mcpmw.ErrInvalidToken
}

// The descriptions sent with refused tokens: a few safe words each.
const (
	descMalformed   = "The access token is malformed"
	descAlgorithm   = "The access token is malformed or signed with an algorithm not accepted"
	descType        = "The access token's typ is not accepted"
	descUnknownKey  = "The access token is signed with an unknown key"
	descSignature   = "The access token's signature is invalid"
	descIssuer      = "The access token is from another issuer"
	descAudience    = "The access token is not for this resource"
	descExpired     = "The access token expired"
	descNotYetValid = "The access token is not yet valid"
	descClaims      = "The access token lacks a required claim"
	descInactive    = "The access token is not active"
	descOpaque      = "The access token is not a JWT and cannot be introspected here"
	descBound       = "The access token is DPoP-bound: present it with a DPoP proof"
	descDPoPOnly    = "This resource takes DPoP-bound access tokens only"
)

// nonceError is a DPoPVerifier's use_dpop_nonce refusal, with the fresh
// nonce in the DPoP-Nonce header that mcpmw sends beside its challenge
// (RFC 9449 §9).
type nonceError struct{ *DPoPError }

// Unwrap is the DPoPError, for errors.As.
func (e *nonceError) Unwrap() error { return e.DPoPError }

// ChallengeHeader is the DPoP-Nonce field (see mcpmw.Authenticator).
func (e *nonceError) ChallengeHeader() http.Header {
	return http.Header{"Dpop-Nonce": {e.Nonce}}
}

// refused is a token refused: 401 invalid_token.
func refused(desc, reason string) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Description: desc, Reason: reason, Scheme: "Bearer"}
}

// malformed is a request refused before its token is read: 400
// invalid_request.
func malformed(desc, reason string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "invalid_request", Description: desc, Reason: reason, Scheme: "Bearer"}
}

// unavailable is the issuer out of reach: 503, the token neither accepted
// nor refused.
func unavailable(reason string) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Reason: reason, Scheme: "Bearer"}
}
