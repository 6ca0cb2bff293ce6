package mcpmwtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw"
)

// TestTaskStore checks a TaskStore against the meaning of each TaskOp
// (mcpmw.Task.Apply): every field is kept (Endpoint and EndedBy
// included), every change it makes is the one Apply makes, terminal stays
// terminal, a key is asked at most once, concurrent finishes end a task
// exactly once and keep the winner's token, and an expired task is gone. newStore
// returns an empty store for one subtest (each is run in parallel). Call
// it from the test of your own store:
//
//	func TestMyStore(t *testing.T) {
//		mcpmwtest.TestTaskStore(t, func(t *testing.T) mcpmw.TaskStore { return mystore.New(t) })
//	}
//
// Times are compared to the millisecond, the resolution of the wire.
func TestTaskStore(t *testing.T, newStore func(t *testing.T) mcpmw.TaskStore) {
	t.Helper()
	for _, c := range taskStoreCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newStore(t))
		})
	}
}

// newTask returns a working task owned by "instance-1", created now.
func newTask(id string, now time.Time) *mcpmw.Task {
	return &mcpmw.Task{
		ID: id, CallerID: "alice", Endpoint: "/mcp", Tool: "export", Permission: "read", Status: mcpmw.TaskWorking,
		Created: now, Updated: now, TTL: time.Hour, PollInterval: time.Second,
		Owner: "instance-1", LeaseUntil: now.Add(10 * time.Second),
	}
}

// sameTask fails t unless got equals want, times to the millisecond and
// empty maps as nil.
func sameTask(t *testing.T, want, got *mcpmw.Task, step string) {
	t.Helper()
	norm := func(x *mcpmw.Task) mcpmw.Task {
		c := *x.Clone()
		for _, p := range []*time.Time{&c.Created, &c.Updated, &c.LeaseUntil} {
			*p = time.UnixMilli(p.UnixMilli()).UTC()
		}
		if len(c.InputRequests) == 0 {
			c.InputRequests = nil
		}
		if len(c.Answers) == 0 {
			c.Answers = nil
		}
		if len(c.State) == 0 {
			c.State = nil
		}
		for _, m := range []map[string]json.RawMessage{c.InputRequests, c.Answers} {
			for k, v := range m {
				m[k] = compactJSON(v)
			}
		}
		if len(c.Result) == 0 {
			c.Result = nil
		} else {
			c.Result = compactJSON(c.Result)
		}
		if len(c.Error) == 0 {
			c.Error = nil
		} else {
			c.Error = compactJSON(c.Error)
		}
		return c
	}
	w, g := norm(want), norm(got)
	if !reflect.DeepEqual(w, g) {
		t.Fatalf("%s:\n got %+v\nwant %+v", step, g, w)
	}
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	out, _ := json.Marshal(v)
	return out
}

// step applies u to the store and to a local copy through Task.Apply, and
// checks that both agree.
func step(t *testing.T, s mcpmw.TaskStore, model *mcpmw.Task, u mcpmw.TaskUpdate, name string) *mcpmw.Task {
	t.Helper()
	wantChanged := model.Apply(u)
	got, changed, err := s.Update(context.Background(), model.ID, u)
	if err != nil {
		t.Fatalf("%s: Update: %v", name, err)
	}
	if changed != wantChanged {
		t.Fatalf("%s: Update reported changed=%v, Task.Apply %v", name, changed, wantChanged)
	}
	sameTask(t, model, got, name+" (as Update returned it)")
	read, err := s.Get(context.Background(), model.ID)
	if err != nil {
		t.Fatalf("%s: Get: %v", name, err)
	}
	sameTask(t, model, read, name+" (as Get reads it)")
	return got
}

