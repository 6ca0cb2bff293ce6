package mcpmw

import (
	"context"
	"errors"
	"testing"
)

// TestCheckCancelStopsATaskTheStoreLost: a wake-up (a tasks/update or
// tasks/cancel relayed from another instance) that finds the task gone
// from the store stops its run as lost; one that finds it cancelled, or
// ended elsewhere, stops it as cancelled; a store error stops nothing.
func TestCheckCancelStopsATaskTheStoreLost(t *testing.T) {
	t.Parallel()
	store := NewMemoryTaskStore()
	r := &taskRunner{store: store}
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		task *Task // nil: not in the store
		want error
	}{
		{"gone", nil, errTaskLost},
		{"cancel requested", &Task{ID: "t-cancel", Status: TaskWorking, CancelRequested: true}, errCancelledByClient},
		{"ended elsewhere", &Task{ID: "t-ended", Status: TaskFailed}, errCancelledByClient},
		{"running", &Task{ID: "t-running", Status: TaskWorking}, nil},
	} {
		id := "t-gone"
		if tt.task != nil {
			id = tt.task.ID
			if err := store.Create(ctx, tt.task); err != nil {
				t.Fatal(err)
			}
		}
		var got error
		rt := &runningTask{cancel: func(cause error) { got = cause }}
		r.checkCancel(ctx, rt, id)
		if !errors.Is(got, tt.want) || (tt.want == nil) != (got == nil) {
			t.Errorf("%s: cancelled with %v, want %v", tt.name, got, tt.want)
		}
	}
}
