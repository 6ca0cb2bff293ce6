package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// A sender sends sc's request to one contestant, in this process or over
// loopback, and returns the answer.
type sender func(sc *scenario) (status int, contentType string, body []byte, err error)

// inProcess is the sender to h's ServeHTTP.
func inProcess(h http.Handler) sender {
	return func(sc *scenario) (int, string, []byte, error) {
		w := newFakeWriter()
		h.ServeHTTP(w, newTemplateRequest(sc, sc.body()))
		return w.status, w.contentType(), w.body, nil
	}
}

// overHTTP is the sender to the contestant served at url.
func overHTTP(client *http.Client, url string) sender {
	return func(sc *scenario) (int, string, []byte, error) {
		return post(client, url, sc, sc.body(), nil)
	}
}

// completedWithin bounds how long bind waits for its task to complete
// (echo's run takes microseconds; this is for a machine that is very busy).
var completedWithin = 10 * time.Second

// bind returns sc as the contestant behind send is to be sent it: for
// taskget, with the id of a task created there by a tools/call of echo
// with the same text, once that task reads completed (so that every later
// answer is the same bytes); any other scenario as it is.
func bind(sc *scenario, send sender) (*scenario, error) {
	if sc.method != "tasks/get" {
		return sc, nil
	}
	create := *sc
	create.method = "tools/call"
	id, err := createTask(&create, send)
	if err != nil {
		return nil, fmt.Errorf("%s: creating its task: %w", sc.name, err)
	}
	get := *sc
	get.taskID = id
	if err := awaitCompleted(&get, send); err != nil {
		return nil, fmt.Errorf("%s: %w", sc.name, err)
	}
	return &get, nil
}

// createTask sends create, a tools/call that becomes a task, validates the
// answer and returns the task's id.
func createTask(create *scenario, send sender) (string, error) {
	status, ct, body, err := send(create)
	if err != nil {
		return "", err
	}
	if err := create.validate(status, ct, body); err != nil {
		return "", err
	}
	var a answer
	_ = json.Unmarshal(body, &a) // validate decoded it
	return a.Result.TaskID, nil
}

// awaitCompleted sends get, a tasks/get, until its task is no longer
// working, within completedWithin, and validates that answer: the task
// completed with echo's result.
func awaitCompleted(get *scenario, send sender) error {
	deadline := time.Now().Add(completedWithin)
	for {
		status, ct, body, err := send(get)
		if err != nil {
			return err
		}
		var a answer
		if json.Unmarshal(body, &a) == nil && a.Result != nil && a.Result.Status == "working" {
			if time.Now().After(deadline) {
				return fmt.Errorf("task %s still working after %s", get.taskID, completedWithin)
			}
			time.Sleep(time.Millisecond)
			continue
		}
		return get.validate(status, ct, body)
	}
}
