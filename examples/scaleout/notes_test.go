package scaleout

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// createNote creates a note through url as token and returns its id.
func createNote(t *testing.T, url, token, text string) int {
	t.Helper()
	res, err := client(url, token).CallTool(t.Context(), "note_create", map[string]any{"text": text})
	require.NoError(t, err)
	require.False(t, res.IsError, res.Text)
	var created struct{ ID int }
	require.NoError(t, res.Decode(&created))
	return created.ID
}

// listNotes returns the texts of the notes token's team has, newest first,
// read through url.
func listNotes(t *testing.T, url, token string) []string {
	t.Helper()
	res, err := client(url, token).CallTool(t.Context(), "notes_list", map[string]any{"limit": 50})
	require.NoError(t, err)
	require.False(t, res.IsError, res.Text)
	var list struct {
		Notes []struct{ Text string }
	}
	require.NoError(t, res.Decode(&list))
	var out []string
	for _, n := range list.Notes {
		out = append(out, n.Text)
	}
	return out
}

// TestNotesAcrossInstances: three instances of the example app on one
// Redis serve one set of notes per team, resume each other's
// input_required rounds, and tell each other's listeners of their team's
// changes only. Each request goes to a named instance, so nothing depends
// on the proxy's rotation.
func TestNotesAcrossInstances(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "chi-app", "RATE_LIMIT=0")
	one, two, three := c.instances[0].url, c.instances[1].url, c.instances[2].url

	t.Run("written through one, read through another", func(t *testing.T) {
		id := createNote(t, one, writerToken, "shared across instances")
		assert.Equal(t, []string{"shared across instances"}, listNotes(t, three, readerToken), "instance 3 reads what instance 1 wrote")
		assert.Empty(t, listNotes(t, two, otherToken), "another team's notes are its own, on every instance")
		res, err := client(two, readerToken).ReadResource(t.Context(), "notes://"+strconv.Itoa(id))
		require.NoError(t, err)
		require.Len(t, res.Contents, 1)
		assert.Equal(t, "shared across instances", res.Contents[0].Text)
	})

	t.Run("input_required sealed on one, resumed on another", func(t *testing.T) {
		id := createNote(t, two, writerToken, "to delete")
		elicits := mcpmwtest.Capabilities(map[string]any{"elicitation": map[string]any{}})
		first, err := client(one, writerToken, elicits).Call(t.Context(), "tools/call", map[string]any{"name": "note_delete", "arguments": map[string]any{"id": id}})
		require.NoError(t, err)
		var round struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		}
		require.NoError(t, first.Decode(&round))
		require.Equal(t, "input_required", round.ResultType, "%s", first.Result)
		require.Contains(t, round.InputRequests, "confirm")
		require.NotEmpty(t, round.RequestState)

		done, err := client(three, writerToken, elicits).Call(t.Context(), "tools/call", map[string]any{
			"name": "note_delete", "arguments": map[string]any{"id": id},
			"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}},
			"requestState":   round.RequestState,
		})
		require.NoError(t, err)
		assert.Contains(t, string(done.Result), `"deleted note `+strconv.Itoa(id)+`"`, "instance 3 opened instance 1's sealed state")
		assert.NotContains(t, listNotes(t, two, readerToken), "to delete")
	})

	t.Run("a listener on one hears a change on another, its team's only", func(t *testing.T) {
		filter := mcpmwtest.ListenFilter{ResourcesListChanged: true}
		demo, err := client(one, readerToken).Listen(t.Context(), filter)
		require.NoError(t, err)
		defer demo.Close()
		other, err := client(one, otherToken).Listen(t.Context(), filter)
		require.NoError(t, err)
		defer other.Close()

		next := func(l *mcpmwtest.Listener, within time.Duration) (mcpmwtest.Notification, error) {
			ctx, cancel := context.WithTimeout(t.Context(), within)
			defer cancel()
			return l.Next(ctx)
		}
		// quiet reads what l hears until it hears nothing for 300 ms: on a
		// busy machine, the earlier subtests' changes (published on other
		// instances) can reach instance 1 after these listeners opened,
		// and are demo's team's to hear.
		quiet := func(l *mcpmwtest.Listener) {
			for range 10 {
				if _, err := next(l, 300*time.Millisecond); err != nil {
					require.ErrorIs(t, err, context.DeadlineExceeded)
					return
				}
			}
			t.Fatal("a listener kept hearing changes nobody made")
		}
		createNote(t, two, writerToken, "demo's change")
		n, err := next(demo, patience)
		require.NoError(t, err, "instance 1's demo listener hears instance 2's change")
		assert.Equal(t, mcpmw.ResourcesListChanged, n.Method)
		quiet(demo)
		_, err = next(other, 300*time.Millisecond)
		assert.True(t, errors.Is(err, context.DeadlineExceeded), "the other team hears nothing of it (%v)", err)

		createNote(t, three, otherToken, "other's change")
		n, err = next(other, patience)
		require.NoError(t, err, "the other team hears its own change, made on instance 3")
		assert.Equal(t, mcpmw.ResourcesListChanged, n.Method)
		_, err = next(demo, 300*time.Millisecond)
		assert.True(t, errors.Is(err, context.DeadlineExceeded), "and demo hears nothing of that (%v)", err)
	})
}
