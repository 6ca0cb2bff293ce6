package mcpmw

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
)

// notifications/tasks, the tasks extension's status notifications: each
// change of a task's status (input_required when its tool asks, working
// again once every question is answered, and its end: completed, failed
// or cancelled) is published once, by the instance whose store update
// made it, through the Notifier, so that a listener on any instance
// hears it. The listener must have named the task in taskIds, and its
// caller must be the task's, at the task's endpoint, still holding the
// tool's permission: what tasks/get asks (listenhub.go checks it on the
// instance holding the stream). The notification's params are the task
// exactly as tasks/get shows it, with its questions, result or error.

// tell publishes the status change that left the task t as it is.
// Only what tasks/get shows goes out: never the client's answers or the
// tool's state. A Notifier that fails (an outage of its bus) loses the
// notification; the client's tasks/get still reads the status.
func (r *taskRunner) tell(ctx context.Context, t *Task) {
	if r.notifier == nil {
		return
	}
	c := *t
	c.Answers, c.State = nil, nil
	c.InputRequests = maps.Clone(t.InputRequests)
	if err := r.notifier.Publish(context.WithoutCancel(ctx), Event{Method: TaskStatusChanged, Permission: t.Permission, Task: &c}); err != nil {
		r.logger.LogAttrs(ctx, slog.LevelWarn, "mcpmw: a task's status change could not be published to listeners", slog.String("task", t.ID), slog.String("status", string(t.Status)), slog.Any("error", err))
	}
}

// taskMembers returns the members of the params of t's notification
// but _meta: the task as tasks/get shows it. They are compacted, since
// an event is one line, and t may come from another process (a foreign
// Notifier's JSON spread over lines); nil when t's raw JSON is invalid.
func taskMembers(t *Task) []byte {
	obj := append(appendDetailedTask([]byte{'{'}, t), '}')
	var c bytes.Buffer
	c.Grow(len(obj))
	if json.Compact(&c, obj) != nil {
		return nil
	}
	return c.Bytes()[1 : c.Len()-1]
}

// appendDetailedTask appends the members of t as tasks/get shows it: the
// task, and its questions (input_required), result (completed) or error
// (failed).
func appendDetailedTask(dst []byte, t *Task) []byte {
	dst = appendTask(dst, t)
	switch t.Status {
	case TaskInputRequired:
		dst = appendByKey(append(dst, `,"inputRequests":`...), t.InputRequests, func(dst []byte, q json.RawMessage) []byte { return append(dst, q...) })
	case TaskCompleted:
		dst = append(append(dst, `,"result":`...), t.Result...)
	case TaskFailed:
		dst = append(append(dst, `,"error":`...), t.Error...)
	}
	return dst
}
