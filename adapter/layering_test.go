package adapter_test

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/rukpak-kapp/rukpak-kapp/"

// architecture is the page whose tiers table ranks the module's packages.
// The ranks are kept there and only there: the test reads them from the
// table a reader sees, so the picture and the check can never disagree.
const architecture = "../docs/architecture.md"

// tiers are the folders of the tiers table of docs/architecture.md, each
// with its rank. "dir/..." holds a folder and everything below it, a plain
// path only that package; a package belongs to the longest entry that holds
// it, and one that none holds fails the test, so a new package is placed
// (and drawn) on purpose. A package may import any package of a lower tier;
// within its own tier only what its doc.go declares (every package under
// adapter/ declares all it imports of the module) or, where it declares
// nothing, the packages below its own folder. So adapter/'s layering, from
// the bottom: pure packages and downloads; servers and the controllers
// beside the dispatcher; the dispatcher with what it drives and rukpak's
// first API; the facade. test/tools/* and test/bench/convert are modules of their own
// and are not walked.
type tiers []placement

// placement is one folder entry of the table: the path, whether it holds
// the subtree below it, the rank of its row, and whether the row is test
// support (its owns text begins "test support:"): packages a product
// package's tests may import although they rank above it.
type placement struct {
	path    string
	subtree bool
	tier    int
	support bool
}

func (p placement) String() string {
	if p.subtree {
		return p.path + "/..."
	}
	return p.path
}

// of is the tier of the package dir and the entry that places it; ok is
// false when no entry holds it.
func (ts tiers) of(dir string) (tier int, entry string, ok bool) {
	p, ok := ts.placing(dir)
	return p.tier, p.String(), ok
}

// supports says whether the entry that places dir is test support.
func (ts tiers) supports(dir string) bool {
	p, ok := ts.placing(dir)
	return ok && p.support
}

// placing is the longest entry that holds dir.
func (ts tiers) placing(dir string) (placement, bool) {
	var best placement
	ok := false
	for _, p := range ts {
		held := dir == p.path || (p.subtree && strings.HasPrefix(dir, p.path+"/"))
		if held && (!ok || len(p.path) > len(best.path)) {
			best, ok = p, true
		}
	}
	return best, ok
}

// parseTiers reads the tiers table of a Markdown page: the fenced block
// whose first line starts "tier  folder / package". Its columns are found
// by that header: a row that starts a tier has the tier's number in the
// tier column, and the numbers count down by one to 0 at the bottom (the
// table is drawn from the top, as the imports point down); a row with an
// empty tier column belongs to the tier above it. The folder cell begins
// at the folder column and ends at the first two spaces (a long brace list
// may run into the owns column, as long as two spaces follow it); it holds
// comma-separated entries, each a path, a "path/..." subtree or a brace
// list ("adapter/{status,translate}"). A line blank in the folder
// column carries on the owns or memory text of the row above. A row whose
// owns text begins "test support:" places test support.
func parseTiers(markdown string) (tiers, error) {
	var table []string
	lines := strings.Split(markdown, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		end := i + 1
		for end < len(lines) && !strings.HasPrefix(lines[end], "```") {
			end++
		}
		if end > i+1 && strings.HasPrefix(lines[i+1], "tier") && strings.Contains(lines[i+1], "folder / package") {
			if table != nil {
				return nil, errors.New("two tiers tables")
			}
			table = lines[i+1 : end]
		}
		i = end
	}
	if table == nil {
		return nil, errors.New(`no tiers table (a fenced block starting "tier  folder / package")`)
	}
	column := strings.Index(table[0], "folder")
	var out tiers
	tier, seen := -1, map[string]bool{}
	for _, line := range table[1:] {
		label := strings.TrimSpace(line[:min(column, len(line))])
		cell := ""
		if len(line) > column && line[column] != ' ' {
			if line[column-1] != ' ' {
				return nil, fmt.Errorf("%q: the tier runs into the folder column", line)
			}
			cell, _, _ = strings.Cut(line[column:], "  ")
		}
		support := strings.HasPrefix(strings.TrimSpace(line[min(column+len(cell), len(line)):]), "test support:")
		if label != "" {
			n, err := strconv.Atoi(label)
			switch {
			case err != nil:
				return nil, fmt.Errorf("%q: the tier %q is not a number", line, label)
			case tier >= 0 && n != tier-1:
				return nil, fmt.Errorf("%q: tier %d below tier %d: the tiers count down by one", line, n, tier)
			case cell == "":
				return nil, fmt.Errorf("%q: a tier with no folder", line)
			}
			tier = n
		}
		if cell == "" {
			continue
		}
		if tier < 0 {
			return nil, fmt.Errorf("%q: a folder before the first tier", line)
		}
		for _, item := range strings.Split(cell, ", ") {
			paths, err := expandBraces(item)
			if err != nil {
				return nil, fmt.Errorf("%q: %v", line, err)
			}
			for _, p := range paths {
				path, subtree := strings.CutSuffix(p, "/...")
				if path == "" || strings.ContainsAny(path, " ,{}") || strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") {
					return nil, fmt.Errorf("%q: %q is not a folder", line, p)
				}
				if seen[path] {
					// A folder in two rows would have two ranks.
					return nil, fmt.Errorf("%q: %s is placed twice", line, path)
				}
				seen[path] = true
				out = append(out, placement{path: path, subtree: subtree, tier: tier, support: support})
			}
		}
	}
	if tier != 0 {
		return nil, fmt.Errorf("the bottom tier is %d, not 0", tier)
	}
	return out, nil
}

