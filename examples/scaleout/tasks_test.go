package scaleout

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tasks across instances: each task lives in the one redis-server the
// instances share (mcpredis.NewTaskStore), runs on the instance that took
// the call, and is read, answered and cancelled through any of them.

// taskMeta is the params._meta of a 2026-07-28 request declaring the
// tasks extension and elicitation.
const taskMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}},"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"scaleout","version":"0"}}`

// taskAnswer is a decoded answer of a task request.
type taskAnswer struct {
	Result map[string]any      `json:"result"`
	Error  *struct{ Code int } `json:"error"`
}

// taskRPC sends method with params (members, without _meta) through url as
// token, with the request id id, and decodes the answer.
func taskRPC(t *testing.T, url, token, id, method, name, params string) taskAnswer {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":` + strconv.Quote(id) + `,"method":"` + method + `","params":{` + params + `,` + taskMeta + `}}`
	status, _, raw, err := post(t.Context(), url, token, method, name, body)
	require.NoError(t, err)
	var a taskAnswer
	require.NoError(t, json.Unmarshal(raw, &a), "HTTP %d: %s", status, raw)
	return a
}

// createTask calls tool through url and returns the task's id.
func createTask(t *testing.T, url, token, id, tool, args string) string {
	t.Helper()
	a := taskRPC(t, url, token, id, "tools/call", tool, `"name":"`+tool+`","arguments":`+args)
	require.Nil(t, a.Error, "%s: %+v", tool, a)
	require.Equal(t, "task", a.Result["resultType"], "%s becomes a task: %+v", tool, a.Result)
	return a.Result["taskId"].(string)
}

// getTask reads the task through url as token.
func getTask(t *testing.T, url, token, task string) taskAnswer {
	t.Helper()
	return taskRPC(t, url, token, "get-"+task, "tasks/get", task, `"taskId":`+strconv.Quote(task))
}

// untilStatus polls the task through url until it reads want (failing on
// another terminal status), within d; it returns the task then.
func untilStatus(t *testing.T, url, task, want string, d time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		a := getTask(t, url, readerToken, task)
		require.Nil(t, a.Error, "%+v", a)
		s := a.Result["status"]
		if s == want {
			return a.Result
		}
		if s == "completed" || s == "failed" || s == "cancelled" {
			t.Fatalf("task %s is %v, want %s: %+v", task, s, want, a.Result)
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is still %v after %v, want %s", task, s, d, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTaskReadCancelledAndBoundAcrossInstances: a notes_export task
// created on instance 1 is read on 2 and finished on 3, with the caller's
// team's notes; another team's caller gets -32602 for its id on every
// instance; a task created on 1 and cancelled on 2 reads cancelled on 3.
func TestTaskReadCancelledAndBoundAcrossInstances(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "chi-app", "EXPORT_DELAY=1", "RATE_LIMIT=0")
	one, two, three := c.instances[0].url, c.instances[1].url, c.instances[2].url
	createNote(t, one, writerToken, "exported across instances")

	task := createTask(t, one, readerToken, "export-1", "notes_export", `{}`)
	assert.Equal(t, "working", getTask(t, two, readerToken, task).Result["status"], "instance 2 reads the task instance 1 runs")
	for _, url := range []string{one, two, three} {
		for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			params := `"taskId":` + strconv.Quote(task)
			if method == "tasks/update" {
				params += `,"inputResponses":{}`
			}
			a := taskRPC(t, url, otherToken, "other", method, task, params)
			require.NotNil(t, a.Error, "%s of another team's task on %s: %+v", method, url, a)
			assert.Equal(t, -32602, a.Error.Code, "%s on %s: as an unknown id", method, url)
		}
	}
	done := untilStatus(t, three, task, "completed", patience)
	structured := done["result"].(map[string]any)["structuredContent"].(map[string]any)
	notes, _ := json.Marshal(structured["notes"])
	assert.Contains(t, string(notes), "exported across instances", "the team's notes, through instance 3")

	cancelled := createTask(t, one, readerToken, "export-2", "notes_export", `{}`)
	ack := taskRPC(t, two, readerToken, "cancel-2", "tasks/cancel", cancelled, `"taskId":`+strconv.Quote(cancelled))
	require.Nil(t, ack.Error, "%+v", ack)
	start := time.Now()
	untilStatus(t, three, cancelled, "cancelled", patience)
	t.Logf("a cancel sent to instance 2 ended the run on instance 1, read on 3, %v later", time.Since(start).Round(time.Millisecond))
}

