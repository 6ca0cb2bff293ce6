package mcpotel

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/echo"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// Attribute keys the semantic conventions have no name for.
const (
	// OutcomeKey is how the request ended: ok, error, denied (refused by
	// policy: Origin, authentication, permission or rate limit) or
	// accepted (a notification or client response, answered 202); the
	// CallRecord's Outcome.
	OutcomeKey = attribute.Key("mcpmw.outcome")
	// TaskIDKey is the id of the task a span is about: the task a
	// tools/call became, the one a tasks/get, tasks/update or tasks/cancel
	// names, or the one whose run the span is. On spans only: every task
	// has its own.
	TaskIDKey = attribute.Key("mcpmw.task.id")
	// TaskStatusKey is the status a task's run ended in: completed
	// (isError or not: see error.type), failed or cancelled.
	TaskStatusKey = attribute.Key("mcpmw.task.status")
)

// other stands for a value outside the known set, as in the semantic
// conventions (http.request.method, rpc.method).
const other = "_OTHER"

// taskMethods are the methods of the tasks extension (SEP-2663), each
// naming a task by params.taskId.
var taskMethods = map[string]bool{"tasks/get": true, "tasks/update": true, "tasks/cancel": true}

// knownMethods are the MCP methods whose names are recorded as sent even
// when the handler did not dispatch them: those of the semantic
// conventions' mcp.method.name, those the revisions after them added
// (2025-11-25's tasks, 2026-07-28's discover and listen), and those of the
// tasks extension.
var knownMethods = func() map[string]bool {
	m := map[string]bool{"notifications/elicitation/complete": true,
		"tasks/list": true, "tasks/result": true, "notifications/tasks/status": true,
		"server/discover": true, "subscriptions/listen": true, "notifications/subscriptions/acknowledged": true}
	for name := range taskMethods {
		m[name] = true
	}
	for _, kv := range []attribute.KeyValue{
		semconv.McpMethodNameCompletionComplete, semconv.McpMethodNameElicitationCreate,
		semconv.McpMethodNameInitialize, semconv.McpMethodNameLoggingSetLevel,
		semconv.McpMethodNameNotificationsCancelled, semconv.McpMethodNameNotificationsInitialized,
		semconv.McpMethodNameNotificationsMessage, semconv.McpMethodNameNotificationsProgress,
		semconv.McpMethodNameNotificationsPromptsListChanged, semconv.McpMethodNameNotificationsResourcesListChanged,
		semconv.McpMethodNameNotificationsResourcesUpdated, semconv.McpMethodNameNotificationsRootsListChanged,
		semconv.McpMethodNameNotificationsToolsListChanged, semconv.McpMethodNamePing,
		semconv.McpMethodNamePromptsGet, semconv.McpMethodNamePromptsList,
		semconv.McpMethodNameResourcesList, semconv.McpMethodNameResourcesRead,
		semconv.McpMethodNameResourcesSubscribe, semconv.McpMethodNameResourcesTemplatesList,
		semconv.McpMethodNameResourcesUnsubscribe, semconv.McpMethodNameRootsList,
		semconv.McpMethodNameSamplingCreateMessage, semconv.McpMethodNameToolsCall,
		semconv.McpMethodNameToolsList,
	} {
		m[kv.Value.AsString()] = true
	}
	return m
}()

// method returns the name recorded for a request's method: as sent when
// the server routed it (a request dispatched to its method, which exists)
// or MCP defines it; otherwise _OTHER, so that clients cannot make up
// names without bound. "" stays "".
func method(name string, routed bool) string {
	if name == "" || routed || knownMethods[name] {
		return name
	}
	return other
}

// version returns the protocol version recorded on metrics: one the
// package serves, else _OTHER.
func version(v string) string {
	switch v {
	case "", mcpmw.LatestVersion, mcpmw.Version20251125, mcpmw.Version20250618:
		return v
	}
	return other
}

// started is what Serve knows of a dispatched request.
type started struct {
	method, tool string
	list         []attribute.KeyValue
}

// startAttributes are the attributes a dispatched request's span starts
// with, for samplers: its method and, for tools/call, the tool, for a
// tasks/* method, the task. Each is bounded before it reaches the span,
// its name included: the method is one the handler routed (or MCP
// defines) or _OTHER; the revision one it served; the tool name is the
// client's, which the handler found for a request but not for a
// notification (sent without an id, it skips the gate), so it is capped
// as the record caps it, and the span starts with what Done gives it; the
// task id is the client's too, capped the same way.
func startAttributes(req *mcpmw.Request) started {
	s := started{method: echo.Cap(method(req.Method, !req.IsNotification()))}
	s.list = append(s.list, semconv.McpMethodNameKey.String(s.method))
	if req.Method == "tools/call" {
		s.tool, _ = req.StringParam("name")
		s.tool = echo.Cap(s.tool)
		s.list = append(s.list, semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(s.tool))
	}
	if taskMethods[req.Method] {
		if id, ok := req.StringParam("taskId"); ok {
			s.list = append(s.list, TaskIDKey.String(echo.Cap(id)))
		}
	}
	if req.Version != "" {
		s.list = append(s.list, semconv.McpProtocolVersion(echo.Cap(req.Version)))
	}
	return s
}

