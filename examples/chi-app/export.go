package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpmw/mcpmw"
)

// exportedNote is a note as notes_export returns it.
type exportedNote struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
}

// notesExport is the notes_export tool: every note of the caller's team,
// oldest first, after delay, the stand-in for an export that takes a while
// (a report, a file written elsewhere). It may become a task
// (TaskOptional): a 2026-07-28 client that declares the tasks extension
// gets a task at once and polls tasks/get for the result; any other call
// is answered when the export is done. The code is the same either way.
func notesExport(store notes, delay time.Duration) mcpmw.Tool {
	return mcpmw.Tool{
		Name:        "notes_export",
		Title:       "Export notes",
		Description: "Exports all of your team's notes, oldest first. It takes a few seconds: a client that supports tasks gets a task to poll.",
		Permission:  "read",
		ReadOnly:    mcpmw.HintYes,
		OpenWorld:   mcpmw.HintNo,
		Task:        mcpmw.TaskOptional,
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Call: func(ctx context.Context, c mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			s := sessionOf(c)
			// The notes as they are when the export starts; an outage of
			// the store is answered at once, not after the delay.
			all, err := store.all(ctx, s.tenant)
			if err != nil {
				return mcpmw.ErrorResult("%v", err), nil
			}
			if err := wait(ctx, delay); err != nil {
				// tasks/cancel (the task ends cancelled), a legacy
				// notifications/cancelled, or the client gone.
				return mcpmw.ToolResult{}, err
			}
			out := make([]exportedNote, len(all))
			for i, n := range all {
				out[i] = exportedNote{ID: n.ID, Text: n.Text}
			}
			return mcpmw.ToolResult{
				Content:           []mcpmw.Content{mcpmw.TextContent(notesText(all))},
				StructuredContent: map[string]any{"notes": out},
			}, nil
		},
	}
}

// wait waits for d to pass, or for ctx to end, when it returns ctx's
// error: a cancellation is seen as it happens, not at the next tick.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
