package scaleout

import (
	"slices"
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
	const uri = "skill://dynamic-skill/SKILL.md"
	checkFlip(t, c, flip{
		trigger: "test_trigger_skill_change", name: "dynamic-skill",
		filter: mcpmwtest.ListenFilter{ResourcesListChanged: true}, heard: mcpmw.ResourcesListChanged,
		present: func(t *testing.T, url string) bool {
			resp, err := client(url, "").Call(t.Context(), "skills/list", nil)
			require.NoError(t, err)
			type entry struct {
				URI string `json:"uri"`
			}
			var list struct {
				Skills []entry `json:"skills"`
			}
			require.NoError(t, resp.Decode(&list))
			return slices.Contains(list.Skills, entry{uri})
		},
		check: func(t *testing.T, url string, present bool) {
			_, err := client(url, "").Call(t.Context(), "skills/get", map[string]string{"uri": uri})
			if present {
				assert.NoError(t, err, url)
				_, err = client(url, "").ReadResource(t.Context(), "skill://dynamic-skill/references/note.md")
				assert.NoError(t, err, url)
				return
			}
			var e *mcpmwtest.Error
			if assert.ErrorAs(t, err, &e, url) {
				assert.Equal(t, mcpmw.CodeInvalidParams, e.Code)
			}
		},
	})
}
