package mcpmwtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpmw/mcpmw"
)

// Tokens is an mcpmw.Authenticator for tests: it maps bearer tokens to
// callers. A request without a known token fails with
// mcpmw.ErrUnauthorized (401).
//
//	authn := mcpmwtest.Tokens{"reader-token": &mcpmwtest.User{Name: "reader", Permissions: []mcpmw.Permission{"read"}}}
type Tokens map[string]mcpmw.Caller

// Authenticate returns the caller of the request's bearer token.
func (t Tokens) Authenticate(r *http.Request) (mcpmw.Caller, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if c := t[token]; ok && c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("mcpmwtest: no such bearer token: %w", mcpmw.ErrUnauthorized)
}

// A User is a Caller for tests: a name and the permissions it holds. Its
// name is its CallerID and how audit records show it.
type User struct {
	Name        string
	Permissions []mcpmw.Permission
}

// Can reports whether u holds p.
func (u *User) Can(p mcpmw.Permission) bool { return slices.Contains(u.Permissions, p) }

// String returns u's name.
func (u *User) String() string { return u.Name }

// CallerID returns u's name.
func (u *User) CallerID() string { return u.Name }
