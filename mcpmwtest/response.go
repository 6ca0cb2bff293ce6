package mcpmwtest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// An Exchange is what came back over HTTP for one request: the status and
// headers, and the notifications the endpoint sent on an event stream
// before its answer. Every result type of the client (Response, ToolResult,
// ResourceResult, PromptResult, Completion, Description, Listener) and
// Error embed it.
type Exchange struct {
	Status int         // the HTTP status code
	Header http.Header // the response headers (WWW-Authenticate, Content-Type…)
	// Stream reports that the answer came as a text/event-stream rather
	// than as one JSON body.
	Stream bool
	// Notifications are the notifications received on the event stream
	// before the answer, in order; nil for a plain JSON answer.
	Notifications []Notification
}

// A Notification is one JSON-RPC notification the endpoint sent on an
// event stream, such as notifications/progress or notifications/message.
type Notification struct {
	Method string
	Params json.RawMessage
}

// A Progress is the params of a notifications/progress notification.
type Progress struct {
	Token    json.RawMessage `json:"progressToken"` // the request's token, as sent back
	Progress float64         `json:"progress"`
	Total    float64         `json:"total"` // 0 when the endpoint sent none
	Message  string          `json:"message"`
}

// A LogMessage is the params of a notifications/message notification.
type LogMessage struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger"`
	Data   json.RawMessage `json:"data"`
}

// Progress returns the notifications/progress notifications of the
// exchange, in order.
func (e *Exchange) Progress() []Progress {
	var out []Progress
	for _, n := range e.Notifications {
		var p Progress
		if n.Method == "notifications/progress" && json.Unmarshal(n.Params, &p) == nil {
			out = append(out, p)
		}
	}
	return out
}

// Logs returns the notifications/message notifications of the exchange, in
// order.
func (e *Exchange) Logs() []LogMessage {
	var out []LogMessage
	for _, n := range e.Notifications {
		var m LogMessage
		if n.Method == "notifications/message" && json.Unmarshal(n.Params, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// A Response is the answer to a request that succeeded: the JSON-RPC
// result, as sent, and the exchange it came in.
type Response struct {
	Exchange
	Result json.RawMessage
}

// Decode decodes the result into v with encoding/json.
func (r *Response) Decode(v any) error {
	if err := json.Unmarshal(r.Result, v); err != nil {
		return fmt.Errorf("mcpmwtest: decoding the result: %w", err)
	}
	return nil
}

// An Error is an answer that was not a result: a JSON-RPC error, or an
// HTTP response that held no JSON-RPC message at all (a router's 404, say;
// Code is then 0 and Message holds the start of the body). Every method of
// Client returns one for such an answer; test for it with errors.As.
type Error struct {
	Exchange
	Code    int             // the JSON-RPC error code, such as -32602
	Message string          // the JSON-RPC error message
	Data    json.RawMessage // the error's data member, nil when absent
}

func (e *Error) Error() string {
	if e.Code == 0 {
		return fmt.Sprintf("mcpmwtest: HTTP %d without a JSON-RPC message: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("mcpmwtest: HTTP %d, JSON-RPC error %d: %s", e.Status, e.Code, e.Message)
}
