package oauth

import (
	"log/slog"
	"strings"
	"time"

	"github.com/mcpmw/mcpmw"
)

// A Token is a verified access token: the mcpmw.Caller an Authenticator
// returns. Its fields are what the token says; a tool reads them after
// narrowing its caller, tok, ok := c.(*oauth.Token). A Token is shared by
// every request that presents the same token while it is cached, so it
// must not be changed.
type Token struct {
	// Issuer and Subject are the token's iss and sub. For a token from
	// the client-credentials grant, Subject is usually the client (RFC
	// 9068 §2.2).
	Issuer, Subject string
	// ClientID is the client_id claim, when the token has one.
	ClientID string
	// Scopes are the scope claim's scopes, as the token lists them.
	Scopes []string
	// Expiry is the token's exp.
	Expiry time.Time
	// JKT is the cnf.jkt claim of a DPoP-bound token (RFC 9449 §6): the
	// SHA-256 thumbprint of the key its proofs must be signed with.
	JKT string

	scheme string // "Bearer" or "DPoP": how it was presented
	grants map[string]struct{}
	policy *scopePolicy
}

// Can reports whether the token grants permission p: every scope p needs
// (its own name, or Config.Permissions'), held or implied (Config.Implies).
func (t *Token) Can(p mcpmw.Permission) bool {
	for _, s := range t.policy.needed(p) {
		if _, ok := t.grants[s]; !ok {
			return false
		}
	}
	return true
}

// ScopesFor is every scope a token needs to be granted p, for the 403
// that denies it (see mcpmw.Caller).
func (t *Token) ScopesFor(p mcpmw.Permission) []string { return t.policy.needed(p) }

// CallerID is the issuer and the subject together: the same for every
// token of one subject, and never one of another issuer's subjects (the
// issuer, a URL, holds no space).
func (t *Token) CallerID() string { return t.Issuer + " " + t.Subject }

// String is the subject.
func (t *Token) String() string { return t.Subject }

// TokenScheme is the scheme the token was presented with: "Bearer", or
// "DPoP" (see mcpmw.Caller).
func (t *Token) TokenScheme() string {
	if t.scheme == "" {
		return "Bearer"
	}
	return t.scheme
}

// LogValue is how a Token appears in audit records and logs: who, for
// which client, with which scopes; never the token itself.
func (t *Token) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("iss", t.Issuer), slog.String("sub", t.Subject)}
	if t.ClientID != "" {
		attrs = append(attrs, slog.String("client_id", t.ClientID))
	}
	attrs = append(attrs, slog.String("scope", strings.Join(t.Scopes, " ")))
	if t.JKT != "" {
		attrs = append(attrs, slog.String("jkt", t.JKT))
	}
	return slog.GroupValue(attrs...)
}
