package mcpmw_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw"
)

// taskBenchCaller may read and is identified, as a task's caller must be.
type taskBenchCaller struct{ benchCaller }

func (taskBenchCaller) CallerID() string { return "bench-user" }

const benchTaskMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}`

// newTaskBenchHandler serves echo (TaskNever) and export, echo as a
// TaskOptional tool, with the memory store.
func newTaskBenchHandler(b *testing.B, maxRunning int) *mcpmw.Handler {
	export := benchEcho
	export.Name, export.Task = "export", mcpmw.TaskOptional
	var reg mcpmw.Registry
	reg.AddTools(benchEcho, export)
	authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return taskBenchCaller{}, nil })
	audit := mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {})
	h := mcpmw.New(&reg, authn, audit, &mcpmw.Options{Logger: slog.New(slog.DiscardHandler), Tasks: &mcpmw.TaskOptions{MaxRunning: maxRunning}})
	b.Cleanup(h.Close)
	return h
}

// taskBenchCall is newBenchCall declaring the tasks extension.
func taskBenchCall(method, name, params string) *benchCall {
	c := newBenchCall(method, name, params)
	c.body = []byte(strings.Replace(string(c.body), benchMeta, benchTaskMeta, 1))
	c.tmpl.ContentLength = int64(len(c.body))
	return c
}

// BenchmarkServeHTTPTasksGet is a tasks/get of a completed task, with the
// memory store, beside the tools/call of echo it completed with (target:
// at most 1.3x the call).
func BenchmarkServeHTTPTasksGet(b *testing.B) {
	h := newTaskBenchHandler(b, 64)
	b.Run("tools/call", func(b *testing.B) {
		runBench(b, h, taskBenchCall("tools/call", "echo", `"name":"echo","arguments":{"message":"abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"}`), `"text":"abcdefghij`)
	})
	w := newBenchWriter()
	h.ServeHTTP(w, taskBenchCall("tools/call", "export", `"name":"export","arguments":{"message":"abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"}`).request())
	i := strings.Index(string(w.body), `"taskId":"`)
	if i < 0 {
		b.Fatalf("no task: %s", w.body)
	}
	id := string(w.body[i+10 : i+32])
	get := taskBenchCall("tasks/get", id, `"taskId":"`+id+`"`)
	deadline := time.Now().Add(5 * time.Second)
	for {
		w.reset()
		h.ServeHTTP(w, get.request())
		if strings.Contains(string(w.body), `"status":"completed"`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	b.Run("tasks/get", func(b *testing.B) {
		runBench(b, h, get, `"text":"abcdefghij`)
	})
}

// BenchmarkServeHTTPTaskCreate is a tools/call that becomes a task: the
// answer once the task is stored (its run, in the background, is not
// waited for).
func BenchmarkServeHTTPTaskCreate(b *testing.B) {
	h := newTaskBenchHandler(b, 1<<20)
	c := taskBenchCall("tools/call", "export", `"name":"export","arguments":{"message":"abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"}`)
	w := newBenchWriter()
	b.ReportAllocs()
	for b.Loop() {
		w.reset()
		h.ServeHTTP(w, c.request())
		if w.status != http.StatusOK || !strings.Contains(string(w.body), `"resultType":"task"`) {
			b.Fatalf("no task: %d %s", w.status, w.body)
		}
	}
}
