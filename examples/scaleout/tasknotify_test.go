package scaleout

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// listenTasks opens a listen stream through url as token naming the task
// (the tasks extension declared), and returns it once acknowledged.
func listenTasks(t *testing.T, url, token, task string) *mcpmwtest.Listener {
	t.Helper()
	tasks := mcpmwtest.Capabilities(map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}})
	l, err := client(url, token, tasks).Listen(t.Context(), mcpmwtest.ListenFilter{TaskIDs: []string{task}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	require.Equal(t, []string{task}, l.Acknowledged.TaskIDs)
	return l
}

// next returns l's next notification, within patience.
func next(t *testing.T, l *mcpmwtest.Listener) (mcpmwtest.Notification, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	return l.Next(ctx)
}

// TestTaskStatusHeardOnAnotherInstance: real processes sharing one
// redis-server. A notes_export task runs on instance 1; its caller's
// listener on instance 2 hears it complete, with the result as tasks/get
// gives it there; another team's caller listening on instance 2 for the
// same id hears nothing of it, up to the stream's end when instance 2
// shuts down (the stream writes what it still holds first).
func TestTaskStatusHeardOnAnotherInstance(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "chi-app", "EXPORT_DELAY=5", "RATE_LIMIT=0")
	one, two := c.instances[0].url, c.instances[1].url
	task := createTask(t, one, readerToken, "export-told", "notes_export", `{}`)
	own := listenTasks(t, two, readerToken, task)
	other := listenTasks(t, two, otherToken, task)
	require.Equal(t, "working", getTask(t, two, readerToken, task).Result["status"], "the listens opened before the export ended")

	n, err := next(t, own)
	require.NoError(t, err)
	require.Equal(t, "notifications/tasks", n.Method)
	var params map[string]any
	require.NoError(t, json.Unmarshal(n.Params, &params))
	delete(params, "_meta") // the subscription id, which Next checked
	got := getTask(t, two, readerToken, task).Result
	delete(got, "resultType")
	delete(got, "_meta")
	assert.Equal(t, "completed", params["status"])
	assert.Equal(t, got, params, "the task as tasks/get gives it, its result inline")

	c.instances[1].stop() // Close: each stream writes what it holds, then its result
	for _, l := range []*mcpmwtest.Listener{other, own} {
		n, err := next(t, l)
		assert.ErrorIs(t, err, io.EOF, "nothing more, nothing of another caller's task: %s %s", n.Method, n.Params)
	}
}
