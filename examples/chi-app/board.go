package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/apps"
)

// The notes board is an MCP App: a UI that a host which renders apps
// shows beside notes_list and note_create, in a sandboxed iframe. It
// reads the team's notes with the app-only notes_board_state and adds one
// with note_create, both called through the host with the caller's own
// token, so every permission holds as for the model's calls.

// boardURI is the board's resource.
const boardURI = "ui://notes/board"

// boardHTML is the board: one self-contained HTML5 document, its script
// and style inline (the host's CSP allows no other origin).
//
//go:embed board/board.html
var boardHTML string

// addBoard registers the board (its resource, then its app-only tool)
// in reg, with tools: notes_list and note_create, whose results the board
// shows, linked to it.
func addBoard(reg *mcpmw.Registry, store notes, tools []mcpmw.Tool) {
	reg.AddResources(boardResource())
	for i, t := range tools {
		if t.Name == "notes_list" || t.Name == "note_create" {
			tools[i] = apps.Tool(t, apps.ToolMeta{ResourceURI: boardURI})
		}
	}
	apps.AddTools(reg, append(tools, boardState(store))...)
}

// boardResource is the board's UI resource: no origin to reach, and a
// border around it.
func boardResource() mcpmw.Resource {
	r := apps.Resource(boardURI, "notes-board", "read", boardHTML,
		apps.ResourceMeta{CSP: &apps.CSP{}, PrefersBorder: mcpmw.HintYes})
	r.Title = "Notes board"
	r.Description = "Your team's notes, with a field to add one when you may write."
	return r
}

// boardNote is a note as the board shows it.
type boardNote struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
}

// boardState is notes_board_state, the board's view of the team's notes,
// oldest first, and whether the caller may add one. Only the app calls
// it: a host that renders apps keeps it from its model, and one that
// does not never sees it.
func boardState(store notes) mcpmw.Tool {
	return apps.Tool(mcpmw.Tool{
		Name:        "notes_board_state",
		Title:       "Notes board state",
		Description: "Your team's notes, oldest first, and whether you may add one: what the notes board shows.",
		Permission:  "read",
		ReadOnly:    mcpmw.HintYes,
		OpenWorld:   mcpmw.HintNo,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`),
		Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			s := sessionOf(c)
			all, err := store.all(ctx, s.tenant)
			if err != nil {
				return mcpmw.ErrorResult("%v", err), nil
			}
			shown := make([]boardNote, len(all))
			for i, n := range all {
				shown[i] = boardNote{ID: n.ID, Text: n.Text}
			}
			canWrite := s.Can("write")
			return mcpmw.ToolResult{
				Content:           []mcpmw.Content{mcpmw.TextContent(boardText(shown, canWrite))},
				StructuredContent: map[string]any{"notes": shown, "canWrite": canWrite},
			}, nil
		},
	}, apps.ToolMeta{ResourceURI: boardURI, Visibility: []apps.Visibility{apps.VisibilityApp}})
}

// boardText says what the board's state says, in one line.
func boardText(shown []boardNote, canWrite bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d notes, oldest first", len(shown))
	for i, n := range shown {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s#%d %s", sep, n.ID, strconv.Quote(n.Text))
	}
	if canWrite {
		b.WriteString("; you may add notes")
	} else {
		b.WriteString("; you may not add notes")
	}
	return b.String()
}
