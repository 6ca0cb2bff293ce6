package mcpmw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// secretCaller holds a credential and renders itself without it.
type secretCaller struct{ name, token string }

func (secretCaller) Can(mcpmw.Permission) bool { return true }
func (c secretCaller) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", c.name))
}

// opaqueCaller has neither String nor LogValue.
type opaqueCaller struct{ token string }

func (opaqueCaller) Can(mcpmw.Permission) bool { return true }

func logged(t *testing.T, rec mcpmw.CallRecord) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	mcpmw.LogAuditor(slog.New(slog.NewJSONHandler(&buf, nil))).Audit(context.Background(), rec)
	require.Equal(t, 1, strings.Count(buf.String(), "\n"), "one line per record")
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	return m
}

func TestLogAuditor(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		rec  mcpmw.CallRecord
		want map[string]any // keys that must have these values
		gone []string       // keys that must be absent
	}{
		{"success", mcpmw.CallRecord{Outcome: mcpmw.OutcomeOK, Status: 200, Method: "tools/call", Tool: "echo", Caller: reader,
			RequestID: "7", Arguments: json.RawMessage(`{"message":"hi"}`), ProtocolVersion: "2026-07-28", ClientName: "c", ClientVersion: "1",
			Duration: time.Millisecond, ClientIP: "127.0.0.1", Summary: "ok"},
			map[string]any{"outcome": "ok", "status": 200.0, "method": "tools/call", "tool": "echo", "caller": "reader", "request_id": "7",
				"arguments": `{"message":"hi"}`, "protocol_version": "2026-07-28", "client_name": "c", "client_version": "1", "level": "INFO", "client_ip": "127.0.0.1"},
			[]string{"error_code", "auth_error"}},
		{"error has a code", mcpmw.CallRecord{Outcome: mcpmw.OutcomeError, Status: 400, ErrorCode: -32020},
			map[string]any{"outcome": "error", "error_code": -32020.0, "tool": "", "caller": "", "method": ""}, []string{"arguments"}},
		{"denied logs at warn with the auth error", mcpmw.CallRecord{Outcome: mcpmw.OutcomeDenied, Status: 401, AuthError: errors.New("token expired")},
			map[string]any{"level": "WARN", "auth_error": "token expired"}, nil},
		{"caller LogValue, not its token", mcpmw.CallRecord{Caller: secretCaller{"alice", "s3cr3t"}},
			map[string]any{"caller": map[string]any{"name": "alice"}}, nil},
		{"opaque caller shows its type only", mcpmw.CallRecord{Caller: opaqueCaller{"s3cr3t"}},
			map[string]any{"caller": "mcpmw_test.opaqueCaller"}, nil},
		{"huge arguments are capped", mcpmw.CallRecord{Arguments: json.RawMessage(`{"a":"` + strings.Repeat("é", 2000) + `"}`)},
			nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := logged(t, tt.rec)
			for k, v := range tt.want {
				assert.Equal(t, v, m[k], k)
			}
			for _, k := range tt.gone {
				assert.NotContains(t, m, k)
			}
			assert.NotContains(t, strings.ToLower(toJSON(t, m)), "s3cr3t")
			if args, ok := m["arguments"].(string); ok {
				assert.LessOrEqual(t, len(args), 1024+len("…"))
			}
		})
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestAuditRecordNeverHoldsCredentials(t *testing.T) {
	t.Parallel()
	h, audit, _ := newTestHandler(t, nil)
	for _, token := range []string{"Bearer reader", "Bearer wrong-secret-token"} {
		h.ServeHTTP(discardRecorder(), modern("1", "tools/call", `"name":"echo","arguments":{"message":"x"}`, "Authorization", token))
	}
	for _, rec := range audit.records() {
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("audit", slog.Any("", rec))
		assert.NotContains(t, buf.String(), "secret-token")
		assert.NotContains(t, buf.String(), "Bearer")
	}
}
