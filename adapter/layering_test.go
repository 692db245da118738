package adapter_test

import (
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/rukpak-kapp/rukpak-kapp/"

// tiers are the module's folders from the bottom up (test/tools/* are
// modules of their own and are not walked). "dir/..." holds a folder and
// everything below it, a plain path only that package; a package belongs
// to the longest entry that holds it, and one that none holds fails the
// test, so a new package is placed on purpose. A package may import any
// package of a lower tier; within its own tier only what its doc.go
// declares (every package under adapter/ declares all it imports of the
// module) or, where it declares nothing, the packages below its own folder.
// So adapter/'s folders are its layering: pure packages and downloads;
// servers and the parts beside the dispatcher; the dispatcher with what it
// drives and rukpak's first API; the facade.
var tiers = [][]string{
	{"api/v1alpha2", "api/catalogs/v1alpha1"},
	{"api/v1alpha1"},
	{"convert/...", "ocibundle/..."},
	{"adapter/pure/...", "adapter/fetch/..."},
	{"adapter/servers/...", "adapter/beside/..."},
	{"adapter/internal/...", "adapter/v1alpha1/..."},
	{"adapter"},
	{"cmd/...", "release/..."},
	{"test/fakekube/...", "test/tarball/...", "test/catalogtest/..."},
	{"test/harness/..."},
	{"test/bdtest/...", "test/bench/...", "test/harness/cmd/..."},
	// The suites (test-only packages): the top, nothing imports them.
	{"test/...", "docs"},
}

// tierOf is the tier of the package dir and the entry that places it; ok is
// false when no entry holds it.
func tierOf(dir string) (tier int, entry string, ok bool) {
	best := -1
	for t, entries := range tiers {
		for _, e := range entries {
			prefix, subtree := strings.CutSuffix(e, "/...")
			held := dir == prefix || (subtree && strings.HasPrefix(dir, prefix+"/"))
			if held && len(prefix) > best {
				best, tier, entry, ok = len(prefix), t, e, true
			}
		}
	}
	return tier, entry, ok
}

// testSupport are the test side's packages that a product package's tests
// may import although they rank above it: fakes and makers of test data,
// and the harness's servers (registries, git) for the fetchers' tests.
var testSupport = map[string]bool{
	"test/fakekube":    true,
	"test/tarball":     true,
	"test/catalogtest": true,
	"test/harness":     true,
}

func TestLayering(t *testing.T) {
	dirs := packagesUnder(t, ".")
	// Every doc.go's declarations, for tests that import a package of
	// their own tier: allowed where that package does not reach theirs.
	// Each is read once; a package under adapter/ without one is an error.
	graph := map[string][]string{}
	for _, dir := range dirs {
		if dir != "adapter" && !strings.HasPrefix(dir, "adapter/") {
			continue
		}
		declared, err := mayImport(filepath.Join("..", dir, "doc.go"))
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		if declared == nil {
			declared = []string{}
		}
		graph[dir] = declared
	}
	for _, dir := range dirs {
		pkg, err := build.ImportDir(filepath.Join("..", dir), 0)
		if err != nil {
			t.Fatalf("read %s: %v", dir, err)
		}
		if _, _, ok := tierOf(dir); !ok {
			t.Errorf("package %s is in no folder of tiers: place it in the folder of its tier (or add the folder to tiers)", dir)
			continue
		}
		tests := append(append([]string(nil), pkg.TestImports...), pkg.XTestImports...)
		// nil where no doc.go declares (outside adapter/, or unreadable:
		// said above).
		declared := graph[dir]
		for _, problem := range importProblems(dir, pkg.Imports, tests, declared, graph) {
			t.Error(problem)
		}
	}
}

// declaration starts the line of a package's doc.go that lists what of
// the module it may import (every package under adapter/ has one).
const declaration = "May import (this module):"

// mayImport reads the packages of the module that the doc.go at path says
// its package may import: the comma-separated list after declaration, up to
// the full stop, over as many comment lines as it takes ("nothing": none).
func mayImport(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := strings.ReplaceAll(string(data), "\n// ", " ")
	_, rest, ok := strings.Cut(text, "// "+declaration)
	if !ok {
		return nil, fmt.Errorf("doc.go has no %q line", declaration)
	}
	list, _, ok := strings.Cut(rest, ".\n")
	if !ok {
		return nil, fmt.Errorf("doc.go's %q list does not end with a full stop", declaration)
	}
	var out []string
	for _, item := range strings.Split(list, ",") {
		if item = strings.TrimSpace(item); item != "nothing" {
			out = append(out, item)
		}
	}
	return out, nil
}

// importProblems are the rules broken by the package dir, which imports
// imports and whose tests import tests, where declared is the list of its
// doc.go (nil: it has none): a declared package that is not in a tier or
// sits in a higher one; an import of no tier, of a higher one, or of its
// own tier that it neither declares nor holds below its folder; and, when
// it declares, any import of the module it does not declare. A test may
// also import its own package, the test support packages, and a package of
// its own tier that does not reach dir through the declarations in graph.
func importProblems(dir string, imports, tests, declared []string, graph map[string][]string) []string {
	var out []string
	tier, entry, _ := tierOf(dir)
	for _, d := range declared {
		switch to, _, ok := tierOf(d); {
		case !ok:
			out = append(out, fmt.Sprintf("%s/doc.go may import %s, which is in no tier", dir, d))
		case to > tier:
			out = append(out, fmt.Sprintf("%s/doc.go may import %s, of a higher tier (%d above %d): a lower package must not import a higher one", dir, d, to, tier))
		}
	}
	check := func(imp string, test bool) {
		rel, ok := strings.CutPrefix(imp, module)
		if !ok || (test && (rel == dir || testSupport[rel])) {
			return
		}
		what := "imports"
		if test {
			what = "has a test that imports"
		}
		to, toEntry, known := tierOf(rel)
		below := strings.HasPrefix(rel, dir+"/")
		switch {
		case !test && declared != nil && !slices.Contains(declared, rel):
			out = append(out, fmt.Sprintf("%s imports %s, which its doc.go does not declare (%s): a new import is declared on purpose", dir, rel, declaration))
		case !known:
			out = append(out, fmt.Sprintf("%s %s %s, which is in no tier", dir, what, rel))
		case to > tier:
			out = append(out, fmt.Sprintf("%s (tier %d, %s) %s %s (tier %d, %s): a lower package must not import a higher one", dir, tier, entry, what, rel, to, toEntry))
		case to == tier && test && graph[rel] != nil && !reaches(graph, rel, dir):
			// A test may use a peer that does not depend on its package.
		case to == tier && !below && !slices.Contains(declared, rel):
			out = append(out, fmt.Sprintf("%s %s %s of its own tier (%d), which it neither declares nor holds below its folder: peers never import each other", dir, what, rel, tier))
		}
	}
	for _, d := range declared {
		if !slices.Contains(imports, module+d) {
			out = append(out, fmt.Sprintf("%s/doc.go may import %s, which it does not import: a declaration says what the package uses", dir, d))
		}
	}
	for _, imp := range imports {
		check(imp, false)
	}
	for _, imp := range tests {
		check(imp, true)
	}
	return out
}

// reaches says whether from declares to, directly or through what it
// declares.
func reaches(graph map[string][]string, from, to string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(p string) bool {
		if p == to {
			return true
		}
		if seen[p] {
			return false
		}
		seen[p] = true
		return slices.ContainsFunc(graph[p], walk)
	}
	return walk(from)
}

// TestImportProblems shows the check fails where it must: a climb, an
// import of a package in no tier, a peer, an import its doc.go does not
// declare, a declaration it does not use, a declared climb and a climb made
// by a test only; and passes a suite's imports of the test side and the
// product, and a
// test's import of its own package, of a fake and of what its package does
// not declare, and a package's import of one below its folder.
func TestImportProblems(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		dir                      string
		imports, tests, declared []string
		want                     string
	}{
		{"a climb", "adapter/pure/status", []string{module + "adapter/internal/kube"}, nil, nil, "a lower package must not import a higher one"},
		{"no tier", "adapter/pure/status", []string{module + "adapter/nowhere"}, nil, nil, "which is in no tier"},
		{"peers", "adapter/internal/appmode", []string{module + "adapter/internal/servemode"}, nil, []string{}, "which its doc.go does not declare"},
		{"peers without doc.go", "test/bdtest", []string{module + "test/bench/scale"}, nil, nil, "peers never import each other"},
		{"undeclared", "adapter/internal/kube", []string{module + "adapter/pure/status", module + "adapter/pure/translate"}, nil,
			[]string{"adapter/pure/status"}, "imports adapter/pure/translate, which its doc.go does not declare"},
		{"a declared climb", "adapter/pure/status", []string{module + "adapter/internal/kube"}, nil, []string{"adapter/internal/kube"}, "doc.go may import adapter/internal/kube, of a higher tier"},
		{"a test's climb", "adapter/pure/translate", nil, []string{module + "adapter/internal/controller"}, nil, "has a test that imports adapter/internal/controller (tier 5"},
		{"a test's own package and a fake", "adapter/internal/kube", []string{"fmt", module + "adapter/pure/status"},
			[]string{module + "adapter/internal/kube", module + "test/fakekube", module + "adapter/pure/translate"}, []string{"adapter/pure/status"}, ""},
		{"a package below its folder", "convert", []string{module + "convert/certs"}, nil, nil, ""},
		{"an unused declaration", "adapter/internal/kube", []string{module + "adapter/pure/status"}, nil, []string{"adapter/pure/status", "adapter/pure/translate"},
			"doc.go may import adapter/pure/translate, which it does not import"},
		{"a suite's climb is the top's", "test/packaging", nil, []string{module + "test/bdtest", module + "adapter/pure/catalog"}, nil, ""},
		{"a test's peer that does not reach its package", "adapter/internal/controller", nil, []string{module + "adapter/v1alpha1/deployments"}, []string{}, ""},
		{"a test's peer that reaches its package", "adapter/internal/kube", nil, []string{module + "adapter/v1alpha1/deployments"}, []string{}, "peers never import each other"},
	} {
		graph := map[string][]string{
			"adapter/v1alpha1/deployments": {"adapter/internal/scope"},
			"adapter/internal/scope":       {"adapter/internal/kube"},
		}
		got := importProblems(tc.dir, tc.imports, tc.tests, tc.declared, graph)
		if tc.name == "a declared climb" {
			// The climb is said twice: declared, and imported.
			if len(got) != 2 || !strings.Contains(got[0], tc.want) {
				t.Errorf("%s: %q, want the declaration and the import refused", tc.name, got)
			}
			continue
		}
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: %q, want none", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: %q, want one problem saying %q", tc.name, got, tc.want)
		}
	}
}

// packagesUnder are the directories below roots (relative to the repository
// root) holding Go files, test files alone included, leaving out testdata,
// bin, hidden directories and other modules.
func packagesUnder(t *testing.T, roots ...string) []string {
	t.Helper()
	var out []string
	for _, root := range roots {
		top := filepath.Join("..", root)
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != top {
				if d.Name() == "testdata" || d.Name() == "bin" || strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				// Another module (test/tools/*): not this module's packages.
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			// Test-only packages (the suites) are walked too: their imports
			// obey the tiers as well.
			if d.IsDir() || !strings.HasSuffix(p, ".go") {
				return nil
			}
			rel, err := filepath.Rel("..", filepath.Dir(p))
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if rel == "." {
				return fmt.Errorf("a Go file at the repository root: %s", p)
			}
			if !slices.Contains(out, rel) {
				out = append(out, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
