package scaleout

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// taskStream is an open subscriptions/listen stream's decoded events.
type taskStream struct{ events chan map[string]any }

// listenTasks opens a listen stream through url as token naming the task
// (the tasks extension declared), and returns it once acknowledged.
func listenTasks(t *testing.T, url, token, id, task string) *taskStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	body := `{"jsonrpc":"2.0","id":` + strconv.Quote(id) + `,"method":"subscriptions/listen","params":{"notifications":{"taskIds":[` + strconv.Quote(task) + `]},` + taskMeta + `}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := (&http.Client{Transport: httpClient.Transport}).Do(req) // no Timeout: the stream stays open
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	s := &taskStream{events: make(chan map[string]any, 16)}
	go func() {
		defer close(s.events)
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(data), &m) == nil {
					s.events <- m
				}
			}
		}
	}()
	ack := s.next(t)
	require.Equal(t, "notifications/subscriptions/acknowledged", ack["method"], ack)
	assert.Equal(t, map[string]any{"taskIds": []any{task}}, ack["params"].(map[string]any)["notifications"])
	return s
}

// next returns the stream's next event, within patience.
func (s *taskStream) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-s.events:
		require.True(t, ok, "the stream ended")
		return m
	case <-time.After(patience):
		t.Fatalf("no event within %v", patience)
		return nil
	}
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
	own := listenTasks(t, two, readerToken, "own", task)
	other := listenTasks(t, two, otherToken, "other", task)
	require.Equal(t, "working", getTask(t, two, readerToken, task).Result["status"], "the listens opened before the export ended")

	m := own.next(t)
	require.Equal(t, "notifications/tasks", m["method"], m)
	params := m["params"].(map[string]any)
	assert.Equal(t, map[string]any{"io.modelcontextprotocol/subscriptionId": "own"}, params["_meta"])
	delete(params, "_meta")
	got := getTask(t, two, readerToken, task).Result
	delete(got, "resultType")
	delete(got, "_meta")
	assert.Equal(t, "completed", params["status"])
	assert.Equal(t, got, params, "the task as tasks/get gives it, its result inline")

	c.instances[1].stop() // Close: each stream writes what it holds, then its result
	for _, s := range []*taskStream{other, own} {
		last := s.next(t)
		assert.Contains(t, last, "result", "nothing more, nothing of another caller's task: %v", last)
	}
}
