package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpmw/mcpmw"
)

// session is this application's caller: who is calling, for which tenant,
// with which capabilities. The library only ever asks it Can; tools narrow
// an mcpmw.Caller back to *session with sessionOf.
type session struct {
	name   string
	tenant string
	caps   map[mcpmw.Permission]bool
}

// Can reports whether the session holds capability c.
func (s *session) Can(c mcpmw.Permission) bool { return s.caps[c] }

// InAudience reports whether the session belongs to audience, a tenant:
// events published for a tenant reach only its own listeners.
func (s *session) InAudience(audience string) bool { return audience == s.tenant }

// String is how the session appears in audit records: its name, never its
// token.
func (s *session) String() string { return s.name }

// CallerID identifies the session across requests, so that a legacy client
// can cancel its own running call with notifications/cancelled.
func (s *session) CallerID() string { return s.name }

// sessionOf narrows the library's Caller to the application's session. It is
// the one place that knows the concrete type: the authenticator only ever
// returns *session, so anything else is a programming error.
func sessionOf(c mcpmw.Caller) *session {
	s, ok := c.(*session)
	if !ok {
		panic(fmt.Sprintf("chi-app: caller is %T, not *session", c))
	}
	return s
}

// tokenAuth authenticates bearer tokens against a fixed table, comparing in
// constant time. A real application would look tokens up in its database.
type tokenAuth struct {
	tokens []tokenEntry
}

type tokenEntry struct {
	digest [32]byte // sha256 of the token: equal length for the comparison
	sess   *session
}

func newTokenAuth() *tokenAuth {
	caps := func(cs ...mcpmw.Permission) map[mcpmw.Permission]bool {
		m := make(map[mcpmw.Permission]bool, len(cs))
		for _, c := range cs {
			m[c] = true
		}
		return m
	}
	return &tokenAuth{tokens: []tokenEntry{
		{sha256.Sum256([]byte("reader-token")), &session{name: "reader", tenant: "demo", caps: caps("read")}},
		{sha256.Sum256([]byte("writer-token")), &session{name: "writer", tenant: "demo", caps: caps("read", "write")}},
		{sha256.Sum256([]byte("other-token")), &session{name: "other", tenant: "other", caps: caps("read", "write")}},
		{sha256.Sum256([]byte("guest-token")), &session{name: "guest", tenant: "demo", caps: caps()}},
	}}
}

// Authenticate implements mcpmw.Authenticator.
func (a *tokenAuth) Authenticate(r *http.Request) (mcpmw.Caller, error) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, fmt.Errorf("no bearer token: %w", mcpmw.ErrUnauthorized)
	}
	digest := sha256.Sum256([]byte(token))
	var found *session
	for _, e := range a.tokens { // no early exit: the time taken does not depend on which token matched
		if subtle.ConstantTimeCompare(digest[:], e.digest[:]) == 1 {
			found = e.sess
		}
	}
	if found == nil {
		return nil, fmt.Errorf("unknown bearer token: %w", mcpmw.ErrUnauthorized)
	}
	return found, nil
}