// recorded is what Done records of a request.
type recorded struct {
	method, tool string // for the span name: tool only when it exists
	span, metric []attribute.KeyValue
}

// recordAttributes are the attributes of a request's span and duration.
// s is what Serve left for it, nil when it was not dispatched. The span
// gets every value the record has (client values come capped); the metric
// only bounded ones.
func recordAttributes(rec mcpmw.CallRecord, s *served) recorded {
	r := recorded{method: method(rec.Method, s != nil && !s.notification)}
	r.span = make([]attribute.KeyValue, 0, 12)
	r.metric = make([]attribute.KeyValue, 0, 8)
	both := func(kv ...attribute.KeyValue) {
		r.span = append(r.span, kv...)
		r.metric = append(r.metric, kv...)
	}
	if r.method != "" {
		both(semconv.McpMethodNameKey.String(r.method))
		if r.method == other {
			r.span = append(r.span, semconv.RPCMethodOriginal(rec.Method))
		}
	}
	if rec.Method == "tools/call" {
		both(semconv.GenAIOperationNameExecuteTool)
		if rec.Tool != "" {
			r.span = append(r.span, semconv.GenAIToolName(rec.Tool))
		}
		if toolExists(rec, s != nil) {
			r.tool = rec.Tool
			r.metric = append(r.metric, semconv.GenAIToolName(rec.Tool))
		}
	}
	if id := taskID(rec); id != "" {
		r.span = append(r.span, TaskIDKey.String(id))
	}
	if id := requestID(rec.RequestID); id != "" {
		r.span = append(r.span, semconv.JSONRPCRequestID(id))
	}
	if rec.ProtocolVersion != "" {
		r.span = append(r.span, semconv.McpProtocolVersion(rec.ProtocolVersion))
		r.metric = append(r.metric, semconv.McpProtocolVersion(version(rec.ProtocolVersion)))
	}
	if et := errorType(rec); et != "" {
		both(semconv.ErrorTypeKey.String(et))
	}
	if rec.ErrorCode != 0 {
		both(semconv.RPCResponseStatusCode(strconv.Itoa(rec.ErrorCode)))
	}
	both(semconv.HTTPResponseStatusCode(rec.Status), OutcomeKey.String(string(rec.Outcome)))
	if rec.ClientIP != "" { // Options.ClientIP may take it from a header, uncapped: capped here as the handler caps a client's value
		r.span = append(r.span, semconv.ClientAddress(echo.Cap(rec.ClientIP)))
	}
	return r
}

// taskID is the task a request's record names, "" for none: the one a
// tasks/* request named, or the task a tools/call became, whose record
// names the task as its Target and the tool as its Tool (a call that ran
// has the tool as both).
func taskID(rec mcpmw.CallRecord) string {
	switch {
	case taskMethods[rec.Method]:
		return rec.Target
	case rec.Method == "tools/call" && rec.Tool != "" && rec.Target != rec.Tool:
		return rec.Target
	}
	return ""
}

// toolExists reports whether a tools/call's tool is one the registry has:
// the handler dispatched the call (it found the tool first) and no
// "Unknown tool" came back (a middleware may have renamed it), or the
// permission gate refused the caller (it found the tool first too).
func toolExists(rec mcpmw.CallRecord, dispatched bool) bool {
	if rec.Tool == "" {
		return false
	}
	return rec.Outcome == mcpmw.OutcomeDenied || dispatched && rec.ErrorCode != mcpmw.CodeInvalidParams
}

// errorType is error.type as the MCP conventions define it: the JSON-RPC
// error code, or tool_error for a tool result with isError; "" on success.
func errorType(rec mcpmw.CallRecord) string {
	switch {
	case rec.ErrorCode != 0:
		return strconv.Itoa(rec.ErrorCode)
	case rec.Outcome != mcpmw.OutcomeError:
		return ""
	case rec.Method == "tools/call":
		return "tool_error"
	}
	return other
}

// requestID is the JSON-RPC id as jsonrpc.request.id wants it: a string id
// without its quotes, a number as written; "" for null or none.
func requestID(raw string) string {
	switch {
	case raw == "" || raw == "null":
		return ""
	case strings.HasPrefix(raw, `"`):
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil {
			return s
		}
		return strings.Trim(raw, `"`) // capped by the handler mid-string
	}
	return raw
}
