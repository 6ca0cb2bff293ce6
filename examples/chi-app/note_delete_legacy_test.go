package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// legacyServer is the app's router served over loopback HTTP: the legacy
// rounds need a real connection, since the question goes out on the call's
// event stream while the answer comes as a POST of its own.
type legacyServer struct {
	*testApp
	url string
}

// serveLegacy starts the app on 127.0.0.1 (httptest.NewServer listens on
// loopback only); it is closed when the test ends.
func serveLegacy(t *testing.T) *legacyServer {
	t.Helper()
	app := newTestApp(testConfig())
	srv := httptest.NewServer(app.h)
	t.Cleanup(srv.Close)
	return &legacyServer{testApp: app, url: srv.URL + "/mcp"}
}

// sseStream reads JSON-RPC messages from an event stream.
type sseStream struct {
	resp *http.Response
	r    *bufio.Reader
}

// next returns the data of the next event, or io.EOF when the stream ends.
func (s *sseStream) next() (json.RawMessage, error) {
	var data []string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && len(data) > 0 {
				return json.RawMessage(strings.Join(data, "\n")), nil
			}
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if len(data) > 0 {
				return json.RawMessage(strings.Join(data, "\n")), nil
			}
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
}

// post sends r to the server within ctx.
func (s *legacyServer) post(ctx context.Context, t *testing.T, r request) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(r.body))
	require.NoError(t, err)
	req.Header = r.header.Clone()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// call starts a legacy tools/call of note_delete and returns its event
// stream; every read on it ends when ctx does.
func (s *legacyServer) call(ctx context.Context, t *testing.T, token, version string, noteID int) *sseStream {
	t.Helper()
	resp := s.post(ctx, t, legacyCall(token, version, `1`, "note_delete", fmt.Sprintf(`{"id":%d}`, noteID)))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"), "a legacy call that asks answers on an event stream")
	return &sseStream{resp: resp, r: bufio.NewReader(resp.Body)}
}

// legacyElicit is the elicitation/create request the server sends.
type legacyElicit struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  map[string]json.RawMessage
}

// askedOnStream reads the next message of st and checks that it is
// note_delete's question about noteID as revision version has it; it
// returns the request's id (a JSON string).
func askedOnStream(t *testing.T, st *sseStream, version string, noteID int) string {
	t.Helper()
	data, err := st.next()
	require.NoError(t, err, "the question comes on the stream")
	var q legacyElicit
	require.NoError(t, json.Unmarshal(data, &q), "event: %s", data)
	assert.Equal(t, "2.0", q.JSONRPC)
	assert.Equal(t, "elicitation/create", q.Method, "event: %s", data)
	var id string
	require.NoError(t, json.Unmarshal(q.ID, &id), "the server's request id is a string: %s", data)
	assert.True(t, strings.HasPrefix(id, "mcpmw-ask-"), "request id %q", id)
	assert.JSONEq(t, confirmSchemaWire, string(q.Params["requestedSchema"]))
	var msg string
	require.NoError(t, json.Unmarshal(q.Params["message"], &msg))
	assert.Contains(t, msg, strconv.Itoa(noteID), "the message names the note")
	if version == v0618 {
		assert.NotContains(t, q.Params, "mode", "2025-06-18 has no elicitation modes: %s", data)
	} else {
		assert.JSONEq(t, `"form"`, string(q.Params["mode"]), "event: %s", data)
	}
	return string(q.ID)
}

// answerAsk POSTs the client's JSON-RPC response (result, or error when
// isError) to the request id, as token's caller, and checks the 202.
func (s *legacyServer) answerAsk(ctx context.Context, t *testing.T, token, version, id, member, value string) {
	t.Helper()
	r := raw(token, "", `{"jsonrpc":"2.0","id":`+id+`,"`+member+`":`+value+`}`)
	r.header.Set("MCP-Protocol-Version", version)
	resp := s.post(ctx, t, r)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusAccepted, resp.StatusCode, "body: %s", body)
	assert.Empty(t, body, "a 202 has no body")
}

// finalOnStream reads the call's answer from st, checks it with check and
// that the stream ends after it.
func finalOnStream(t *testing.T, st *sseStream, check func(t *testing.T, rep reply)) {
	t.Helper()
	data, err := st.next()
	require.NoError(t, err, "the call's answer comes on the stream")
	rep := replyOf(t, data)
	assert.JSONEq(t, `1`, string(rep.members["id"]), "the answer carries the call's id: %s", data)
	check(t, rep)
	_, err = st.next()
	assert.ErrorIs(t, err, io.EOF, "the stream ends after the answer")
}

// replyOf decodes a JSON-RPC response holding a result.
func replyOf(t *testing.T, data []byte) reply {
	t.Helper()
	var rep reply
	require.NoError(t, json.Unmarshal(data, &rep.members), "message: %s", data)
	require.Contains(t, rep.members, "result", "message: %s", data)
	require.NoError(t, json.Unmarshal(rep.members["result"], &rep.result))
	return rep
}

// auditedDeletes checks that the note_delete calls audited so far had
// these outcomes, in order. A call's record is written once its answer
// is, which the client may see first, so it is awaited (for at most
// patience).
func (a *testApp) auditedDeletes(t *testing.T, why string, want ...string) {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(patience); ; time.Sleep(10 * time.Millisecond) {
		got = got[:0]
		for _, rec := range auditRecords(t, a.audit.String()) {
			if rec["method"] == "tools/call" && rec["tool"] == "note_delete" {
				got = append(got, fmt.Sprint(rec["outcome"]))
			}
		}
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
	}
	assert.Equal(t, want, got, why)
}

