package mcpmw

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// The lease of a task: the instance running it vouches for it until
// LeaseUntil and renews that every third of the lease while the run goes
// on; any instance of a shared store fails (reaps) a task whose lease has
// ended, its instance having died. The renewing loop is also where the
// run hears of what others did to its task: a cancel the client asked
// for, a reap by another instance, the store having lost the task.

// renew renews the lease of task id every third of the lease while it
// runs, and cancels the run when the store says the client asked to
// cancel, the task ended elsewhere, or the store no longer has it. It
// returns the func that stops it.
func (r *taskRunner) renew(ctx context.Context, rt *runningTask, id string) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(r.lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				r.renewOnce(ctx, rt, id)
			case <-rt.poked:
				r.checkCancel(ctx, rt, id)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// renewOnce extends the lease of task id once, and cancels its run when
// the answer says it must stop.
func (r *taskRunner) renewOnce(ctx context.Context, rt *runningTask, id string) {
	u := TaskUpdate{Op: TaskRenew, Owner: r.self, LeaseUntil: time.Now().Add(r.lease)}
	t, changed, err := r.store.Update(ctx, id, u)
	switch {
	case errors.Is(err, ErrTaskNotFound):
		rt.cancel(errTaskLost)
	case err != nil:
		r.logger.LogAttrs(ctx, slog.LevelWarn, "mcpmw: a task's lease could not be renewed", slog.String("task", id), slog.Any("error", err))
	case t.CancelRequested:
		rt.cancel(errCancelledByClient)
	case !changed:
		rt.cancel(errTaskReaped)
	}
}

// checkCancel cancels the run of task id when the store says the client
// asked to, the task has ended, or the store no longer has it.
func (r *taskRunner) checkCancel(ctx context.Context, rt *runningTask, id string) {
	t, err := r.store.Get(ctx, id)
	switch {
	case errors.Is(err, ErrTaskNotFound):
		rt.cancel(errTaskLost)
	case err == nil && (t.CancelRequested || t.Status.Terminal()):
		rt.cancel(errCancelledByClient)
	}
}

// startReaper starts the reaper of a shared store, once.
func (r *taskRunner) startReaper() {
	if !r.shared {
		return
	}
	r.reaper.Do(func() {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			tick := time.NewTicker(r.lease / 2)
			defer tick.Stop()
			var unsettled map[string]TaskUpdate
			for {
				select {
				case <-r.stop:
					return
				case <-tick.C:
					unsettled = r.reap(unsettled)
				}
			}
		}()
	})
}

// maxUnsettled bounds the reaps a reaper keeps trying to settle.
const maxUnsettled = 1024

// reap fails the tasks whose lease has ended, and makes the record of
// each end it wrote (another instance reaping the same task writes none:
// the store lets one end a task). unsettled are the reaps of earlier
// passes whose outcome is unknown (the store failed as they were
// written: the write may have been made all the same); they are settled
// first. It returns those still unknown.
func (r *taskRunner) reap(unsettled map[string]TaskUpdate) map[string]TaskUpdate {
	ctx, cancel := context.WithTimeout(context.Background(), r.lease/2)
	defer cancel()
	for id, u := range unsettled {
		if r.settleReap(ctx, id, u) {
			delete(unsettled, id)
		}
	}
	now := time.Now()
	ids, err := r.store.Expired(ctx, now, 100)
	if err != nil {
		return unsettled // an outage: the next tick tries again
	}
	for _, id := range ids {
		if _, known := unsettled[id]; known {
			continue
		}
		u := TaskUpdate{Op: TaskReap, Now: now, Token: randomID(), Message: "the instance running the task stopped",
			Error: taskError(CodeInternalError, "The instance running the task stopped before it finished; call the tool again.")}
		if !r.settleReap(ctx, id, u) && len(unsettled) < maxUnsettled {
			if unsettled == nil {
				unsettled = map[string]TaskUpdate{}
			}
			unsettled[id] = u
		}
	}
	return unsettled
}

// settleReap writes the reap u of task id, or learns whether an earlier
// write of it was made, and records the end when it was this one. It
// reports whether the reap is settled: written and recorded, or made moot
// (another end, the task gone).
func (r *taskRunner) settleReap(ctx context.Context, id string, u TaskUpdate) bool {
	t, ours, err := r.settle(ctx, id, u)
	if err != nil {
		return errors.Is(err, ErrTaskNotFound)
	}
	if ours {
		r.tell(ctx, t)
		r.report(ctx, reapRecord(t, r.self, u.Now), func(CallRecord) {})
	}
	return true
}

// settle applies the end u (TaskFinish or TaskReap, with its Token) to
// task id, and reports whether the task's end is u: written now, or by an
// earlier attempt whose reply was lost (the store failed after the write
// was made). It reads the task back when the write fails; err is set
// when neither tells.
func (r *taskRunner) settle(ctx context.Context, id string, u TaskUpdate) (*Task, bool, error) {
	t, changed, err := r.store.Update(ctx, id, u)
	if err == nil {
		return t, changed || t.EndedBy == u.Token, nil
	}
	if errors.Is(err, ErrTaskNotFound) {
		return nil, false, err
	}
	t, gerr := r.store.Get(ctx, id)
	switch {
	case gerr != nil:
		return nil, false, err
	case t.Status.Terminal():
		return t, t.EndedBy == u.Token, nil
	}
	return nil, false, err // not ended yet: the write was not made
}