// TestTaskQuestionsAnsweredOnAnotherInstance: the fixture's confirm_delete
// run on instance 1 asks; instance 2 shows the question, instance 3 takes
// the answer, and the run on 1 finishes with it.
func TestTaskQuestionsAnsweredOnAnotherInstance(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "conformance")
	one, two, three := c.instances[0].url, c.instances[1].url, c.instances[2].url
	task := createTask(t, one, "", "confirm-1", "confirm_delete", `{"filename":"a.txt"}`)
	asked := untilStatus(t, two, task, "input_required", patience)
	reqs := asked["inputRequests"].(map[string]any)
	require.Contains(t, reqs, "confirm")
	a := taskRPC(t, three, "", "update-1", "tasks/update", task, `"taskId":`+strconv.Quote(task)+`,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}}`)
	require.Nil(t, a.Error, "%+v", a)
	done := untilStatus(t, two, task, "completed", patience)
	text := done["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	assert.Equal(t, "Deleted a.txt.", text)
}

// TestTaskOfAKilledInstanceFails: a task whose instance is killed
// (SIGKILL) is failed by the others within the documented bound (the
// lease, 10 s, and half of it for the reaper: 15 s; the bound is
// 20 s). The bound is checked on the task's lastUpdatedAt, the moment the
// reaping instance failed it, not on when the test read it: polling
// through a busy machine adds its own delay, which the bound is not about.
func TestTaskOfAKilledInstanceFails(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "conformance")
	task := createTask(t, c.instances[0].url, "", "slow-1", "slow_compute", `{"seconds":600,"label":"doomed"}`)
	untilStatus(t, c.instances[1].url, task, "working", patience)
	c.instances[0].kill(t)
	killed := time.Now()
	deadline := killed.Add(20*time.Second + patience)
	for {
		a := getTask(t, c.instances[1+int(time.Since(killed)/time.Second)%2].url, "", task)
		require.Nil(t, a.Error, "%+v", a)
		if a.Result["status"] == "failed" {
			msg := a.Result["error"].(map[string]any)["message"]
			assert.Contains(t, msg, "stopped before it finished")
			reaped, err := time.Parse(time.RFC3339Nano, a.Result["lastUpdatedAt"].(string))
			require.NoError(t, err)
			t.Logf("the task was failed %v after its instance was killed, and read so %v after", reaped.Sub(killed).Round(100*time.Millisecond), time.Since(killed).Round(100*time.Millisecond))
			assert.Less(t, reaped.Sub(killed), 16*time.Second, "within the lease and half of it (the reaper's tick, and a millisecond's rounding)")
			return
		}
		require.Equal(t, "working", a.Result["status"])
		if time.Now().After(deadline) {
			t.Fatalf("the task of a killed instance still reads working %v later", time.Since(killed).Round(time.Second))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestManyTasksThroughTheProxy: 200 notes_export tasks created at once
// through the round-robin proxy all complete; each has exactly one record
// of its creation and one of its end across the three audit logs; then no
// lease is left and every task key will expire (Redis forgets each at its
// TTL: redis/ tests that nothing stays).
func TestManyTasksThroughTheProxy(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "chi-app", "EXPORT_DELAY=0.3", "RATE_LIMIT=0")
	const n = 200
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = createTask(t, c.proxyURL, readerToken, fmt.Sprintf("many-%d", i), "notes_export", `{}`)
		}()
	}
	wg.Wait()
	for _, id := range ids {
		untilStatus(t, c.proxyURL, id, "completed", patience)
	}
	waitFor(t, "every task's end recorded", patience, func() bool {
		records := map[string]int{}
		for _, in := range c.instances {
			for id, k := range in.records(t) {
				records[id] += k
			}
		}
		for i := range n {
			if records[fmt.Sprintf("many-%d", i)] != 2 {
				return false
			}
		}
		return true
	})
	records := map[string]int{}
	for _, in := range c.instances {
		for id, k := range in.records(t) {
			records[id] += k
		}
	}
	for i := range n {
		assert.Equal(t, 2, records[fmt.Sprintf("many-%d", i)], "many-%d: its creation and its end, once each", i)
	}

	rdb := redis.NewClient(&redis.Options{Addr: c.redis.Addr})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	leases, err := rdb.ZCard(ctx, "chi-app:{tasks}task-leases").Result()
	require.NoError(t, err)
	assert.Zero(t, leases, "no ended task keeps a lease")
	keys, err := rdb.Keys(ctx, "chi-app:{tasks}task:*").Result()
	require.NoError(t, err)
	assert.Len(t, keys, n)
	for _, k := range keys {
		ttl, err := rdb.PTTL(ctx, k).Result()
		require.NoError(t, err)
		assert.Positive(t, ttl, "%s expires", k)
	}
}
