package mcpredis_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// taskCaps declares the tasks extension and elicitation.
const taskCaps = `{"extensions":{"io.modelcontextprotocol/tasks":{}},"elicitation":{}}`

// taskCall sends a 2026-07-28 request of method, with the members params,
// as alice, to h, and returns its result (or fails t on an error).
func taskCall(t *testing.T, h http.Handler, method, params string) map[string]any {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `,` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + taskCaps + `}}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer alice")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", method)
	var p struct{ Name, TaskID string }
	require.NoError(t, json.Unmarshal([]byte("{"+params+"}"), &p))
	r.Header.Set("Mcp-Name", p.Name+p.TaskID)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var msg struct {
		Result map[string]any
		Error  json.RawMessage
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &msg), w.Body.String())
	require.Nil(t, msg.Error, w.Body.String())
	return msg.Result
}

// untilStatus polls tasks/get on h until the task reads status, at most
// 5 s, and returns that answer.
func untilStatus(t *testing.T, h http.Handler, id, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := taskCall(t, h, "tasks/get", `"taskId":`+strconv.Quote(id))
		if r["status"] == status {
			return r
		}
		require.True(t, time.Now().Before(deadline), "task %s still %v after 5 s, not %s", id, r["status"], status)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTaskStoreServesTasksAcrossInstances: two handlers sharing a Redis
// TaskStore, as two instances would: a task created on one asks its
// question, is answered and read to its end on the other, and a task
// whose instance died is failed by the reaper of a live one.
func TestTaskStoreServesTasksAcrossInstances(t *testing.T) {
	t.Parallel()
	cfg, _, _ := config(t, mcpredis.FailOpen)
	store := mcpredis.NewTaskStore(cfg)
	ask := mcpmw.Tool{Name: "ask", Permission: "run", Task: mcpmw.TaskOptional,
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			ans, err := mcpmw.Ask(ctx, "q", mcpmw.ElicitForm("?", json.RawMessage(`{"type":"object"}`)))
			if err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult(string(ans)), nil
		}}
	users := mcpmwtest.Tokens{"alice": &mcpmwtest.User{Name: "alice", Permissions: []mcpmw.Permission{"run"}}}
	instance := func() *mcpmw.Handler {
		var reg mcpmw.Registry
		reg.AddTools(ask)
		h := mcpmw.New(&reg, users, mcpmwtest.NewRecorder(), &mcpmw.Options{Logger: discard,
			Tasks: &mcpmw.TaskOptions{Store: store, PollInterval: 20 * time.Millisecond, Lease: 600 * time.Millisecond}})
		t.Cleanup(h.Close)
		return h
	}
	one, two := instance(), instance()

	created := taskCall(t, one, "tools/call", `"name":"ask","arguments":{}`)
	require.Equal(t, "task", created["resultType"], created)
	id, _ := created["taskId"].(string)
	asking := untilStatus(t, two, id, "input_required")
	assert.Contains(t, asking["inputRequests"], "q", "the question, read from Redis on the other instance")
	taskCall(t, two, "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{"q":{"action":"accept","content":{"x":1}}}`)
	done := untilStatus(t, two, id, "completed")
	text := done["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	assert.JSONEq(t, `{"action":"accept","content":{"x":1}}`, text.(string), "the answer given to instance two reached the run on instance one")

	now := time.Now()
	require.NoError(t, store.Create(t.Context(), &mcpmw.Task{ID: "orphan", CallerID: "alice", Endpoint: "/mcp", Tool: "ask", Permission: "run",
		Status: mcpmw.TaskWorking, Created: now, Updated: now, TTL: time.Hour, Owner: "a-dead-instance", LeaseUntil: now.Add(-time.Second)}))
	failed := untilStatus(t, two, "orphan", "failed")
	assert.Contains(t, failed["error"].(map[string]any)["message"], "stopped before it finished")
	n, err := cfg.Client.ZCard(t.Context(), leaseSet).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "both tasks ended: none left in the lease set")
}
