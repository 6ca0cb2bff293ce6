package mcpmw

import (
	"encoding/json"
	"strings"
	"time"
)

// record builds the audit record of the request from what the stages
// found and the answer it gets. It is the one place a CallRecord is made.
func (x *exchange) record(a *answer) CallRecord {
	rec := CallRecord{
		Time:      x.start,
		ClientIP:  x.clientIP,
		Caller:    x.caller,
		AuthError: x.authErr,
		Method:    capEcho(x.env.method),
		RequestID: capEcho(string(x.env.id)),
		Status:    x.status(a),
	}
	if req := x.req; req != nil {
		rec.ProtocolVersion = req.Version
		if rec.ProtocolVersion == "" { // a legacy request naming no served revision
			rec.ProtocolVersion = capEcho(strings.TrimSpace(x.r.Header.Get(headerProtocolVersion)))
		}
		rec.ClientName, rec.ClientVersion = req.ClientName, req.ClientVersion
		rec.Arguments, rec.Target = x.args, x.target
	} else if x.env.response { // readEnvelope let only a legacy or absent header through
		rec.ProtocolVersion = capEcho(strings.TrimSpace(x.r.Header.Get(headerProtocolVersion)))
	}
	resp := a.resp
	if resp == nil {
		resp = &Response{}
	}
	rec.Outcome, rec.Summary = resp.Outcome, resp.Summary
	if resp.Target != "" {
		rec.Target = resp.Target
	}
	if x.env.method == "tools/call" {
		rec.Tool = rec.Target
		rec.Arguments = x.recordArguments(rec.Target)
	}
	if resp.Error != nil {
		rec.ErrorCode = resp.Error.Code
	}
	if rec.Summary == "" {
		rec.Summary = defaultSummary(resp)
	}
	if rec.Outcome == "" {
		rec.Outcome = OutcomeOK
		if resp.Error != nil {
			rec.Outcome = OutcomeError
		}
	}
	rec.Duration = time.Since(x.start)
	return rec
}

// defaultSummary is the summary of a Response that gives none: its error
// message, then the server-side cause the log line gets, so that the
// record knows what the log knows ("Internal error" alone says nothing).
// Both are capped.
func defaultSummary(resp *Response) string {
	var s string
	if resp.Error != nil {
		s = capEcho(resp.Error.Message)
	}
	if resp.Cause != nil {
		if s != "" {
			s += ": "
		}
		s += capEcho(resp.Cause.Error())
	}
	return s
}

// recordArguments are a tools/call's arguments as the record shows them:
// the values the client named tool's Sensitive pointers reach redacted,
// and those of tool answered too when a middleware pointed the call at
// another tool. It costs nothing for a tool without sensitive arguments.
func (x *exchange) recordArguments(answered string) json.RawMessage {
	args := x.redact.arguments(x.args)
	if answered != x.target {
		args = x.h.reg.toolRedaction(answered).arguments(args)
	}
	return args
}
