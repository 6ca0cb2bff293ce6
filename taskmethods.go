package mcpmw

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"strconv"
	"time"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// The wire of the tasks extension (SEP-2663, 2026-07-28 only): a
// tools/call answered with a CreateTaskResult (resultType "task"), and
// tasks/get, tasks/update and tasks/cancel, each naming the task by
// params.taskId (mirrored in Mcp-Name) and each answered for the task's
// own caller only. tasks/list and tasks/result do not exist (-32601).

// methods returns the tasks extension's methods.
func (r *taskRunner) methods() []Method {
	rev := []string{LatestVersion}
	ext := map[string]any{ExtensionTasks: map[string]any{}}
	return []Method{
		{Name: "tasks/get", Capability: "extensions", Settings: ext, Revisions: rev, Handle: r.get, quick: true},
		{Name: "tasks/update", Capability: "extensions", Settings: ext, Revisions: rev, Handle: r.update, quick: true},
		{Name: "tasks/cancel", Capability: "extensions", Settings: ext, Revisions: rev, Handle: r.cancel, quick: true},
	}
}

// start makes the call of e a task, when it is to be one: a 2026-07-28
// call of a tool that may become a task, from a client that declared the
// extension, by a caller with a CallerID, while this instance has a slot
// free. It returns nil when the call is to run as a plain one (a
// TaskOptional tool's, when any of that fails), and otherwise the call's
// answer: the CreateTaskResult, once the task is stored, or why a
// TaskRequired tool's call cannot be a task.
func (r *taskRunner) start(ctx context.Context, req *Request, e *entry, rnd *round) *Response {
	if r == nil || e.Task == TaskNever || !req.revision().perRequestCapabilities() || !declaresTasks(req.ClientCapabilities) {
		return nil
	}
	optional := e.Task == TaskOptional
	if callerID(req.Caller) == "" {
		if optional {
			return nil
		}
		return &Response{Target: e.Name, Summary: "a task needs a caller with a CallerID", Error: &Error{Code: CodeInvalidRequest,
			Message: "Tool " + strconv.Quote(e.Name) + " runs only as a task, and a task belongs to an identified caller; this caller has no id"}}
	}
	if !r.take() {
		if optional {
			return nil
		}
		return &Response{Target: e.Name, Summary: "no task slot free", Error: &Error{Code: CodeInternalError,
			Message: "This server is running as many tasks as it can; call the tool again shortly"}}
	}
	call := &taskCall{
		entry: e, caller: req.Caller, timeout: r.toolTimeout,
		args:      append(json.RawMessage(nil), req.Param("arguments")...),
		clientCap: append(json.RawMessage(nil), req.ClientCapabilities...),
		requestID: capEcho(string(req.ID)), client: [2]string{req.ClientName, req.ClientVersion},
		created: context.WithoutCancel(ctx),
	}
	t, err := r.create(ctx, call, maps.Clone(rnd.answers), rnd.state)
	if err != nil {
		r.release()
		if optional {
			r.logger.LogAttrs(ctx, slog.LevelWarn, "mcpmw: the task store failed; the call runs without a task", slog.String("tool", e.Name), slog.Any("error", err))
			return nil
		}
		return internalError(e.Name, err, "the task could not be stored")
	}
	body := append(appendTask([]byte(`{"resultType":"task",`), t), ',')
	body = append(append(body, r.ad.serverMeta...), '}')
	return &Response{Result: body, Target: e.Name, task: t.ID, Summary: "task created", encoded: true}
}

// find returns the task a tasks/* request names, when its client
// declared the extension and its caller is the task's, and still holds
// the tool's permission. An unknown, expired or another caller's task
// gets the same -32602: a caller learns nothing of tasks not its own.
func (r *taskRunner) find(ctx context.Context, req *Request) (*Task, *Response) {
	if !declaresTasks(req.ClientCapabilities) {
		return nil, tasksUndeclared(req.Method + " is the tasks extension's")
	}
	id, ok := req.StringParam("taskId")
	if !ok {
		return nil, ErrorResponse(CodeInvalidParams, "Invalid params: "+req.Method+" needs params.taskId, the task's id as a string")
	}
	t, err := r.store.Get(ctx, id)
	switch {
	case errors.Is(err, ErrTaskNotFound):
		return nil, taskNotFound(id, "no such task")
	case err != nil:
		return nil, internalError(capEcho(id), err, "the task store failed")
	}
	if cid := callerID(req.Caller); cid == "" || cid != t.CallerID {
		return nil, taskNotFound(id, "another caller's task")
	}
	if !req.Caller.Can(t.Permission) {
		resp := deniedResponse(&Target{Kind: "tool", Name: t.Tool, Permission: t.Permission})
		resp.Target = t.ID
		return nil, resp
	}
	return t, nil
}

// taskNotFound is the answer for a task a caller may not know of; why
// goes to the record only.
func taskNotFound(id, why string) *Response {
	resp := ErrorResponse(CodeInvalidParams, "Failed to retrieve task: Task not found (it does not exist, has expired, or is not yours)")
	resp.Target, resp.Summary = capEcho(id), why
	return resp
}

