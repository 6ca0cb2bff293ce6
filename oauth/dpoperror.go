package oauth

import (
	"net/http"

	"github.com/mcpmw/mcpmw"
)

// A DPoPError is why a DPoPVerifier refused a request. Its Error, like
// Reason, says it in full, for the audit record; Description says it in a
// few words safe to send to the client (error_description). It carries
// its challenge (Challenges) and status (HTTPStatus), so that an
// Authenticator may return it, or wrap it, as it is: mcpmw then answers
// with them.
type DPoPError struct {
	// Code is the error code of the challenge: "invalid_dpop_proof" for a
	// defect of the proof, "invalid_token" when the token is not bound to
	// the proof's key (RFC 9449 §7.1), "use_dpop_nonce" when the proof
	// lacks a valid server nonce (RFC 9449 §9); "" with Status 503, when
	// the replay cache cannot answer.
	Code string
	// Description is the error_description: a few words naming the check
	// that failed, nothing of the client's values.
	Description string
	// Reason is the full reason, with the values involved (clipped), for
	// the audit record only.
	Reason string
	// Nonce is, with use_dpop_nonce, the fresh nonce to send in the
	// DPoP-Nonce response header.
	Nonce string
	// Status is the HTTP status of the answer: 401, or 503 when the replay
	// cache cannot answer. The proof is then refused rather than accepted
	// unchecked (fail closed): the client may retry, and a 401 would tell
	// it its proof was wrong.
	Status int
	// Err is the replay cache's error, with Status 503: an error of
	// mcpredis's says Unavailable() true.
	Err error

	algs string // the verifier's, for the challenge
}

func (e *DPoPError) Error() string { return "oauth: DPoP proof refused: " + e.Reason }

// Unwrap returns Err.
func (e *DPoPError) Unwrap() error { return e.Err }

// HTTPStatus returns Status, which mcpmw answers with.
func (e *DPoPError) HTTPStatus() int { return e.Status }

// Challenges returns the DPoP challenge of the refusal (RFC 9449 §7.1),
// with the accepted algorithms as algs; none for a 503.
func (e *DPoPError) Challenges() []mcpmw.Challenge {
	if e.Code == "" {
		return nil
	}
	return []mcpmw.Challenge{{Scheme: "DPoP", Error: e.Code, Description: e.Description, Params: map[string]string{"algs": e.algs}}}
}

// invalidProof is the refusal of a defective proof.
func (v *DPoPVerifier) invalidProof(description, reason string) *DPoPError {
	return &DPoPError{Code: "invalid_dpop_proof", Description: description, Reason: reason, Status: http.StatusUnauthorized, algs: v.algsParam}
}

// invalidToken is the refusal of a good proof made with another key than
// the one the token is bound to.
func (v *DPoPVerifier) invalidToken(jkt, thumbprint string) *DPoPError {
	reason := "the access token is bound to key " + clip(jkt) + ", the proof is signed with key " + thumbprint
	if jkt == "" {
		reason = "the access token is bound to no key (no cnf.jkt), the proof is signed with key " + thumbprint
	}
	return &DPoPError{Code: "invalid_token", Description: "Invalid DPoP key binding", Reason: reason, Status: http.StatusUnauthorized, algs: v.algsParam}
}
