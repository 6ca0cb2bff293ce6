package scaleout

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// TestConformanceFixtureAcrossInstances: three instances of the
// conformance fixture sharing REDIS_URL and MCP_STATE_KEY carry one
// input_required exchange of two rounds across all three: sealed by the
// first, resumed and sealed again by the second, finished by the third.
func TestConformanceFixtureAcrossInstances(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "conformance")
	const tool = "test_input_required_result_multi_round"
	elicits := mcpmwtest.Capabilities(map[string]any{"elicitation": map[string]any{}})
	answer := map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}

	type round struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	call := func(i int, params map[string]any) *mcpmwtest.Response {
		t.Helper()
		params["name"], params["arguments"] = tool, map[string]any{}
		resp, err := client(c.instances[i].url, "", elicits).Call(t.Context(), "tools/call", params)
		require.NoError(t, err, "round on %s", c.instances[i].name)
		return resp
	}
	var r1, r2 round
	require.NoError(t, call(0, map[string]any{}).Decode(&r1))
	require.Equal(t, "input_required", r1.ResultType)
	require.NoError(t, call(1, map[string]any{"inputResponses": map[string]any{"first": answer}, "requestState": r1.RequestState}).Decode(&r2))
	require.Equal(t, "input_required", r2.ResultType, "the second instance opened the first's state and asked again")
	require.NotEqual(t, r1.RequestState, r2.RequestState)
	last := call(2, map[string]any{"inputResponses": map[string]any{"second": answer}, "requestState": r2.RequestState})
	assert.Contains(t, string(last.Result), "Both rounds done.", "the third opened the second's state")
}

// TestRegistryChangeHeardOnAnotherInstance: the fixture's
// test_trigger_tool_change run on instance 2 changes the Registry of every
// instance (the fixture applies each change on each, through Redis): a
// listener on instance 1 hears the tool list changed, and instance 3
// lists the new tool; run again on instance 3, it is gone everywhere.
func TestRegistryChangeHeardOnAnotherInstance(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "conformance")
	checkFlip(t, c, flip{
		trigger: "test_trigger_tool_change", name: "test_dynamic_tool",
		filter: mcpmwtest.ListenFilter{ToolsListChanged: true}, heard: mcpmw.ToolsListChanged,
		present: func(t *testing.T, url string) bool {
			tools, err := client(url, "").ListTools(t.Context())
			require.NoError(t, err)
			return slices.ContainsFunc(tools, func(tool mcpmwtest.Tool) bool { return tool.Name == "test_dynamic_tool" })
		},
	})
}

// A flip is a run-time Registry change the conformance fixture makes on
// every instance with one of its trigger tools: the first call adds name,
// the second removes it.
type flip struct {
	trigger, name string
	filter        mcpmwtest.ListenFilter // what a listener asks for to hear it
	heard         string                 // the notification it hears
	// present reports whether the instance at url serves name.
	present func(t *testing.T, url string) bool
	// check, when set, asserts more of an instance once present says it
	// agrees.
	check func(t *testing.T, url string, present bool)
}

// checkFlip runs f's trigger on instance 2, then on instance 3: each time
// a listener on instance 1 hears f.heard, and every instance comes to
// agree (f.present, then f.check).
func checkFlip(t *testing.T, c *cluster, f flip) {
	t.Helper()
	ctx := t.Context()
	listener, err := client(c.instances[0].url, "").Listen(ctx, f.filter)
	require.NoError(t, err)
	defer listener.Close()
	for _, step := range []struct {
		on      int
		want    string
		present bool
	}{{1, "added " + f.name, true}, {2, "removed " + f.name, false}} {
		res, err := client(c.instances[step.on].url, "").CallTool(ctx, f.trigger, map[string]any{})
		require.NoError(t, err)
		require.Equal(t, step.want, res.Text)
		next, cancel := context.WithTimeout(ctx, patience)
		n, err := listener.Next(next)
		cancel()
		require.NoError(t, err, "the listener on instance 1 hears the change made on instance %d", step.on+1)
		assert.Equal(t, f.heard, n.Method)
		for _, in := range c.instances {
			waitFor(t, fmt.Sprintf("%s agrees: %s", in.name, step.want), patience, func() bool { return f.present(t, in.url) == step.present })
			if f.check != nil {
				f.check(t, in.url, step.present)
			}
		}
	}
}
