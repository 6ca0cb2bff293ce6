package oauth

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpmw/mcpmw"
)

// scopePolicy turns a token's scopes into permissions: Config.Implies,
// closed over once in New, and Config.Permissions.
type scopePolicy struct {
	implies map[string][]string // scope → every scope it grants, itself included, sorted
	needs   map[mcpmw.Permission][]string
}

func newScopePolicy(implies map[string][]string, perms map[mcpmw.Permission][]string) (*scopePolicy, error) {
	p := &scopePolicy{implies: map[string][]string{}, needs: map[mcpmw.Permission][]string{}}
	for scope, narrower := range implies {
		for _, s := range append([]string{scope}, narrower...) {
			if !scopeToken(s) {
				return nil, fmt.Errorf("oauth: Implies: %q is not a scope token", s)
			}
		}
	}
	for scope := range implies {
		// A walk of the graph from scope: bounded by its scopes, each visited once.
		seen := map[string]bool{scope: true}
		todo := []string{scope}
		for len(todo) > 0 {
			s := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			for _, n := range implies[s] {
				if !seen[n] {
					seen[n] = true
					todo = append(todo, n)
				}
			}
		}
		all := make([]string, 0, len(seen))
		for s := range seen {
			all = append(all, s)
		}
		slices.Sort(all)
		p.implies[scope] = all
	}
	for perm, scopes := range perms {
		if len(scopes) == 0 {
			return nil, fmt.Errorf("oauth: Permissions: %q needs no scope", perm)
		}
		for _, s := range scopes {
			if !scopeToken(s) {
				return nil, fmt.Errorf("oauth: Permissions: %q is not a scope token", s)
			}
		}
		p.needs[perm] = slices.Clone(scopes)
	}
	return p, nil
}

// grants is the set of scopes a token with scopes holds, those they imply
// included.
func (p *scopePolicy) grants(scopes []string) map[string]struct{} {
	g := make(map[string]struct{}, len(scopes))
	for _, s := range scopes {
		g[s] = struct{}{}
		for _, n := range p.implies[s] {
			g[n] = struct{}{}
		}
	}
	return g
}

// needed is every scope permission perm needs.
func (p *scopePolicy) needed(perm mcpmw.Permission) []string {
	if s, ok := p.needs[perm]; ok {
		return s
	}
	return []string{string(perm)}
}

// scopeToken reports whether s is one scope token (RFC 6749 §3.3):
// printable ASCII but space, '"' and '\'.
func scopeToken(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7e || r == '"' || r == '\\' })
}

// splitScope is a scope claim's tokens (space-delimited, RFC 6749 §3.3).
func splitScope(scope string) []string {
	return strings.Fields(scope)
}
