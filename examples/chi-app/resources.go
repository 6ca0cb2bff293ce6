package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpmw/mcpmw"
)

// readme is the text of app://readme.
const readme = `# chi-app

A small notes service for teams, served over MCP by mcpmw.

- Tools: echo, add, notes_list, note_create, note_delete.
- Resources: app://readme (this text), app://stats (for writers), and each of your team's notes as notes://<id>.
- Prompts: summarize_notes, draft_note.
`

// resources returns the application's fixed resources.
func resources(store notes) []mcpmw.Resource {
	return []mcpmw.Resource{
		{
			URI:         "app://readme",
			Name:        "readme",
			Title:       "About this app",
			Description: "What this service is and what it offers over MCP.",
			MimeType:    "text/markdown",
			Permission:  "read",
			Read: func(ctx context.Context, c mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
				return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/markdown", readme)}, nil
			},
		},
		{
			URI:         "app://stats",
			Name:        "stats",
			Title:       "Team statistics",
			Description: "How many notes your team has.",
			MimeType:    "application/json",
			Permission:  "write",
			Read: func(ctx context.Context, c mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
				n, err := store.count(ctx, sessionOf(c).tenant)
				if err != nil {
					return nil, asError(err)
				}
				return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "application/json", `{"notes":`+strconv.Itoa(n)+`}`)}, nil
			},
		},
	}
}

// noteURI is the URI of a note as resources/list shows it.
func noteURI(id int) string { return "notes://" + strconv.Itoa(id) }

// noteTemplates returns the template notes://{id}: it lists the caller's
// tenant's notes and reads any of them; another tenant's note, or one that
// is not there, is not found (the caller learns nothing about other teams).
func noteTemplates(store notes) []mcpmw.ResourceTemplate {
	return []mcpmw.ResourceTemplate{{
		URITemplate: "notes://{id}",
		Name:        "note",
		Title:       "A note of your team",
		Description: "The text of one of your team's notes, by id.",
		MimeType:    "text/plain",
		Permission:  "read",
		List: func(ctx context.Context, c mcpmw.Caller) ([]mcpmw.Resource, error) {
			notes, err := store.all(ctx, sessionOf(c).tenant)
			if err != nil {
				return nil, err // the library answers -32603 and logs it
			}
			out := make([]mcpmw.Resource, len(notes))
			for i, n := range notes {
				out[i] = mcpmw.Resource{URI: noteURI(n.ID), Name: "note " + strconv.Itoa(n.ID), MimeType: "text/plain",
					Description: "Note by " + n.Author}
			}
			return out, nil
		},
		Read: func(ctx context.Context, c mcpmw.Caller, uri string, vars map[string]string) ([]mcpmw.ResourceContents, error) {
			id, err := strconv.Atoi(vars["id"])
			if err != nil || id <= 0 || strconv.Itoa(id) != vars["id"] {
				return nil, mcpmw.ErrResourceNotFound
			}
			n, ok, err := store.get(ctx, sessionOf(c).tenant, id)
			if err != nil {
				return nil, asError(err)
			}
			if !ok {
				return nil, mcpmw.ErrResourceNotFound
			}
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", n.Text)}, nil
		},
		Complete: map[string]mcpmw.Completer{
			"id": func(ctx context.Context, c mcpmw.Caller, req mcpmw.CompletionRequest) (mcpmw.Completion, error) {
				all, err := store.all(ctx, sessionOf(c).tenant)
				if err != nil {
					return mcpmw.Completion{}, asError(err)
				}
				var ids []string
				for _, n := range all {
					if id := strconv.Itoa(n.ID); strings.HasPrefix(id, req.Value) {
						ids = append(ids, id)
					}
				}
				return mcpmw.Completion{Values: ids, Total: len(ids)}, nil
			},
		},
	}}
}

// styles are the summary styles summarize_notes offers.
var styles = []string{"brief", "detailed", "bullets"}

// prompts returns the application's prompts.
func prompts(store notes) []mcpmw.Prompt {
	return []mcpmw.Prompt{
		{
			Name:        "summarize_notes",
			Title:       "Summarize notes",
			Description: "Asks the model to summarize your team's latest notes.",
			Permission:  "read",
			Arguments:   []mcpmw.PromptArgument{{Name: "style", Description: "brief, detailed or bullets (default brief)"}},
			Get: func(ctx context.Context, c mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
				style := args["style"]
				if style == "" {
					style = "brief"
				}
				var b strings.Builder
				notes, err := store.latest(ctx, sessionOf(c).tenant, 20)
				if err != nil {
					return mcpmw.PromptResult{}, asError(err)
				}
				fmt.Fprintf(&b, "Here are my team's %d latest notes:\n", len(notes))
				for _, n := range notes {
					fmt.Fprintf(&b, "\n> #%d by %s: %s", n.ID, n.Author, n.Text)
				}
				fmt.Fprintf(&b, "\n\nPlease summarize them in a %s style.", style)
				return mcpmw.PromptResult{
					Description: "Summary of the team's notes (" + style + ")",
					Messages:    []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent(b.String()))},
				}, nil
			},
			Complete: map[string]mcpmw.Completer{
				"style": func(ctx context.Context, c mcpmw.Caller, req mcpmw.CompletionRequest) (mcpmw.Completion, error) {
					var out []string
					for _, s := range styles {
						if strings.HasPrefix(s, req.Value) {
							out = append(out, s)
						}
					}
					return mcpmw.Completion{Values: out, Total: len(out)}, nil
				},
			},
		},
		{
			Name:        "draft_note",
			Title:       "Draft a note",
			Description: "Asks the model to draft a note on a topic, ready for note_create.",
			Permission:  "write",
			Arguments:   []mcpmw.PromptArgument{{Name: "topic", Description: "What the note is about", Required: true}},
			Get: func(ctx context.Context, c mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
				topic := args["topic"]
				return mcpmw.PromptResult{
					Description: "Draft a note",
					Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent(
						"Please draft a short note for my team on this topic: " + topic + "\nKeep it under 2000 characters so that note_create accepts it."))},
				}, nil
			},
		},
	}
}

// notesChanged tells the listeners of the caller's tenant, and only them,
// that the tenant's notes (listed as resources) changed.
func notesChanged(ctx context.Context, n mcpmw.Notifier, tenant string) {
	if n == nil {
		return
	}
	_ = n.Publish(ctx, mcpmw.Event{Method: mcpmw.ResourcesListChanged, Permission: "read", Audience: tenant})
}
