package skills_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/skills"
)

func md(name string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: Does " + name + ".\n---\n")}
}

// TestAddRefuses: a skill that breaks a rule is refused with a panic
// naming the skill, the file and the rule.
func TestAddRefuses(t *testing.T) {
	t.Parallel()
	many := fstest.MapFS{"SKILL.md": md("many")}
	for i := range skills.MaxFiles {
		many[fmt.Sprintf("f/%03d.txt", i)] = &fstest.MapFile{Data: []byte("x")}
	}
	for _, tt := range []struct {
		name, path string
		fsys       fstest.MapFS
		perm       mcpmw.Permission
		want       string
	}{
		{"no SKILL.md", "a", fstest.MapFS{"README.md": md("a")}, "read", "skill a, file SKILL.md: the skill has no SKILL.md at its root"},
		{"no frontmatter", "a", fstest.MapFS{"SKILL.md": {Data: []byte("# A\n")}}, "read", "skill a, file SKILL.md: it does not begin with a YAML frontmatter"},
		{"no name", "a", fstest.MapFS{"SKILL.md": {Data: []byte("---\ndescription: d\n---\n")}}, "read", "has no name"},
		{"no description", "a", fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: a\n---\n")}}, "read", "has no description"},
		{"name not the path's", "team/a", fstest.MapFS{"SKILL.md": md("b")}, "read", `skill team/a, file SKILL.md: its frontmatter's name "b" is not the last segment of the skill path, "a"`},
		{"path breaks naming", "Team/a", fstest.MapFS{"SKILL.md": md("a")}, "read", `segment, "Team", that breaks the naming rules`},
		{"double hyphen", "a--b", fstest.MapFS{"SKILL.md": md("a--b")}, "read", `segment, "a--b", that breaks`},
		{"empty path", "", fstest.MapFS{"SKILL.md": md("a")}, "read", "its path is empty"},
		{"no permission", "a", fstest.MapFS{"SKILL.md": md("a")}, "", "it has no Permission"},
		{"not UTF-8", "a", fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: a\ndescription: \xff\n---\n")}}, "read", "file SKILL.md: it is not UTF-8 text"},
		{"too many files", "many", many, "read", fmt.Sprintf("the skill has more than %d files", skills.MaxFiles)},
		{"too large", "big", fstest.MapFS{"SKILL.md": md("big"), "x.bin": {Data: make([]byte, skills.MaxBytes)}}, "read", fmt.Sprintf("file x.bin: the skill's files total more than %d bytes", skills.MaxBytes)},
		{"nested name", "a", fstest.MapFS{"SKILL.md": md("a"), "sub/SKILL.md": md("other")}, "read", `file sub/SKILL.md: its frontmatter's name "other" is not the last segment`},
		{"nested bad name", "a", fstest.MapFS{"SKILL.md": md("a"), "Sub/SKILL.md": md("Sub")}, "read", `file Sub/SKILL.md: its frontmatter's name "Sub" is not`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var reg mcpmw.Registry
			set := skills.New(&reg)
			msg := panicText(t, func() { set.Add(tt.path, tt.fsys, tt.perm) })
			assert.Contains(t, msg, tt.want)
			assert.Zero(t, reg.NumTools())
			_, ok := reg.LookupResource("skill://a/SKILL.md")
			assert.False(t, ok, "a refused skill registers nothing")
		})
	}
}

func panicText(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		require.NotNil(t, r)
		msg = strings.TrimPrefix(fmt.Sprint(r), "skills: ")
	}()
	f()
	return ""
}

func TestAddRefusesOverlap(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	set := skills.New(&reg)
	set.Add("team/a", fstest.MapFS{"SKILL.md": md("a")}, "read")
	assert.PanicsWithValue(t, "skills: skill team/a: its path overlaps skill team/a, added before", func() {
		set.Add("team/a", fstest.MapFS{"SKILL.md": md("a")}, "read")
	})
	assert.Contains(t, panicText(t, func() { set.Add("team", fstest.MapFS{"SKILL.md": md("team")}, "read") }), "overlaps skill team/a")
	assert.Contains(t, panicText(t, func() { set.Add("team/a/b", fstest.MapFS{"SKILL.md": md("b")}, "read") }), "overlaps skill team/a")
	set.Add("team/ab", fstest.MapFS{"SKILL.md": md("ab")}, "read")
	assert.Panics(t, func() { skills.New(nil) })
	assert.Contains(t, panicText(t, func() { set.Add("x", nil, "read") }), "its fs.FS is nil")
}

// TestAddRefusesSymlink: a link may lead outside the skill root, so none
// is followed.
func TestAddRefusesSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "SKILL.md"), md("a").Data, 0o600))
	require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(dir, "host")))
	var reg mcpmw.Registry
	set := skills.New(&reg)
	assert.Contains(t, panicText(t, func() { set.Add("a", os.DirFS(dir), "read") }), "skill a, file host: is a symbolic link")
}

// TestAddAtTheLimits: a skill of exactly MaxFiles files and MaxBytes bytes
// is served.
func TestAddAtTheLimits(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"SKILL.md": md("full")}
	for i := 1; i < skills.MaxFiles-1; i++ {
		fsys[fmt.Sprintf("f/%03d.txt", i)] = &fstest.MapFile{}
	}
	fsys["big.bin"] = &fstest.MapFile{Data: make([]byte, skills.MaxBytes-len(fsys["SKILL.md"].Data))}
	require.Len(t, fsys, skills.MaxFiles)
	var reg mcpmw.Registry
	skills.New(&reg).Add("full", fsys, "read")
	_, ok := reg.LookupResource("skill://full/big.bin")
	assert.True(t, ok)
}