// tools returns the application's MCP tools, bound to its note store; a
// change to a tenant's notes is published through notify, to that
// tenant's listeners only; notes_export takes exportDelay.
func tools(store notes, notify mcpmw.Notifier, exportDelay time.Duration) []mcpmw.Tool {
	return []mcpmw.Tool{
		{
			Name:        "echo",
			Title:       "Echo",
			Description: "Returns the given message unchanged. Useful to check the connection.",
			Permission:  "read",
			ReadOnly:    mcpmw.HintYes,
			OpenWorld:   mcpmw.HintNo,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"Text to echo back."}},"required":["message"],"additionalProperties":false}`),
			Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				msg := args.String("message")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult(msg), nil
			},
		},
		{
			Name:         "add",
			Title:        "Add two numbers",
			Description:  "Adds a and b and returns the sum.",
			Permission:   "read",
			ReadOnly:     mcpmw.HintYes,
			OpenWorld:    mcpmw.HintNo,
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`),
			Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				a, b := args.Float("a"), args.Float("b")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				sum := a + b
				return mcpmw.ToolResult{
					Content:           []mcpmw.Content{mcpmw.TextContent(strconv.FormatFloat(sum, 'g', -1, 64))},
					StructuredContent: map[string]float64{"sum": sum},
				}, nil
			},
		},
		{
			Name:        "note_create",
			Title:       "Create a note",
			Description: "Stores a short text note for your team and returns its id.",
			Permission:  "write",
			Destructive: mcpmw.HintNo,
			Idempotent:  mcpmw.HintNo,
			OpenWorld:   mcpmw.HintNo,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","minLength":1,"maxLength":2000}},"required":["text"],"additionalProperties":false}`),
			// A note may hold anything a team writes down; the audit log
			// keeps that a note was written and by whom, never what it says.
			Sensitive: []string{"/text"},
			Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				s := sessionOf(c)
				text := args.String("text")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				if text == "" || len(text) > 2000 {
					return mcpmw.ErrorResult("text must be 1 to 2000 bytes long; it is %d", len(text)), nil
				}
				n, err := store.add(ctx, s.tenant, s.name, text)
				if err != nil {
					return mcpmw.ErrorResult("%v", err), nil // too many notes, or Redis not answering
				}
				notesChanged(ctx, notify, s.tenant)
				return mcpmw.ToolResult{
					Content:           []mcpmw.Content{mcpmw.TextContent(fmt.Sprintf("created note %d", n.ID))},
					StructuredContent: map[string]int{"id": n.ID},
				}, nil
			},
		},
		noteDelete(store, notify),
		{
			Name:        "notes_list",
			Title:       "List notes",
			Description: "Lists your team's notes, newest first.",
			Permission:  "read",
			ReadOnly:    mcpmw.HintYes,
			OpenWorld:   mcpmw.HintNo,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":50,"default":20,"description":"How many notes to return (1 to 50, default 20)."}},"additionalProperties":false}`),
			Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				s := sessionOf(c)
				limit := args.IntClamp("limit", 20, 1, 50)
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				notes, err := store.latest(ctx, s.tenant, limit)
				if err != nil {
					return mcpmw.ErrorResult("%v", err), nil
				}
				return mcpmw.ToolResult{
					Content:           []mcpmw.Content{mcpmw.TextContent(notesText(notes))},
					StructuredContent: map[string]any{"notes": notes},
				}, nil
			},
		},
		notesExport(store, exportDelay),
	}
}

// notesText is how the notes tools show notes to the model: their count,
// then one line per note.
func notesText(notes []note) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d notes", len(notes))
	for _, n := range notes {
		fmt.Fprintf(&b, "\n#%d by %s: %s", n.ID, n.Author, n.Text)
	}
	return b.String()
}

// confirmSchema is the form note_delete asks the user to fill in: one
// required yes-or-no field.
var confirmSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)

// askedState is the round state note_delete keeps while it waits for the
// user: proof, sealed by the handler, that this server asked to confirm
// deleting note id. An answer that arrives without it was never asked for.
func askedState(id int) []byte { return []byte("confirm " + strconv.Itoa(id)) }

// elicitAnswer is the part of an ElicitResult note_delete reads.
type elicitAnswer struct {
	Action  string `json:"action"` // accept, decline or cancel
	Content struct {
		Confirm *bool `json:"confirm"`
	} `json:"content"`
}

