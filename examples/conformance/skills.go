package main

import (
	"embed"
	"io/fs"
	"testing/fstest"

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

// dynamicSkill is the skill test_trigger_skill_change adds and removes on
// every instance, as the other test_trigger_* tools do their entries
// (dynamic.go): a Set's skills are its Registry's resources, so a run-time
// change crosses instances as a Registry change does.
const dynamicSkill = "dynamic-skill"

// It has a subdirectory too, as the suite's directory scenario wants of
// the skill listed first, which it would be on an instance started while
// it is present (its files are registered before the fixture's own).
var dynamicSkillFiles = fstest.MapFS{
	"SKILL.md":           {Data: []byte("---\nname: dynamic-skill\ndescription: Comes and goes with test_trigger_skill_change.\n---\n")},
	"references/note.md": {Data: []byte("Nothing to see.\n")},
}

// addSkills registers the fixture's skills in set and returns the
// extension that serves them.
func addSkills(set *skills.Set) mcpmw.Extension {
	root, err := fs.Sub(skillFiles, "skills/code-review")
	if err != nil {
		panic(err)
	}
	set.Add("code-review", root, testCap)
	return set.Extension()
}
