package mcpmw

import (
	"context"
	"errors"
	"sync"
	"time"
)

// A MemoryTaskStore keeps tasks in this process's memory: the default
// TaskStore, right for one instance (another instance cannot see its
// tasks, and they end with the process). A task is forgotten once its TTL
// has passed, whether or not anyone reads it again. Its zero value is not
// usable: call NewMemoryTaskStore.
type MemoryTaskStore struct {
	mu    sync.Mutex
	tasks map[string]*Task
	now   func() time.Time
	swept time.Time // when expired tasks were last dropped
}

// NewMemoryTaskStore returns an empty store.
func NewMemoryTaskStore() *MemoryTaskStore {
	return &MemoryTaskStore{tasks: map[string]*Task{}, now: time.Now}
}

// expired reports whether t has outlived its TTL at now.
func expired(t *Task, now time.Time) bool {
	return t.TTL > 0 && !now.Before(t.Created.Add(t.TTL))
}

// sweepLocked drops the expired tasks, at most once a second, so that a
// store nobody reads from still lets go of them as new ones arrive.
func (s *MemoryTaskStore) sweepLocked(now time.Time) {
	if now.Sub(s.swept) < time.Second {
		return
	}
	s.swept = now
	for id, t := range s.tasks {
		if expired(t, now) {
			delete(s.tasks, id)
		}
	}
}

// lookupLocked returns the live task id, dropping it if it has expired.
func (s *MemoryTaskStore) lookupLocked(id string, now time.Time) *Task {
	t := s.tasks[id]
	if t != nil && expired(t, now) {
		delete(s.tasks, id)
		return nil
	}
	return t
}

// Create stores a copy of t.
func (s *MemoryTaskStore) Create(_ context.Context, t *Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweepLocked(now)
	if s.lookupLocked(t.ID, now) != nil {
		return errors.New("mcpmw: task id " + t.ID + " is taken")
	}
	s.tasks[t.ID] = t.Clone()
	return nil
}

// Get returns a copy of the task.
func (s *MemoryTaskStore) Get(_ context.Context, id string) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.lookupLocked(id, s.now())
	if t == nil {
		return nil, ErrTaskNotFound
	}
	return t.Clone(), nil
}

// Update applies u under the store's lock.
func (s *MemoryTaskStore) Update(_ context.Context, id string, u TaskUpdate) (*Task, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.lookupLocked(id, s.now())
	if t == nil {
		return nil, false, ErrTaskNotFound
	}
	changed := t.Apply(u)
	return t.Clone(), changed, nil
}

// Expired returns the live tasks that are not terminal and whose lease
// ended before now.
func (s *MemoryTaskStore) Expired(_ context.Context, now time.Time, limit int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, t := range s.tasks {
		if len(ids) >= limit {
			break
		}
		if !expired(t, s.now()) && !t.Status.Terminal() && t.LeaseUntil.Before(now) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// Len returns how many tasks the store holds, expired ones not yet
// dropped included (for tests and metrics).
func (s *MemoryTaskStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks)
}