// expandBraces makes "a/{b,c}/d" a/b/d and a/c/d, each brace list in turn.
func expandBraces(item string) ([]string, error) {
	open := strings.Index(item, "{")
	if open < 0 {
		if strings.Contains(item, "}") {
			return nil, fmt.Errorf("%q: a } with no {", item)
		}
		return []string{item}, nil
	}
	shut := strings.Index(item[open:], "}")
	if shut < 0 {
		return nil, fmt.Errorf("%q: a { with no }", item)
	}
	shut += open
	var out []string
	for _, alt := range strings.Split(item[open+1:shut], ",") {
		if alt == "" || strings.Contains(alt, "{") {
			return nil, fmt.Errorf("%q: an empty or nested brace entry", item)
		}
		rest, err := expandBraces(item[shut+1:])
		if err != nil {
			return nil, err
		}
		for _, r := range rest {
			out = append(out, item[:open]+alt+r)
		}
	}
	return out, nil
}

// readTiers is the tiers table of docs/architecture.md.
func readTiers(t *testing.T) tiers {
	t.Helper()
	data, err := os.ReadFile(architecture)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := parseTiers(string(data))
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	return ts
}

func TestLayering(t *testing.T) {
	ts := readTiers(t)
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
	placing := map[string]bool{}
	for _, dir := range dirs {
		pkg, err := build.ImportDir(filepath.Join("..", dir), 0)
		if err != nil {
			t.Fatalf("read %s: %v", dir, err)
		}
		if _, entry, ok := ts.of(dir); ok {
			placing[entry] = true
		}
		tests := append(append([]string(nil), pkg.TestImports...), pkg.XTestImports...)
		// nil where no doc.go declares (outside adapter/, or unreadable:
		// said above).
		declared := graph[dir]
		for _, problem := range importProblems(ts, dir, pkg.Imports, tests, declared, graph) {
			t.Error(problem)
		}
	}
	// A folder of the table that places no package is a package gone or
	// misspelt: the picture would show what is not there.
	for _, p := range ts {
		if !placing[p.String()] {
			t.Errorf("docs/architecture.md's tiers table names %s, which places no package of the module", p)
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
// doc.go (nil: it has none) and ts the tiers: a package in no folder of ts;
// a declared package that is not in a tier, sits in a higher one or is not
// imported; an import of no tier, of a higher one, or of its own tier that
// it neither declares nor holds below its folder; and, when it declares,
// any import of the module it does not declare. A test may also import its
// own package, the test support packages, and a package of its own tier
// that does not reach dir through the declarations in graph.
func importProblems(ts tiers, dir string, imports, tests, declared []string, graph map[string][]string) []string {
	tier, entry, ok := ts.of(dir)
	if !ok {
		// Its imports cannot be judged without its rank.
		return []string{fmt.Sprintf("package %s is in no folder of the tiers table of docs/architecture.md: add it to the row of its tier (or its folder to the table)", dir)}
	}
	var out []string
	for _, d := range declared {
		switch to, _, ok := ts.of(d); {
		case !ok:
			out = append(out, fmt.Sprintf("%s/doc.go may import %s, which is in no tier", dir, d))
		case to > tier:
			out = append(out, fmt.Sprintf("%s/doc.go may import %s, of a higher tier (%d above %d): a lower package must not import a higher one", dir, d, to, tier))
		}
	}
	check := func(imp string, test bool) {
		rel, ok := strings.CutPrefix(imp, module)
		if !ok || (test && (rel == dir || ts.supports(rel))) {
			return
		}
		what := "imports"
		if test {
			what = "has a test that imports"
		}
		to, toEntry, known := ts.of(rel)
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

// synthetic is a tiers table for the tests below, in the shape of
// docs/architecture.md's: plain paths, subtrees, a brace list that runs
// into the owns column, rows that carry on a tier, a line that carries on
// a row's text. Its ranks are its own, so the cases do not move when the
// real table does.
const synthetic = "Some prose.\n\n```\n" + `tier  folder / package            owns                       memory
5     test/...                    the suites
      docs                        the docs' tests
4     test/bdtest                 the suites' helpers
      test/bench/...              benchmarks
      test/fakekube               test support: a fake
      test/harness/...            the harness
3     adapter                     the facade
2     adapter/internal/{controller,appmode,servemode,kube,scope}  the glue   some
                                  and more of its text
      adapter/v1alpha1/deployments/...   rukpak's first API
1     adapter/{status,translate}  pure packages          none
0     convert/..., ocibundle      the bottom
` + "```\n\nMore prose, and another block:\n\n```\ntier list\n```\n"

// TestParseTiers reads the synthetic table, and refuses tables that do not
// rank: every refusal fails TestLayering before any import is judged.
func TestParseTiers(t *testing.T) {
	ts, err := parseTiers(synthetic)
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		"test/e2e":                               "5 test/...",
		"docs":                                   "5 docs",
		"test/bench/scale":                       "4 test/bench/...",
		"adapter":                                "3 adapter",
		"adapter/internal/servemode":             "2 adapter/internal/servemode",
		"adapter/v1alpha1/deployments":           "2 adapter/v1alpha1/deployments/...",
		"adapter/v1alpha1/deployments/templates": "2 adapter/v1alpha1/deployments/...",
		"adapter/status":                         "1 adapter/status",
		"convert/certs":                          "0 convert/...",
		"ocibundle":                              "0 ocibundle",
		// Named by no entry: a plain path holds nothing below it, and
		// adapter/internal is only its packages.
		"ocibundle/sub":          "none",
		"adapter/internal/other": "none",
		"cmd/rukpak-kapp":        "none",
	} {
		got := "none"
		if tier, entry, ok := ts.of(dir); ok {
			got = fmt.Sprintf("%d %s", tier, entry)
		}
		if got != want {
			t.Errorf("%s: %s, want %s", dir, got, want)
		}
	}
	for dir, want := range map[string]bool{"test/fakekube": true, "test/bdtest": false, "test/harness": false, "adapter": false} {
		if got := ts.supports(dir); got != want {
			t.Errorf("%s: test support %t, want %t", dir, got, want)
		}
	}
	table := func(rows ...string) string {
		return "```\ntier  folder / package   owns\n" + strings.Join(rows, "\n") + "\n```\n"
	}
	for _, tc := range []struct{ name, markdown, want string }{
		{"no table", "```\ntier list\n```\n", "no tiers table"},
		{"two tables", table("0     a") + table("0     b"), "two tiers tables"},
		{"a gap", table("2     a", "0     b"), "tier 0 below tier 2"},
		{"upside down", table("0     a", "1     b"), "tier 1 below tier 0"},
		{"not down to 0", table("2     a", "1     b"), "the bottom tier is 1"},
		{"a word for a tier", table("top   a", "0     b"), `the tier "top" is not a number`},
		{"a tier with no folder", table("1", "0     b"), "a tier with no folder"},
		{"a folder before a tier", table("      a", "0     b"), "a folder before the first tier"},
		{"text in the folder column", table("1     a         its text", "      wrapped text", "0     b"), `"wrapped text" is not a folder`},
		{"placed twice", table("1     a/{b,c}", "0     a/b"), "a/b is placed twice"},
		{"an open brace", table("0     a/{b,c"), "a { with no }"},
		{"an empty brace entry", table("0     a/{b,}"), "an empty or nested brace entry"},
	} {
		if _, err := parseTiers(tc.markdown); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// TestImportProblems shows the check fails where it must: a package in no
// tier, a climb, an import of a package in no tier, a peer, an import its
// doc.go does not declare, a declaration it does not use, a declared climb
// and a climb made by a test only; and passes a suite's imports of the
// test side and the product, a test's import of its own package, of a
// fake and of what its package does not declare, and a package's import
// of one below its folder.
func TestImportProblems(t *testing.T) {
	ts, err := parseTiers(synthetic)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                     string
		dir                      string
		imports, tests, declared []string
		want                     string
	}{
		{"a package in no tier", "adapter/nowhere", []string{module + "adapter/status"}, nil, nil,
			"package adapter/nowhere is in no folder of the tiers table"},
		{"a climb", "adapter/status", []string{module + "adapter/internal/kube"}, nil, nil,
			"adapter/status (tier 1, adapter/status) imports adapter/internal/kube (tier 2, adapter/internal/kube): a lower package must not import a higher one"},
		{"no tier", "adapter/status", []string{module + "adapter/nowhere"}, nil, nil, "which is in no tier"},
		{"peers", "adapter/internal/appmode", []string{module + "adapter/internal/servemode"}, nil, []string{}, "which its doc.go does not declare"},
		{"peers without doc.go", "test/bdtest", []string{module + "test/bench/scale"}, nil, nil, "peers never import each other"},
		{"undeclared", "adapter/internal/kube", []string{module + "adapter/status", module + "adapter/translate"}, nil,
			[]string{"adapter/status"}, "adapter/internal/kube imports adapter/translate, which its doc.go does not declare"},
		{"a declared climb", "adapter/status", []string{module + "adapter/internal/kube"}, nil, []string{"adapter/internal/kube"}, "doc.go may import adapter/internal/kube, of a higher tier"},
		{"a test's climb", "adapter/translate", nil, []string{module + "adapter/internal/controller"}, nil,
			"adapter/translate (tier 1, adapter/translate) has a test that imports adapter/internal/controller (tier 2, adapter/internal/controller)"},
		{"a test's climb to what is not test support", "adapter/translate", nil, []string{module + "test/harness"}, nil,
			"adapter/translate (tier 1, adapter/translate) has a test that imports test/harness (tier 4, test/harness/...)"},
		{"test support is for tests", "convert/x", []string{module + "test/fakekube"}, nil, nil,
			"convert/x (tier 0, convert/...) imports test/fakekube (tier 4, test/fakekube)"},
		{"a test's own package and a fake", "adapter/internal/kube", []string{"fmt", module + "adapter/status"},
			[]string{module + "adapter/internal/kube", module + "test/fakekube", module + "adapter/translate"}, []string{"adapter/status"}, ""},
		{"a package below its folder", "convert", []string{module + "convert/certs"}, nil, nil, ""},
		{"an unused declaration", "adapter/internal/kube", []string{module + "adapter/status"}, nil, []string{"adapter/status", "adapter/translate"},
			"adapter/internal/kube/doc.go may import adapter/translate, which it does not import"},
		{"a suite's climb is the top's", "test/packaging", nil, []string{module + "test/bdtest", module + "adapter/status"}, nil, ""},
		{"a test's peer that does not reach its package", "adapter/internal/controller", nil, []string{module + "adapter/v1alpha1/deployments"}, []string{}, ""},
		{"a test's peer that reaches its package", "adapter/internal/kube", nil, []string{module + "adapter/v1alpha1/deployments"}, []string{}, "peers never import each other"},
	} {
		graph := map[string][]string{
			"adapter/v1alpha1/deployments": {"adapter/internal/scope"},
			"adapter/internal/scope":       {"adapter/internal/kube"},
		}
		got := importProblems(ts, tc.dir, tc.imports, tc.tests, tc.declared, graph)
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
