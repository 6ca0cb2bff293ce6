package main

import (
	"embed"
	"io/fs"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/skills"
)

// The app's skills (the Skills extension, io.modelcontextprotocol/skills):
// how to use its notes tools, for every reader, and how to delete notes
// safely, for writers. Skills are shared by permission, not kept per
// team: what a caller lists and reads depends on what it may do.
//
//go:embed skills
var skillFiles embed.FS

// appSkills registers the app's skills in reg and returns the extension
// serving them (skills/list, skills/get, resources/directory/read).
func appSkills(reg *mcpmw.Registry) mcpmw.Extension {
	set := skills.New(reg)
	for _, s := range []struct {
		name string
		perm mcpmw.Permission
	}{{"notes-howto", "read"}, {"notes-admin", "write"}} {
		dir, err := fs.Sub(skillFiles, "skills/"+s.name)
		if err != nil {
			panic(err) // the embedded folder is there: fs.Sub fails only on an invalid path
		}
		set.Add(s.name, dir, s.perm)
	}
	return set.Extension()
}
