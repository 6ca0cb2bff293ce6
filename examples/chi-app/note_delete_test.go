package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// otherToken is the token of a writer of another tenant ("other").
const otherToken = "other-token"

// confirmSchemaWire is the form note_delete must ask for (compared as JSON).
const confirmSchemaWire = `{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`

// elicitingCallWith is a well-formed 2026-07-28 tools/call from a client that
// declares caps as its clientCapabilities; more holds further members of
// params (inputResponses, requestState), or "".
func elicitingCallWith(caps, token, id, tool, args, more string) request {
	meta := strings.Replace(meta26, `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":`+caps, 1)
	params := `"name":` + strconv.Quote(tool) + `,"arguments":` + args
	if more != "" {
		params += "," + more
	}
	h := baseHeader(token)
	h.Set("MCP-Protocol-Version", v26)
	h.Set("Mcp-Method", "tools/call")
	h.Set("Mcp-Name", tool)
	return request{header: h, body: jsonrpc(id, "tools/call", params+","+meta), id: id}
}

// elicitingCall is elicitingCallWith a client that declares elicitation.
func elicitingCall(token, id, tool, args, more string) request {
	return elicitingCallWith(`{"elicitation":{}}`, token, id, tool, args, more)
}

// deleteNote is note_delete of noteID by a client that declares
// elicitation; more as for elicitingCall.
func deleteNote(token, id string, noteID int, more string) request {
	return elicitingCall(token, id, "note_delete", fmt.Sprintf(`{"id":%d}`, noteID), more)
}

// answered is what a retry adds to params: the answer to "confirm", and
// the requestState of the round before ("" sends none).
func answered(answer, state string) string {
	more := `"inputResponses":{"confirm":` + answer + `}`
	if state != "" {
		more += `,"requestState":` + strconv.Quote(state)
	}
	return more
}

// The user's answers, as the client sends them.
const (
	confirmYes = `{"action":"accept","content":{"confirm":true}}`
	confirmNo  = `{"action":"accept","content":{"confirm":false}}`
	declined   = `{"action":"decline"}`
	cancelled  = `{"action":"cancel"}`
)

