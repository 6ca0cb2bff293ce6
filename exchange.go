package mcpmw

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// exchange is one request on its way through ServeHTTP: what each stage
// found (for the audit record), the event stream if one was opened, and
// whether the record was made and the answer written.
type exchange struct {
	h        *Handler
	w        http.ResponseWriter
	r        *http.Request
	start    time.Time
	clientIP string
	caller   Caller          // set once authentication succeeded
	authErr  error           // why authentication failed, if it did
	env      envelope        // the body's JSON-RPC envelope, as far as it was read
	target   string          // what the request names, as its method's Target found it (capped)
	args     json.RawMessage // a tools/call's arguments, as sent
	redact   *redaction      // the Sensitive pointers of the tool a tools/call names, if any
	req      *Request        // set once the request was parsed: &reqv
	reqv     Request
	info     callInfo        // what a method's context carries (see callKey)
	observed context.Context // what Observer.Serve returned, if it was called
	stream   *stream         // set when the method may stream: &streamv
	streamv  stream
	audited  bool // past admit: the request is audited
	recorded bool
	written  bool
}

// An answer is what the handler sends for one request: a JSON-RPC response
// (an error, a result, or nothing for a 202), its HTTP status and extra
// headers. Stages before the dispatcher build answers with their own
// status; a Dispatcher's Response becomes one through answerTo.
type answer struct {
	resp   *Response
	status int // 0: chosen from the response and the revision (see status)
	header http.Header
}

// refusal is an answer refusing a request with an HTTP status and a
// JSON-RPC error.
func refusal(status, code int, message string) *answer {
	return &answer{status: status, resp: ErrorResponse(code, message)}
}

// answerTo turns a Dispatcher's Response into the answer for req, routed
// to m (nil when no method serves it): 202 for
// a notification, 403 for a denial, and a 500 for a result that is not a
// JSON object (a middleware's mistake, logged).
func (h *Handler) answerTo(req *Request, m *Method, resp *Response) answer {
	a := answer{resp: resp}
	switch {
	case req.IsNotification():
		if resp.Error == nil || errorStatus(resp.Error.Code, req.revision()) < 400 {
			a.status, a.resp = http.StatusAccepted, &Response{Outcome: OutcomeAccepted, Summary: resp.Summary, Target: resp.Target, Cause: resp.Cause}
		}
	case resp.unavailable && resp.Error != nil:
		a.status, a.header = http.StatusServiceUnavailable, http.Header{"Retry-After": {"1"}}
	case resp.Outcome == OutcomeDenied && resp.Error != nil:
		a.status, a.header = http.StatusForbidden, http.Header{"Www-Authenticate": {insufficientScope(req.Caller, resp.denied, h.metadata)}}
	case resp.Error == nil && !resp.encoded && (jsonwire.KindOf(resp.Result) != jsonwire.KindObject || !json.Valid(resp.Result)):
		a.resp = internalError(resp.Target, fmt.Errorf("the Response to %q has a Result that is not a JSON object", req.Method), "")
	case resp.Error == nil && m != nil && m.sessionID && h.sessionIDs:
		// Options.LegacySessionIDs: a random id, never stored or read.
		var b [16]byte
		_, _ = rand.Read(b[:])
		a.header = http.Header{"Mcp-Session-Id": {hex.EncodeToString(b[:])}}
	}
	return a
}

// errorStatus returns the HTTP status for an error code on a revision. The
// choices the specification leaves open are listed in docs/status.md.
func errorStatus(code int, v revision) int {
	switch code {
	case CodeParseError, CodeInvalidRequest, CodeHeaderMismatch, CodeMissingRequiredClientCapability, CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	case CodeMethodNotFound:
		return v.methodNotFoundStatus()
	case CodeInternalError:
		return http.StatusInternalServerError
	default:
		return http.StatusOK
	}
}

// revision is the revision the answer follows: the request's, or the
// legacy rules when the request was not read that far.
func (x *exchange) revision() revision {
	if x.req == nil {
		return rev20251125
	}
	return x.req.revision()
}
