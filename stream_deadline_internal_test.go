package mcpmw

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadlineWriter is a ResponseWriter that records the write deadlines set
// on it. With block set, a Write waits until a deadline in the past is set
// (as a connection whose client has stopped reading), then fails.
type deadlineWriter struct {
	hdr    http.Header
	setErr error // returned by SetWriteDeadline
	block  bool

	mu        sync.Mutex
	deadlines []time.Time
	writes    int
	expired   chan struct{} // closed when a past deadline is set
}

func newDeadlineWriter() *deadlineWriter {
	return &deadlineWriter{hdr: http.Header{}, expired: make(chan struct{})}
}

func (w *deadlineWriter) Header() http.Header { return w.hdr }
func (w *deadlineWriter) WriteHeader(int)     {}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes++
	w.mu.Unlock()
	if !w.block {
		return len(p), nil
	}
	select {
	case <-w.expired:
		return 0, os.ErrDeadlineExceeded
	case <-time.After(Patience): // bounded: the test fails instead of hanging
		return len(p), nil
	}
}

func (w *deadlineWriter) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadlines = append(w.deadlines, t)
	if t.Before(time.Now()) {
		select {
		case <-w.expired:
		default:
			close(w.expired)
		}
	}
	return w.setErr
}

func (w *deadlineWriter) recorded() ([]time.Time, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.deadlines...), w.writes
}

func TestEveryStreamWriteHasADeadline(t *testing.T) {
	t.Parallel()
	w := newDeadlineWriter()
	s := &stream{w: w, token: []byte(`1`)}

	soon, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	want, _ := soon.Deadline()
	s.mu.Lock()
	require.NoError(t, s.sendLocked(soon, []byte(`{"n":1}`)))
	before := time.Now()
	require.NoError(t, s.sendLocked(context.Background(), []byte(`{"n":2}`)))
	s.mu.Unlock()
	require.True(t, s.finish([][]byte{[]byte(`{"n":3}`)}))
	after := time.Now()

	got, writes := w.recorded()
	// Each notification's deadline is set for its write and lifted after
	// it (over HTTP/2 a deadline left behind resets a quiet stream); the
	// final answer's stays, bounding what net/http writes after it.
	require.Len(t, got, 5, "set and lifted for each notification; set for the final answer")
	assert.Equal(t, 3, writes)
	assert.True(t, got[0].Equal(want), "a tool's earlier deadline bounds its event: %v, want %v", got[0], want)
	assert.True(t, got[1].IsZero(), "lifted after the first event: %v", got[1])
	assert.True(t, got[3].IsZero(), "lifted after the second event: %v", got[3])
	for _, d := range []time.Time{got[2], got[4]} {
		assert.False(t, d.Before(before.Add(defaultEventWriteTimeout)), "%v", d)
		assert.False(t, d.After(after.Add(defaultEventWriteTimeout)), "%v", d)
	}
}

// A keep-alive comment is a write like an event: its deadline is lifted
// once it is out, or a listen stream that has nothing to say would be
// reset over HTTP/2 when it passed.
func TestKeepAliveDeadlineIsLifted(t *testing.T) {
	t.Parallel()
	w := newDeadlineWriter()
	s := &stream{w: w, rc: http.NewResponseController(w), started: true}
	require.NoError(t, s.keepAlive(context.Background()))
	got, writes := w.recorded()
	require.Len(t, got, 2)
	assert.Equal(t, 1, writes)
	assert.False(t, got[0].IsZero(), "the comment's write has a deadline")
	assert.True(t, got[1].IsZero(), "lifted once it is out: %v", got[1])
}

// A deadline that cannot be lifted (the connection is gone) ends the
// stream, as one that cannot be set does: left in place, it would reset
// the stream later anyway.
func TestDeadlineThatCannotBeLiftedEndsTheStream(t *testing.T) {
	t.Parallel()
	w := &liftFailsWriter{deadlineWriter: newDeadlineWriter()}
	s := &stream{w: w, token: []byte(`1`)}
	s.mu.Lock()
	err := s.sendLocked(context.Background(), []byte(`{}`))
	s.mu.Unlock()
	assert.ErrorContains(t, err, "lifting the write deadline")
	assert.ErrorIs(t, err, errConnGone)
	s.mu.Lock()
	assert.ErrorIs(t, s.sendLocked(context.Background(), []byte(`{}`)), errConnGone, "the stream stays ended")
	s.mu.Unlock()
	_, writes := w.recorded()
	assert.Equal(t, 1, writes)
}

var errConnGone = errors.New("use of closed network connection")

// liftFailsWriter sets deadlines but cannot clear them.
type liftFailsWriter struct{ *deadlineWriter }

func (w *liftFailsWriter) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		return errConnGone
	}
	return w.deadlineWriter.SetWriteDeadline(t)
}

