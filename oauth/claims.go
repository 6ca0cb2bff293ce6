package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// claims are the members of a JWT access token's payload (RFC 9068 §2.2)
// or of an introspection answer (RFC 7662 §2.2) that are checked or kept.
type claims struct {
	Active    *bool        `json:"active"`
	Issuer    string       `json:"iss"`
	Subject   string       `json:"sub"`
	Audience  audience     `json:"aud"`
	Expiry    *numericDate `json:"exp"`
	NotBefore *numericDate `json:"nbf"`
	IssuedAt  *numericDate `json:"iat"`
	Scope     string       `json:"scope"`
	ClientID  string       `json:"client_id"`
	JTI       string       `json:"jti"`
	TokenType string       `json:"token_type"`
	Cnf       *struct {
		JKT string `json:"jkt"`
	} `json:"cnf"`
}

// audience is aud: one string or an array of them (RFC 7519 §4.1.3).
type audience []string

func (a *audience) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*a = audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(data, &many); err != nil {
		return errors.New("aud is neither a string nor an array of strings")
	}
	*a = many
	return nil
}

// numericDate is a NumericDate (RFC 7519 §2): seconds since the epoch,
// possibly with a fraction.
type numericDate struct{ time.Time }

func (d *numericDate) UnmarshalJSON(data []byte) error {
	var f float64
	if err := json.Unmarshal(data, &f); err != nil || math.IsNaN(f) || f < 0 || f > 1<<40 {
		return fmt.Errorf("%s is no NumericDate", data)
	}
	sec, frac := math.Modf(f)
	d.Time = time.Unix(int64(sec), int64(frac*1e9))
	return nil
}

// check applies the checks every token gets, JWT or introspected: iss,
// aud, exp, nbf, iat. It returns the refusal, or nil.
func (c *claims) check(s *settings, now time.Time, introspected bool) *Error {
	switch {
	case c.Issuer != s.issuer && !(introspected && c.Issuer == ""):
		return refused(descIssuer, fmt.Sprintf("iss %q, want %q", c.Issuer, s.issuer))
	case !c.forUs(s.audiences):
		return refused(descAudience, fmt.Sprintf("aud %q does not contain %q", []string(c.Audience), s.audiences[0]))
	case c.Expiry == nil && !introspected:
		return refused(descClaims, "no exp")
	case c.Expiry != nil && !now.Before(c.Expiry.Add(s.leeway)):
		return refused(descExpired, fmt.Sprintf("exp %s, now %s", c.Expiry.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)))
	case c.NotBefore != nil && now.Add(s.leeway).Before(c.NotBefore.Time):
		return refused(descNotYetValid, fmt.Sprintf("nbf %s, now %s", c.NotBefore.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)))
	case c.IssuedAt != nil && now.Add(s.leeway).Before(c.IssuedAt.Time):
		return refused(descNotYetValid, fmt.Sprintf("iat %s is in the future, now %s", c.IssuedAt.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)))
	}
	return nil
}

// forUs reports whether aud names this resource.
func (c *claims) forUs(ours []string) bool {
	for _, a := range c.Audience {
		if slices.Contains(ours, normalAudience(a)) {
			return true
		}
	}
	return false
}

// missing is the first of the claims a JWT must have that it lacks, or "".
func (c *claims) missing(required []string) string {
	if c.Subject == "" {
		return "sub"
	}
	for _, r := range required {
		switch {
		case r == "client_id" && c.ClientID == "",
			r == "jti" && c.JTI == "",
			r == "iat" && c.IssuedAt == nil,
			r == "nbf" && c.NotBefore == nil,
			r == "scope" && c.Scope == "":
			return r
		}
	}
	return ""
}

// token is the Token these claims describe.
func (c *claims) token(p *scopePolicy, issuer string) *Token {
	t := &Token{Issuer: c.Issuer, Subject: c.Subject, ClientID: c.ClientID, Scopes: splitScope(c.Scope), policy: p}
	if t.Issuer == "" {
		t.Issuer = issuer
	}
	if c.Expiry != nil {
		t.Expiry = c.Expiry.Time
	}
	if c.Cnf != nil {
		t.JKT = c.Cnf.JKT
	}
	t.grants = p.grants(t.Scopes)
	return t
}
