package mcpmw_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw"
)

// benchRecord is the audit record of a successful 2026-07-28 tools/call.
func benchRecord() mcpmw.CallRecord {
	return mcpmw.CallRecord{
		Time: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC), Duration: 1500 * time.Microsecond, ClientIP: "192.0.2.1",
		Caller: benchCaller{}, Method: "tools/call", RequestID: "7", Tool: "echo",
		Arguments:       json.RawMessage(`{"message":"The quick brown fox jumps over the lazy dog, 0123."}`),
		ProtocolVersion: "2026-07-28", ClientName: "bench", ClientVersion: "1.0.0",
		Outcome: mcpmw.OutcomeOK, Status: 200, Summary: "ok",
	}
}

// BenchmarkCallRecordLogValue measures building the record's slog.Value.
func BenchmarkCallRecordLogValue(b *testing.B) {
	rec := benchRecord()
	b.ReportAllocs()
	for b.Loop() {
		_ = rec.LogValue()
	}
}

// BenchmarkLogAuditor measures one audit line as a deployment writes it:
// LogAuditor over slog's JSON handler, to a writer that keeps nothing.
func BenchmarkLogAuditor(b *testing.B) {
	audit := mcpmw.LogAuditor(slog.New(slog.NewJSONHandler(io.Discard, nil)))
	rec := benchRecord()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		audit.Audit(ctx, rec)
	}
}

// BenchmarkJSONAuditor measures one audit line written by JSONAuditor.
func BenchmarkJSONAuditor(b *testing.B) {
	audit := mcpmw.JSONAuditor(io.Discard, nil)
	rec := benchRecord()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		audit.Audit(ctx, rec)
	}
}
