package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpmw/mcpmw"
)

// The Skills extension's limits per skill (SKILL.md and every file under
// it, nested skills' included).
const (
	MaxFiles = 512
	MaxBytes = 16 << 20
)

// skillMD is the file every skill has at its root.
const skillMD = "SKILL.md"

// nameRule is the Agent Skills naming rule for a skill's name: 1 to 64
// characters, lowercase letters, digits and hyphens, no hyphen first or
// last (two in a row are refused apart: RE2 has no lookahead).
var nameRule = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

func validName(s string) bool { return nameRule.MatchString(s) && !strings.Contains(s, "--") }

// A file is one file of a skill, read once, as it is served.
type file struct {
	rel    string // its path under the skill root, slash-separated
	uri    string // skill://<skill-path>/<rel>, each segment escaped
	data   []byte
	digest string // "sha256:" and 64 lowercase hex digits, of data
	mime   string
	text   bool // served as text: valid UTF-8 of a textual type
}

// A skill is one skill's entry: its SKILL.md's URI and frontmatter, and
// the manifest of every file under its directory.
type skill struct {
	path        string // the skill path, e.g. "acme/billing/refunds"
	uri         string // skill://<path>/SKILL.md
	name, descr string // of its frontmatter
	frontmatter json.RawMessage
	resources   json.RawMessage // the manifest: [{uri, digest, size}...]
	perm        mcpmw.Permission
}

// A dir is one directory of a skill, for resources/directory/read.
type dir struct {
	uri      string
	children json.RawMessage // its direct children, files and directories
	perm     mcpmw.Permission
}

// A bundle is what one Add registered: a skill, the skills nested in it,
// their files and directories.
type bundle struct {
	path   string
	perm   mcpmw.Permission
	skills []*skill // the root skill first, then nested ones in path order
	files  []*file
	dirs   []*dir
}

// load reads the skill at skillPath from fsys and checks it, or panics
// naming the skill, the file and the rule it breaks.
func load(skillPath string, fsys fs.FS, perm mcpmw.Permission) *bundle {
	fail := func(file, format string, args ...any) {
		where := "skills: skill " + skillPath
		if file != "" {
			where += ", file " + file
		}
		panic(where + ": " + fmt.Sprintf(format, args...))
	}
	if err := checkPath(skillPath); err != "" {
		fail("", "its path %s", err)
	}
	if perm == "" {
		fail("", "it has no Permission; name one that every caller who may see it has")
	}
	if fsys == nil {
		fail("", "its fs.FS is nil")
	}
	b := &bundle{path: skillPath, perm: perm}
	var total int64
	dirs := map[string][]entry{}
	var dirOrder []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			fail(p, "cannot be read: %v", err)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			fail(p, "is a symbolic link, which may lead outside the skill root")
		}
		if d.IsDir() {
			if p != "." && !validSegment(d.Name()) {
				fail(p, "its name is not a path segment a URI can carry as it is")
			}
			dirOrder = append(dirOrder, p)
			return nil
		}
		if !d.Type().IsRegular() {
			fail(p, "is not a regular file")
		}
		if len(b.files) == MaxFiles {
			fail(p, "the skill has more than %d files", MaxFiles)
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			fail(p, "cannot be read: %v", err)
		}
		if total += int64(len(data)); total > MaxBytes {
			fail(p, "the skill's files total more than %d bytes", MaxBytes)
		}
		sum := sha256.Sum256(data)
		f := &file{rel: p, uri: fileURI(skillPath, p), data: data, digest: "sha256:" + hex.EncodeToString(sum[:])}
		f.mime, f.text = contentType(p, data)
		b.files = append(b.files, f)
		dirs[path.Dir(p)] = append(dirs[path.Dir(p)], entry{name: d.Name()})
		return nil
	})
	if err != nil {
		fail("", "cannot be read: %v", err)
	}
	for _, p := range dirOrder {
		if p != "." {
			dirs[path.Dir(p)] = append(dirs[path.Dir(p)], entry{name: path.Base(p), dir: true})
		}
	}
	byRel := map[string]*file{}
	for _, f := range b.files {
		byRel[f.rel] = f
	}
	if byRel[skillMD] == nil {
		fail(skillMD, "the skill has no SKILL.md at its root")
	}
	for _, p := range dirOrder {
		md := skillMD
		sp := skillPath
		if p != "." {
			md, sp = p+"/"+skillMD, skillPath+"/"+p
		}
		f := byRel[md]
		if f == nil {
			continue
		}
		b.skills = append(b.skills, newSkill(sp, p, f, b.files, perm, fail))
	}
	for _, p := range dirOrder {
		b.dirs = append(b.dirs, newDir(skillPath, p, dirs[p], byRel, perm))
	}
	return b
}

