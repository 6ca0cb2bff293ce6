package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSDKElicitation has the official Go SDK client answer the example
// app's note_delete question at each revision: on 2026-07-28 through the
// SDK's multi-round-trip middleware (an input_required result, then a
// retry with inputResponses and requestState), on the legacy revisions
// through an elicitation/create request on the call's event stream that
// the SDK answers with a POST of its own. The SDK calls the same
// ElicitationHandler either way: accepting deletes the note, declining
// keeps it.
func TestSDKElicitation(t *testing.T) {
	t.Parallel()
	app := startChiApp(t)
	for _, rev := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			testSDKElicitation(t, app.url, rev)
		})
	}
}

// elicitation is one elicitation/create the SDK handed to the handler.
type elicitation struct {
	message string
	schema  map[string]any
}

// elicitRecorder is an ElicitationHandler that records what it is asked
// and answers with the result its test sets.
type elicitRecorder struct {
	mu     sync.Mutex
	answer *mcp.ElicitResult
	asked  []elicitation
}

// handle records req and returns the current answer.
func (e *elicitRecorder) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	var schema map[string]any
	raw, err := json.Marshal(req.Params.RequestedSchema)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, elicitation{message: req.Params.Message, schema: schema})
	return e.answer, nil
}

// reply sets the answer to the next questions and forgets the ones asked.
func (e *elicitRecorder) reply(answer *mcp.ElicitResult) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.answer, e.asked = answer, nil
}

// questions returns what was asked since the last reply.
func (e *elicitRecorder) questions() []elicitation {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]elicitation(nil), e.asked...)
}

// testSDKElicitation runs the scenario at one revision against the app at
// url: create two notes, delete the first (accept, confirm true), keep the
// second (decline).
func testSDKElicitation(t *testing.T, url, rev string) {
	wire := newWireRecorder(http.DefaultTransport, writerToken)
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("MCPMW_INTEROP_DUMP") != "" {
			t.Logf("wire traffic at %s:\n%s", rev, wire.dump())
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	rec := &elicitRecorder{}
	client := mcp.NewClient(&mcp.Implementation{Name: "interop-elicit", Version: "0.1.0"},
		&mcp.ClientOptions{ElicitationHandler: rec.handle})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: wire},
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
	require.NoError(t, err, "connect")
	defer func() { _ = cs.Close() }()
	require.Equal(t, rev, cs.InitializeResult().ProtocolVersion, "negotiated protocol version")

	deleted, kept := createNote(ctx, t, cs, "to delete at "+rev), createNote(ctx, t, cs, "to keep at "+rev)

	// Accept, confirm true: the note is deleted.
	rec.reply(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "note_delete", Arguments: map[string]any{"id": deleted}})
	require.NoError(t, err, "note_delete %d", deleted)
	assert.False(t, res.IsError, "isError: %s", textOf(res))
	assert.Equal(t, fmt.Sprintf("deleted note %d", deleted), textOf(res))
	assert.Equal(t, map[string]any{"deleted": float64(deleted)}, res.StructuredContent)
	checkAsked(t, rec.questions(), deleted)
	checkRound(t, wire, rev, deleted, 1, "accept")

	// Decline: the note is kept.
	rec.reply(&mcp.ElicitResult{Action: "decline"})
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "note_delete", Arguments: map[string]any{"id": kept}})
	require.NoError(t, err, "note_delete %d", kept)
	assert.False(t, res.IsError, "isError: %s", textOf(res))
	assert.Equal(t, fmt.Sprintf("kept note %d", kept), textOf(res))
	assert.Equal(t, map[string]any{"deleted": nil}, res.StructuredContent)
	checkAsked(t, rec.questions(), kept)
	checkRound(t, wire, rev, kept, 2, "decline")

	ids := listNotes(ctx, t, cs)
	assert.Contains(t, ids, kept, "the declined note is still listed")
	assert.NotContains(t, ids, deleted, "the confirmed note is gone")
}

// createNote has the session create a note and returns its id.
func createNote(ctx context.Context, t *testing.T, cs *mcp.ClientSession, text string) int {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "note_create", Arguments: map[string]any{"text": text}})
	require.NoError(t, err, "note_create")
	require.False(t, res.IsError, "note_create: %s", textOf(res))
	var out struct {
		ID int `json:"id"`
	}
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &out))
	require.Positive(t, out.ID, "note_create's structured content: %s", raw)
	return out.ID
}

// listNotes returns the ids notes_list shows the session's caller.
func listNotes(ctx context.Context, t *testing.T, cs *mcp.ClientSession) []int {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes_list", Arguments: map[string]any{}})
	require.NoError(t, err, "notes_list")
	require.False(t, res.IsError, "notes_list: %s", textOf(res))
	var out struct {
		Notes []struct {
			ID int `json:"id"`
		} `json:"notes"`
	}
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &out))
	ids := []int{}
	for _, n := range out.Notes {
		ids = append(ids, n.ID)
	}
	return ids
}

