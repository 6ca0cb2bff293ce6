package mcpmw_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

func TestJSONAuditor(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		rec  mcpmw.CallRecord
		want string
	}{
		{"full", mcpmw.CallRecord{Time: at, Outcome: mcpmw.OutcomeOK, Status: 200, Method: "tools/call", Tool: "echo", Caller: reader, RequestID: `"7"`,
			ClientIP: "127.0.0.1", Arguments: json.RawMessage(`{"message":"hi"}`), ProtocolVersion: "2026-07-28", ClientName: "c", ClientVersion: "1",
			Summary: "ok", Duration: 1500 * time.Microsecond},
			`{"time":"2026-11-30T12:00:00Z","outcome":"ok","status":200,"method":"tools/call","tool":"echo","target":"","caller":"reader","request_id":"\"7\"","client_ip":"127.0.0.1","arguments":{"message":"hi"},"protocol_version":"2026-07-28","client_name":"c","client_version":"1","summary":"ok","duration_ms":1.5}`},
		{"error and auth failure", mcpmw.CallRecord{Time: at, Outcome: mcpmw.OutcomeDenied, Status: 401, ErrorCode: -32600, AuthError: errors.New("expired"), Summary: "authentication failed"},
			`{"time":"2026-11-30T12:00:00Z","outcome":"denied","status":401,"method":"","error_code":-32600,"tool":"","target":"","caller":"","client_ip":"","auth_error":"expired","summary":"authentication failed","duration_ms":0}`},
		{"pretty arguments are compacted", mcpmw.CallRecord{Time: at, Arguments: json.RawMessage("{\n  \"a\": 1\n}")},
			`{"time":"2026-11-30T12:00:00Z","outcome":"","status":0,"method":"","tool":"","target":"","caller":"","client_ip":"","arguments":{"a":1},"summary":"","duration_ms":0}`},
		{"caller LogValue", mcpmw.CallRecord{Time: at, Caller: secretCaller{"alice", "s3cr3t"}},
			`{"time":"2026-11-30T12:00:00Z","outcome":"","status":0,"method":"","tool":"","target":"","caller":"mcpmw_test.secretCaller","client_ip":"","summary":"","duration_ms":0}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			mcpmw.JSONAuditor(&buf, nil).Audit(context.Background(), tt.rec)
			assert.Equal(t, tt.want+"\n", buf.String())
			assert.True(t, json.Valid(buf.Bytes()))
		})
	}

	var buf bytes.Buffer
	big := json.RawMessage(`{"a":"` + strings.Repeat("x", 5000) + `"}`)
	mcpmw.JSONAuditor(&buf, nil).Audit(context.Background(), mcpmw.CallRecord{Arguments: big})
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	assert.IsType(t, "", m["arguments"], "large arguments become a capped string")
	assert.Less(t, len(m["arguments"].(string)), 1100)
}

// countingWriter counts the Write calls it gets.
type countingWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	return c.buf.Write(p)
}

func TestJSONAuditorConcurrentLines(t *testing.T) {
	t.Parallel()
	w := &countingWriter{}
	a := mcpmw.JSONAuditor(w, nil)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.Audit(context.Background(), mcpmw.CallRecord{Method: "tools/call", Status: i, Summary: strings.Repeat("s", i*40)})
		}()
	}
	wg.Wait()
	assert.Equal(t, 50, w.writes, "one Write per record")
	sc := bufio.NewScanner(&w.buf)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		assert.True(t, json.Valid(sc.Bytes()), sc.Text())
		lines++
	}
	assert.Equal(t, 50, lines)
}

type diskFullWriter struct{}

func (diskFullWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestJSONAuditorWriteFailureIsLogged(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	mcpmw.JSONAuditor(diskFullWriter{}, newTextLogger(logs)).Audit(context.Background(), mcpmw.CallRecord{Method: "tools/list"})
	assert.Contains(t, logs.String(), "disk full")
	assert.Contains(t, logs.String(), "record was lost")
	assert.Contains(t, logs.String(), "tools/list")
}

// panicOnce is a writer whose first Write panics.
type panicOnce struct {
	mu    sync.Mutex
	n     int
	lines []string
}

func (p *panicOnce) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n++; p.n == 1 {
		panic("disk on fire")
	}
	p.lines = append(p.lines, string(b))
	return len(b), nil
}

// A writer that panics loses that record (the handler recovers and logs
// it) but must not leave the auditor's lock held: every later record would
// wait on it, and with it every request.
func TestJSONAuditorSurvivesAPanickingWriter(t *testing.T) {
	t.Parallel()
	w := &panicOnce{}
	a := mcpmw.JSONAuditor(w, slog.New(slog.NewTextHandler(io.Discard, nil)))
	assert.Panics(t, func() { a.Audit(context.Background(), mcpmw.CallRecord{Method: "first"}) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Audit(context.Background(), mcpmw.CallRecord{Method: "second"})
	}()
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatal("the second record waited for good on the auditor's lock")
	}
	require.Len(t, w.lines, 1)
	assert.Contains(t, w.lines[0], `"second"`)
}

// An auditor that cannot write refuses to be built, rather than losing
// every record (a nil *bytes.Buffer would panic on each); LogAuditor's nil
// logger is slog.Default(), as Options.Logger's is.
func TestAuditorsRefuseNilAtConstruction(t *testing.T) {
	t.Parallel()
	const want = "mcpmw: JSONAuditor needs an io.Writer to write the records to"
	assert.PanicsWithValue(t, want, func() { mcpmw.JSONAuditor(nil, nil) })
	assert.PanicsWithValue(t, want, func() { mcpmw.JSONAuditor((*bytes.Buffer)(nil), nil) })
	assert.NotPanics(t, func() {
		mcpmw.LogAuditor(nil).Audit(context.Background(), mcpmw.CallRecord{Method: "tools/list", Summary: "LogAuditor(nil) writes to slog.Default()"})
	})
}
