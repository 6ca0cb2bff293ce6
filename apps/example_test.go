package apps_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/apps"
)

func Example() {
	var reg mcpmw.Registry
	reg.AddResources(apps.Resource("ui://notes/board", "notes-board", "read", "<!DOCTYPE html><title>Notes</title>",
		apps.ResourceMeta{CSP: &apps.CSP{}, PrefersBorder: mcpmw.HintYes}))
	list := apps.Tool(mcpmw.Tool{Name: "notes_list", Permission: "read", Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.TextResult("0 notes"), nil // meaningful without the UI
	}}, apps.ToolMeta{ResourceURI: "ui://notes/board"})
	state := apps.Tool(mcpmw.Tool{Name: "notes_board_state", Permission: "read", Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.ToolResult{Content: []mcpmw.Content{mcpmw.TextContent("0 notes")}, StructuredContent: map[string]any{"notes": []any{}}}, nil
	}}, apps.ToolMeta{ResourceURI: "ui://notes/board", Visibility: []apps.Visibility{apps.VisibilityApp}})
	apps.AddTools(&reg, list, state) // panics if the board were not registered

	for _, t := range []mcpmw.Tool{list, state} {
		meta, _ := json.Marshal(t.Meta)
		fmt.Println(t.Name, string(meta), len(t.ListedOnlyFor))
	}
	// Output:
	// notes_list {"ui":{"resourceUri":"ui://notes/board"},"ui/resourceUri":"ui://notes/board"} 0
	// notes_board_state {"ui":{"resourceUri":"ui://notes/board","visibility":["app"]},"ui/resourceUri":"ui://notes/board"} 1
}