// asksToConfirm checks note_delete's first round: an input_required result
// asking exactly "confirm" with a form naming the note, and a requestState,
// which it stores in state.
func asksToConfirm(noteID int, state *string) func(t *testing.T, rep reply) {
	return func(t *testing.T, rep reply) {
		t.Helper()
		assert.Equal(t, "input_required", str(t, rep.result, "resultType"))
		for _, k := range []string{"content", "structuredContent", "isError", "ttlMs", "cacheScope"} {
			assert.NotContains(t, rep.result, k, "an input_required result has no %s", k)
		}
		var reqs map[string]struct {
			Method string `json:"method"`
			Params struct {
				Mode            string          `json:"mode"`
				Message         string          `json:"message"`
				RequestedSchema json.RawMessage `json:"requestedSchema"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(rep.result["inputRequests"], &reqs), "inputRequests: %s", rep.result["inputRequests"])
		require.Len(t, reqs, 1, "one question: %s", rep.result["inputRequests"])
		q, ok := reqs["confirm"]
		require.True(t, ok, "the question's key is confirm: %s", rep.result["inputRequests"])
		assert.Equal(t, "elicitation/create", q.Method)
		assert.Equal(t, "form", q.Params.Mode)
		assert.JSONEq(t, confirmSchemaWire, string(q.Params.RequestedSchema))
		assert.Contains(t, q.Params.Message, strconv.Itoa(noteID), "the message names the note")
		s := str(t, rep.result, "requestState")
		assert.NotEmpty(t, s)
		if state != nil {
			*state = s
		}
	}
}

// deletedNote and keptNote check note_delete's final answer.
func deletedNote(noteID int) func(t *testing.T, rep reply) {
	return toolOK(true, fmt.Sprintf("deleted note %d", noteID), fmt.Sprintf(`{"deleted":%d}`, noteID))
}

func keptNote(noteID int) func(t *testing.T, rep reply) {
	return toolOK(true, fmt.Sprintf("kept note %d", noteID), `{"deleted":null}`)
}

// refusedNote checks an isError result naming the note, that asked nothing.
func refusedNote(fragments ...string) func(t *testing.T, rep reply) {
	failed := toolFailed(true, fragments...)
	return func(t *testing.T, rep reply) {
		t.Helper()
		failed(t, rep)
		assert.NotContains(t, rep.result, "inputRequests", "nothing is asked")
		assert.NotContains(t, rep.result, "requestState")
	}
}

// requiresElicitation checks the data of note_delete's -32021.
func requiresElicitation(t *testing.T, rep reply) {
	assert.JSONEq(t, `{"requiredCapabilities":{"elicitation":{}}}`, string(rep.err.Data))
}

// tokenCaller names the caller each token authenticates as.
var tokenCaller = map[string]string{readerToken: "reader", writerToken: "writer", otherToken: "other"}

// createNotes has token's caller create notes with these ids (the app
// numbers notes across tenants, from 1).
func (a *testApp) createNotes(t *testing.T, token string, ids ...int) {
	t.Helper()
	for _, id := range ids {
		a.exchange(t, modernCall(token, `"c`+strconv.Itoa(id)+`"`, "note_create", fmt.Sprintf(`{"text":"note %d"}`, id)),
			expect{status: 200, audit: audited("ok", tokenCaller[token], "tools/call", "note_create"),
				check: toolOK(true, fmt.Sprintf("created note %d", id), fmt.Sprintf(`{"id":%d}`, id))})
	}
}

// noteIDs returns the ids notes_list shows token's caller, newest first.
func (a *testApp) noteIDs(t *testing.T, token string) []int {
	t.Helper()
	rep := a.exchange(t, modernCall(token, `"list"`, "notes_list", `{}`),
		expect{status: 200, audit: audited("ok", tokenCaller[token], "tools/call", "notes_list")})
	var nl noteList
	require.NoError(t, json.Unmarshal(decodeTool(t, rep).StructuredContent, &nl))
	ids := []int{}
	for _, n := range nl.Notes {
		ids = append(ids, n.ID)
	}
	return ids
}

// askDelete sends note_delete's first round for noteID and returns its
// requestState; the round is audited input_required.
func (a *testApp) askDelete(t *testing.T, token string, noteID int) string {
	t.Helper()
	var state string
	a.exchange(t, deleteNote(token, `"ask"`, noteID, ""),
		expect{status: 200, audit: audited("input_required", tokenCaller[token], "tools/call", "note_delete"), check: asksToConfirm(noteID, &state)})
	return state
}

// TestNoteDelete drives note_delete's two rounds for each answer the user
// may give: only accept with confirm true deletes.
func TestNoteDelete(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, answer string
		deleted      bool
	}{
		{name: "accept, confirm true", answer: confirmYes, deleted: true},
		{name: "accept, confirm false", answer: confirmNo},
		{name: "decline", answer: declined},
		{name: "cancel", answer: cancelled},
		{name: "decline with content", answer: `{"action":"decline","content":{"confirm":true}}`},
		{name: "accept with more fields", answer: `{"action":"accept","content":{"confirm":true,"why":"old"},"_meta":{}}`, deleted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			app := newTestApp(testConfig())
			app.createNotes(t, writerToken, 1, 2)
			state := app.askDelete(t, writerToken, 2)
			require.Equal(t, []int{2, 1}, app.noteIDs(t, writerToken), "asking deletes nothing")

			want := expect{status: 200, audit: audited("ok", "writer", "tools/call", "note_delete"), check: keptNote(2)}
			left := []int{2, 1}
			if tc.deleted {
				want.check, left = deletedNote(2), []int{1}
			}
			app.exchange(t, deleteNote(writerToken, `"retry"`, 2, answered(tc.answer, state)), want)
			assert.Equal(t, left, app.noteIDs(t, writerToken))
			assert.Equal(t, left, app.noteIDs(t, readerToken), "the reader of the same tenant sees the same notes")
		})
	}
}

// TestNoteDeleteRefusals checks the calls note_delete refuses: each deletes
// nothing, and none asks the user anything.
func TestNoteDeleteRefusals(t *testing.T) {
	t.Parallel()
	insufficient := map[string]string{"WWW-Authenticate": `Bearer error="insufficient_scope", scope="write"`}
	for _, tc := range []struct {
		name string
		req  request
		want expect
	}{
		{name: "missing id", req: deleteNote(writerToken, `1`, 99, ""),
			want: expect{status: 200, audit: audited("error", "writer", "tools/call", "note_delete"), check: refusedNote("99")}},
		{name: "another tenant's note", req: deleteNote(otherToken, `2`, 1, ""),
			want: expect{status: 200, audit: audited("error", "other", "tools/call", "note_delete"), check: refusedNote("note 1")}},
		{name: "another tenant's note, with a confirmation", req: deleteNote(otherToken, `3`, 1, answered(confirmYes, "")),
			want: expect{status: 200, audit: audited("error", "other", "tools/call", "note_delete"), check: refusedNote("note 1")}},
		{name: "id missing", req: elicitingCall(writerToken, `4`, "note_delete", `{}`, ""),
			want: expect{status: 200, audit: audited("error", "writer", "tools/call", "note_delete"), check: refusedNote(`"id"`)}},
		{name: "id a string", req: elicitingCall(writerToken, `5`, "note_delete", `{"id":"1"}`, ""),
			want: expect{status: 200, audit: audited("error", "writer", "tools/call", "note_delete"), check: refusedNote(`"id"`)}},
		{name: "no elicitation capability", req: modernCall(writerToken, `6`, "note_delete", `{"id":1}`),
			want: expect{status: 400, code: -32021, audit: audited("error", "writer", "tools/call", "note_delete"), check: requiresElicitation}},
		{name: "sampling but no elicitation", req: elicitingCallWith(`{"sampling":{}}`, writerToken, `7`, "note_delete", `{"id":1}`, ""),
			want: expect{status: 400, code: -32021, audit: audited("error", "writer", "tools/call", "note_delete"), check: requiresElicitation}},
		{name: "elicitation false", req: elicitingCallWith(`{"elicitation":false}`, writerToken, `8`, "note_delete", `{"id":1}`, ""),
			want: expect{status: 400, code: -32021, audit: audited("error", "writer", "tools/call", "note_delete"), check: requiresElicitation}},
		{name: "URL-mode elicitation only: the form cannot be asked", req: elicitingCallWith(`{"elicitation":{"url":{}}}`, writerToken, `9`, "note_delete", `{"id":1}`, ""),
			want: expect{status: 400, code: -32021, audit: audited("error", "writer", "tools/call", "note_delete")}},
		{name: "reader", req: deleteNote(readerToken, `10`, 1, ""),
			want: expect{status: 403, code: -32602, header: insufficient, audit: audited("denied", "reader", "tools/call", "note_delete")}},
		{name: "reader without elicitation: the permission gate runs first", req: modernCall(readerToken, `11`, "note_delete", `{"id":1}`),
			want: expect{status: 403, code: -32602, header: insufficient, audit: audited("denied", "reader", "tools/call", "note_delete")}},
		{name: "reader with a confirmation", req: deleteNote(readerToken, `12`, 1, answered(confirmYes, "")),
			want: expect{status: 403, code: -32602, header: insufficient, audit: audited("denied", "reader", "tools/call", "note_delete")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			app := newTestApp(testConfig())
			app.createNotes(t, writerToken, 1)
			app.createNotes(t, otherToken, 2)
			app.exchange(t, tc.req, tc.want)
			assert.Equal(t, []int{1}, app.noteIDs(t, writerToken), "nothing deleted")
			assert.Equal(t, []int{2}, app.noteIDs(t, otherToken), "nothing deleted")
		})
	}
}

// TestNoteDeleteRounds follows rounds that do not go as planned: an answer
// under another key, one never asked for, a state replayed elsewhere, a
// malformed answer, a note gone between the rounds.
func TestNoteDeleteRounds(t *testing.T) {
	t.Parallel()
	app := newTestApp(testConfig())
	app.createNotes(t, writerToken, 1, 2)
	app.createNotes(t, otherToken, 3)
	state := app.askDelete(t, writerToken, 1)
	invalid := expect{status: 200, code: -32602, audit: audited("error", "writer", "tools/call", "note_delete")}

	t.Run("an answer under another key is asked again", func(t *testing.T) {
		var again string
		app.exchange(t, deleteNote(writerToken, `1`, 1, `"inputResponses":{"other":`+confirmYes+`},"requestState":`+strconv.Quote(state)),
			expect{status: 200, audit: audited("input_required", "writer", "tools/call", "note_delete"), check: asksToConfirm(1, &again)})
	})
	t.Run("a confirmation never asked for deletes nothing", func(t *testing.T) {
		app.exchange(t, deleteNote(writerToken, `2`, 1, answered(confirmYes, "")),
			expect{status: 200, audit: audited("error", "writer", "tools/call", "note_delete"), check: refusedNote("note 1", "requestState")})
	})
	t.Run("a refusal never asked for is still a refusal", func(t *testing.T) {
		app.exchange(t, deleteNote(writerToken, `3`, 1, answered(declined, "")),
			expect{status: 200, audit: audited("ok", "writer", "tools/call", "note_delete"), check: keptNote(1)})
	})
	for _, tc := range []struct{ name, answer string }{
		{"not an object", `"yes"`},
		{"null", `null`},
		{"unknown action", `{"action":"maybe"}`},
		{"no action", `{"content":{"confirm":true}}`},
		{"accept without content", `{"action":"accept"}`},
		{"confirm a string", `{"action":"accept","content":{"confirm":"yes"}}`},
		{"content an array", `{"action":"accept","content":[true]}`},
		{"Action spelt in another case", `{"Action":"accept","content":{"confirm":true}}`},
	} {
		t.Run("malformed answer: "+tc.name, func(t *testing.T) {
			app.exchange(t, deleteNote(writerToken, `4`, 1, answered(tc.answer, state)), invalid)
		})
	}
	t.Run("a tampered state", func(t *testing.T) {
		app.exchange(t, deleteNote(writerToken, `5`, 1, answered(confirmYes, state+"-TAMPERED")), invalid)
	})
	t.Run("the state of another note", func(t *testing.T) {
		app.exchange(t, deleteNote(writerToken, `6`, 2, answered(confirmYes, state)), invalid)
	})
	t.Run("the state of another caller", func(t *testing.T) {
		app.exchange(t, deleteNote(otherToken, `7`, 1, answered(confirmYes, state)),
			expect{status: 200, code: -32602, audit: audited("error", "other", "tools/call", "note_delete")})
	})
	require.Equal(t, []int{2, 1}, app.noteIDs(t, writerToken), "none of these deleted anything")

	t.Run("the other tenant deletes its own note", func(t *testing.T) {
		s := app.askDelete(t, otherToken, 3)
		app.exchange(t, deleteNote(otherToken, `8`, 3, answered(confirmYes, s)),
			expect{status: 200, audit: audited("ok", "other", "tools/call", "note_delete"), check: deletedNote(3)})
		assert.Empty(t, app.noteIDs(t, otherToken))
		assert.Equal(t, []int{2, 1}, app.noteIDs(t, writerToken))
	})
	t.Run("a note gone between the rounds", func(t *testing.T) {
		second := app.askDelete(t, writerToken, 1) // a second question about the same note
		app.exchange(t, deleteNote(writerToken, `9`, 1, answered(confirmYes, state)),
			expect{status: 200, audit: audited("ok", "writer", "tools/call", "note_delete"), check: deletedNote(1)})
		app.exchange(t, deleteNote(writerToken, `10`, 1, answered(confirmYes, second)),
			expect{status: 200, audit: audited("error", "writer", "tools/call", "note_delete"), check: refusedNote("note 1")})
		app.exchange(t, deleteNote(writerToken, `11`, 1, ""),
			expect{status: 200, audit: audited("error", "writer", "tools/call", "note_delete"), check: refusedNote("note 1")})
		assert.Equal(t, []int{2}, app.noteIDs(t, writerToken))
	})
}

// TestNoteDeleteAcrossInstances checks that a round begun on one instance
// of the app is finished on another that read the same MCP_STATE_KEY,
// including one that has since put a new key in front of it, and on no
// instance with other keys.
func TestNoteDeleteAcrossInstances(t *testing.T) {
	t.Parallel()
	key, newKey := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	appWith := func(env string) *testApp {
		t.Helper()
		c := testConfig()
		if env != "" {
			fromEnv, err := configFromEnv(func(k string) string { return map[string]string{"MCP_STATE_KEY": env}[k] })
			require.NoError(t, err)
			c.stateKeys = fromEnv.stateKeys
		}
		app := newTestApp(c)
		app.createNotes(t, writerToken, 1) // each instance has a store of its own: the same note in each
		return app
	}
	first, same, rotated, random := appWith(key), appWith(key), appWith(newKey+","+key), appWith("")
	refused := expect{status: 200, code: -32602, audit: audited("error", "writer", "tools/call", "note_delete")}

	state := first.askDelete(t, writerToken, 1)
	random.exchange(t, deleteNote(writerToken, `1`, 1, answered(confirmYes, state)), refused)
	assert.Equal(t, []int{1}, random.noteIDs(t, writerToken), "an instance without the key deletes nothing")
	same.exchange(t, deleteNote(writerToken, `2`, 1, answered(confirmYes, state)),
		expect{status: 200, audit: audited("ok", "writer", "tools/call", "note_delete"), check: deletedNote(1)})
	assert.Empty(t, same.noteIDs(t, writerToken))
	rotated.exchange(t, deleteNote(writerToken, `3`, 1, answered(confirmYes, state)),
		expect{status: 200, audit: audited("ok", "writer", "tools/call", "note_delete"), check: deletedNote(1)})
	assert.Empty(t, rotated.noteIDs(t, writerToken), "the old key still opens on a rotated ring")
	assert.Equal(t, []int{1}, first.noteIDs(t, writerToken), "the first instance's note is its own")

	// The rotated ring seals with its new key, which the first does not hold.
	rotated.createNotes(t, writerToken, 2)
	first.createNotes(t, writerToken, 2)
	newState := rotated.askDelete(t, writerToken, 2)
	first.exchange(t, deleteNote(writerToken, `4`, 2, answered(confirmYes, newState)), refused)
	assert.Equal(t, []int{2, 1}, first.noteIDs(t, writerToken))
}