var taskStoreCases = []struct {
	name string
	run  func(t *testing.T, s mcpmw.TaskStore)
}{
	{"CreateThenGet", func(t *testing.T, s mcpmw.TaskStore) {
		ctx := context.Background()
		now := time.Now()
		task := newTask("t-create", now)
		task.Answers = map[string]json.RawMessage{"carried": json.RawMessage(`{"action":"accept"}`)}
		if err := s.Create(ctx, task); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameTask(t, task, got, "Get after Create")
		got.Answers["mutated"] = json.RawMessage(`{}`)
		again, _ := s.Get(ctx, task.ID)
		sameTask(t, task, again, "what Get returned is a copy")
		if err := s.Create(ctx, newTask("t-create", now)); err == nil {
			t.Fatal("Create of a taken id succeeded")
		}
	}},
	{"UnknownTask", func(t *testing.T, s mcpmw.TaskStore) {
		ctx := context.Background()
		if _, err := s.Get(ctx, "t-none"); !errors.Is(err, mcpmw.ErrTaskNotFound) {
			t.Fatalf("Get of an unknown id: %v, want ErrTaskNotFound", err)
		}
		if _, _, err := s.Update(ctx, "t-none", mcpmw.TaskUpdate{Op: mcpmw.TaskCancel}); !errors.Is(err, mcpmw.ErrTaskNotFound) {
			t.Fatalf("Update of an unknown id: %v, want ErrTaskNotFound", err)
		}
	}},
	{"AskAnswerFinish", func(t *testing.T, s mcpmw.TaskStore) {
		now := time.Now()
		model := newTask("t-ask", now)
		if err := s.Create(context.Background(), model.Clone()); err != nil {
			t.Fatal(err)
		}
		later := now.Add(time.Second)
		q := func(s string) json.RawMessage {
			return json.RawMessage(`{"method":"elicitation/create","params":{"mode":"form","message":"` + s + `","requestedSchema":{"type":"object"}}}`)
		}
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskRenew, Owner: "instance-1", LeaseUntil: later.Add(10 * time.Second)}, "renew")
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskRenew, Owner: "instance-2", LeaseUntil: later.Add(time.Hour)}, "renew by another owner")
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskAsk, Owner: "instance-1", Requests: map[string]json.RawMessage{"a": q("A?"), "b": q("B?")}, State: []byte("round-2"), Message: "waiting for 2 answers", Now: later}, "ask two")
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: map[string]json.RawMessage{"a": json.RawMessage(`{"action":"accept","content":{"v":"A"}}`), "zzz": json.RawMessage(`{}`)}, Now: later.Add(time.Second)}, "answer one, and an unknown key")
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: map[string]json.RawMessage{"a": json.RawMessage(`{"again":true}`)}, Now: later.Add(2 * time.Second)}, "answer an answered key")
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskAsk, Owner: "instance-1", Requests: map[string]json.RawMessage{"a": q("A again?"), "b": q("B?"), "c": q("C?")}, Message: "waiting", Now: later.Add(3 * time.Second)}, "ask an answered key, an outstanding one and a new one")
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskAnswer, Responses: map[string]json.RawMessage{"b": json.RawMessage(`{"action":"decline"}`), "c": json.RawMessage(`{"action":"cancel"}`)}, Now: later.Add(4 * time.Second)}, "answer the rest: working again")
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "instance-2", Status: mcpmw.TaskCompleted, Result: json.RawMessage(`{"content":[]}`), Now: later.Add(5 * time.Second)}, "finish by another owner")
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "instance-1", Status: mcpmw.TaskCompleted, Result: json.RawMessage(`{"content":[{"type":"text","text":"done"}],"isError":false}`), Message: "done", Now: later.Add(6 * time.Second), Token: "finish-1"}, "finish")
		for _, u := range []mcpmw.TaskUpdate{
			{Op: mcpmw.TaskCancel},
			{Op: mcpmw.TaskRenew, Owner: "instance-1", LeaseUntil: later.Add(time.Hour)},
			{Op: mcpmw.TaskAsk, Owner: "instance-1", Requests: map[string]json.RawMessage{"d": q("D?")}},
			{Op: mcpmw.TaskFinish, Owner: "instance-1", Status: mcpmw.TaskFailed, Error: json.RawMessage(`{"code":-32603,"message":"x"}`), Token: "finish-2"},
			{Op: mcpmw.TaskReap, Now: later.Add(time.Hour), Error: json.RawMessage(`{"code":-32603,"message":"x"}`), Token: "reap-2"},
		} {
			step(t, s, model, u, fmt.Sprintf("op %d on a terminal task", u.Op))
		}
	}},
	{"CancelThenFinishCancelled", func(t *testing.T, s mcpmw.TaskStore) {
		now := time.Now()
		model := newTask("t-cancel", now)
		if err := s.Create(context.Background(), model.Clone()); err != nil {
			t.Fatal(err)
		}
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskCancel, Now: now}, "cancel")
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskCancel, Now: now}, "cancel again")
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "instance-1", Status: mcpmw.TaskCancelled, Message: "cancelled by the client", Now: now.Add(time.Millisecond), Token: "finish-cancelled"}, "finish cancelled")
	}},
	{"FailedKeepsItsError", func(t *testing.T, s mcpmw.TaskStore) {
		now := time.Now()
		model := newTask("t-failed", now)
		if err := s.Create(context.Background(), model.Clone()); err != nil {
			t.Fatal(err)
		}
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "instance-1", Status: mcpmw.TaskWorking, Now: now}, "finish with a status that is not terminal")
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "instance-1", Status: mcpmw.TaskFailed, Error: json.RawMessage(`{"code":-32602,"message":"bad","data":{"x":[1,2]}}`), Message: "bad", Now: now}, "fail")
	}},
	{"ReapOnlyAfterTheLease", func(t *testing.T, s mcpmw.TaskStore) {
		ctx := context.Background()
		now := time.Now()
		model := newTask("t-reap", now)
		other := newTask("t-alive", now)
		other.LeaseUntil = now.Add(time.Hour)
		for _, x := range []*mcpmw.Task{model, other} {
			if err := s.Create(ctx, x.Clone()); err != nil {
				t.Fatal(err)
			}
		}
		ids, err := s.Expired(ctx, now.Add(time.Second), 10)
		if err != nil || len(ids) != 0 {
			t.Fatalf("Expired before any lease ended: %v, %v", ids, err)
		}
		ids, err = s.Expired(ctx, now.Add(11*time.Second), 10)
		if err != nil || !reflect.DeepEqual(ids, []string{"t-reap"}) {
			t.Fatalf("Expired once t-reap's lease ended: %v, %v; want [t-reap]", ids, err)
		}
		dead := json.RawMessage(`{"code":-32603,"message":"the instance running the task stopped"}`)
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: now.Add(5 * time.Second), Error: dead, Message: "stopped", Token: "reap-early"}, "reap before the lease ended")
		step(t, s, model, mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: now.Add(11 * time.Second), Error: dead, Message: "stopped", Token: "reap-1"}, "reap after it")
		ids, err = s.Expired(ctx, now.Add(time.Minute), 10)
		if err != nil || len(ids) != 0 {
			t.Fatalf("Expired lists a terminal task or one whose lease runs: %v, %v", ids, err)
		}
	}},
	{"TTL", func(t *testing.T, s mcpmw.TaskStore) {
		ctx := context.Background()
		task := newTask("t-ttl", time.Now())
		task.TTL = 300 * time.Millisecond
		if err := s.Create(ctx, task); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, task.ID); err != nil {
			t.Fatalf("Get within the TTL: %v", err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, err := s.Get(ctx, task.ID)
			if errors.Is(err, mcpmw.ErrTaskNotFound) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the task is still there 5 s after its TTL of 300 ms: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}},
	{"ZeroTTLNeverExpires", func(t *testing.T, s mcpmw.TaskStore) {
		ctx := context.Background()
		task := newTask("t-forever", time.Now().Add(-48*time.Hour))
		task.TTL = 0
		if err := s.Create(ctx, task); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, task.ID)
		if err != nil {
			t.Fatalf("a task without a TTL (0) is kept: %v", err)
		}
		sameTask(t, task, got, "Get of a task without a TTL")
	}},
	{"ExpiredHonoursItsLimit", func(t *testing.T, s mcpmw.TaskStore) {
		ctx := context.Background()
		now := time.Now()
		for i := range 5 {
			task := newTask("t-limit-"+strconv.Itoa(i), now)
			task.LeaseUntil = now.Add(-time.Duration(i+1) * time.Second)
			if err := s.Create(ctx, task); err != nil {
				t.Fatal(err)
			}
		}
		for _, limit := range []int{1, 3, 5, 10} {
			ids, err := s.Expired(ctx, now, limit)
			if err != nil {
				t.Fatal(err)
			}
			if want := min(limit, 5); len(ids) != want {
				t.Fatalf("Expired(limit %d) returned %d ids, want %d: %v", limit, len(ids), want, ids)
			}
		}
	}},
	{"ConcurrentFinishesEndItOnce", func(t *testing.T, s mcpmw.TaskStore) {
		ctx := context.Background()
		now := time.Now()
		const n = 16
		if err := s.Create(ctx, newTask("t-race", now)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won, winner := 0, ""
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				token := "end-" + strconv.Itoa(i)
				u := mcpmw.TaskUpdate{Op: mcpmw.TaskFinish, Owner: "instance-1", Status: mcpmw.TaskCompleted, Result: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), Now: now, Token: token}
				if i%2 == 1 {
					u = mcpmw.TaskUpdate{Op: mcpmw.TaskReap, Now: now.Add(time.Minute), Error: json.RawMessage(`{"code":-32603,"message":"gone"}`), Token: token}
				}
				_, changed, err := s.Update(ctx, "t-race", u)
				if err != nil {
					t.Error(err)
				}
				if changed {
					mu.Lock()
					won, winner = won+1, token
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d of %d concurrent finishes changed the task, want exactly 1", won, n)
		}
		got, _ := s.Get(ctx, "t-race")
		if !got.Status.Terminal() {
			t.Fatalf("status %q after the finishes", got.Status)
		}
		if got.EndedBy != winner {
			t.Fatalf("EndedBy %q after the finishes, want the winner's token %q: the writer of an end finds its own token there", got.EndedBy, winner)
		}
	}},
}
