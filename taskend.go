package mcpmw

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime/debug"
	"time"
)

// The end of a task: its run's answer becomes a terminal status, stored
// once (the store lets one update end a task), and the writer whose end
// was stored makes the one record of it. A write whose reply is lost (a
// deadline passed, the connection broke) may have been made all the
// same, so the writer reads the task back and looks for its own Token in
// EndedBy before it concludes either way.

// finish stores the end of task t, whose run ended with resp (nil when
// ctx ended it), and makes its record: one, by whoever's end was stored.
func (r *taskRunner) finish(ctx context.Context, t *Task, call *taskCall, resp *Response, start time.Time, end func(CallRecord)) {
	status, result, errObj, msg := taskEnd(ctx, resp)
	u := TaskUpdate{Op: TaskFinish, Owner: r.self, Status: status, Result: result, Error: errObj, Message: msg, Now: time.Now(), Token: randomID()}
	stored, ours, err := r.storeEnd(t, u)
	rec := r.endRecord(t, call, resp, u, start)
	switch {
	case errors.Is(err, ErrTaskNotFound) && context.Cause(ctx) == errTaskExpired:
		// Past its TTL, the store forgot it as the run ended (the TTL
		// stops the run): the end is recorded all the same.
	case errors.Is(err, ErrTaskNotFound):
		rec.Outcome, rec.ErrorCode = OutcomeError, CodeInternalError
		rec.Summary = "task lost: the task store no longer has it (restarted without persistence, evicted or flushed), so its end (" + string(status) + ") was stored nowhere"
		r.logger.LogAttrs(ctx, slog.LevelError, "mcpmw: a task's store lost it", slog.String("task", t.ID), slog.String("tool", t.Tool))
	case err != nil:
		// Unknown: if the end was not stored, the lease ends and an
		// instance reaps the task, which is its record.
		r.logger.LogAttrs(ctx, slog.LevelError, "mcpmw: a task's end could not be stored, nor found stored", slog.String("task", t.ID), slog.Any("error", err))
		rec.Summary = "task run ended, its end not stored: " + capEcho(err.Error())
		r.guarded(ctx, "observer", end)(rec) // the run's observation ends all the same
		return
	case !ours:
		rec.Summary = "task run ended after the task was ended elsewhere" // that instance made the record
		r.guarded(ctx, "observer", end)(rec)
		return
	}
	if err == nil {
		r.tell(ctx, stored)
	}
	r.report(context.WithoutCancel(ctx), rec, end)
}

// storeEnd writes the end u of task t, trying again while the store
// fails, until the answer is known (ours: whether the end stored is u;
// the task after it), the task's TTL has passed, or Close stops waiting.
func (r *taskRunner) storeEnd(t *Task, u TaskUpdate) (*Task, bool, error) {
	deadline := t.Created.Add(t.TTL)
	wait := r.lease / 10
	for logged := false; ; logged = true {
		ctx, cancel := context.WithTimeout(context.Background(), r.lease)
		stored, ours, err := r.settle(ctx, t.ID, u)
		cancel()
		if err == nil || errors.Is(err, ErrTaskNotFound) {
			return stored, ours, err
		}
		if !logged {
			r.logger.LogAttrs(ctx, slog.LevelWarn, "mcpmw: a task's end could not be stored yet; trying again", slog.String("task", t.ID), slog.Any("error", err))
		}
		if time.Now().Add(wait).After(deadline) {
			return nil, false, err
		}
		select {
		case <-r.halt:
			return nil, false, err
		case <-time.After(wait):
		}
		wait = min(2*wait, r.lease/3)
	}
}

// guarded returns hook, recovering and logging its panic.
func (r *taskRunner) guarded(ctx context.Context, name string, hook func(CallRecord)) func(CallRecord) {
	return func(rec CallRecord) {
		defer func() {
			if v := recover(); v != nil {
				r.logger.LogAttrs(ctx, slog.LevelError, "mcpmw: "+name+" panicked on a task's end",
					slog.Any("panic", v), slog.Any("record", rec), slog.String("stack", string(debug.Stack())))
			}
		}()
		hook(rec)
	}
}

// report hands the record of a task's end to the Auditor, then to end
// (the Observer's), each guarded: on a task's goroutine no handler is
// above to recover a hook's panic, which must not take the process down.
func (r *taskRunner) report(ctx context.Context, rec CallRecord, end func(CallRecord)) {
	r.guarded(ctx, "auditor", func(rec CallRecord) { r.auditor.Audit(ctx, rec) })(rec)
	r.guarded(ctx, "observer", end)(rec)
}