func TestStreamWithoutDeadlines(t *testing.T) {
	t.Parallel()
	w := newDeadlineWriter()
	w.setErr = http.ErrNotSupported
	s := &stream{w: w, token: []byte(`1`)}
	s.mu.Lock()
	assert.NoError(t, s.sendLocked(context.Background(), []byte(`{}`)), "a writer without deadlines is still written to")
	s.mu.Unlock()

	w = newDeadlineWriter()
	w.setErr = errors.New("connection closed")
	s = &stream{w: w, token: []byte(`1`)}
	s.mu.Lock()
	err := s.sendLocked(context.Background(), []byte(`{}`))
	s.mu.Unlock()
	assert.ErrorContains(t, err, "connection closed")
	_, writes := w.recorded()
	assert.Zero(t, writes, "no write without its deadline")
	assert.True(t, s.finish([][]byte{[]byte(`{}`)}))
	_, writes = w.recorded()
	assert.Zero(t, writes, "a failed stream gets nothing more")
}

// TestCancellationUnblocksAStalledWrite covers a context cancelled with no
// deadline (a legacy notifications/cancelled, or a middleware's cancel):
// the stalled write must end, and the stream with it.
func TestCancellationUnblocksAStalledWrite(t *testing.T) {
	t.Parallel()
	w := newDeadlineWriter()
	w.block = true
	s := &stream{w: w, token: []byte(`1`)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		done <- s.sendLocked(ctx, []byte(`{}`))
	}()
	require.Eventually(t, func() bool { _, n := w.recorded(); return n == 1 }, Patience, time.Millisecond)
	cancel()
	select {
	case err := <-done:
		// Only a deadline in the past fails the write; left blocked, it
		// would succeed after Patience.
		assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "the cancellation, not the writer's own bound, ended the write")
	case <-time.After(2 * Patience):
		t.Fatal("the write went on after the cancellation")
	}
	s.mu.Lock()
	assert.ErrorIs(t, s.sendLocked(context.Background(), []byte(`{}`)), os.ErrDeadlineExceeded, "the stream stays broken")
	s.mu.Unlock()
}

// Each Handler has its own event deadline (set by a test before it
// serves): shortening one handler's changes no other's, even while both
// serve. Issue 26: the deadline was a package variable, which a test
// restored while another handler's stream still read it, a data race.
func TestEventWriteTimeoutIsEachHandlersOwn(t *testing.T) {
	t.Parallel()
	var reg Registry
	reg.AddTools(Tool{Name: "report", Description: "Reports progress.", Permission: "read",
		Call: func(ctx context.Context, _ Caller, _ *Args) (ToolResult, error) {
			return TextResult("done"), Progress(ctx, 1, 2, "half")
		}})
	authn := AuthenticatorFunc(func(*http.Request) (Caller, error) { return everything{}, nil })
	audit := AuditFunc(func(context.Context, CallRecord) {})
	shortened := New(&reg, authn, audit, nil)
	SetEventWriteTimeout(shortened, 10*time.Second)
	for _, tc := range []struct {
		name string
		h    *Handler
		want time.Duration
	}{
		{"default", New(&reg, authn, audit, nil), defaultEventWriteTimeout},
		{"shortened", shortened, 10 * time.Second},
		{"default alongside", New(&reg, authn, audit, nil), defaultEventWriteTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newDeadlineWriter()
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"report","arguments":{},"_meta":{"progressToken":"p",` +
				`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
			for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
				"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "report"} {
				r.Header.Set(k, v)
			}
			before := time.Now()
			tc.h.ServeHTTP(w, r)
			after := time.Now()
			got, writes := w.recorded()
			require.Equal(t, 2, writes, "the progress event, then the answer")
			require.Len(t, got, 3, "set and lifted for the event; set for the answer")
			for _, d := range []time.Time{got[0], got[2]} {
				assert.False(t, d.Before(before.Add(tc.want)), "%v is before %v", d, before.Add(tc.want))
				assert.False(t, d.After(after.Add(tc.want)), "%v is after %v", d, after.Add(tc.want))
			}
		})
	}
}

// cancellingWriter cancels a context during each Write, then lets the
// write succeed: a client that read the event and sent a cancellation
// before the writer's goroutine noted that the write returned.
type cancellingWriter struct {
	*deadlineWriter
	cancel context.CancelFunc
}

func (w cancellingWriter) Write(p []byte) (int, error) {
	w.cancel()
	time.Sleep(10 * time.Millisecond) // the cancellation's AfterFunc runs now
	return w.deadlineWriter.Write(p)
}

// TestCancellationAfterASuccessfulWriteLeavesTheStreamWhole: over
// HTTP/2 a deadline in the past resets the stream even once the write is
// done, so a cancellation that comes as the write succeeds must not set
// one: the call's final answer still has to be written.
func TestCancellationAfterASuccessfulWriteLeavesTheStreamWhole(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	w := cancellingWriter{deadlineWriter: newDeadlineWriter(), cancel: cancel}
	s := &stream{w: w, token: []byte(`1`)}
	s.mu.Lock()
	require.NoError(t, s.sendLocked(ctx, []byte(`{}`)))
	s.mu.Unlock()
	time.Sleep(abortGrace + 100*time.Millisecond) // past the grace: an abort would have come
	deadlines, _ := w.recorded()
	for _, d := range deadlines {
		assert.False(t, d.Equal(aLongTimeAgo), "no deadline in the past after a write that succeeded: %v", deadlines)
	}
	s.mu.Lock()
	assert.NoError(t, s.sendLocked(context.Background(), []byte(`{}`)), "the stream goes on")
	s.mu.Unlock()
}
