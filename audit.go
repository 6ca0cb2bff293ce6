package mcpmw

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// An Auditor records what happened to each request. The handler calls Audit
// exactly once for every POST that got past the rate limiter, whatever
// happened to it: refused Origin, failed authentication, malformed body,
// header mismatch, denied tool, tool error, panic, or success. It is called
// before the response's final message is written, so every answer a client
// receives has its record, and with a context that is not cancelled when
// the client goes away.
//
// Audit runs on the request's goroutine: a slow Auditor slows the response.
// A panic in Audit is recovered and logged; it never reaches the client and
// never causes a second call.
type Auditor interface {
	Audit(ctx context.Context, rec CallRecord)
}

// AuditFunc is an adapter to allow the use of ordinary functions as Auditors.
type AuditFunc func(ctx context.Context, rec CallRecord)

// Audit calls f(ctx, rec).
func (f AuditFunc) Audit(ctx context.Context, rec CallRecord) { f(ctx, rec) }

// An Outcome summarises how a request ended.
type Outcome string

// The outcomes of a request.
const (
	OutcomeOK       Outcome = "ok"       // answered with a result (and, for tools/call, not isError)
	OutcomeError    Outcome = "error"    // answered with an error, or a tool result with isError
	OutcomeDenied   Outcome = "denied"   // refused by policy: Origin, authentication, a permission check (and, seen only by an Observer, rate limit and HTTP method)
	OutcomeAccepted Outcome = "accepted" // a notification or client response, answered 202
	// OutcomeInputRequired: the call asked the client for input (an
	// input_required result); the retry that brings it is its own request.
	OutcomeInputRequired Outcome = "input_required"
)

// A CallRecord is the audit record of one request. Fields the request never
// reached are zero. Values that came from the client (method, tool, id,
// client name) are capped in length; credentials never appear, and
// neither do sensitive arguments (Tool.Sensitive, PromptArgument.Sensitive),
// in Arguments or in the Summary. The record is made once, so an Auditor,
// LogValue, JSONAuditor and an Observer all see the same redacted values.
type CallRecord struct {
	// Time is when the handler started on the request, and Duration how
	// long until the record was made, just before the final write. The
	// record of a task's end is made when the task ended: Time is then,
	// and Duration how long the task ran.
	Time     time.Time
	Duration time.Duration
	ClientIP string // as returned by Options.ClientIP

	// Caller is nil when authentication did not succeed. In the record of
	// a task failed by another instance's reaper (its own instance died),
	// it is a Caller that has only the task's CallerID (its CallerID and
	// String methods) and no permission.
	Caller    Caller
	AuthError error // why authentication failed, if it did

	Method    string // the JSON-RPC method; "" when the body was not read or not understood, and for a client's answer POST (a JSON-RPC response, see Ask)
	RequestID string // the JSON-RPC id exactly as sent (of an answer POST: the server's request it answers), "" for notifications
	// Target is what the request acted on: the tool of a tools/call, the
	// prompt of a prompts/get, the URI of a resources/read, the prompt or
	// URI template a completion/complete completes.
	Target string
	Tool   string // the tool name of a tools/call (its Target), kept for tool-centred dashboards
	// Arguments are the tools/call arguments as sent, except that each
	// value the tool declares Sensitive reads "[redacted]" (see
	// Tool.Sensitive); do not modify.
	Arguments json.RawMessage

	ProtocolVersion string // the revision the request spoke, as declared (an answer POST's: its MCP-Protocol-Version header)
	ClientName      string // from clientInfo, as declared (display only)
	ClientVersion   string

	Outcome   Outcome
	ErrorCode int    // the JSON-RPC error code, 0 when there was none
	Status    int    // the HTTP status sent
	Summary   string // a short human-readable account of what happened
}

// LogAuditor returns an Auditor that writes each record to l at level Info
// (Warn for denied requests), with the record's fields as top-level
// attributes. With slog.NewJSONHandler this gives one JSON object per line.
// A nil l means slog.Default(), as for Options.Logger.
func LogAuditor(l *slog.Logger) Auditor {
	if l == nil {
		l = slog.Default()
	}
	return AuditFunc(func(ctx context.Context, rec CallRecord) {
		level := slog.LevelInfo
		if rec.Outcome == OutcomeDenied {
			level = slog.LevelWarn
		}
		l.LogAttrs(ctx, level, "mcp request", slog.Any("", rec))
	})
}

// maxLoggedArguments caps the arguments LogValue prints.
const maxLoggedArguments = 1024

// LogValue renders the record for log/slog, so an Auditor can write it with
//
//	logger.LogAttrs(ctx, slog.LevelInfo, "mcp request", slog.Any("", rec))
//
// and get its fields as top-level keys. Arguments are shown as a string
// capped at 1 KiB; the error code is omitted when there is none.
func (rec CallRecord) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 16)
	attrs = append(attrs,
		slog.String("outcome", string(rec.Outcome)),
		slog.Int("status", rec.Status),
		slog.String("method", rec.Method),
	)
	if rec.ErrorCode != 0 {
		attrs = append(attrs, slog.Int("error_code", rec.ErrorCode))
	}
	attrs = append(attrs, slog.String("tool", rec.Tool), slog.String("target", rec.Target), callerAttr(rec.Caller))
	if rec.RequestID != "" {
		attrs = append(attrs, slog.String("request_id", rec.RequestID))
	}
	attrs = append(attrs, slog.String("client_ip", rec.ClientIP))
	if rec.Arguments != nil {
		attrs = append(attrs, slog.String("arguments", capBytes(rec.Arguments, maxLoggedArguments)))
	}
	if rec.ProtocolVersion != "" {
		attrs = append(attrs, slog.String("protocol_version", rec.ProtocolVersion))
	}
	if rec.ClientName != "" {
		attrs = append(attrs, slog.String("client_name", rec.ClientName), slog.String("client_version", rec.ClientVersion))
	}
	if rec.AuthError != nil {
		attrs = append(attrs, slog.String("auth_error", rec.AuthError.Error()))
	}
	attrs = append(attrs, slog.String("summary", rec.Summary), slog.Duration("duration", rec.Duration))
	return slog.GroupValue(attrs...)
}

// callerAttr renders a Caller: its own LogValue or String if it has one,
// otherwise its dynamic type, never its fields (they may hold credentials).
func callerAttr(c Caller) slog.Attr {
	switch v := c.(type) {
	case nil:
		return slog.String("caller", "")
	case slog.LogValuer:
		return slog.Any("caller", v)
	case fmt.Stringer:
		return slog.String("caller", v.String())
	default:
		return slog.String("caller", fmt.Sprintf("%T", c))
	}
}
