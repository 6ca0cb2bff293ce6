package mcpmwtest

import (
	"context"
	"sync"

	"github.com/mcpmw/mcpmw"
)

// A Recorder is an mcpmw.Auditor that keeps every record, for a test to
// assert on. It is safe for concurrent use; the zero value is ready.
//
// The endpoint audits a request before writing its answer, so once a
// Client call has returned, its record is there. WaitFor is for records
// made after the client stopped listening (a cancelled call).
type Recorder struct {
	mu      sync.Mutex
	recs    []mcpmw.CallRecord
	changed chan struct{} // closed and replaced at each record
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{} }

// Audit keeps rec.
func (r *Recorder) Audit(_ context.Context, rec mcpmw.CallRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// Records returns a copy of the records kept so far, oldest first.
func (r *Recorder) Records() []mcpmw.CallRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]mcpmw.CallRecord(nil), r.recs...)
}

// Last returns the latest record, or the zero CallRecord when there is none.
func (r *Recorder) Last() mcpmw.CallRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.recs) == 0 {
		return mcpmw.CallRecord{}
	}
	return r.recs[len(r.recs)-1]
}

// Len returns the number of records kept so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.recs)
}

// Reset forgets every record, so that a test can ignore what its setup did
// (a legacy client's handshake is audited too: initialize and
// notifications/initialized).
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = nil
}

// WaitFor waits until at least n records are kept, and returns them, or
// returns ctx's error and the records so far when ctx ends first.
func (r *Recorder) WaitFor(ctx context.Context, n int) ([]mcpmw.CallRecord, error) {
	for {
		r.mu.Lock()
		if len(r.recs) >= n {
			recs := append([]mcpmw.CallRecord(nil), r.recs...)
			r.mu.Unlock()
			return recs, nil
		}
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return r.Records(), ctx.Err()
		}
	}
}
