// Package skills_test is the tested source of the snippets of
// docs/skills.md.
package skills_test

import (
	"embed"
	"errors"
	"io/fs"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
	"github.com/mcpmw/mcpmw/skills"
)

// !+register

//go:embed skills
var skillFiles embed.FS

func newEndpoint(authn mcpmw.Authenticator, audit mcpmw.Auditor) *mcpmw.Handler {
	var reg mcpmw.Registry // the tools, prompts and resources, as usual
	set := skills.New(&reg)
	review, err := fs.Sub(skillFiles, "skills/code-review") // the folder holding SKILL.md
	if err != nil {
		panic(err)
	}
	set.Add("code-review", review, "read") // panics naming the file and the rule a skill breaks
	return mcpmw.New(&reg, authn, audit, &mcpmw.Options{Extensions: []mcpmw.Extension{set.Extension()}})
}

// !-register

func TestGuide(t *testing.T) {
	t.Parallel()
	authn := mcpmwtest.Tokens{
		"reader": &mcpmwtest.User{Name: "reader", Permissions: []mcpmw.Permission{"read"}},
		"guest":  &mcpmwtest.User{Name: "guest"},
	}
	srv := mcpmwtest.NewServer(t, newEndpoint(authn, mcpmwtest.NewRecorder()))
	reader := srv.Client(mcpmwtest.Bearer("reader"))
	resp, err := reader.Call(t.Context(), "skills/list", nil)
	require.NoError(t, err)
	var list struct {
		Skills []struct {
			URI         string         `json:"uri"`
			Frontmatter map[string]any `json:"frontmatter"`
		} `json:"skills"`
		CacheScope string `json:"cacheScope"`
	}
	require.NoError(t, resp.Decode(&list))
	require.Len(t, list.Skills, 1)
	assert.Equal(t, "skill://code-review/SKILL.md", list.Skills[0].URI)
	assert.Equal(t, "Apache-2.0", list.Skills[0].Frontmatter["license"])
	assert.Equal(t, "private", list.CacheScope)
	res, err := reader.ReadResource(t.Context(), "skill://code-review/references/checklist.md")
	require.NoError(t, err)
	assert.Contains(t, res.Contents[0].Text, "Tests cover the change")

	guest := srv.Client(mcpmwtest.Bearer("guest"))
	_, err = guest.Call(t.Context(), "skills/get", map[string]string{"uri": "skill://code-review/SKILL.md"})
	var e *mcpmwtest.Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, http.StatusForbidden, e.Status)
	assert.Contains(t, e.Header.Get("WWW-Authenticate"), `scope="read"`)
}
