package mcpmw

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// No test of the root module assigns to a package-level variable of the
// code it tests (or takes its address, which could write it): a running
// handler may read that variable on another goroutine, as a stream read
// the event deadline while a test restored it (issue 26, a data race that
// -race caught). A test sets a per-Handler (or per-instance) value before
// it serves instead, as SetEventWriteTimeout does. Nested modules (their
// own go.mod) are not this module's and are not scanned.
func TestNoTestAssignsAPackageVariable(t *testing.T) {
	t.Parallel()
	var dirs []string
	require.NoError(t, filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); path != "." && err == nil {
			return filepath.SkipDir // a nested module
		}
		dirs = append(dirs, path)
		return nil
	}))
	require.Contains(t, dirs, "internal/jsonwire", "the walk reaches the module's packages")
	for _, dir := range dirs {
		for _, w := range packageVarWrites(t, dir) {
			t.Errorf("%s: a test writes the package variable %s; make it a per-Handler setting a test sets before serving", w.pos, w.name)
		}
	}
}

// A varWrite is a test's write to a package variable.
type varWrite struct {
	pos  token.Position
	name string
}

// packageVarWrites returns the writes in dir's test files to the
// package-level variables its other files declare: assignments, ++ and --,
// and &v, in the package's own tests (v) and its external ones (pkg.V).
func packageVarWrites(t *testing.T, dir string) []varWrite {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	vars := map[string]bool{}
	pkgName := ""
	var tests []*ast.File
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0) // objects resolved: a local of the same name is not the variable
		require.NoError(t, err)
		if strings.HasSuffix(name, "_test.go") {
			tests = append(tests, f)
			continue
		}
		pkgName = f.Name.Name
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, spec := range g.Specs {
					for _, n := range spec.(*ast.ValueSpec).Names {
						if n.Name != "_" {
							vars[n.Name] = true
						}
					}
				}
			}
		}
	}
	var out []varWrite
	written := func(e ast.Expr, external bool) {
		for { // a field, element or pointee of v writes v
			switch x := e.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && external && id.Obj == nil && id.Name == pkgName && vars[x.Sel.Name] {
					out = append(out, varWrite{fset.Position(x.Pos()), pkgName + "." + x.Sel.Name})
					return
				}
				e = x.X
				continue
			case *ast.IndexExpr:
				e = x.X
				continue
			case *ast.StarExpr:
				e = x.X
				continue
			case *ast.ParenExpr:
				e = x.X
				continue
			case *ast.Ident:
				if !external && x.Obj == nil && vars[x.Name] {
					out = append(out, varWrite{fset.Position(x.Pos()), x.Name})
				}
			}
			return
		}
	}
	for _, f := range tests {
		external := f.Name.Name != pkgName
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				if x.Tok != token.DEFINE {
					for _, l := range x.Lhs {
						written(l, external)
					}
				}
			case *ast.IncDecStmt:
				written(x.X, external)
			case *ast.UnaryExpr:
				if x.Op == token.AND {
					written(x.X, external)
				}
			}
			return true
		})
	}
	return out
}

// The scan finds what it looks for: each kind of write, in a package's own
// tests and in its external ones, and not a local of the same name (one
// that := declares, or one declared before).
func TestPackageVarWritesFindsEachKind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, src string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600))
	}
	write("p.go", "package p\n\nvar a, b, c, d int\nvar m = map[string]int{}\nvar E int\nvar read int\n")
	write("p_test.go", "package p\n\nfunc f() {\n\ta = 1\n\tb++\n\t_ = &c\n\tm[\"k\"] = 2\n\td, x := 1, 2\n\t_, _ = d, x\n\t_ = read\n\tread := 3\n\tread = 4\n\t_ = read\n}\n")
	write("q_test.go", "package p_test\n\nimport \"p\"\n\nfunc g() {\n\tp.E = 1\n\t_ = p.E\n}\n")
	var got []string
	for _, w := range packageVarWrites(t, dir) {
		got = append(got, filepath.Base(w.pos.Filename)+" "+w.name)
	}
	assert.ElementsMatch(t, []string{"p_test.go a", "p_test.go b", "p_test.go c", "p_test.go m", "q_test.go p.E"}, got)
}
