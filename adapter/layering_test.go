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

// layers ranks every package of the module (the adapter, the pure packages,
// the binaries and the test side; test/tools/* are modules of their own and
// are not walked): a package may import only
// packages of a lower rank, so no call climbs from a lower package into a
// higher one, and packages of one rank (the two install modes) never import
// each other. A package missing here fails the test: a new package is given
// its place on purpose.
var layers = map[string]int{
	// The test side: nothing of the product imports it.
	"test/harness/cmd/podsandbox":      15,
	"test/harness/cmd/privatemounts":   15,
	"test/harness/cmd/rukpak-kapp-dev": 15,
	"test/bdtest":                      14,
	"test/bench/scale":                 14,
	"test/harness":                     13,
	"test/harness/podspec":             12,
	"test/fakekube":                    12,
	"test/tarball":                     12,
	// The binaries: the CLI and controller, and the release builder.
	"cmd/rukpak-kapp":              11,
	"release":                      11,
	"adapter":                      10, // the facade: manager and forwarded names
	"adapter/internal/controller":  9,  // the dispatcher
	"adapter/internal/appmode":     8,  // the App mode
	"adapter/internal/servemode":   8,  // the serve mode
	"adapter/internal/offline":     7,  // rendering without a cluster, and the take-over's input
	"adapter/v1alpha1/bundles":     7,  // Bundles on their own; what contentURLs serve
	"adapter/internal/store":       6,  // what the adapter fetches itself
	"adapter/internal/kube":        5,  // the adapter's own reads and writes
	"adapter/v1alpha1/deployments": 6,  // rukpak's first API, behind the Bundles seam
	"adapter/internal/scope":       4,  // one reconcile's facts; error classes
	"adapter/internal/memo":        0,  // the keyed memory every memory uses
	// Parts that run beside the reconciler, wired in the facade's manager.
	"adapter/crdsafety": 3,
	"adapter/kappapi":   3,
	"adapter/chartcrds": 3,
	"adapter/versions":  2,
	"adapter/webhook":   1,
	// contentURLs: paths, the tarballs on disk, the HTTPS handler.
	"adapter/contenturl": 2,
	// The pure packages.
	"adapter/takeover":                       3,
	"adapter/packaging":                      3,
	"adapter/translate":                      2,
	"adapter/bundlefiles":                    1,
	"adapter/status":                         1,
	"adapter/content":                        1,
	"adapter/fetch":                          1,
	"adapter/fetch/unpack":                   0,
	"adapter/fieldowner":                     0,
	"adapter/drift":                          2,
	"adapter/v1alpha1/deployments/templates": 1,
	"adapter/v1alpha1/bundles/plan":          2,
	"convert":                                0,
	"ocibundle":                              0,
	"convert/certs":                          -1,
	"api/v1alpha1":                           -2,
	"api/v1alpha2":                           -3,
}

// testSupport are the test side's packages that a product package's tests
// may import although they rank above it: fakes and makers of test data,
// and the harness's servers (registries, git) for the fetchers' tests.
var testSupport = map[string]bool{
	"test/fakekube": true,
	"test/tarball":  true,
	"test/harness":  true,
}

func TestLayering(t *testing.T) {
	for dir, rank := range packagesUnder(t, ".") {
		pkg, err := build.ImportDir(filepath.Join("..", dir), 0)
		if err != nil {
			t.Fatalf("read %s: %v", dir, err)
		}
		if _, ok := layers[dir]; !ok {
			t.Errorf("package %s has no layer: add it to layers", dir)
			continue
		}
		tests := append(append([]string(nil), pkg.TestImports...), pkg.XTestImports...)
		var declared []string
		if dir == "adapter" || strings.HasPrefix(dir, "adapter/") {
			if declared, err = mayImport(filepath.Join("..", dir, "doc.go")); err != nil {
				t.Errorf("%s: %v", dir, err)
				continue
			}
			for _, d := range declared {
				if _, ok := layers[d]; !ok {
					t.Errorf("%s/doc.go may import %s, which is no package of the module", dir, d)
				}
			}
		}
		for _, problem := range importProblems(dir, rank, pkg.Imports, tests, declared) {
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

// importProblems are the rules broken by the package dir of rank, which
// imports imports and whose tests import tests: an import of no layer, of
// the same layer (peers never import each other) or of a higher one, or
// (when declared is not nil, the list of its doc.go) one its doc.go does not
// declare; a test may also import its own package and the test support
// packages.
func importProblems(dir string, rank int, imports, tests, declared []string) []string {
	var out []string
	check := func(imp string, test bool) {
		rel, ok := strings.CutPrefix(imp, module)
		if !ok || (test && (rel == dir || testSupport[rel])) {
			return
		}
		what := "imports"
		if test {
			what = "has a test that imports"
		}
		to, known := layers[rel]
		switch {
		case !test && declared != nil && !slices.Contains(declared, rel):
			out = append(out, fmt.Sprintf("%s imports %s, which its doc.go does not declare (%s): a new import is declared on purpose", dir, rel, declaration))
		case !known:
			out = append(out, fmt.Sprintf("%s %s %s, which has no layer", dir, what, rel))
		case to == rank:
			out = append(out, fmt.Sprintf("%s %s %s of the same layer (%d): peers never import each other", dir, what, rel, rank))
		case to > rank:
			out = append(out, fmt.Sprintf("%s (layer %d) %s %s (layer %d): a lower package must not import a higher one", dir, rank, what, rel, to))
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

// TestImportProblems shows the check fails where it must: a climb, an
// import of a package given no layer, a peer, an import its doc.go does not
// declare, and a climb made by a test only; and passes a test's import of
// its own package, of a fake and of what its package does not declare.
func TestImportProblems(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		dir                      string
		imports, tests, declared []string
		want                     string
	}{
		{"a climb", "adapter/status", []string{module + "adapter/internal/kube"}, nil, nil, "a lower package must not import a higher one"},
		{"no layer", "adapter/status", []string{module + "adapter/nowhere"}, nil, nil, "which has no layer"},
		{"peers", "adapter/internal/appmode", []string{module + "adapter/internal/servemode"}, nil, nil, "peers never import each other"},
		{"undeclared", "adapter/internal/kube", []string{module + "adapter/status", module + "adapter/translate"}, nil,
			[]string{"adapter/status"}, "imports adapter/translate, which its doc.go does not declare"},
		{"a test's climb", "adapter/translate", nil, []string{module + "adapter/internal/controller"}, nil, "has a test that imports adapter/internal/controller (layer 9)"},
		{"a test's own package and a fake", "adapter/internal/kube", []string{"fmt", module + "adapter/status"},
			[]string{module + "adapter/internal/kube", module + "test/fakekube", module + "adapter/translate"}, []string{"adapter/status"}, ""},
	} {
		got := importProblems(tc.dir, layers[tc.dir], tc.imports, tc.tests, tc.declared)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: %q, want none", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: %q, want one problem saying %q", tc.name, got, tc.want)
		}
	}
}

// packagesUnder are the directories below roots (relative to the repository
// root) holding non-test Go files, with their rank (0 when unknown), leaving
// out testdata, bin, hidden directories and other modules.
func packagesUnder(t *testing.T, roots ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
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
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
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
			out[rel] = layers[rel]
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
