package mcpmw

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// The wire of the tasks extension (SEP-2663, 2026-07-28 only): a
// tools/call answered with a CreateTaskResult (resultType "task"), and
// tasks/get, tasks/update and tasks/cancel, each naming the task by
// params.taskId (mirrored in Mcp-Name) and each answered for the task's
// own caller only. tasks/list and tasks/result do not exist (-32601).

// extension returns the tasks extension, with its methods: 2026-07-28
// only, the one revision whose requests declare it.
func (r *taskRunner) extension() Extension {
	return Extension{ID: ExtensionTasks, Revisions: modernOnly, Methods: []Method{
		{Name: "tasks/get", NameParam: "taskId", Handle: r.get},
		{Name: "tasks/update", NameParam: "taskId", Handle: r.update},
		{Name: "tasks/cancel", NameParam: "taskId", Handle: r.cancel},
	}}
}

// start makes the call of e a task, when it is to be one: a 2026-07-28
// call of a tool that may become a task, at an endpoint serving the
// extension, from a client that declared it, by a caller with a CallerID,
// while this instance has a slot free for that caller. It returns nil
// when the call is to run as a plain one (a TaskOptional tool's, when any
// of that fails), and otherwise the call's answer: the CreateTaskResult,
// once the task is stored, or why a TaskRequired tool's call cannot be a
// task.
func (r *taskRunner) start(ctx context.Context, req *Request, e *entry, rnd *round) *Response {
	if r == nil || e.Task == TaskNever || !req.revision().perRequestCapabilities() || !hasClientCapability(req.ClientCapabilities, tasksCapability) {
		return nil
	}
	optional := e.Task == TaskOptional
	if !r.served() {
		if optional {
			return nil
		}
		return internalError(e.Name, errors.New("tool "+strconv.Quote(e.Name)+" is TaskRequired, but this endpoint does not serve the tasks extension: set Options.Tasks when task tools are added after New"),
			"tasks not served at this endpoint")
	}
	cid := callerID(req.Caller)
	if cid == "" {
		if optional {
			return nil
		}
		return &Response{Target: e.Name, Summary: "a task needs a caller with a CallerID", Error: &Error{Code: CodeInvalidRequest,
			Message: "Tool " + strconv.Quote(e.Name) + " runs only as a task, and a task belongs to an identified caller; this caller has no id"}}
	}
	answers, resp := r.firstAnswers(e.Name, rnd)
	if resp != nil {
		return resp
	}
	if why := r.take(cid); why != 0 {
		if optional {
			return nil
		}
		return noSlot(e.Name, why, r.perCaller)
	}
	call := &taskCall{
		entry: e, caller: req.Caller, timeout: r.toolTimeout,
		args:      append(json.RawMessage(nil), req.Param("arguments")...),
		clientCap: append(json.RawMessage(nil), req.ClientCapabilities...),
		requestID: capEcho(string(req.ID)), clientIP: clientIPFrom(ctx), client: [2]string{req.ClientName, req.ClientVersion},
	}
	t, err := r.create(ctx, call, req.endpoint.key(), answers, rnd.state)
	if err != nil {
		r.release(cid)
		if optional {
			r.logger.LogAttrs(ctx, slog.LevelWarn, "mcpmw: the task store failed; the call runs without a task", slog.String("tool", e.Name), slog.Any("error", err))
			return nil
		}
		return storeFailed(e.Name, err, "the task could not be stored")
	}
	body := append(appendTask([]byte(`{"resultType":"task",`), t), ',')
	body = append(append(body, r.ad.serverMeta...), '}')
	return &Response{Result: body, Target: e.Name, task: t.ID, Summary: "task created", encoded: true}
}

// noSlot is the answer to a TaskRequired call for which no slot could be
// taken, why (slotTaken, slotPerCaller).
func noSlot(tool string, why, perCaller int) *Response {
	if why == slotPerCaller {
		return &Response{Target: tool, Summary: "the caller holds as many task slots as one caller may", Error: &Error{Code: CodeInternalError,
			Message: "You already have " + strconv.Itoa(perCaller) + " tasks running or waiting for answers on this server; finish or cancel one, then call the tool again"}}
	}
	return &Response{Target: tool, Summary: "no task slot free", Error: &Error{Code: CodeInternalError,
		Message: "This server is running as many tasks as it can; call the tool again shortly"}}
}

