package mcpmw

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// guardedStore turns a panic of an application's TaskStore into an
// error: a task's goroutines (its run, its lease, the reaper) call the
// store with no handler above them to recover.
type guardedStore struct{ s TaskStore }

// storePanicked is the error of a TaskStore that panicked with v.
func storePanicked(v any) error {
	return fmt.Errorf("mcpmw: the TaskStore panicked: %v", v)
}

func (g guardedStore) Create(ctx context.Context, t *Task) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = storePanicked(v)
		}
	}()
	return g.s.Create(ctx, t)
}

func (g guardedStore) Get(ctx context.Context, id string) (t *Task, err error) {
	defer func() {
		if v := recover(); v != nil {
			t, err = nil, storePanicked(v)
		}
	}()
	t, err = g.s.Get(ctx, id)
	if t == nil && err == nil {
		err = errNoTask
	}
	return t, err
}

func (g guardedStore) Update(ctx context.Context, id string, u TaskUpdate) (t *Task, changed bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			t, changed, err = nil, false, storePanicked(v)
		}
	}()
	t, changed, err = g.s.Update(ctx, id, u)
	if t == nil && err == nil {
		err = errNoTask
	}
	return t, changed, err
}

// errNoTask is the error of a TaskStore that returned neither a task nor
// an error.
var errNoTask = errors.New("mcpmw: the TaskStore returned neither a task nor an error")

func (g guardedStore) Expired(ctx context.Context, now time.Time, limit int) (ids []string, err error) {
	defer func() {
		if v := recover(); v != nil {
			ids, err = nil, storePanicked(v)
		}
	}()
	return g.s.Expired(ctx, now, limit)
}
