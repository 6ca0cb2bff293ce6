package mcpmw_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// TestUnlistedResource: an Unlisted resource is left out of every page of
// resources/list, and read and gated by its URI as any other.
func TestUnlistedResource(t *testing.T) {
	t.Parallel()
	read := func(_ context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
		return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "hi "+uri)}, nil
	}
	var reg mcpmw.Registry
	reg.AddResources(
		mcpmw.Resource{URI: "doc://a", Name: "a", Permission: "read", Read: read},
		mcpmw.Resource{URI: "doc://a/part", Name: "part", Permission: "read", Read: read, Unlisted: true},
		mcpmw.Resource{URI: "doc://b", Name: "b", Permission: "read", Read: read},
		mcpmw.Resource{URI: "doc://secret/part", Name: "secret", Permission: "admin", Read: read, Unlisted: true},
	)
	authn := mcpmwtest.Tokens{"reader": &mcpmwtest.User{Name: "reader", Permissions: []mcpmw.Permission{"read"}}}
	for _, size := range []int{1, 50} {
		srv := mcpmwtest.NewServer(t, mcpmw.New(&reg, authn, mcpmwtest.NewRecorder(), &mcpmw.Options{PageSize: size}))
		c := srv.Client(mcpmwtest.Bearer("reader"))
		list, err := c.ListResources(t.Context())
		require.NoError(t, err)
		var uris []string
		for _, r := range list {
			uris = append(uris, r.URI)
		}
		assert.Equal(t, []string{"doc://a", "doc://b"}, uris, "page size %d", size)
		res, err := c.ReadResource(t.Context(), "doc://a/part")
		require.NoError(t, err)
		assert.Equal(t, "hi doc://a/part", res.Contents[0].Text)
		_, err = c.ReadResource(t.Context(), "doc://secret/part")
		var e *mcpmwtest.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, http.StatusForbidden, e.Status)
	}
}
