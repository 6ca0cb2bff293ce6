// Package skills serves the Skills extension of MCP
// (io.modelcontextprotocol/skills, SEP-2640): skills published from
// files, each a folder with a SKILL.md and the files it refers to, which a
// host loads into its model on demand.
//
// A Set holds the skills of one endpoint. Add reads a skill from an fs.FS
// (embed.FS through fs.Sub, os.DirFS, fstest.MapFS) once, checks it
// against the extension's rules, and registers its files as resources of
// the endpoint's Registry; Extension returns what to put in
// mcpmw.Options.Extensions:
//
//	var reg mcpmw.Registry
//	set := skills.New(&reg)
//	review, _ := fs.Sub(skillFiles, "skills/code-review")
//	set.Add("code-review", review, "read")
//	h := mcpmw.New(&reg, authn, audit, &mcpmw.Options{Extensions: []mcpmw.Extension{set.Extension()}})
//
// The endpoint then declares {"directoryRead": true} and serves
// skills/list and skills/get (each skill's entry: the URI of its SKILL.md,
// its frontmatter as JSON, and the size and sha256 digest of every file),
// resources/read of every file and resources/directory/read of every
// folder, each filtered and gated by the skill's Permission, like every
// other target of the endpoint: a caller sees a skill whole or not at all.
//
// The frontmatter is read as hosts read it, as YAML 1.2 (the core schema),
// so that an entry's frontmatter equals what a host parses from the
// SKILL.md it reads: go-yaml (go.yaml.in/yaml/v3) parses the syntax, and
// this package resolves the plain scalars as the core schema does, which
// go-yaml does not always (it reads 0777 as an octal, 1_000 as a number).
//
// The package is built on the root package's public extension seam
// (Extension, List, Target, AdmittedTarget, UnknownTarget,
// CacheableResponse, Resource.Unlisted) and nothing else of it.
package skills
