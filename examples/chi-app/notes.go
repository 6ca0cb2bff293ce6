package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// note is one stored note.
type note struct {
	ID      int       `json:"id"`
	Text    string    `json:"text"`
	Author  string    `json:"author"`
	Created time.Time `json:"created"`
}

// maxNotes is the most notes this demo keeps per tenant.
const maxNotes = 10_000

// notes is where the app keeps its notes, per tenant: this process's
// memory (memNotes), or Redis (redisNotes), which every instance sharing
// REDIS_URL sees. An error of memNotes is the caller's (too many notes);
// one of redisNotes is also an outage of Redis, which says so.
type notes interface {
	// add stores a note of tenant and returns it, with its new id.
	add(ctx context.Context, tenant, author, text string) (note, error)
	// latest returns up to limit notes of tenant, newest first.
	latest(ctx context.Context, tenant string, limit int) ([]note, error)
	// all returns tenant's notes, oldest first.
	all(ctx context.Context, tenant string) ([]note, error)
	// count returns how many notes tenant has.
	count(ctx context.Context, tenant string) (int, error)
	// get returns tenant's note id, and whether there is one.
	get(ctx context.Context, tenant string, id int) (note, bool, error)
	// remove deletes tenant's note id and reports whether there was one.
	remove(ctx context.Context, tenant string, id int) (bool, error)
}

// memNotes keeps notes in this process's memory: one instance only.
type memNotes struct {
	mu     sync.Mutex
	next   int
	notes  map[string][]note
	maxLen int
}

func newMemNotes() *memNotes { return &memNotes{notes: map[string][]note{}, maxLen: maxNotes} }

func (s *memNotes) add(_ context.Context, tenant, author, text string) (note, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.notes[tenant]) >= s.maxLen {
		return note{}, fmt.Errorf("the tenant already has %d notes, the most this demo keeps", s.maxLen)
	}
	s.next++
	n := note{ID: s.next, Text: text, Author: author, Created: time.Now().UTC()}
	s.notes[tenant] = append(s.notes[tenant], n)
	return n, nil
}

func (s *memNotes) latest(_ context.Context, tenant string, limit int) ([]note, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.notes[tenant]
	out := make([]note, 0, min(limit, len(all)))
	for i := len(all) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, all[i])
	}
	return out, nil
}

func (s *memNotes) all(_ context.Context, tenant string) ([]note, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.notes[tenant]), nil
}

func (s *memNotes) count(_ context.Context, tenant string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.notes[tenant]), nil
}

func (s *memNotes) get(_ context.Context, tenant string, id int) (note, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.notes[tenant] {
		if n.ID == id {
			return n, true, nil
		}
	}
	return note{}, false, nil
}

func (s *memNotes) remove(_ context.Context, tenant string, id int) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.notes[tenant]
	for i, n := range all {
		if n.ID == id {
			s.notes[tenant] = slices.Delete(all, i, i+1)
			return true, nil
		}
	}
	return false, nil
}