// taskEnd says how a task whose run ended with resp (nil when ctx ended
// it) ends: its status, its result or its error, and its message.
func taskEnd(ctx context.Context, resp *Response) (TaskStatus, json.RawMessage, json.RawMessage, string) {
	if resp == nil {
		switch context.Cause(ctx) {
		case errCancelledByClient, errTaskReaped:
			return TaskCancelled, nil, nil, "cancelled by the client"
		case errTaskLost:
			return TaskFailed, nil, taskError(CodeInternalError, "The task store lost the task before it finished; call the tool again."), "the task store lost the task"
		case errTaskShutdown:
			return TaskFailed, nil, taskError(CodeInternalError, "The instance running the task shut down before it finished; call the tool again."), "the instance running the task shut down"
		default:
			return TaskFailed, nil, taskError(CodeInternalError, "The task did not finish within its time to live and was stopped."), "the task outlived its TTL"
		}
	}
	if resp.Error != nil {
		return TaskFailed, nil, appendError(nil, resp.Error), capEcho(resp.Error.Message)
	}
	msg := "done"
	if resp.Outcome == OutcomeError {
		msg = "the tool reported an error"
	}
	return TaskCompleted, resp.Result, nil, msg
}

// taskError encodes a JSON-RPC error object.
func taskError(code int, message string) json.RawMessage {
	return appendError(nil, &Error{Code: code, Message: message})
}

// endRecord is the record of a task's end u (its run's answer resp):
// the tool's outcome, the task as Target, who called and from where,
// when it ended and how long it ran.
func (r *taskRunner) endRecord(t *Task, call *taskCall, resp *Response, u TaskUpdate, start time.Time) CallRecord {
	status := u.Status
	rec := CallRecord{
		Time: u.Now, Duration: u.Now.Sub(start), ClientIP: call.clientIP, Caller: call.caller, Method: "tools/call", RequestID: call.requestID,
		Target: t.ID, Tool: t.Tool, ProtocolVersion: LatestVersion,
		ClientName: call.client[0], ClientVersion: call.client[1], Status: 200,
		Outcome: OutcomeOK, Summary: "task " + string(status),
	}
	switch {
	case resp == nil && status == TaskCancelled:
		rec.Outcome = OutcomeError
		rec.Summary = "task cancelled by the client"
	case resp == nil:
		rec.Outcome, rec.ErrorCode = OutcomeError, CodeInternalError
		rec.Summary = "task failed: " + u.Message
	case resp.Error != nil:
		rec.Outcome, rec.ErrorCode = OutcomeError, resp.Error.Code
		rec.Summary = "task failed: " + capEcho(resp.Error.Message)
		if resp.Summary != "" {
			rec.Summary = "task failed: " + resp.Summary
		}
		if resp.Cause != nil {
			r.logger.LogAttrs(context.Background(), slog.LevelError, "mcpmw: task failed", slog.String("task", t.ID), slog.String("tool", t.Tool), slog.Any("error", resp.Cause))
		}
	case resp.Outcome == OutcomeError:
		rec.Outcome = OutcomeError
		rec.Summary = "task completed: " + resp.Summary
	default:
		rec.Summary = "task completed: " + resp.Summary
	}
	return rec
}

// reapRecord is the record of the end of task t, failed at now by the
// reaper of instance self: the task's caller (by its CallerID: the
// Caller itself was the running instance's), the dead instance named.
func reapRecord(t *Task, self string, now time.Time) CallRecord {
	return CallRecord{Time: now, Duration: now.Sub(t.Created), Caller: storedCaller(t.CallerID), Method: "tools/call",
		Target: t.ID, Tool: t.Tool, ProtocolVersion: LatestVersion, Status: 200, Outcome: OutcomeError, ErrorCode: CodeInternalError,
		Summary: "task failed: the instance running it (" + capEcho(t.Owner) + ") stopped; failed by instance " + capEcho(self)}
}

// storedCaller is the Caller of a record made where only the task's
// CallerID is at hand (a reap, on any instance): it names the caller and
// holds no permission.
type storedCaller string

func (c storedCaller) Can(Permission) bool { return false }

// CallerID returns the task's CallerID.
func (c storedCaller) CallerID() string { return string(c) }

// String is the CallerID, as the audit line shows it.
func (c storedCaller) String() string { return string(c) }
