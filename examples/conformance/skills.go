package main

import (
	"embed"
	"io/fs"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/skills"
)

// The Skills extension's fixture (the sep-2640-* scenarios): one skill,
// code-review, with a subdirectory (references/, which the directory
// scenario needs in the first skill listed) and a skill nested in it
// (security/), whose frontmatter has more than name and description, in
// YAML types a 1.1 parser would read otherwise (an unquoted date).

//go:embed skills
var skillFiles embed.FS

// addSkills registers the fixture's skills in reg and returns the
// extension that serves them.
func addSkills(reg *mcpmw.Registry) mcpmw.Extension {
	set := skills.New(reg)
	root, err := fs.Sub(skillFiles, "skills/code-review")
	if err != nil {
		panic(err)
	}
	set.Add("code-review", root, testCap)
	return set.Extension()
}
