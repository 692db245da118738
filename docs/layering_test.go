package docs_test

import (
	"bufio"
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/rukpak-kapp/rukpak-kapp/"

// layer is one row of architecture.md's map: a package, its tier, and
// whether it is test support (its text begins "test support:"), which any
// test may import whatever its tier.
type layer struct {
	tier    int
	support bool
}

// goPackage is one package of the module: its imports of the module's
// packages, apart from those only its tests make.
type goPackage struct {
	path        string
	imports     []string
	testImports []string
}

// TestLayering keeps the layering of docs/architecture.md true: the map
// places every package of the module (test-only packages included), names
// no folder that holds none, and every import, a test's too, goes to a
// lower tier, never to the importer's own (so the two install modes,
// side by side in one tier, never import each other); a test may also
// import its own package and the test support packages.
func TestLayering(t *testing.T) {
	layers, err := readMap("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := modulePackages("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range layeringProblems(layers, pkgs) {
		t.Error(p)
	}
}

// TestLayeringProblems shows what the check refuses.
func TestLayeringProblems(t *testing.T) {
	layers := map[string]layer{
		"cmd/x":         {tier: 3},
		"adapter/a":     {tier: 2},
		"adapter/b":     {tier: 2},
		"test/fake":     {tier: 4, support: true},
		"adapter/low":   {tier: 1},
		"adapter/empty": {tier: 1},
	}
	pkgs := []goPackage{
		{path: "cmd/x", imports: []string{"adapter/a", "adapter/low"}},
		{path: "adapter/a", imports: []string{"adapter/low"}, testImports: []string{"adapter/a", "test/fake"}},
		{path: "adapter/b", imports: []string{"adapter/a"}},
		{path: "adapter/low", imports: []string{"cmd/x"}, testImports: []string{"adapter/a"}},
		{path: "test/fake", imports: []string{"adapter/low"}},
		{path: "adapter/new"},
	}
	got := layeringProblems(layers, pkgs)
	want := []string{
		"adapter/b (tier 2) imports adapter/a (tier 2): an import goes only to a lower tier",
		"adapter/low (tier 1) imports cmd/x (tier 3): an import goes only to a lower tier",
		"adapter/low's tests (tier 1) import adapter/a (tier 2): an import goes only to a lower tier",
		"adapter/new is in no row of docs/architecture.md's map: add it to the tier it belongs to",
		"docs/architecture.md's map names adapter/empty, which holds no Go package",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// layeringProblems says what breaks the layering, sorted.
func layeringProblems(layers map[string]layer, pkgs []goPackage) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[p.path] = true
		l, ok := layers[p.path]
		if !ok {
			out = append(out, p.path+" is in no row of docs/architecture.md's map: add it to the tier it belongs to")
			continue
		}
		for _, q := range p.imports {
			if ql, ok := layers[q]; ok && ql.tier >= l.tier {
				out = append(out, fmt.Sprintf("%s (tier %d) imports %s (tier %d): an import goes only to a lower tier", p.path, l.tier, q, ql.tier))
			}
		}
		for _, q := range p.testImports {
			if ql, ok := layers[q]; ok && q != p.path && !ql.support && ql.tier >= l.tier {
				out = append(out, fmt.Sprintf("%s's tests (tier %d) import %s (tier %d): an import goes only to a lower tier", p.path, l.tier, q, ql.tier))
			}
		}
	}
	for path := range layers {
		if !seen[path] {
			out = append(out, "docs/architecture.md's map names "+path+", which holds no Go package")
		}
	}
	sort.Strings(out)
	return out
}

// mapRow is a row of the map's block: the tier in the first six columns
// (a number starts a tier, blanks continue the one above), the package
// from the seventh, then what it owns. A line blank in the seventh column
// continues the text of the row above.
var mapRow = regexp.MustCompile(`^([0-9 ]{6})([a-z][a-z0-9./-]*)(?:\s+(.*))?$`)

// readMap reads the map: the fenced block of page that begins with the
// line "tier  package ...".
func readMap(page string) (map[string]layer, error) {
	f, err := os.Open(page)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	layers := map[string]layer{}
	in, tier := false, -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in:
			in = strings.HasPrefix(line, "tier  package")
		case strings.HasPrefix(line, "```"):
			if len(layers) == 0 {
				return nil, errors.New(page + "'s map has no rows")
			}
			return layers, nil
		default:
			m := mapRow.FindStringSubmatch(line)
			if m == nil {
				if len(line) > 6 && strings.TrimSpace(line[:7]) == "" {
					continue
				}
				return nil, fmt.Errorf("%s's map: a row is a tier (or blanks) in the first six columns and a package from the seventh: %q", page, line)
			}
			if n := strings.TrimSpace(m[1]); n != "" {
				if tier, err = strconv.Atoi(n); err != nil {
					return nil, fmt.Errorf("%s's map: tier %q: %w", page, n, err)
				}
			}
			if tier < 0 {
				return nil, fmt.Errorf("%s's map: its first row starts no tier: %q", page, line)
			}
			if _, dup := layers[m[2]]; dup {
				return nil, fmt.Errorf("%s's map names %s twice", page, m[2])
			}
			layers[m[2]] = layer{tier: tier, support: strings.HasPrefix(m[3], "test support:")}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New(page + ` has no map: a fenced block whose first line begins "tier  package"`)
}

// modulePackages reads the imports of every package under root, the
// module's root, with the standard library's go/build; a folder with a
// go.mod of its own is another module, and testdata holds no packages.
func modulePackages(root string) ([]goPackage, error) {
	var out []goPackage
	err := filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if dir != root {
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		bp, err := build.ImportDir(dir, 0)
		var none *build.NoGoError
		if errors.As(err, &none) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the package in %s: %w", dir, err)
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return err
		}
		out = append(out, goPackage{
			path:        filepath.ToSlash(rel),
			imports:     ofModule(bp.Imports),
			testImports: ofModule(append(slices.Clone(bp.TestImports), bp.XTestImports...)),
		})
		return nil
	})
	return out, err
}

