package mcpmw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// A request normally gets one JSON answer. When a tool reports progress or
// logs to the client, and the client asked for that and accepts
// text/event-stream, the answer becomes an event stream instead: the
// notifications as they happen, then the response, then the end of the
// stream. The switch happens when the first notification is actually sent,
// so errors found before that keep their own HTTP status.

// A LogLevel is the severity of a message sent to the client, using the
// syslog names of RFC 5424.
type LogLevel string

// Log levels, from least to most severe.
const (
	LogDebug     LogLevel = "debug"
	LogInfo      LogLevel = "info"
	LogNotice    LogLevel = "notice"
	LogWarning   LogLevel = "warning"
	LogError     LogLevel = "error"
	LogCritical  LogLevel = "critical"
	LogAlert     LogLevel = "alert"
	LogEmergency LogLevel = "emergency"
)

// rank orders levels; it is 0 for an unknown level.
func (l LogLevel) rank() int {
	switch l {
	case LogDebug:
		return 1
	case LogInfo:
		return 2
	case LogNotice:
		return 3
	case LogWarning:
		return 4
	case LogError:
		return 5
	case LogCritical:
		return 6
	case LogAlert:
		return 7
	case LogEmergency:
		return 8
	}
	return 0
}

// ErrStreamClosed is returned by Progress and Log after the request's
// response has been written: nothing more can be sent for it.
var ErrStreamClosed = errors.New("mcpmw: the response has been sent; no more notifications for this request")

// stream carries the notifications of one request to its client.
type stream struct {
	mu       sync.Mutex
	w        http.ResponseWriter
	rc       *http.ResponseController // set when the stream starts
	token    json.RawMessage          // progress token, nil when the client asked for none
	minLevel int                      // lowest LogLevel rank sent; 0 sends no log messages
	started  bool                     // the event stream headers are out
	sealed   bool                     // the answer is decided: no more notifications
	done     bool                     // the final message is out, or writing failed
	last     float64                  // last progress sent
	sent     bool                     // any progress sent
	err      error                    // the first write error
	timeout  time.Duration            // bound on each write; 0: defaultEventWriteTimeout (see writeTimeout)
}

// openStream prepares s as the event stream of a request whose method may
// stream, and reports whether it is one: when the client accepts
// text/event-stream and asked for progress or log messages, or speaks a
// legacy revision (where a tool may ask it a question on the stream, see
// Ask). Nothing is written until the first message is sent. s is the
// exchange's own storage, so a stream costs no allocation.
func openStream(s *stream, w http.ResponseWriter, h http.Header, req *Request, legacyLevel LogLevel) bool {
	var token json.RawMessage
	if t := req.metaParam("progressToken"); jsonwire.KindOf(t) == jsonwire.KindString || jsonwire.KindOf(t) == jsonwire.KindNumber {
		token = json.RawMessage(t)
	}
	minLevel := 0
	if legacyLevel != "" {
		if req.revision().legacy() {
			minLevel = legacyLevel.rank()
		} else if lv, ok := jsonwire.Unquote(req.metaParam(metaLogLevel)); ok {
			minLevel = LogLevel(lv).rank()
		}
	}
	if (token == nil && minLevel == 0 && !req.revision().asksOnStream()) || !acceptsEventStream(h) {
		return false
	}
	s.w, s.token, s.minLevel = w, token, minLevel
	return true
}

// validLogLevel reports whether s names a LogLevel.
func validLogLevel(s string) bool { return LogLevel(s).rank() != 0 }

// acceptsEventStream reports whether the request's Accept header allows
// text/event-stream. A request without Accept gets plain JSON.
func acceptsEventStream(h http.Header) bool {
	for _, a := range h.Values("Accept") {
		for _, part := range strings.Split(a, ",") {
			mt, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "text/event-stream", "text/*", "*/*":
				return true
			}
		}
	}
	return false
}

