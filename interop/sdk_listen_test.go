package interop

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listeningSession connects the official Go SDK client at 2026-07-28 with a
// ResourceListChangedHandler, which makes it open a subscriptions/listen
// stream as it connects; each notification it gets is sent on the channel.
func listeningSession(t *testing.T, ctx context.Context, url, token string) (*mcp.ClientSession, <-chan struct{}, *wireRecorder) {
	t.Helper()
	wire := newWireRecorder(http.DefaultTransport, token)
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("MCPMW_INTEROP_DUMP") != "" {
			t.Logf("wire traffic of %s:\n%s", token, wire.dump())
		}
	})
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "interop-sdk-listen", Version: "0.1.0"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: wire},
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	require.NoError(t, err, "connect as %s", token)
	t.Cleanup(func() { _ = cs.Close() })
	return cs, changed, wire
}

// TestSDKResourceListChanged checks that the official Go SDK client,
// listening as it connects on 2026-07-28, hears note_create's
// notifications/resources/list_changed for its own tenant only, and that
// the notification makes it drop its cached resources/list.
func TestSDKResourceListChanged(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example app")
	}
	t.Parallel()
	app := startChiApp(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	writer, writerHeard, wire := listeningSession(t, ctx, app.url, writerToken)
	other, otherHeard, _ := listeningSession(t, ctx, app.url, otherToken)
	assert.Contains(t, wire.methods(), "subscriptions/listen", "the SDK opens a listen stream as it connects")
	caps := writer.InitializeResult().Capabilities
	if assert.NotNil(t, caps.Resources) {
		assert.True(t, caps.Resources.ListChanged, "resources.listChanged")
	}

	uris := func() []string {
		t.Helper()
		list, err := writer.ListResources(ctx, nil)
		require.NoError(t, err, "resources/list")
		var out []string
		for _, r := range list.Resources {
			if !strings.HasPrefix(r.URI, "skill://") { // the skills' SKILL.md files: the TypeScript client's skills test
				out = append(out, r.URI)
			}
		}
		return out
	}
	countLists := func() int {
		n := 0
		for _, m := range wire.methods() {
			if m == "resources/list" {
				n++
			}
		}
		return n
	}
	assert.Equal(t, []string{"app://readme", "app://stats", "ui://notes/board"}, uris(), "no notes yet")
	assert.Equal(t, []string{"app://readme", "app://stats", "ui://notes/board"}, uris(), "no notes yet, again")
	assert.Equal(t, 1, countLists(), "the SDK served the second list from its cache (ttlMs)")

	res, err := writer.CallTool(ctx, &mcp.CallToolParams{Name: "note_create", Arguments: map[string]any{"text": "heard?"}})
	require.NoError(t, err)
	require.False(t, res.IsError, textOf(res))
	id := int(res.StructuredContent.(map[string]any)["id"].(float64))

	select {
	case <-writerHeard:
	case <-ctx.Done():
		require.FailNow(t, "the writer's listener never heard notifications/resources/list_changed")
	}
	assert.Equal(t, []string{"app://readme", "app://stats", "ui://notes/board", "notes://" + strconv.Itoa(id)}, uris(),
		"the notification dropped the cached list")
	assert.Equal(t, 2, countLists(), "the list after the notification came from the app")

	// The other tenant heard nothing of demo's note; its own note_create
	// reaches it (and only once: nothing was queued before it).
	res, err = other.CallTool(ctx, &mcp.CallToolParams{Name: "note_create", Arguments: map[string]any{"text": "other's"}})
	require.NoError(t, err)
	require.False(t, res.IsError, textOf(res))
	otherID := int(res.StructuredContent.(map[string]any)["id"].(float64))
	select {
	case <-otherHeard:
	case <-ctx.Done():
		require.FailNow(t, "the other tenant's listener never heard its own change")
	}
	select {
	case <-otherHeard:
		assert.Fail(t, "the other tenant heard of demo's note")
	case <-time.After(200 * time.Millisecond):
	}
	select {
	case <-writerHeard:
		assert.Fail(t, "the writer heard of the other tenant's note")
	default:
	}
	assert.Positive(t, otherID)
}