// newSkill builds the entry of the skill whose SKILL.md is md, in the
// directory rel ("." for the root) of the bundle at skill path sp.
func newSkill(sp, rel string, md *file, files []*file, perm mcpmw.Permission, fail func(string, string, ...any)) *skill {
	if !utf8.Valid(md.data) {
		fail(md.rel, "it is not UTF-8 text")
	}
	fm, name, descr, err := frontmatter(md.data)
	if err != nil {
		fail(md.rel, "%v", err)
	}
	if last := path.Base(sp); name != last || !validName(name) {
		fail(md.rel, "its frontmatter's name %q is not the last segment of the skill path, %q", name, last)
	}
	s := &skill{path: sp, uri: md.uri, name: name, descr: descr, frontmatter: fm, perm: perm}
	type item struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int    `json:"size"`
	}
	items := []item{{URI: md.uri, Digest: md.digest, Size: len(md.data)}}
	for _, f := range files {
		if f != md && (rel == "." || strings.HasPrefix(f.rel, rel+"/")) {
			items = append(items, item{URI: f.uri, Digest: f.digest, Size: len(f.data)})
		}
	}
	s.resources, _ = json.Marshal(items)
	return s
}

// An entry is a direct child of a directory: a file or a directory.
type entry struct {
	name string
	dir  bool
}

// newDir builds the directory rel ("." for the root) of the skill at
// skillPath: its direct children, files with their name, type and size,
// directories as inode/directory, in name order.
func newDir(skillPath, rel string, children []entry, byRel map[string]*file, perm mcpmw.Permission) *dir {
	type child struct {
		URI      string `json:"uri"`
		Name     string `json:"name"`
		MimeType string `json:"mimeType"`
		Size     *int   `json:"size,omitempty"`
	}
	out := make([]child, 0, len(children))
	for _, c := range children {
		p := c.name
		if rel != "." {
			p = rel + "/" + p
		}
		if c.dir {
			out = append(out, child{URI: fileURI(skillPath, p), Name: c.name, MimeType: "inode/directory"})
			continue
		}
		f := byRel[p]
		n := len(f.data)
		out = append(out, child{URI: f.uri, Name: c.name, MimeType: f.mime, Size: &n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	raw, _ := json.Marshal(out)
	uri := "skill://" + escapePath(skillPath)
	if rel != "." {
		uri = fileURI(skillPath, rel)
	}
	return &dir{uri: uri, children: raw, perm: perm}
}

// checkPath says which rule a skill path breaks, or "".
func checkPath(p string) string {
	if p == "" {
		return "is empty"
	}
	for _, seg := range strings.Split(p, "/") {
		if !validName(seg) {
			return fmt.Sprintf("%q has a segment, %q, that breaks the naming rules (1-64 of a-z, 0-9 and '-', no '-' first, last or twice in a row)", p, seg)
		}
	}
	return ""
}

// validSegment reports whether a file or directory name can be a URI
// path segment: not empty, not "." or "..".
func validSegment(s string) bool { return s != "" && s != "." && s != ".." }

// fileURI is the URI of the file rel of the skill at skillPath.
func fileURI(skillPath, rel string) string {
	return "skill://" + escapePath(skillPath) + "/" + escapePath(rel)
}

// escapePath percent-encodes each segment of a slash-separated path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// contentTypes are the types of the files a skill usually holds, by
// extension: a table of its own, so that a file's type does not depend on
// the machine's mime.types.
var contentTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain",
	".json": "application/json", ".yaml": "application/yaml", ".yml": "application/yaml",
	".py": "text/x-python", ".sh": "application/x-sh", ".js": "text/javascript", ".ts": "text/x-typescript",
	".go": "text/x-go", ".html": "text/html", ".css": "text/css", ".csv": "text/csv", ".xml": "application/xml",
	".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp", ".pdf": "application/pdf", ".zip": "application/zip",
}

// contentType returns the type of the file p, and whether it is served as
// text: valid UTF-8 of a textual type (a file of a type the table does
// not know is text/plain when it is valid UTF-8, else bytes).
func contentType(p string, data []byte) (string, bool) {
	mime, known := contentTypes[strings.ToLower(path.Ext(p))]
	valid := utf8.Valid(data)
	if !known {
		if valid {
			return "text/plain", true
		}
		return "application/octet-stream", false
	}
	textual := strings.HasPrefix(mime, "text/") || strings.HasSuffix(mime, "json") || strings.HasSuffix(mime, "yaml") ||
		strings.HasSuffix(mime, "xml") || mime == "application/x-sh"
	return mime, textual && valid
}
