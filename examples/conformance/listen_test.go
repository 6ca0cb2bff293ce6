package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// The trigger tool the conformance suite's server-stateless scenario calls
// toggles test_dynamic_tool: it adds the tool when it is absent and
// removes it when it is there, so each call changes the tool list.
func TestTriggerToolTogglesTheDynamicTool(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	var trigger mcpmw.Tool
	for _, tool := range listenTools(newDynamics(&reg)) {
		if tool.Name == "test_trigger_tool_change" {
			trigger = tool
		}
	}
	require.NotNil(t, trigger.Call)
	for _, want := range []string{"added test_dynamic_tool", "removed test_dynamic_tool", "added test_dynamic_tool"} {
		res, err := trigger.Call(t.Context(), nil, mcpmw.NewArgs([]byte(`{}`)))
		require.NoError(t, err)
		assert.Equal(t, mcpmw.TextResult(want), res)
		_, present := reg.LookupTool("test_dynamic_tool")
		assert.Equal(t, want == "added test_dynamic_tool", present, "after %q", want)
	}
}