// TestNoteDeleteLegacy drives note_delete the way a 2025-11-25 or
// 2025-06-18 client does: the call's event stream carries elicitation/create,
// the client POSTs its answer (202), and the call's result follows on the
// stream. Only accept with confirm true deletes.
func TestNoteDeleteLegacy(t *testing.T) {
	t.Parallel()
	for _, version := range []string{v1125, v0618} {
		for _, tc := range []struct {
			name, member, answer string
			check                func(t *testing.T, rep reply)
			left                 []int
			outcome              string // of the call's audit record; "" means ok
		}{
			{name: "accept, confirm true", member: "result", answer: confirmYes, check: legacyDeleted(2), left: []int{1}},
			{name: "accept, confirm false", member: "result", answer: confirmNo, check: legacyKept(2), left: []int{2, 1}},
			{name: "decline", member: "result", answer: declined, check: legacyKept(2), left: []int{2, 1}},
			{name: "cancel", member: "result", answer: cancelled, check: legacyKept(2), left: []int{2, 1}},
			{name: "the client answers with an error", member: "error", answer: `{"code":-32601,"message":"no form UI here"}`,
				check: toolFailed(false, "elicitation/create", "no form UI here"), left: []int{2, 1}, outcome: "error"},
		} {
			t.Run(version+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(t.Context(), patience)
				defer cancel()
				s := serveLegacy(t)
				s.createNotes(t, writerToken, 1, 2)

				st := s.call(ctx, t, writerToken, version, 2)
				id := askedOnStream(t, st, version, 2)
				assert.Equal(t, []int{2, 1}, s.noteIDs(t, writerToken), "asking deletes nothing")
				s.answerAsk(ctx, t, writerToken, version, id, tc.member, tc.answer)
				finalOnStream(t, st, tc.check)
				assert.Equal(t, tc.left, s.noteIDs(t, writerToken))
				s.auditedDeletes(t, "the call is audited once, when it ends", cmp.Or(tc.outcome, "ok"))
			})
		}
	}
}

// legacyDeleted and legacyKept check note_delete's final answer on a
// legacy revision: the same text and structuredContent as on 2026-07-28,
// without resultType or _meta.
func legacyDeleted(noteID int) func(t *testing.T, rep reply) {
	return toolOK(false, fmt.Sprintf("deleted note %d", noteID), fmt.Sprintf(`{"deleted":%d}`, noteID))
}

func legacyKept(noteID int) func(t *testing.T, rep reply) {
	return toolOK(false, fmt.Sprintf("kept note %d", noteID), `{"deleted":null}`)
}

// TestNoteDeleteLegacyOtherCaller checks that only the caller who was asked
// may answer: another tenant's answer to the same request id is taken
// (202) but not delivered, and the call goes on waiting for its own.
func TestNoteDeleteLegacyOtherCaller(t *testing.T) {
	t.Parallel()
	for _, version := range []string{v1125, v0618} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), patience)
			defer cancel()
			s := serveLegacy(t)
			s.createNotes(t, writerToken, 1)

			st := s.call(ctx, t, writerToken, version, 1)
			id := askedOnStream(t, st, version, 1)
			s.answerAsk(ctx, t, otherToken, version, id, "result", confirmYes)
			assert.Equal(t, []int{1}, s.noteIDs(t, writerToken), "another caller's answer deletes nothing")
			s.answerAsk(ctx, t, writerToken, version, id, "result", declined)
			finalOnStream(t, st, legacyKept(1))
			assert.Equal(t, []int{1}, s.noteIDs(t, writerToken))

			// The answer POSTs are audited as the callers who sent them, saying
			// whether each reached the waiting call.
			var answers []string
			for _, rec := range auditRecords(t, s.audit.String()) {
				if rec["request_id"] == id {
					answers = append(answers, fmt.Sprintf("%v %v %v: %v", rec["caller"], rec["status"], rec["outcome"], rec["summary"]))
				}
			}
			assert.Equal(t, []string{
				"other 202 accepted: client response: no request of this caller is waiting for it here (answered late, or sent to another instance)",
				"writer 202 accepted: client response: delivered",
			}, answers)
		})
	}
}

// TestNoteDeleteLegacyForeignNote checks that a note of another tenant is
// refused without asking anything: the stream, if any, carries no
// elicitation/create, only the isError result.
func TestNoteDeleteLegacyForeignNote(t *testing.T) {
	t.Parallel()
	for _, version := range []string{v1125, v0618} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), patience)
			defer cancel()
			s := serveLegacy(t)
			s.createNotes(t, writerToken, 1)

			resp := s.post(ctx, t, legacyCall(otherToken, version, `1`, "note_delete", `{"id":1}`))
			require.Equal(t, http.StatusOK, resp.StatusCode)
			var messages []json.RawMessage
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				st := &sseStream{resp: resp, r: bufio.NewReader(resp.Body)}
				for {
					data, err := st.next()
					if err == io.EOF {
						break
					}
					require.NoError(t, err)
					messages = append(messages, data)
				}
			} else {
				assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				messages = append(messages, body)
			}
			require.Len(t, messages, 1, "only the result, no question: %s", messages)
			var m struct {
				Method string `json:"method"`
			}
			require.NoError(t, json.Unmarshal(messages[0], &m))
			assert.Empty(t, m.Method, "no elicitation/create: %s", messages[0])
			rep := replyOf(t, messages[0])
			toolFailed(false, "note 1")(t, rep)
			assert.Equal(t, []int{1}, s.noteIDs(t, writerToken), "nothing deleted")
			s.auditedDeletes(t, "the refusal is audited", "error")
		})
	}
}
