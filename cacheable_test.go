package mcpmw_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// TestCacheableResponse: an extension's cacheable result carries the
// Handler's ttlMs and cacheScope "private" on 2026-07-28, and neither on a
// legacy revision; an empty object and one with members both stay JSON.
func TestCacheableResponse(t *testing.T) {
	t.Parallel()
	ext := mcpmw.Extension{ID: "com.example/cache", Methods: []mcpmw.Method{
		{Name: "cache/empty", Handle: func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			return mcpmw.CacheableResponse(ctx, req, json.RawMessage(`{ }`))
		}},
		{Name: "cache/some", Handle: func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			return mcpmw.CacheableResponse(ctx, req, map[string]int{"a": 1})
		}},
		{Name: "cache/bad", Handle: func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			return mcpmw.CacheableResponse(ctx, req, []int{1})
		}},
	}}
	authn := mcpmwtest.Tokens{"t": &mcpmwtest.User{Name: "u"}}
	h := mcpmw.New(nil, authn, mcpmwtest.NewRecorder(), &mcpmw.Options{CacheTTL: 90 * time.Second, Extensions: []mcpmw.Extension{ext}})
	srv := mcpmwtest.NewServer(t, h)
	for _, tt := range []struct{ rev, method, want string }{
		{"2026-07-28", "cache/empty", `{"resultType":"complete","ttlMs":90000,"cacheScope":"private"}`},
		{"2026-07-28", "cache/some", `{"resultType":"complete","a":1,"ttlMs":90000,"cacheScope":"private"}`},
		{"2025-11-25", "cache/empty", `{}`},
		{"2025-11-25", "cache/some", `{"a":1}`},
	} {
		resp, err := srv.Client(mcpmwtest.Bearer("t"), mcpmwtest.Revision(tt.rev)).Call(t.Context(), tt.method, nil)
		require.NoError(t, err, tt)
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(resp.Result, &m))
		delete(m, "_meta")
		got, _ := json.Marshal(m)
		assert.JSONEq(t, tt.want, string(got), tt)
	}
	_, err := srv.Client(mcpmwtest.Bearer("t")).Call(t.Context(), "cache/bad", nil)
	var e *mcpmwtest.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, mcpmw.CodeInternalError, e.Code)
}

// TestCacheableResponseOutsideHandler: called outside a Handler's request
// (a test of a method's Handle), the ttlMs is the default page format's.
func TestCacheableResponseOutsideHandler(t *testing.T) {
	t.Parallel()
	req := &mcpmw.Request{Method: "x/get", Version: mcpmw.LatestVersion}
	resp := mcpmw.CacheableResponse(t.Context(), req, map[string]int{"a": 1})
	assert.JSONEq(t, `{"a":1,"ttlMs":0,"cacheScope":"private"}`, string(resp.Result))
}
