package mcpmw_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// A client that goes away while a resource is read or a prompt is built
// cancels the handler's context; nobody reads the answer, but the one
// record says why (docs/status.md row 34, for reads and prompts as for tools).
func TestClientLeavesDuringReadOrGet(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 2)
	wait := func(ctx context.Context) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
		case <-time.After(patience):
		}
	}
	var reg mcpmw.Registry
	reg.AddResources(mcpmw.Resource{URI: "slow://r", Name: "slow", Permission: "read",
		Read: func(ctx context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
			wait(ctx)
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "late")}, nil
		}})
	reg.AddPrompts(mcpmw.Prompt{Name: "slow", Description: "d", Permission: "read",
		Get: func(ctx context.Context, _ mcpmw.Caller, _ map[string]string) (mcpmw.PromptResult, error) {
			wait(ctx)
			return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("late"))}}, nil
		}})
	for _, tc := range []struct{ method, params, target string }{
		{"resources/read", `"uri":"slow://r"`, "slow://r"},
		{"prompts/get", `"name":"slow"`, "slow"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			t.Parallel()
			rec := &spy{}
			h := mcpmw.New(&reg, tokenAuthn, rec, nil)
			ctx, cancel := context.WithCancel(context.Background())
			r := legacy(mcpmw.Version20251125, "1", tc.method, tc.params).WithContext(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				h.ServeHTTP(httptest.NewRecorder(), r)
			}()
			<-started
			cancel()
			select {
			case <-done:
			case <-time.After(patience):
				t.Fatal("the handler did not return after its client left")
			}
			recs := rec.records()
			require.Len(t, recs, 1)
			assert.Equal(t, mcpmw.CodeInternalError, recs[0].ErrorCode)
			assert.Equal(t, tc.target, recs[0].Target)
			assert.Contains(t, recs[0].Summary, "client went away")
		})
	}
}

// Prompt arguments named twice are refused, even when a middleware, not
// the client, wrote them (the parser refuses a client's duplicates first).
func TestPromptArgumentsRewrittenWithADuplicate(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddPrompts(mcpmw.Prompt{Name: "p", Description: "d", Permission: "read", Arguments: []mcpmw.PromptArgument{{Name: "a"}},
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("x"))}}, nil
		}})
	dup := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, r *mcpmw.Request) *mcpmw.Response {
			r.Params = json.RawMessage(strings.Replace(string(r.Params), `"arguments":{"a":"1"}`, `"arguments":{"a":"1","a":"2"}`, 1))
			return next.Dispatch(ctx, r)
		})
	}
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{dup}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, legacy(mcpmw.Version20251125, "1", "prompts/get", `"name":"p","arguments":{"a":"1"}`))
	a := decode(t, w)
	require.NotNil(t, a.Error, w.Body.String())
	assert.Equal(t, mcpmw.CodeInvalidParams, a.Error.Code)
	assert.Contains(t, a.Error.Message, `got argument "a" more than once`)
}
