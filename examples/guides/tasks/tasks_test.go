// Package tasks_test is the tested source of the snippet of docs/tasks.md.
package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/redistest"
	"github.com/mcpmw/mcpmw/mcpmwtest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// release lets the test decide when an export ends; each export waits for
// it or for its context.
type exporter struct{ release chan struct{} }

func (e exporter) export(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
	select {
	case <-e.release:
		return mcpmw.StructuredResult(map[string]any{"notes": []string{"buy milk"}}), nil
	case <-ctx.Done():
		return mcpmw.ToolResult{}, ctx.Err()
	}
}

// newEndpoint is the guide's endpoint: notes_export may become a task, kept
// in Redis.
func newEndpoint(cfg mcpredis.Config, authn mcpmw.Authenticator, audit mcpmw.Auditor, export func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error)) *mcpmw.Handler {
	var reg mcpmw.Registry
	// !+tasks
	reg.AddTools(mcpmw.Tool{
		Name: "notes_export", Permission: "read", Task: mcpmw.TaskOptional,
		Call: export, // honours ctx: tasks/cancel cancels it
	})
	h := mcpmw.New(&reg, authn, audit, &mcpmw.Options{
		Tasks: &mcpmw.TaskOptions{Store: mcpredis.NewTaskStore(cfg)}, // nil: in this process's memory
	})
	// !-tasks
	return h
}

// task is the part of a CreateTaskResult and of tasks/get's answer the
// test reads.
type task struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	PollIntervalMs int             `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
}

func TestNotesExportAsATask(t *testing.T) {
	rs := redistest.Start(t)
	// A generous Timeout: this checks answers, and on a busy machine a 50 ms
	// deadline (the default) can turn the first task into a plain call.
	cfg := mcpredis.Config{Client: redis.NewClient(&redis.Options{Addr: rs.Addr, ContextTimeoutEnabled: true}), Prefix: "guide:", Timeout: 5 * time.Second}
	e := exporter{release: make(chan struct{})}
	authn := mcpmwtest.Tokens{
		"ann": &mcpmwtest.User{Name: "ann", Permissions: []mcpmw.Permission{"read"}},
		"bob": &mcpmwtest.User{Name: "bob", Permissions: []mcpmw.Permission{"read"}},
	}
	h := newEndpoint(cfg, authn, mcpmwtest.NewRecorder(), e.export)
	t.Cleanup(h.Close)
	srv := mcpmwtest.NewServer(t, h)
	tasksExt := mcpmwtest.Capabilities(map[string]any{"extensions": map[string]any{mcpmw.ExtensionTasks: map[string]any{}}})
	ann := srv.Client(mcpmwtest.Bearer("ann"), tasksExt)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	call := func() task {
		res, err := ann.Call(ctx, "tools/call", map[string]any{"name": "notes_export", "arguments": map[string]any{}})
		require.NoError(t, err)
		var tk task
		require.NoError(t, res.Decode(&tk))
		require.Equal(t, "task", tk.ResultType, "answered at once with a task: %s", res.Result)
		return tk
	}
	get := func(c *mcpmwtest.Client, id string) (task, error) {
		res, err := c.Call(ctx, "tasks/get", map[string]any{"taskId": id})
		if err != nil {
			return task{}, err
		}
		var tk task
		require.NoError(t, res.Decode(&tk))
		return tk, nil
	}
	waitFor := func(id, status string) task {
		for {
			tk, err := get(ann, id)
			require.NoError(t, err)
			if tk.Status == status {
				return tk
			}
			require.Equal(t, "working", tk.Status)
			select {
			case <-ctx.Done():
				t.Fatalf("task %s still %s, not %s", id, tk.Status, status)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}

	// Cancelled: the tool's context ends, the task reads cancelled.
	first := call()
	assert.Equal(t, "working", first.Status)
	_, err := ann.Call(ctx, "tasks/cancel", map[string]any{"taskId": first.TaskID})
	require.NoError(t, err)
	waitFor(first.TaskID, "cancelled")

	// Another caller gets the answer of an unknown id.
	second := call()
	_, err = get(srv.Client(mcpmwtest.Bearer("bob"), tasksExt), second.TaskID)
	var me *mcpmwtest.Error
	require.True(t, errors.As(err, &me), "bob read ann's task: %v", err)
	assert.Equal(t, -32602, me.Code)

	// Completed: the tool's result is the task's.
	close(e.release)
	done := waitFor(second.TaskID, "completed")
	assert.Contains(t, string(done.Result), `"structuredContent":{"notes":["buy milk"]}`)

	// Without the extension the same call is answered when done, with no task.
	res, err := srv.Client(mcpmwtest.Bearer("ann")).CallTool(ctx, "notes_export", nil)
	require.NoError(t, err)
	assert.Contains(t, string(res.StructuredContent), "buy milk")
}