// Progress reports the progress of the current request to the client, as a
// notifications/progress event, when the client asked for progress (it sent
// a progressToken) and accepts an event stream; otherwise it does nothing
// and returns nil. progress must increase from one call to the next (a
// report that does not is dropped with an error); total is the expected
// final value, or 0 when unknown; message is optional.
//
// It returns an error when the client has gone away (the request's context
// is then cancelled too) or after the response has been written.
func Progress(ctx context.Context, progress, total float64, message string) error {
	s := streamFrom(ctx)
	if s == nil {
		return nil
	}
	if math.IsNaN(progress) || math.IsInf(progress, 0) || math.IsNaN(total) || math.IsInf(total, 0) {
		return errors.New("mcpmw: progress and total must be finite numbers")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == nil {
		return nil
	}
	if s.sent && progress <= s.last {
		return fmt.Errorf("mcpmw: progress must increase: %v after %v", progress, s.last)
	}
	msg := append(make([]byte, 0, 160), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
	msg = append(msg, s.token...)
	msg = append(msg, `,"progress":`...)
	msg = strconv.AppendFloat(msg, progress, 'g', -1, 64)
	if total != 0 {
		msg = append(msg, `,"total":`...)
		msg = strconv.AppendFloat(msg, total, 'g', -1, 64)
	}
	if message != "" {
		msg = append(msg, `,"message":`...)
		msg = jsonwire.AppendString(msg, message)
	}
	msg = append(msg, "}}"...)
	if err := s.sendLocked(ctx, msg); err != nil {
		return err
	}
	s.sent, s.last = true, progress
	return nil
}

// Log sends a log message to the client of the current request, as a
// notifications/message event, when the client asked for messages at this
// level and accepts an event stream; otherwise it does nothing and returns
// nil. logger optionally names the source; data is any JSON-encodable value
// (a string, or an object with details). Never log secrets: the client and
// its model read this.
//
// On 2026-07-28 a client asks by setting io.modelcontextprotocol/logLevel in
// the request's _meta, and gets messages at or above that level. On the
// legacy revisions a stateless server cannot remember logging/setLevel, so
// messages at or above Options.ClientLogLevel go to every client that
// accepts an event stream.
func Log(ctx context.Context, level LogLevel, logger string, data any) error {
	s := streamFrom(ctx)
	if s == nil || level.rank() == 0 {
		if level.rank() == 0 {
			return fmt.Errorf("mcpmw: unknown log level %q", level)
		}
		return nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("mcpmw: log data: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.minLevel == 0 || level.rank() < s.minLevel {
		return nil
	}
	msg := append(make([]byte, 0, 96+len(raw)), `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"`...)
	msg = append(msg, level...)
	msg = append(msg, '"')
	if logger != "" {
		msg = append(msg, `,"logger":`...)
		msg = jsonwire.AppendString(msg, logger)
	}
	msg = append(msg, `,"data":`...)
	msg = append(msg, raw...)
	msg = append(msg, "}}"...)
	return s.sendLocked(ctx, msg)
}

// send writes one message event: a request the server sends the client.
func (s *stream) send(ctx context.Context, msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sendLocked(ctx, msg)
}

// sendLocked writes one notification event, starting the event stream if
// needed. s.mu must be held.
func (s *stream) sendLocked(ctx context.Context, msg []byte) error {
	switch {
	case s.done || s.sealed:
		if s.err != nil {
			return s.err
		}
		return ErrStreamClosed
	case ctx.Err() != nil:
		return ctx.Err()
	}
	if !s.started {
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		s.w.WriteHeader(http.StatusOK) // sent with the first event, under its deadline
		s.rc = http.NewResponseController(s.w)
		s.started = true
	}
	return s.writeFrameLocked(ctx, eventFrame(msg))
}

// defaultEventWriteTimeout bounds the write of one event (and of the final
// answer). A write blocks only when the client has stopped reading and the
// socket buffers between us are full; a client that has not taken an event
// for this long is treated as gone. Without it, a client that stops reading
// would keep a tool running past its Timeout, holding the stream's lock,
// until the connection died. The bound is generous because a slow link must
// still be able to carry a large event; a tool's own deadline, when earlier,
// wins. Once a stream has begun these deadlines replace the http.Server's
// WriteTimeout for the rest of the response: a stream may last as long as
// its tool, provided the client keeps taking its events. A test shortens
// it for one Handler (Handler.eventWriteTimeout, set before it serves),
// never for the process: streams of other handlers read it meanwhile.
const defaultEventWriteTimeout = 30 * time.Second

// writeTimeout is the bound on each of s's writes: its Handler's, or
// defaultEventWriteTimeout.
func (s *stream) writeTimeout() time.Duration {
	if s.timeout > 0 {
		return s.timeout
	}
	return defaultEventWriteTimeout
}

// aLongTimeAgo is a write deadline that makes a blocked write fail at once.
var aLongTimeAgo = time.Unix(1, 0)

// eventFrame returns msg as one SSE event (see appendEvent).
func eventFrame(msg ...[]byte) []byte {
	size := 24
	for _, piece := range msg {
		size += len(piece)
	}
	return appendEvent(make([]byte, 0, size), msg...)
}

// writeFrameLocked writes frame, one notification event or a keep-alive
// comment (see writeLocked), then lifts the write deadline: the stream may
// now stay quiet for as long as its tool works or its listener has nothing
// to say. Over HTTP/2 a write deadline is a timer on the stream that resets
// it (RST_STREAM, and the request's context cancelled) when it fires, even
// with nothing being written; left in place, it would end every stream
// its write timeout after its last event. s.mu must be held.
func (s *stream) writeFrameLocked(ctx context.Context, frame []byte) error {
	if err := s.writeLocked(ctx, frame); err != nil {
		return err
	}
	if err := s.rc.SetWriteDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.done, s.err = true, fmt.Errorf("mcpmw: lifting the write deadline: %w", err)
		return s.err
	}
	return nil
}

// writeLocked writes frame, one complete SSE event or comment, and flushes
// it, within s.writeTimeout() and ctx: when ctx ends first (the tool's
// Timeout, or a cancellation), a write the client is not taking fails
// instead of blocking. The deadline stays set when it returns (see
// writeFrameLocked and finish). Writers that cannot set deadlines are
// written to without one. A failed write ends the stream: after a partial
// event nothing more can be sent. s.mu must be held.
//
// A cancellation aborts the write only if it is still going abortGrace
// after ctx ended. Over HTTP/2, a deadline in the past resets the stream
// even when nothing is being written, and a write can have reached the
// client (which then reads it and cancels the call, a legacy Ask's
// question, say) before this goroutine is scheduled again to note that
// it returned: aborting at once would reset a stream whose write had
// succeeded, and lose the call's final answer.
func (s *stream) writeLocked(ctx context.Context, frame []byte) error {
	deadline := time.Now().Add(s.writeTimeout())
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := s.rc.SetWriteDeadline(deadline); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.done, s.err = true, fmt.Errorf("mcpmw: setting a write deadline: %w", err)
		return s.err
	}
	w := &abortableWrite{rc: s.rc}
	stop := context.AfterFunc(ctx, w.cancelled)
	defer func() {
		stop()
		w.finished()
	}()
	if _, err := s.w.Write(frame); err != nil {
		s.done, s.err = true, fmt.Errorf("mcpmw: writing to the client: %w", err)
		return s.err
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.done, s.err = true, fmt.Errorf("mcpmw: flushing to the client: %w", err)
		return s.err
	}
	return nil
}

// abortGrace is how long a write may go on after its context ended
// before it is aborted (see writeLocked).
const abortGrace = time.Second

// abortableWrite is one write that a cancellation aborts, abortGrace
// after it, unless it has finished by then.
type abortableWrite struct {
	rc    *http.ResponseController
	mu    sync.Mutex
	done  bool
	timer *time.Timer
}

// cancelled is called when the write's context ends.
func (w *abortableWrite) cancelled() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.timer = time.AfterFunc(abortGrace, w.abort)
	}
}

