package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/urisyntax"
)

// ID is the extension's identifier, under which it is declared.
const ID = "io.modelcontextprotocol/skills"

// A Set is the skills an endpoint serves. Its files are resources of the
// Registry it was made with (resources/read reads each, resources/list
// lists each SKILL.md, and a listener hears when they change), and its
// Extension
// serves skills/list, skills/get and resources/directory/read.
//
// Every file of a skill carries the skill's Permission, so a caller sees a
// skill whole or not at all: its entry in skills/list, skills/get, each
// file and each directory. A caller without it who names a registered
// skill, file or directory gets the same 403 as a denied tool call, and
// learns nothing else.
//
// A Set is safe for concurrent use; Add and Remove may be called while the
// endpoint serves.
type Set struct {
	reg   *mcpmw.Registry
	mu    sync.Mutex // serialises Add and Remove
	added []*bundle  // under mu, in order of addition
	state atomic.Pointer[state]
}

// state is one immutable view of a Set, published whole after every Add
// and Remove.
type state struct {
	list   *mcpmw.List
	skills map[string]*skill // by the normal form of their SKILL.md's URI
	dirs   map[string]*dir   // by the normal form of their URI
}

// New returns an empty Set whose files are registered in reg. Add at
// least one skill before mcpmw.New builds the Handler: the resources
// capability (which the extension requires) is served when the Registry
// holds a resource then.
func New(reg *mcpmw.Registry) *Set {
	if reg == nil {
		panic("skills: New needs the Registry the skills' files are served from")
	}
	s := &Set{reg: reg}
	s.state.Store(s.build())
	return s
}

// Add registers the skill at path (its skill path: "git-workflow", or
// "acme/billing/refunds") whose files are those of fsys, with SKILL.md
// at its root (for an embed.FS, use fs.Sub to reach the skill's
// directory). Every file is read once, here: what is listed and served
// afterwards are these bytes, with their size and sha256 digest. A
// directory of fsys holding a SKILL.md of its own is a nested skill, at
// the path below path, listed as a skill of its own; its files are the
// enclosing skill's too. A caller needs perm to see any of it.
//
// Add panics, naming the skill, the file and the rule, when a skill
// breaks one: no SKILL.md, a SKILL.md that is not UTF-8 or does not begin
// with YAML frontmatter holding a non-empty name and description, a name
// that is not the last segment of its path, a path segment that breaks
// the naming rules, more than MaxFiles files or more than MaxBytes
// bytes, a symbolic link (which may lead outside the skill root), a path
// taken by a skill added before, inside one or around one, or a file URI
// the Registry already serves.
func (s *Set) Add(path string, fsys fs.FS, perm mcpmw.Permission) {
	b := load(path, fsys, perm)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.added {
		if o.path == path || strings.HasPrefix(path, o.path+"/") || strings.HasPrefix(o.path, path+"/") {
			panic(fmt.Sprintf("skills: skill %s: its path overlaps skill %s, added before", path, o.path))
		}
	}
	res := make([]mcpmw.Resource, len(b.files))
	for i, f := range b.files {
		res[i] = b.resource(f)
	}
	s.reg.AddResources(res...)
	s.added = append(s.added, b)
	s.state.Store(s.build())
}

// Remove unregisters the skills added at these paths (with the skills
// nested in them and all their files) and reports how many were added.
// Listeners allowed to see them are told the resource list changed.
func (s *Set) Remove(paths ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var uris []string
	n := 0
	kept := s.added[:0:0]
	for _, b := range s.added {
		if !contains(paths, b.path) {
			kept = append(kept, b)
			continue
		}
		n++
		for _, f := range b.files {
			uris = append(uris, f.uri)
		}
	}
	if n == 0 {
		return 0
	}
	s.added = kept
	s.state.Store(s.build())
	s.reg.RemoveResources(uris...)
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// build makes the state of the skills added; under s.mu, or in New.
func (s *Set) build() *state {
	st := &state{skills: map[string]*skill{}, dirs: map[string]*dir{}}
	var items []mcpmw.ListItem
	for _, b := range s.added {
		for _, sk := range b.skills {
			st.skills[normal(sk.uri)] = sk
			items = append(items, mcpmw.ListItem{Permission: sk.perm, JSON: sk.entry(sk.uri)})
		}
		for _, d := range b.dirs {
			st.dirs[normal(d.uri)] = d
		}
	}
	st.list = mcpmw.NewList("skills", items...)
	return st
}

// normal is the normal form of a URI, by which the Registry finds a
// resource too; a URI without one is kept as it is (and found by no
// lookup of a registered URI, which all have one).
func normal(uri string) string {
	if n, err := urisyntax.Normal(uri); err == nil {
		return n
	}
	return uri
}

// entry is the skill's entry, as skills/list lists it and skills/get
// answers it, naming it by uri (the URI the request named).
func (sk *skill) entry(uri string) json.RawMessage {
	u, _ := json.Marshal(uri)
	e := append(append([]byte(`{"uri":`), u...), `,"frontmatter":`...)
	e = append(append(append(e, sk.frontmatter...), `,"resources":`...), sk.resources...)
	return append(e, '}')
}

// resource is f as a Resource of the Registry: a SKILL.md listed in
// resources/list, named and described as its skill's frontmatter names
// and describes it; every other file named by its path under the
// bundle's root and unlisted (a skill's manifest lists it).
func (b *bundle) resource(f *file) mcpmw.Resource {
	r := mcpmw.Resource{URI: f.uri, Name: f.rel, MimeType: f.mime, Size: int64(len(f.data)), Permission: b.perm, Unlisted: true}
	for _, sk := range b.skills {
		if sk.uri == f.uri {
			r.Name, r.Description, r.Unlisted = sk.name, sk.descr, false
		}
	}
	contents := mcpmw.BlobContents(f.uri, f.mime, f.data)
	if f.text {
		contents = mcpmw.TextContents(f.uri, f.mime, string(f.data))
	}
	r.Read = func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
		return []mcpmw.ResourceContents{contents}, nil
	}
	return r
}