func ofModule(imports []string) []string {
	var out []string
	for _, i := range imports {
		if rel, ok := strings.CutPrefix(i, module); ok {
			out = append(out, rel)
		}
	}
	return out
}

// TestBundleDeploymentReconcilerKnowsNoCatalog keeps the BundleDeployment
// reconciler to BundleDeployments (unpack, translate, App, status):
// nothing it imports, however indirectly (its tests apart), is of a
// catalog: a catalog install is the OperatorInstall controller's, which
// writes ordinary BundleDeployments.
func TestBundleDeploymentReconcilerKnowsNoCatalog(t *testing.T) {
	pkgs, err := modulePackages("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range catalogImports(pkgs, "adapter/controllers/bundledeployment", catalogPackages) {
		t.Error(p)
	}
}

// catalogPackages are what a catalog install is made of.
var catalogPackages = []string{"adapter/catalog", "adapter/packagingapi", "adapter/controllers/operatorinstall", "adapter/controllers/operatorcatalog", "api/catalogs"}

// catalogImports says which of forbidden (a package or what is below it)
// from reaches through its imports, and by which chain.
func catalogImports(pkgs []goPackage, from string, forbidden []string) []string {
	byPath := map[string]goPackage{}
	for _, p := range pkgs {
		byPath[p.path] = p
	}
	var out []string
	seen := map[string]bool{}
	var walk func(path string, chain []string)
	walk = func(path string, chain []string) {
		if seen[path] {
			return
		}
		seen[path] = true
		for _, f := range forbidden {
			if path == f || strings.HasPrefix(path, f+"/") {
				out = append(out, fmt.Sprintf("%s reaches %s: %s", from, path, strings.Join(chain, " → ")))
				return
			}
		}
		for _, imp := range byPath[path].imports {
			walk(imp, append(slices.Clone(chain), imp))
		}
	}
	walk(from, []string{from})
	return out
}

// TestCatalogImportsProblems shows what the check refuses.
func TestCatalogImportsProblems(t *testing.T) {
	pkgs := []goPackage{{path: "a", imports: []string{"b"}}, {path: "b", imports: []string{"adapter/catalog"}}, {path: "adapter/catalog"}}
	got := catalogImports(pkgs, "a", catalogPackages)
	if len(got) != 1 || got[0] != "a reaches adapter/catalog: a → b → adapter/catalog" {
		t.Errorf("got %q", got)
	}
	if got := catalogImports(pkgs[2:], "adapter/catalog", []string{"api/catalogs"}); len(got) != 0 {
		t.Errorf("a package that reaches none: %q", got)
	}
}