// abort puts the write deadline in the past, which fails a write still
// going (and ends the stream), unless the write has finished.
func (w *abortableWrite) abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		_ = w.rc.SetWriteDeadline(aLongTimeAgo)
	}
}

// finished notes that the write returned: nothing aborts it after this.
func (w *abortableWrite) finished() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	if w.timer != nil {
		w.timer.Stop()
	}
}

// appendEvent appends msg to dst as one SSE event. Every event written goes
// through here, so that framing holds by construction: a data line ends at
// the first CR or LF, and msg may carry them (a middleware's Result, say,
// indented for reading), so they are dropped. In valid JSON, CR and LF can
// only be whitespace between tokens (strings must escape them), so nothing
// a JSON parser sees changes.
func appendEvent(dst []byte, msg ...[]byte) []byte {
	dst = append(dst, "event: message\ndata: "...)
	for _, piece := range msg {
		if !bytes.ContainsAny(piece, "\r\n") {
			dst = append(dst, piece...) // the common case: already one line
			continue
		}
		for _, c := range piece {
			if c != '\r' && c != '\n' {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, "\n\n"...)
}

// finish writes the final message on the event stream and closes it to
// further notifications. It reports false when the stream never started,
// in which case the caller writes a plain JSON answer.
func (s *stream) finish(msg [][]byte) (streamed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.done = true
		return false
	}
	if !s.done {
		// Only the fixed bound: the tool's context has ended by now, and
		// the request's ends only when the client goes, which fails the
		// write anyway. The deadline stays: it bounds what net/http writes
		// once the handler returns (over HTTP/1.1, the end of the chunked
		// body; net/http then clears it), and over HTTP/2 its timer stops
		// when the stream closes, as the handler returns.
		_ = s.writeLocked(context.Background(), eventFrame(msg...))
	}
	s.done = true
	return true
}

// seal refuses further notifications: the answer is decided, and what the
// audit record says about it (status, event stream or not) must stay true.
// Only finish writes after this.
func (s *stream) seal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sealed = true
}

// isStarted reports whether the event stream has begun.
func (s *stream) isStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// keepAliveFrame is an SSE comment: clients ignore it, and proxies that
// close idle connections see traffic.
var keepAliveFrame = []byte(":\n\n")

// keepAlive writes a comment on a started stream (a listen stream, whose
// events may be hours apart), under the same deadlines as an event.
func (s *stream) keepAlive(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.done || s.sealed || !s.started:
		if s.err != nil {
			return s.err
		}
		return ErrStreamClosed
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return s.writeFrameLocked(ctx, keepAliveFrame)
}

// abandon ends the stream without a final message: its client has gone, so
// finish writes nothing.
func (s *stream) abandon() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
}
