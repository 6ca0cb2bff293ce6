package mcpmw

import (
	"fmt"
	"maps"
)

// A catalogue is an immutable snapshot of one kind of registered entries
// (tools, prompts, resources, resource templates): in registration order,
// by key, and the distinct guards they are listed behind in order of
// first use (a permission, and for a tool listed only for some clients,
// the client capabilities it needs), by which the list pages are cached. Adding or removing makes a new
// catalogue that the Registry publishes whole, so requests read one
// without a lock. Entries already published are shared with running
// requests and never written to; the permission list only grows, so the
// indices of the entries carried over stay valid.
type catalogue[E catalogued] struct {
	list    []E
	byKey   map[string]E
	perms   []guard        // distinct guards, in order of first use
	permIdx map[string]int // index into perms, by guard key
}

// A guard is what a list shows an entry behind: a permission the caller
// holds and, when needs is set, client capabilities the request declares
// (a 2026-07-28 request: the legacy revisions declare none).
type guard struct {
	perm  Permission
	needs []ClientCapability
}

// key is g as one string, for the catalogue's index.
func (g guard) key() string {
	k := string(g.perm)
	for _, c := range g.needs {
		k += "\x00" + c.String()
	}
	return k
}

// open reports whether a request of rev declaring caps, by c, passes g.
func (g guard) open(c Caller, caps []byte, rev revision) bool {
	if len(g.needs) > 0 {
		if !rev.perRequestCapabilities() {
			return false
		}
		for _, n := range g.needs {
			if !hasClientCapability(caps, n) {
				return false
			}
		}
	}
	return c.Can(g.perm)
}

// catalogued is what a catalogue needs of an entry.
type catalogued interface {
	key() string // the name, or the URI or URI template in normal form, it is found by
	permission() Permission
	needs() []ClientCapability // what a request must declare for the entry to be listed: nil for most
	setPermIndex(int)          // the index of its permission in perms, set before it is published
}

func (e *entry) key() string                     { return e.Name }
func (e *entry) permission() Permission          { return e.Permission }
func (e *entry) needs() []ClientCapability       { return e.ListedOnlyFor }
func (*promptEntry) needs() []ClientCapability   { return nil }
func (*resourceEntry) needs() []ClientCapability { return nil }
func (*templateEntry) needs() []ClientCapability { return nil }
func (e *entry) setPermIndex(i int)              { e.permIndex = i }
func (e *promptEntry) key() string               { return e.Name }
func (e *promptEntry) permission() Permission    { return e.Permission }
func (e *promptEntry) setPermIndex(i int)        { e.permIndex = i }
func (e *resourceEntry) key() string             { return e.norm }
func (e *resourceEntry) permission() Permission  { return e.Permission }
func (e *resourceEntry) setPermIndex(i int)      { e.permIndex = i }
func (e *templateEntry) key() string             { return e.tmpl.Key() }
func (e *templateEntry) permission() Permission  { return e.Permission }
func (e *templateEntry) setPermIndex(i int)      { e.permIndex = i }

// with returns a copy of c with add appended, and the permissions of the
// added entries (for the change notification). It panics, naming the
// entry as kind, on a key already taken, in c or earlier in add.
func (c *catalogue[E]) with(kind string, add []E) (*catalogue[E], []Permission) {
	next := &catalogue[E]{
		list:    append(make([]E, 0, len(c.list)+len(add)), c.list...),
		byKey:   make(map[string]E, len(c.list)+len(add)),
		perms:   append([]guard(nil), c.perms...),
		permIdx: make(map[string]int, len(c.perms)+1),
	}
	maps.Copy(next.byKey, c.byKey)
	maps.Copy(next.permIdx, c.permIdx)
	perms := make([]Permission, 0, len(add))
	for _, e := range add {
		k, p := e.key(), e.permission()
		if _, dup := next.byKey[k]; dup {
			panic(fmt.Sprintf("mcpmw: %s %q is registered twice", kind, k))
		}
		g := guard{perm: p, needs: e.needs()}
		i, ok := next.permIdx[g.key()]
		if !ok {
			i = len(next.perms)
			next.perms = append(next.perms, g)
			next.permIdx[g.key()] = i
		}
		e.setPermIndex(i)
		next.list = append(next.list, e)
		next.byKey[k] = e
		perms = append(perms, p)
	}
	return next, perms
}

// without returns a copy of c without the entries of these keys, and the
// permissions of the entries it removed: none when no key was there.
func (c *catalogue[E]) without(keys []string) (*catalogue[E], []Permission) {
	gone := make(map[string]bool, len(keys))
	var perms []Permission
	for _, k := range keys {
		if e, ok := c.byKey[k]; ok && !gone[k] {
			gone[k] = true
			perms = append(perms, e.permission())
		}
	}
	if len(gone) == 0 {
		return c, nil
	}
	next := &catalogue[E]{
		list:    make([]E, 0, len(c.list)-len(gone)),
		byKey:   make(map[string]E, len(c.list)-len(gone)),
		perms:   c.perms, // only grows: the kept entries' indices stay valid
		permIdx: c.permIdx,
	}
	for _, e := range c.list {
		if k := e.key(); !gone[k] {
			next.list = append(next.list, e)
			next.byKey[k] = e
		}
	}
	return next, perms
}
