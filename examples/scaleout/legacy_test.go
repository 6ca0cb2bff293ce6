package scaleout

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// legacyStream is a legacy call's event stream, read message by message.
type legacyStream struct {
	resp *http.Response
	msgs chan json.RawMessage // closed when the stream ends
}

// legacyPost sends body to url/mcp as a 2025-11-25 client of token.
func legacyPost(ctx context.Context, t *testing.T, url, token, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := httpClient.Do(req)
	require.NoError(t, err)
	return resp
}

// legacyDelete starts a legacy note_delete of note id on url, as token,
// under the JSON-RPC id 1, and returns its event stream.
func legacyDelete(t *testing.T, url, token string, id int) *legacyStream {
	t.Helper()
	resp := legacyPost(t.Context(), t, url, token, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"note_delete","arguments":{"id":%d}}}`, id))
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"), "a legacy call that asks answers on an event stream")
	s := &legacyStream{resp: resp, msgs: make(chan json.RawMessage, 8)}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		defer close(s.msgs)
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
				s.msgs <- json.RawMessage(data)
			}
		}
	}()
	return s
}

// next returns the stream's next message, failing the test after within.
func (s *legacyStream) next(t *testing.T, within time.Duration) json.RawMessage {
	t.Helper()
	select {
	case m, ok := <-s.msgs:
		require.True(t, ok, "the stream ended")
		return m
	case <-time.After(within):
		t.Fatalf("no message within %s", within)
		return nil
	}
}

// quiet reports whether the stream says nothing for d.
func (s *legacyStream) quiet(d time.Duration) bool {
	select {
	case <-s.msgs:
		return false
	case <-time.After(d):
		return true
	}
}

// question reads the elicitation/create the call sends and returns its id.
func (s *legacyStream) question(t *testing.T) json.RawMessage {
	t.Helper()
	var q struct {
		ID     json.RawMessage
		Method string
	}
	m := s.next(t, patience)
	require.NoError(t, json.Unmarshal(m, &q), "%s", m)
	require.Equal(t, "elicitation/create", q.Method, "%s", m)
	return q.ID
}

// result reads the call's result: its text and isError.
func (s *legacyStream) result(t *testing.T) (string, bool) {
	t.Helper()
	var r struct {
		Result struct {
			Content []struct{ Text string }
			IsError bool
		}
	}
	m := s.next(t, patience)
	require.NoError(t, json.Unmarshal(m, &r), "%s", m)
	require.NotEmpty(t, r.Result.Content, "%s", m)
	return r.Result.Content[0].Text, r.Result.IsError
}

// accepted POSTs a legacy message to url as token and checks the 202.
func accepted(t *testing.T, url, token, body string) {
	t.Helper()
	resp := legacyPost(t.Context(), t, url, token, body)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusAccepted, resp.StatusCode, "%s", b)
}

// confirmYes is the client's answer accepting note_delete's question.
const confirmYes = `"result":{"action":"accept","content":{"confirm":true}}`

// TestLegacyAnswerOnAnotherInstance: a legacy elicitation whose stream is
// on instance 1 and whose answer POST goes to instance 2. The answer is
// relayed to instance 1 through Redis; another team's caller answering
// the same id reaches nothing there (the binding is checked by the
// instance that asked); the note is deleted for every instance.
func TestLegacyAnswerOnAnotherInstance(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "chi-app")
	id := createNote(t, c.instances[0].url, writerToken, "to delete")
	call := legacyDelete(t, c.instances[0].url, writerToken, id)
	ask := call.question(t)

	accepted(t, c.instances[1].url, otherToken, `{"jsonrpc":"2.0","id":`+string(ask)+`,`+confirmYes+`}`)
	assert.True(t, call.quiet(300*time.Millisecond), "another caller's answer reached the call")
	accepted(t, c.instances[1].url, writerToken, `{"jsonrpc":"2.0","id":`+string(ask)+`,`+confirmYes+`}`)
	text, isError := call.result(t)
	assert.False(t, isError, text)
	assert.NotContains(t, listNotes(t, c.instances[2].url, readerToken), "to delete", "deleted, on every instance")
	waitFor(t, "instance 2 audits both answers as sent on", patience, func() bool {
		b, _ := os.ReadFile(c.instances[1].audit)
		return strings.Count(string(b), "client response: sent to the instance that asked") == 2
	})
}

// TestLegacyCancelOnAnotherInstance: cancel on instance 2 a legacy call
// running on instance 1 (waiting for its client's answer). Another
// team's caller naming the same request id cancels nothing; the caller's
// own cancellation ends the call, which answers that it was cancelled and
// leaves the note.
func TestLegacyCancelOnAnotherInstance(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "chi-app")
	id := createNote(t, c.instances[0].url, writerToken, "to keep")
	call := legacyDelete(t, c.instances[0].url, writerToken, id)
	call.question(t)

	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`
	accepted(t, c.instances[1].url, otherToken, cancel)
	assert.True(t, call.quiet(300*time.Millisecond), "another caller's cancellation reached the call")
	accepted(t, c.instances[1].url, writerToken, cancel)
	text, isError := call.result(t)
	assert.True(t, isError)
	assert.Equal(t, "The call was cancelled by the client.", text)
	assert.Contains(t, listNotes(t, c.instances[2].url, readerToken), "to keep")
}
