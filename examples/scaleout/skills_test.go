package scaleout

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// TestSkillChangeHeardOnAnotherInstance: a skill added at run time on
// every instance (the fixture's test_trigger_skill_change, applied on each
// through Redis as its other Registry changes are) is heard by a listener
// on instance 1 as a resource list change, and listed, read and got on
// every instance; triggered again on instance 3, it is gone everywhere.
func TestSkillChangeHeardOnAnotherInstance(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "conformance")
	ctx := t.Context()
	const uri = "skill://dynamic-skill/SKILL.md"
	listener, err := client(c.instances[0].url, "").Listen(ctx, mcpmwtest.ListenFilter{ResourcesListChanged: true})
	require.NoError(t, err)
	defer listener.Close()
	has := func(i int) bool {
		resp, err := client(c.instances[i].url, "").Call(ctx, "skills/list", nil)
		require.NoError(t, err)
		var list struct {
			Skills []struct {
				URI string `json:"uri"`
			} `json:"skills"`
		}
		require.NoError(t, resp.Decode(&list))
		for _, s := range list.Skills {
			if s.URI == uri {
				return true
			}
		}
		return false
	}
	for _, step := range []struct {
		on      int
		want    string
		present bool
	}{{1, "added dynamic-skill", true}, {2, "removed dynamic-skill", false}} {
		res, err := client(c.instances[step.on].url, "").CallTool(ctx, "test_trigger_skill_change", map[string]any{})
		require.NoError(t, err)
		require.Equal(t, step.want, res.Text)
		next, cancel := context.WithTimeout(ctx, patience)
		n, err := listener.Next(next)
		cancel()
		require.NoError(t, err, "the listener on instance 1 hears the change made on instance %d", step.on+1)
		assert.Equal(t, mcpmw.ResourcesListChanged, n.Method)
		for i := range c.instances {
			waitFor(t, fmt.Sprintf("%s lists the change", c.instances[i].name), patience, func() bool { return has(i) == step.present })
			_, err := client(c.instances[i].url, "").Call(ctx, "skills/get", map[string]string{"uri": uri})
			if step.present {
				assert.NoError(t, err, c.instances[i].name)
				_, err = client(c.instances[i].url, "").ReadResource(ctx, "skill://dynamic-skill/references/note.md")
				assert.NoError(t, err, c.instances[i].name)
				continue
			}
			var e *mcpmwtest.Error
			if assert.ErrorAs(t, err, &e, c.instances[i].name) {
				assert.Equal(t, mcpmw.CodeInvalidParams, e.Code)
			}
		}
	}
}