// Extension returns the Skills extension for mcpmw.Options.Extensions:
// its declaration ({"directoryRead": true}) and its methods, serving
// what the Set holds at each request.
func (s *Set) Extension() mcpmw.Extension {
	return mcpmw.Extension{
		ID:       ID,
		Settings: map[string]any{"directoryRead": true},
		Methods: []mcpmw.Method{
			{Name: "skills/list", Handle: s.list},
			{Name: "skills/get", Target: s.findSkill, Handle: s.get},
			{Name: "resources/directory/read", Target: s.findDir, Handle: s.readDir},
		},
	}
}

// list answers skills/list: the entries the caller may see, in pages.
func (s *Set) list(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
	return s.state.Load().list.Page(ctx, req)
}

// findSkill finds the skill whose SKILL.md params.uri names.
func (s *Set) findSkill(req *mcpmw.Request) (*mcpmw.Target, *mcpmw.Response) {
	uri, ok := req.StringParam("uri")
	if !ok {
		return nil, mcpmw.ErrorResponse(mcpmw.CodeInvalidParams, "Invalid params: skills/get needs params.uri, the URI of a skill's SKILL.md, as a string")
	}
	sk := s.state.Load().skills[normal(uri)]
	if sk == nil {
		return nil, mcpmw.UnknownTarget("skill", uri)
	}
	return &mcpmw.Target{Kind: "skill", Name: sk.uri, Permission: sk.perm, Found: sk}, nil
}

// get answers skills/get: the skill's entry, naming it by the URI asked
// for, with no cursor.
func (s *Set) get(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
	t, resp := mcpmw.AdmittedTarget(ctx, req, s.findSkill)
	if resp != nil {
		return resp
	}
	uri, _ := req.StringParam("uri")
	res := append(append([]byte(`{"skill":`), t.Found.(*skill).entry(uri)...), '}')
	resp = mcpmw.CacheableResponse(ctx, req, json.RawMessage(res))
	resp.Target = t.Name
	return resp
}

// findDir finds the directory of a skill params.uri names.
func (s *Set) findDir(req *mcpmw.Request) (*mcpmw.Target, *mcpmw.Response) {
	uri, ok := req.StringParam("uri")
	if !ok {
		return nil, mcpmw.ErrorResponse(mcpmw.CodeInvalidParams, "Invalid params: resources/directory/read needs params.uri, a directory's URI, as a string")
	}
	d := s.state.Load().dirs[normal(uri)]
	if d == nil {
		return nil, mcpmw.UnknownTarget("directory", uri)
	}
	return &mcpmw.Target{Kind: "directory", Name: d.uri, Permission: d.perm, Found: d}, nil
}

// readDir answers resources/directory/read: the directory's direct
// children, on one page (a skill has at most MaxFiles files), so a
// cursor is one this server never issued. The result is cacheable as a
// skills/get's: the extension does not require ttlMs and cacheScope here,
// but the official TypeScript client does.
func (s *Set) readDir(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
	t, resp := mcpmw.AdmittedTarget(ctx, req, s.findDir)
	if resp != nil {
		return resp
	}
	if c := req.Param("cursor"); len(c) > 0 && string(c) != "null" {
		resp = mcpmw.ErrorResponse(mcpmw.CodeInvalidParams, "Invalid params: a directory is read on one page; this server issues no cursor for it")
		resp.Target = t.Name
		return resp
	}
	res := append(append([]byte(`{"resources":`), t.Found.(*dir).children...), '}')
	resp = mcpmw.CacheableResponse(ctx, req, json.RawMessage(res))
	resp.Target = t.Name
	return resp
}
