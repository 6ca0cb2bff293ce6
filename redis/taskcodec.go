package mcpredis

import (
	"encoding/json"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/mcpmw/mcpmw"
)

// A task's hash has one field per member of mcpmw.Task but its ID (the
// key names it):
//
//	caller, tool, perm, status, msg,   the strings as they are
//	owner, endpoint, ended             (ended: the Token of the update that ended the task; absent before)
//	created, updated, lease            Unix milliseconds
//	ttl, poll                          milliseconds
//	cancel                             "1" once cancellation is requested; absent before
//	state, result, error               the bytes as they are; absent when empty
//	q:<key>                            an outstanding question (InputRequests[key]), its JSON as it came
//	a:<key>                            an answer (Answers[key]), its JSON as it came
//	nq                                 how many q: fields there are, for the scripts
//	                                   (while the task is not terminal)
//	rlease                             the end of the lease on Redis's clock (Unix ms),
//	                                   for the scripts only (see TaskStore: Whose clock)
//
// No fixed field starts with "q:" or "a:", so a key cannot collide with one.
// The scripts (taskcreate.lua, taskupdate.lua) use the same names.

// taskFields returns t's fields as the field, value pairs taskcreate.lua
// stores.
func taskFields(t *mcpmw.Task) []any {
	f := make([]any, 0, 2*(15+len(t.InputRequests)+len(t.Answers)))
	f = append(f,
		"caller", t.CallerID, "tool", t.Tool, "perm", string(t.Permission), "status", string(t.Status), "msg", t.StatusMessage, "owner", t.Owner, "endpoint", t.Endpoint,
		"created", t.Created.UnixMilli(), "updated", t.Updated.UnixMilli(), "lease", t.LeaseUntil.UnixMilli(),
		"ttl", t.TTL.Milliseconds(), "poll", t.PollInterval.Milliseconds(), "nq", len(t.InputRequests))
	if t.EndedBy != "" {
		f = append(f, "ended", t.EndedBy)
	}
	if t.CancelRequested {
		f = append(f, "cancel", "1")
	}
	for _, b := range []struct {
		field string
		v     []byte
	}{{"state", t.State}, {"result", t.Result}, {"error", t.Error}} {
		if len(b.v) > 0 {
			f = append(f, b.field, b.v)
		}
	}
	for k, v := range t.InputRequests {
		f = append(f, "q:"+k, []byte(v))
	}
	for k, v := range t.Answers {
		f = append(f, "a:"+k, []byte(v))
	}
	return f
}

// decodeTask returns the task id whose hash holds fields; a field this
// version does not know is skipped, one it cannot read is an error.
func decodeTask(id string, fields iter.Seq2[string, string]) (*mcpmw.Task, error) {
	t := &mcpmw.Task{ID: id}
	for k, v := range fields {
		if err := setField(t, k, v); err != nil {
			return nil, fmt.Errorf("mcpredis: task store: the task %s in Redis: the field %q: %w", id, k, err)
		}
	}
	return t, nil
}

// setField sets the member of t that the field k holds to v.
func setField(t *mcpmw.Task, k, v string) error {
	var err error
	switch k {
	case "caller":
		t.CallerID = v
	case "tool":
		t.Tool = v
	case "perm":
		t.Permission = mcpmw.Permission(v)
	case "status":
		t.Status = mcpmw.TaskStatus(v)
	case "msg":
		t.StatusMessage = v
	case "endpoint":
		t.Endpoint = v
	case "ended":
		t.EndedBy = v
	case "owner":
		t.Owner = v
	case "created":
		t.Created, err = msTime(v)
	case "updated":
		t.Updated, err = msTime(v)
	case "lease":
		t.LeaseUntil, err = msTime(v)
	case "ttl":
		t.TTL, err = msDuration(v)
	case "poll":
		t.PollInterval, err = msDuration(v)
	case "cancel":
		t.CancelRequested = v == "1"
	case "state":
		t.State = []byte(v)
	case "result":
		t.Result = json.RawMessage(v)
	case "error":
		t.Error = json.RawMessage(v)
	default:
		if key, ok := strings.CutPrefix(k, "q:"); ok {
			t.InputRequests = put(t.InputRequests, key, v)
		} else if key, ok := strings.CutPrefix(k, "a:"); ok {
			t.Answers = put(t.Answers, key, v)
		}
	}
	return err
}

// put sets m[k] to v, making m if it is nil.
func put(m map[string]json.RawMessage, k, v string) map[string]json.RawMessage {
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m[k] = json.RawMessage(v)
	return m
}

// flatPairs reads a script's HGETALL reply, field, value, field, value...,
// as pairs. Redis answers strings there; anything else would read as ""
// (a field no version knows).
func flatPairs(flat []any) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for f := flat; len(f) >= 2; f = f[2:] {
			k, _ := f[0].(string)
			v, _ := f[1].(string)
			if !yield(k, v) {
				return
			}
		}
	}
}

// msString returns t in Unix milliseconds, as a script takes it.
func msString(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// ceilMilli returns t in Unix milliseconds rounded up: a time of whole
// milliseconds L is before t exactly when L < ceilMilli(t).
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli() // rounded down, even before 1970
	if t.Nanosecond()%int(time.Millisecond) != 0 {
		ms++
	}
	return ms
}

func msTime(v string) (time.Time, error) {
	ms, err := strconv.ParseInt(v, 10, 64)
	return time.UnixMilli(ms), err
}

func msDuration(v string) (time.Duration, error) {
	ms, err := strconv.ParseInt(v, 10, 64)
	return time.Duration(ms) * time.Millisecond, err
}
