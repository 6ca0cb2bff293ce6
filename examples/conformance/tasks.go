package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpmw/mcpmw"
)

// The tasks extension's fixtures (SEP-2663), as the suite's tasks-*
// scenarios name them: greet runs as a plain call; slow_compute,
// confirm_delete and multi_input may become tasks (TaskOptional);
// failing_job, protocol_error_job and test_tool_with_task run only as
// tasks (TaskRequired).

// confirmForm asks the user to confirm, multi_input's forms a name.
var (
	confirmForm = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","description":"Go ahead?"}},"required":["confirm"]}`)
	partForm    = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"confirm":{"type":"boolean"}}}`)
)

// accepted returns the content of an elicitation answer the user
// accepted, or an error naming what the user did instead.
func accepted(ans json.RawMessage) (map[string]any, error) {
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(ans, &r); err != nil {
		return nil, err
	}
	if r.Action != "accept" {
		return nil, fmt.Errorf("the user chose %q", r.Action)
	}
	return r.Content, nil
}

func taskTools() []mcpmw.Tool {
	return []mcpmw.Tool{
		{Name: "greet", Description: "Greets someone by name (runs as a plain call).", Permission: testCap,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				name := args.String("name")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult("Hello, " + name + "!"), nil
			}},
		{Name: "slow_compute", Description: "Sleeps the given seconds, then answers (may become a task).", Permission: testCap, Task: mcpmw.TaskOptional,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"maximum":600},"label":{"type":"string"}},"required":["seconds"]}`),
			Call: func(ctx context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				seconds, label := args.Float("seconds"), args.OptString("label", "")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				if seconds < 0 || seconds > 600 {
					return mcpmw.ToolResult{}, &mcpmw.ArgError{Field: "seconds", Problem: "must be between 0 and 600"}
				}
				if err := sleep(ctx, time.Duration(seconds*float64(time.Second))); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult(fmt.Sprintf("Computed %q after %gs", label, seconds)), nil
			}},
		{Name: "failing_job", Description: "Works for a second, then reports a tool error (runs only as a task).", Permission: testCap, Task: mcpmw.TaskRequired,
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				if err := sleep(ctx, time.Second); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.ErrorResult("The job failed: the report source is unavailable."), nil
			}},
		{Name: "protocol_error_job", Description: "Ends in a JSON-RPC error (runs only as a task).", Permission: testCap, Task: mcpmw.TaskRequired,
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				if err := sleep(ctx, 200*time.Millisecond); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.ToolResult{}, &mcpmw.Error{Code: mcpmw.CodeInternalError, Message: "The job hit a protocol error"}
			}},
		{Name: "confirm_delete", Description: "Asks the user to confirm deleting a file, then deletes it (may become a task).", Permission: testCap, Task: mcpmw.TaskOptional,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"filename":{"type":"string"}},"required":["filename"]}`),
			Call: func(ctx context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				name := args.String("filename")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				ans, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Delete "+name+"?", confirmForm))
				if err != nil {
					return mcpmw.ToolResult{}, err
				}
				content, err := accepted(ans)
				if err != nil || content["confirm"] != true {
					return mcpmw.TextResult("Kept " + name + "."), nil
				}
				return mcpmw.TextResult("Deleted " + name + "."), nil
			}},
		{Name: "multi_input", Description: "Asks two questions at once, then answers with both (may become a task).", Permission: testCap, Task: mcpmw.TaskOptional,
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				first, err1 := mcpmw.Ask(ctx, "first", mcpmw.ElicitForm("First value?", partForm))
				second, err2 := mcpmw.Ask(ctx, "second", mcpmw.ElicitForm("Second value?", partForm))
				if err := errors.Join(err1, err2); err != nil {
					return mcpmw.ToolResult{}, err
				}
				a, _ := accepted(first)
				b, _ := accepted(second)
				return mcpmw.TextResult(fmt.Sprintf("Got %v and %v", a["name"], b["name"])), nil
			}},
		{Name: "test_tool_with_task", Description: "Asks the user's name before it starts, then greets them as a task.", Permission: testCap, Task: mcpmw.TaskRequired,
			Prepare: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) error {
				_, err := mcpmw.Ask(ctx, "user_name", mcpmw.ElicitForm("What is your name?", nameForm))
				return err
			},
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				ans, err := mcpmw.Ask(ctx, "user_name", mcpmw.ElicitForm("What is your name?", nameForm)) // answered before the task: Prepare asked
				if err != nil {
					return mcpmw.ToolResult{}, err
				}
				content, err := accepted(ans)
				if err != nil {
					return mcpmw.TextResult("Hello, stranger! (" + err.Error() + ")"), nil
				}
				return mcpmw.TextResult(fmt.Sprintf("Hello, %v!", content["name"])), nil
			}},
	}
}