// firstAnswers returns the answers a new task keeps from the call's
// rounds: those its Prepare asked for and read (what a client sends
// unasked is dropped), within MaxInputBytes; or the answer to a call
// whose answers are too large to keep.
func (r *taskRunner) firstAnswers(tool string, rnd *round) (map[string]json.RawMessage, *Response) {
	if len(rnd.used) == 0 {
		return nil, nil
	}
	answers := make(map[string]json.RawMessage, len(rnd.used))
	size := 0
	for _, k := range rnd.used {
		a := rnd.answers[k]
		answers[k] = a
		size += len(k) + len(a)
	}
	if size > r.maxInput {
		resp := inputTooLarge(size, r.maxInput)
		resp.Target = tool
		return nil, resp
	}
	return answers, nil
}

// inputTooLarge is the -32602 of answers a task cannot keep.
func inputTooLarge(size, limit int) *Response {
	return ErrorResponse(CodeInvalidParams, "Invalid params: the answers come to "+strconv.Itoa(size)+
		" bytes, more than the "+strconv.Itoa(limit)+" a task keeps; answer with less")
}

// find returns the task a tasks/* request names, when its client
// declared the extension and its caller is the task's, and still holds
// the tool's permission. An unknown, expired or another caller's task
// gets the same -32602: a caller learns nothing of tasks not its own.
func (r *taskRunner) find(ctx context.Context, req *Request) (*Task, *Response) {
	if !hasClientCapability(req.ClientCapabilities, tasksCapability) {
		return nil, tasksUndeclared(req.Method)
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
		return nil, storeFailed(capEcho(id), err, "the task store failed")
	}
	if cid := callerID(req.Caller); cid == "" || cid != t.CallerID {
		return nil, taskNotFound(id, "another caller's task")
	}
	if t.Endpoint != req.endpoint.key() {
		return nil, taskNotFound(id, "another endpoint's task")
	}
	if !req.Caller.Can(t.Permission) {
		resp := Denied(&Target{Kind: "tool", Name: t.Tool, Permission: t.Permission})
		resp.Target = t.ID
		return nil, resp
	}
	return t, nil
}

// change applies u to task id, as tasks/update and tasks/cancel do: the
// task after it and whether u changed it, or the answer to a store that
// failed (the task gone meanwhile reads as not found).
func (r *taskRunner) change(ctx context.Context, id string, u TaskUpdate) (*Task, bool, *Response) {
	t, changed, err := r.store.Update(ctx, id, u)
	switch {
	case errors.Is(err, ErrTaskNotFound):
		return nil, false, taskNotFound(id, "the task went as it was updated")
	case err != nil:
		return nil, false, storeFailed(id, err, "the task store failed")
	}
	return t, changed, nil
}

// storeFailed is the answer to a request the task store failed, acting
// on target: 503 with Retry-After when the store says it is unavailable
// for now (an error with an Unavailable method that reports true, or a
// deadline that passed), so that the client knows to try again; else an
// internal error.
func storeFailed(target string, err error, summary string) *Response {
	resp := internalError(target, err, summary)
	if unavailable(err) {
		resp.Error.Message = "Service unavailable: the task store cannot be reached; retry after the interval in the Retry-After header"
		resp.unavailable = true
	}
	return resp
}

// unavailable reports whether err says that what failed is unavailable
// for now: a deadline passed, or some error in its chain has an
// Unavailable() bool method that reports true (mcpredis's errors for an
// unreachable Redis do).
func unavailable(err error) bool {
	var u interface{ Unavailable() bool }
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &u) && u.Unavailable())
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
	dst := appendDetailedTask(openResult(make([]byte, 0, size), rev20260728), t)
	return &Response{Result: closeResult(dst, rev20260728, r.ad.serverMeta), Target: t.ID, task: t.ID, Summary: statusSummary(t.Status), encoded: true}
}