// noteDelete is the note_delete tool: it deletes one of the caller's
// tenant's notes once the user confirms, asking through the client
// (elicitation) on 2026-07-28. The tool runs again from the top on every
// round, so the note is looked up again when the answer comes.
func noteDelete(store notes, notify mcpmw.Notifier) mcpmw.Tool {
	return mcpmw.Tool{
		Name:                       "note_delete",
		Title:                      "Delete a note",
		Description:                "Deletes one of your team's notes by id, after the user confirms.",
		Permission:                 "write",
		Destructive:                mcpmw.HintYes,
		Idempotent:                 mcpmw.HintYes,
		OpenWorld:                  mcpmw.HintNo,
		RequiredClientCapabilities: []mcpmw.ClientCapability{mcpmw.Capability("elicitation")},
		InputSchema:                json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer","description":"The note's id, as notes_list shows it."}},"required":["id"],"additionalProperties":false}`),
		Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			s := sessionOf(c)
			id := args.Int("id")
			if err := args.Err(); err != nil {
				return mcpmw.ToolResult{}, err
			}
			// Checked before asking: nobody is asked to confirm deleting a
			// note that is not there (or is another tenant's).
			if _, ok, err := store.get(ctx, s.tenant, id); err != nil || !ok {
				return noSuchNote(id, err), nil
			}
			asked := mcpmw.RoundState(ctx) // what the round before asked, if anything
			raw, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm(fmt.Sprintf("Delete note %d?", id), confirmSchema))
			if err != nil {
				if errors.Is(err, mcpmw.ErrInputRequired) {
					mcpmw.SetRoundState(ctx, askedState(id))
				}
				return mcpmw.ToolResult{}, err // input_required, or the handler's own error (-32021, -32602, ...)
			}
			ans, err := readConfirm(raw)
			if err != nil {
				return mcpmw.ToolResult{}, err
			}
			if !ans {
				return mcpmw.ToolResult{
					Content:           []mcpmw.Content{mcpmw.TextContent(fmt.Sprintf("kept note %d", id))},
					StructuredContent: map[string]any{"deleted": nil},
				}, nil
			}
			// On 2026-07-28 a confirmation counts only with the sealed state
			// of the round that asked for it: a client cannot skip the
			// question by sending an answer with its first call. (On the
			// legacy revisions, where ClientSupports reports false, Ask
			// itself asked on the call's event stream.)
			if mcpmw.ClientSupports(ctx, mcpmw.Capability("elicitation")) && string(asked) != string(askedState(id)) {
				return mcpmw.ErrorResult("note %d: a confirmation came that this server did not ask for (no requestState); call note_delete again without inputResponses", id), nil
			}
			if ok, err := store.remove(ctx, s.tenant, id); err != nil || !ok { // !ok: deleted by someone else since the question
				return noSuchNote(id, err), nil
			}
			notesChanged(ctx, notify, s.tenant)
			return mcpmw.ToolResult{
				Content:           []mcpmw.Content{mcpmw.TextContent(fmt.Sprintf("deleted note %d", id))},
				StructuredContent: map[string]any{"deleted": id},
			}, nil
		},
	}
}

// noSuchNote is note_delete's answer when the note is not there, or when
// the store could not say (err).
func noSuchNote(id int, err error) mcpmw.ToolResult {
	if err != nil {
		return mcpmw.ErrorResult("%v", err)
	}
	return mcpmw.ErrorResult("there is no note %d among your team's notes", id)
}

// readConfirm reads the user's answer to note_delete's question: true only
// for accept with confirm true. An answer that is not an ElicitResult of
// that form is -32602: it is the client's mistake, not the model's.
func readConfirm(raw json.RawMessage) (bool, error) {
	var ans elicitAnswer
	invalid := func(problem string) error {
		return &mcpmw.Error{Code: mcpmw.CodeInvalidParams, Message: "Invalid params: inputResponses.confirm " + problem}
	}
	// Args.Decode, not json.Unmarshal: member names match exactly, so
	// "Action" is not read as "action".
	if err := mcpmw.NewArgs(raw).Decode(&ans); err != nil {
		return false, invalid("is not an elicitation result: " + err.Error())
	}
	switch ans.Action {
	case "decline", "cancel":
		return false, nil
	case "accept":
		if ans.Content.Confirm == nil {
			return false, invalid("accepts without a boolean content.confirm")
		}
		return *ans.Content.Confirm, nil
	default:
		return false, invalid(`must have action "accept", "decline" or "cancel"`)
	}
}
