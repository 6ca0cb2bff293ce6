package mcpmw

import (
	"sync"
	"sync/atomic"
)

// A Registry is what one endpoint serves: its tools (AddTools), prompts
// (AddPrompts), resources (AddResources) and resource templates
// (AddResourceTemplates). The zero value is an empty registry ready to
// use. Register entries normally at startup; adding later is safe, and
// requests see new entries as soon as the AddX call returns (a kind of
// entry the registry did not hold when New ran is not served: see
// AddPrompts). Two endpoints that serve different things use two
// Registries.
//
// Its methods name the kind they act on, the same way for every kind:
// AddX and RemoveX take any number of entries or keys (AddTools,
// RemoveTools, AddPrompts, AddResourceTemplates, ...), LookupTool returns
// one entry and whether it exists (Go's comma-ok Lookup, as os.LookupEnv),
// and NumTools counts (as reflect's NumField); a kind that gains a lookup
// or a count names it the same way (LookupPrompt, NumPrompts).
type Registry struct {
	mu   sync.Mutex // serialises AddTools, RemoveTools and watch
	tabs atomic.Pointer[toolTable]
	// prompts is the registry's prompts (prompts.go), published like tabs.
	prompts atomic.Pointer[promptTable]
	res     atomic.Pointer[resourceTable] // resources and resource templates (resources.go)
	// watchers are told about every change, as the Event list_changed
	// listeners receive; handlers serving the registry watch it.
	watchers  atomic.Pointer[[]watcher]
	lastWatch uint64 // the id of the latest watcher, under mu
}

// A watcher is a func told about the registry's changes, with an id by
// which it stops watching.
type watcher struct {
	id uint64
	fn func(Event)
}

// watch calls fn with an Event for each change made to the registry from
// now on: a list_changed Event guarded by the changed entry's permission.
// fn must not block. stop ends it (a closed Handler stops watching, so a
// Registry shared by many handlers does not keep the closed ones alive).
func (r *Registry) watch(fn func(Event)) (stop func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastWatch++
	id := r.lastWatch
	var next []watcher
	if old := r.watchers.Load(); old != nil {
		next = append(next, *old...)
	}
	next = append(next, watcher{id: id, fn: fn})
	r.watchers.Store(&next)
	return func() { r.unwatch(id) }
}

// unwatch removes the watcher id.
func (r *Registry) unwatch(id uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.watchers.Load()
	if old == nil {
		return
	}
	next := make([]watcher, 0, len(*old))
	for _, w := range *old {
		if w.id != id {
			next = append(next, w)
		}
	}
	r.watchers.Store(&next)
}

// changed tells the watchers about a change. It is called after the new
// table is published, so a listener told about it lists the new entries.
func (r *Registry) changed(method string, perms []Permission) {
	ws := r.watchers.Load()
	if ws == nil {
		return
	}
	seen := make(map[Permission]bool, len(perms))
	for _, p := range perms {
		if seen[p] {
			continue
		}
		seen[p] = true
		for _, w := range *ws {
			w.fn(Event{Method: method, Permission: p})
		}
	}
}
