package mcpmw

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// JSONAuditor returns an Auditor that appends each record to w as one JSON
// object per line, with the keys time, outcome, status, method, error_code
// (omitted when there is none), tool, target, caller, request_id, client_ip,
// arguments (the record's, with sensitive values "[redacted]": the JSON
// when it is at most 1 KiB and valid UTF-8, otherwise a string cut to
// 1 KiB), protocol_version, client_name,
// client_version, auth_error, summary and duration_ms. Each line is written
// with a single Write call, under a lock, so w needs no locking of its own.
//
// A failing Write is not silently dropped: it is reported to errLog (nil
// means slog.Default()) with the record it lost. JSONAuditor encodes by
// hand and costs a fraction of a log/slog JSON handler; use LogAuditor to
// send records through an existing slog pipeline instead.
//
// JSONAuditor panics if w is nil (or a nil pointer): every record would be
// lost.
func JSONAuditor(w io.Writer, errLog *slog.Logger) Auditor {
	if isNilHook(w) {
		panic("mcpmw: JSONAuditor needs an io.Writer to write the records to")
	}
	if errLog == nil {
		errLog = slog.Default()
	}
	return &jsonAuditor{w: w, errLog: errLog}
}

type jsonAuditor struct {
	mu     sync.Mutex
	w      io.Writer
	errLog *slog.Logger
	pool   sync.Pool // *[]byte
}

// write writes one line, whole, to the underlying writer. The unlock is
// deferred: a writer that panics (the handler recovers it as a lost
// record) must not leave every later record waiting on the lock.
func (a *jsonAuditor) write(line []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, err := a.w.Write(line)
	return err
}

func (a *jsonAuditor) Audit(ctx context.Context, rec CallRecord) {
	bp, _ := a.pool.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 0, 1024)
		bp = &b
	}
	line := appendRecordJSON((*bp)[:0], &rec)
	if err := a.write(line); err != nil {
		a.errLog.LogAttrs(ctx, slog.LevelError, "mcpmw: writing an audit record failed; the record was lost",
			slog.Any("error", err), slog.Any("record", rec))
	}
	if cap(line) <= 64<<10 {
		*bp = line
		a.pool.Put(bp)
	}
}

// appendRecordJSON appends rec as one JSON object and a newline.
func appendRecordJSON(dst []byte, rec *CallRecord) []byte {
	str := func(key, v string) {
		dst = append(dst, ',', '"')
		dst = append(dst, key...)
		dst = append(dst, '"', ':')
		dst = jsonwire.AppendString(dst, v)
	}
	dst = append(dst, `{"time":"`...)
	dst = append(rec.Time.UTC().AppendFormat(dst, time.RFC3339Nano), '"')
	str("outcome", string(rec.Outcome))
	dst = append(dst, `,"status":`...)
	dst = strconv.AppendInt(dst, int64(rec.Status), 10)
	str("method", rec.Method)
	if rec.ErrorCode != 0 {
		dst = append(dst, `,"error_code":`...)
		dst = strconv.AppendInt(dst, int64(rec.ErrorCode), 10)
	}
	str("tool", rec.Tool)
	str("target", rec.Target)
	str("caller", callerString(rec.Caller))
	if rec.RequestID != "" {
		str("request_id", rec.RequestID)
	}
	str("client_ip", rec.ClientIP)
	if rec.Arguments != nil {
		if len(rec.Arguments) <= maxLoggedArguments && utf8.Valid(rec.Arguments) && json.Valid(rec.Arguments) {
			dst = append(dst, `,"arguments":`...)
			if bytes.ContainsAny(rec.Arguments, "\r\n") { // keep it on one line
				var b bytes.Buffer
				_ = json.Compact(&b, rec.Arguments)
				dst = append(dst, b.Bytes()...)
			} else {
				dst = append(dst, rec.Arguments...)
			}
		} else {
			str("arguments", capBytes(rec.Arguments, maxLoggedArguments))
		}
	}
	if rec.ProtocolVersion != "" {
		str("protocol_version", rec.ProtocolVersion)
	}
	if rec.ClientName != "" {
		str("client_name", rec.ClientName)
		str("client_version", rec.ClientVersion)
	}
	if rec.AuthError != nil {
		str("auth_error", rec.AuthError.Error())
	}
	str("summary", rec.Summary)
	dst = append(dst, `,"duration_ms":`...)
	dst = strconv.AppendFloat(dst, float64(rec.Duration)/float64(time.Millisecond), 'f', -1, 64)
	return append(dst, '}', '\n')
}

// callerString renders a Caller as a string for the audit line: its
// LogValue (when that is a plain value) or String, else its type name.
func callerString(c Caller) string {
	switch v := c.(type) {
	case nil:
		return ""
	case slog.LogValuer:
		if lv := v.LogValue().Resolve(); lv.Kind() != slog.KindGroup {
			return lv.String()
		}
		return fmt.Sprintf("%T", c)
	case fmt.Stringer:
		return v.String()
	default:
		return fmt.Sprintf("%T", c)
	}
}
