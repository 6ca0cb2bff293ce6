package mcpredis

import (
	"encoding/json"
	"fmt"
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
// stores, in a slice made once: room for the 18 fixed fields (13 always,
// ended, cancel, state, result, error) and one per question and answer.
func taskFields(t *mcpmw.Task) []any {
	f := make([]any, 0, 2*(18+len(t.InputRequests)+len(t.Answers)))
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

// decodeTask returns the task id whose hash packed holds, as taskget.lua
// packs it (<length>:<bytes> for each field, then its value); a field
// this version does not know is skipped, one it cannot read is an error.
// The strings of the task are packed's own; its bytes (State, Result,
// Error, questions and answers) share one copy of packed, made in the
// task's own allocation when it fits.
func decodeTask(id, packed string) (*mcpmw.Task, error) {
	tb := &taskAndBytes{task: mcpmw.Task{ID: id}}
	t := &tb.task
	var raw []byte // packed's bytes, copied at the first field that holds bytes
	for i := 0; i < len(packed); {
		k0, k1, ok := unpack(packed, i)
		var v0, v1 int
		if ok {
			v0, v1, ok = unpack(packed, k1)
		}
		if !ok {
			return nil, fmt.Errorf("mcpredis: task store: the task %s in Redis: a reply that is not <length>:<bytes> pairs, at byte %d", id, i)
		}
		k := packed[k0:k1]
		var b []byte
		if holdsBytes(k) {
			if raw == nil {
				raw = tb.bytes[:0]
				if len(packed) > len(tb.bytes) {
					raw = make([]byte, 0, len(packed))
				}
				raw = append(raw, packed...)
			}
			b = raw[v0:v1:v1]
		}
		if err := setField(t, k, packed[v0:v1], b); err != nil {
			return nil, fmt.Errorf("mcpredis: task store: the task %s in Redis: the field %q: %w", id, k, err)
		}
		i = v1
	}
	return t, nil
}

// A taskAndBytes is a task and room for its bytes: a task of a few
// hundred bytes (most: the fields, a short result) is decoded in one
// allocation, not two.
type taskAndBytes struct {
	task  mcpmw.Task
	bytes [512]byte
}

// unpack reads the <length>:<bytes> at s[i:] and returns where its bytes
// start and end.
func unpack(s string, i int) (start, end int, ok bool) {
	colon := strings.IndexByte(s[i:], ':')
	if colon < 1 {
		return 0, 0, false
	}
	n, err := strconv.Atoi(s[i : i+colon])
	start = i + colon + 1
	end = start + n
	return start, end, err == nil && n >= 0 && end <= len(s)
}

// holdsBytes reports whether the field k holds bytes (a []byte or a
// json.RawMessage of the task), not a string.
func holdsBytes(k string) bool {
	switch k {
	case "state", "result", "error":
		return true
	}
	return strings.HasPrefix(k, "q:") || strings.HasPrefix(k, "a:")
}

// setField sets the member of t that the field k holds to v; b is v's
// bytes, for a member that holds bytes.
func setField(t *mcpmw.Task, k, v string, b []byte) error {
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
		t.State = b
	case "result":
		t.Result = b
	case "error":
		t.Error = b
	default:
		if key, ok := strings.CutPrefix(k, "q:"); ok {
			t.InputRequests = put(t.InputRequests, key, b)
		} else if key, ok := strings.CutPrefix(k, "a:"); ok {
			t.Answers = put(t.Answers, key, b)
		}
	}
	return err
}

// put sets m[k] to v, making m if it is nil.
func put(m map[string]json.RawMessage, k string, v []byte) map[string]json.RawMessage {
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m[k] = v
	return m
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