// get answers tasks/get: the task as it stands, with its questions, its
// result or its error.
func (r *taskRunner) get(ctx context.Context, req *Request) *Response {
	t, resp := r.find(ctx, req)
	if resp != nil {
		return resp
	}
	size := 256 + len(t.StatusMessage) + len(t.Result) + len(t.Error) + len(r.ad.serverMeta)
	for k, q := range t.InputRequests {
		size += len(k) + len(q) + 4
	}
	dst := appendTask(openResult(make([]byte, 0, size), rev20260728), t)
	switch t.Status {
	case TaskInputRequired:
		dst = appendByKey(append(dst, `,"inputRequests":`...), t.InputRequests, func(dst []byte, q json.RawMessage) []byte { return append(dst, q...) })
	case TaskCompleted:
		dst = append(append(dst, `,"result":`...), t.Result...)
	case TaskFailed:
		dst = append(append(dst, `,"error":`...), t.Error...)
	}
	return &Response{Result: closeResult(dst, rev20260728, r.ad.serverMeta), Target: t.ID, task: t.ID, Summary: statusSummary(t.Status), encoded: true}
}

// update answers tasks/update: the answers to questions outstanding are
// stored, and the instance running the task woken; any other key is
// ignored (never asked, answered already, or the task has ended).
func (r *taskRunner) update(ctx context.Context, req *Request) *Response {
	t, resp := r.find(ctx, req)
	if resp != nil {
		return resp
	}
	raw := req.Param("inputResponses")
	var answers map[string]json.RawMessage
	if jsonwire.KindOf(raw) != jsonwire.KindObject || json.Unmarshal(raw, &answers) != nil {
		resp := ErrorResponse(CodeInvalidParams, "Invalid params: tasks/update needs params.inputResponses, an object of the answers by the keys of inputRequests")
		resp.Target = t.ID
		return resp
	}
	for k, a := range answers {
		if _, asked := t.InputRequests[k]; asked && jsonwire.KindOf(a) != jsonwire.KindObject {
			resp := ErrorResponse(CodeInvalidParams, "Invalid params: inputResponses."+capEcho(k)+" must be an object, the client's result for the request asked under that key")
			resp.Target = t.ID
			return resp
		}
	}
	id := t.ID
	t, changed, err := r.store.Update(ctx, id, TaskUpdate{Op: TaskAnswer, Responses: answers, Now: time.Now()})
	if err != nil {
		return internalError(id, err, "the task store failed")
	}
	summary := "nothing outstanding answered"
	if changed {
		r.notify(ctx, t)
		summary = "answers taken; task " + string(t.Status)
	}
	return &Response{Result: r.ack(), Target: t.ID, task: t.ID, Summary: summary, encoded: true}
}

// cancel answers tasks/cancel: the request is stored and the instance
// running the task woken, which stops the tool (cancelling its
// context); the task reads cancelled once it has stopped. A task that
// has ended already is left as it is, with the same answer.
func (r *taskRunner) cancel(ctx context.Context, req *Request) *Response {
	t, resp := r.find(ctx, req)
	if resp != nil {
		return resp
	}
	id := t.ID
	t, changed, err := r.store.Update(ctx, id, TaskUpdate{Op: TaskCancel, Now: time.Now()})
	if err != nil {
		return internalError(id, err, "the task store failed")
	}
	summary := "task already " + string(t.Status)
	if changed {
		r.notify(ctx, t)
		summary = "cancellation requested"
	}
	return &Response{Result: r.ack(), Target: id, task: id, Summary: summary, encoded: true}
}

// ack is the empty result of tasks/update and tasks/cancel.
func (r *taskRunner) ack() []byte {
	dst := append([]byte(`{"resultType":"complete",`), r.ad.serverMeta...)
	return append(dst, '}')
}

// appendTask appends the members every task answer carries (Task).
func appendTask(dst []byte, t *Task) []byte {
	dst = append(dst, `"taskId":`...)
	dst = jsonwire.AppendString(dst, t.ID)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, t.Status...)
	dst = append(dst, '"')
	if t.StatusMessage != "" {
		dst = append(dst, `,"statusMessage":`...)
		dst = jsonwire.AppendString(dst, t.StatusMessage)
	}
	dst = append(dst, `,"createdAt":"`...)
	dst = t.Created.UTC().AppendFormat(dst, isoMillis)
	dst = append(dst, `","lastUpdatedAt":"`...)
	dst = t.Updated.UTC().AppendFormat(dst, isoMillis)
	dst = append(dst, `","ttlMs":`...)
	if t.TTL > 0 {
		dst = strconv.AppendInt(dst, t.TTL.Milliseconds(), 10)
	} else {
		dst = append(dst, "null"...)
	}
	if t.PollInterval > 0 {
		dst = append(dst, `,"pollIntervalMs":`...)
		dst = strconv.AppendInt(dst, t.PollInterval.Milliseconds(), 10)
	}
	return dst
}

// isoMillis is the ISO 8601 form of a task's times, in UTC to the
// millisecond.
const isoMillis = "2006-01-02T15:04:05.000Z"

// statusSummary is the record's summary of a tasks/get answering status s.
func statusSummary(s TaskStatus) string {
	switch s {
	case TaskWorking:
		return "status working"
	case TaskInputRequired:
		return "status input_required"
	case TaskCompleted:
		return "status completed"
	case TaskFailed:
		return "status failed"
	case TaskCancelled:
		return "status cancelled"
	}
	return "status " + capEcho(string(s)) // a store of the application's
}
