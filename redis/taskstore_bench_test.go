package mcpredis_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/redistest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// benchStore returns a store on a fresh server holding one task, "bench",
// that has asked a question and had an earlier one answered: a tasks/get
// of a task mid-way.
func benchStore(b *testing.B) *mcpredis.TaskStore {
	srv := redistest.Start(b)
	s := mcpredis.NewTaskStore(mcpredis.Config{Client: newClient(b, srv.Addr), Logger: discard, Timeout: time.Second})
	now := time.Now()
	task := &mcpmw.Task{ID: "bench", CallerID: "alice", Tool: "export", Status: mcpmw.TaskInputRequired, StatusMessage: "confirm",
		Created: now, Updated: now, TTL: time.Hour, PollInterval: time.Second, Owner: "i1", LeaseUntil: now.Add(10 * time.Second),
		InputRequests: map[string]json.RawMessage{"confirm": json.RawMessage(`{"method":"elicitation/create","params":{"mode":"form","message":"Export 10,000 rows?","requestedSchema":{"type":"object"}}}`)},
		Answers:       map[string]json.RawMessage{"format": json.RawMessage(`{"action":"accept","content":{"format":"csv"}}`)},
		State:         []byte("round-2")}
	if err := s.Create(b.Context(), task); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkTaskStoreGet is one tasks/get: one HGETALL, decoded.
func BenchmarkTaskStoreGet(b *testing.B) {
	s := benchStore(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Get(b.Context(), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTaskStoreUpdate is a lease renewal, the update a running task
// makes most: one script, and the task after it decoded.
func BenchmarkTaskStoreUpdate(b *testing.B) {
	s := benchStore(b)
	lease := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		lease = lease.Add(time.Millisecond)
		if _, changed, err := s.Update(b.Context(), "bench", mcpmw.TaskUpdate{Op: mcpmw.TaskRenew, Owner: "i1", LeaseUntil: lease}); err != nil || !changed {
			b.Fatal(changed, err)
		}
	}
}