// checkAsked checks that the handler was asked exactly once, with a
// message naming the note and the form of one required boolean, confirm.
func checkAsked(t *testing.T, asked []elicitation, noteID int) {
	t.Helper()
	require.Len(t, asked, 1, "the elicitation handler is called once")
	q := asked[0]
	assert.Contains(t, q.message, strconv.Itoa(noteID), "the message names the note")
	assert.Equal(t, "object", q.schema["type"], "schema: %v", q.schema)
	assert.Equal(t, map[string]any{"confirm": map[string]any{"type": "boolean"}}, q.schema["properties"], "schema: %v", q.schema)
	assert.Equal(t, []any{"confirm"}, q.schema["required"], "schema: %v", q.schema)
}

// checkRound checks on the wire that note_delete of noteID went the way
// the revision asks: on 2026-07-28 two tools/call POSTs, the first answered
// input_required with a requestState and the second carrying
// inputResponses and that state; on the legacy revisions one tools/call
// and one answer POST to the server's mcpmw-ask- request (the
// wantAnswers-th of the test), carrying action and answered 202.
func checkRound(t *testing.T, wire *wireRecorder, rev string, noteID, wantAnswers int, action string) {
	t.Helper()
	calls := wire.toolCalls("note_delete", noteID)
	if rev == "2026-07-28" {
		require.Len(t, calls, 2, "an input_required round and its retry")
		first, retry := calls[0], calls[1]
		assert.Equal(t, http.StatusOK, first.status)
		var round struct {
			ResultType    string `json:"resultType"`
			RequestState  string `json:"requestState"`
			InputRequests map[string]struct {
				Method string `json:"method"`
			} `json:"inputRequests"`
		}
		var body struct {
			Result *json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal(first.respBody, &body), "first round's answer: %s", first.respBody)
		require.NotNil(t, body.Result, "first round's answer: %s", first.respBody)
		require.NoError(t, json.Unmarshal(*body.Result, &round))
		assert.Equal(t, "input_required", round.ResultType)
		assert.Equal(t, "elicitation/create", round.InputRequests["confirm"].Method)
		require.NotEmpty(t, round.RequestState)

		var params struct {
			Params struct {
				InputResponses map[string]json.RawMessage `json:"inputResponses"`
				RequestState   string                     `json:"requestState"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(retry.reqBody, &params), "retry: %s", retry.reqBody)
		assert.Contains(t, params.Params.InputResponses, "confirm", "the retry answers confirm")
		assert.Equal(t, round.RequestState, params.Params.RequestState, "the retry echoes the requestState")
		assert.Equal(t, http.StatusOK, retry.status)
		return
	}
	require.Len(t, calls, 1, "one tools/call: the question comes on its event stream")
	assert.Equal(t, "text/event-stream", calls[0].respHeader.Get("Content-Type"))
	// The answer POST's 202 may reach the SDK after the result it unblocked
	// came on the stream, so wait a little for the recorder to see it.
	var answers []exchange
	require.Eventually(t, func() bool {
		answers = wire.askAnswers()
		return len(answers) == wantAnswers
	}, patience, 10*time.Millisecond, "the SDK POSTs answer %d to the server's request", wantAnswers)
	last := answers[len(answers)-1]
	assert.Equal(t, http.StatusAccepted, last.status, "the answer POST")
	assert.Empty(t, last.respBody, "a 202 has no body")
	assert.Contains(t, string(last.reqBody), `"action":"`+action+`"`, "the answer POST carries the handler's result")
}

// toolCalls returns the recorded tools/call POSTs of tool whose arguments
// are {"id": id}, in order.
func (w *wireRecorder) toolCalls(tool string, id int) []exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []exchange
	for _, ex := range w.exchange {
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if ex.method != http.MethodPost || json.Unmarshal(ex.reqBody, &msg) != nil || msg.Method != "tools/call" || msg.Params.Name != tool {
			continue
		}
		var args map[string]json.RawMessage
		if json.Unmarshal(msg.Params.Arguments, &args) == nil && bytes.Equal(bytes.TrimSpace(args["id"]), []byte(strconv.Itoa(id))) {
			out = append(out, ex)
		}
	}
	return out
}

// askAnswers returns the recorded POSTs that answer a request the server
// sent (its ids start "mcpmw-ask-"), in order.
func (w *wireRecorder) askAnswers() []exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []exchange
	for _, ex := range w.exchange {
		var msg struct {
			ID     string          `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if ex.method == http.MethodPost && json.Unmarshal(ex.reqBody, &msg) == nil && strings.HasPrefix(msg.ID, "mcpmw-ask-") && msg.Result != nil {
			out = append(out, ex)
		}
	}
	return out
}