// update answers tasks/update: the answers to questions outstanding are
// stored, and the instance running the task woken. Only those are read
// out of inputResponses: any other member (never asked, answered already,
// or the task has ended) is dropped here, so that neither the store's
// work nor what it keeps grows with what a client sends.
func (r *taskRunner) update(ctx context.Context, req *Request) *Response {
	t, resp := r.find(ctx, req)
	if resp != nil {
		return resp
	}
	answers, resp := r.outstandingAnswers(t, req.Param("inputResponses"))
	if resp != nil {
		resp.Target = t.ID
		return resp
	}
	id := t.ID
	changed := false
	if len(answers) > 0 {
		t, changed, resp = r.change(ctx, id, TaskUpdate{Op: TaskAnswer, Responses: answers, Now: time.Now()})
		if resp != nil {
			return resp
		}
	}
	summary := "nothing outstanding answered"
	if changed {
		if t.Status == TaskWorking {
			r.tell(ctx, t) // every question answered: working again
		}
		r.notify(ctx, t)
		summary = "answers taken; task " + string(t.Status)
	}
	return &Response{Result: r.ack(), Target: id, task: id, Summary: summary, encoded: true}
}

// outstandingAnswers returns the members of raw (inputResponses) that
// answer questions t has outstanding, each checked to be an object, and
// within MaxInputBytes with the answers t holds; or the -32602 of raw.
func (r *taskRunner) outstandingAnswers(t *Task, raw []byte) (map[string]json.RawMessage, *Response) {
	it, ok := jsonwire.IterMembers(raw)
	if !ok {
		return nil, ErrorResponse(CodeInvalidParams, "Invalid params: tasks/update needs params.inputResponses, an object of the answers by the keys of inputRequests")
	}
	var answers map[string]json.RawMessage
	size := 0
	for k, a := range t.Answers {
		size += len(k) + len(a)
	}
	for m, more := it.Next(); more && len(answers) < len(t.InputRequests); m, more = it.Next() {
		k := m.Name()
		if _, asked := t.InputRequests[k]; !asked {
			continue
		}
		if jsonwire.KindOf(m.Value) != jsonwire.KindObject {
			return nil, ErrorResponse(CodeInvalidParams, "Invalid params: inputResponses."+capEcho(k)+" must be an object, the client's result for the request asked under that key")
		}
		if answers == nil {
			answers = make(map[string]json.RawMessage, len(t.InputRequests))
		}
		answers[k] = append(json.RawMessage(nil), m.Value...)
		size += len(k) + len(m.Value)
	}
	if size > r.maxInput {
		return nil, inputTooLarge(size, r.maxInput)
	}
	return answers, nil
}

// cancel answers tasks/cancel: the request is stored and the instance
// running the task woken, which stops the tool (cancelling its
// context); the task reads cancelled once it has stopped. When it runs
// on this instance, the answer waits (at most cancelWait) for it to stop,
// so that the client's next tasks/get reads cancelled; on another, it
// reads working until that instance has stopped it. A task that has
// ended already is left as it is, with the same answer.
func (r *taskRunner) cancel(ctx context.Context, req *Request) *Response {
	t, resp := r.find(ctx, req)
	if resp != nil {
		return resp
	}
	id := t.ID
	t, changed, resp := r.change(ctx, id, TaskUpdate{Op: TaskCancel, Now: time.Now()})
	if resp != nil {
		return resp
	}
	summary := "task already " + string(t.Status)
	if changed {
		r.notify(ctx, t)
		summary = "cancellation requested"
		if r.awaitEnd(ctx, id) {
			summary = "cancellation requested; the run stopped"
		}
	}
	return &Response{Result: r.ack(), Target: id, task: id, Summary: summary, encoded: true}
}

// cancelWait bounds how long tasks/cancel waits for a task running here
// to stop: a tool that ignores its context's cancellation holds the
// answer no longer than this.
const cancelWait = 2 * time.Second

// awaitEnd waits, at most cancelWait or until ctx ends, for the run of
// task id on this instance to stop and store its end, and reports whether
// it did. A task running elsewhere (or not at all) is not waited for.
func (r *taskRunner) awaitEnd(ctx context.Context, id string) bool {
	rt := r.lookup(id)
	if rt == nil {
		return false
	}
	t := time.NewTimer(cancelWait)
	defer t.Stop()
	select {
	case <-rt.ended:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
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
