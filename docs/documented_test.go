package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
)

// TestEveryConditionDocumented: every condition type and reason a
// BundleDeployment can carry (api/v1alpha2/conditions.go) has a row of
// docs/bundledeployments.md's table, which the README names as the list
// of every condition, and every row of that table names a type and a
// reason that exist.
func TestEveryConditionDocumented(t *testing.T) {
	checkConditionTable(t, "bundledeployments.md", "", filepath.Join("..", "api", "v1alpha2", "conditions.go"))
}

// TestEveryInstallConditionDocumented: the same for an OperatorInstall's
// conditions and docs/catalogs.md's table of them.
func TestEveryInstallConditionDocumented(t *testing.T) {
	checkConditionTable(t, "catalogs.md", "## What a Package installs: an OperatorInstall",
		filepath.Join("..", "api", "catalogs", "v1alpha1", "operatorinstall_types.go"))
}

// checkConditionTable checks the condition rows of page (of its section
// under heading; "" the whole page) against the Type and Reason constants
// of goFile, both ways.
func checkConditionTable(t *testing.T, page, heading, goFile string) {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	in := heading == ""
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case heading != "" && line == heading:
			in = true
		case heading != "" && in && strings.HasPrefix(line, "## "):
			in = false
		case in && strings.HasPrefix(line, "| "):
			rows = append(rows, line)
		}
	}
	if len(rows) == 0 {
		t.Fatalf("docs/%s has no table under %q", page, heading)
	}
	types, reasons := conditionNames(t, goFile)
	if len(types) == 0 || len(reasons) == 0 {
		t.Fatalf("%s names no condition type or reason", goFile)
	}
	for _, typ := range types {
		if !hasRow(rows, "| "+typ+" |") {
			t.Errorf("condition type %s has no row in docs/%s", typ, page)
		}
	}
	for _, reason := range reasons {
		if !hasRow(rows, "`"+reason+"`") {
			t.Errorf("reason %s has no row in docs/%s", reason, page)
		}
	}
	row := regexp.MustCompile("^\\| ([A-Z][A-Za-z]+) \\| `([A-Z][A-Za-z]+)`")
	checked := 0
	for _, r := range rows {
		m := row.FindStringSubmatch(r)
		if m == nil {
			continue
		}
		checked++
		if !slices.Contains(types, m[1]) {
			t.Errorf("docs/%s has a row for condition type %s, which %s does not define", page, m[1], goFile)
		}
		if !slices.Contains(reasons, m[2]) {
			t.Errorf("docs/%s has a row for reason %s, which %s does not define", page, m[2], goFile)
		}
	}
	if checked == 0 {
		t.Errorf("docs/%s has no condition row (| Type | `Reason` | ...): the pattern no longer matches the table", page)
	}
}

func hasRow(rows []string, s string) bool {
	for _, r := range rows {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}

// conditionNames are the values of the Type* and Reason* constants of
// the Go file at path.
func conditionNames(t *testing.T, path string) (types, reasons []string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			for i, name := range v.Names {
				if i >= len(v.Values) {
					continue
				}
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				value, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case strings.HasPrefix(name.Name, "Type"):
					types = append(types, value)
				case strings.HasPrefix(name.Name, "Reason"):
					reasons = append(reasons, value)
				}
			}
		}
	}
	return types, reasons
}

// TestEveryMetricDocumented: every metric the adapter registers (a
// rukpak_kapp_ name in its Go source) is named in docs/observability.md,
// and every metric the page names is registered.
func TestEveryMetricDocumented(t *testing.T) {
	data, err := os.ReadFile("observability.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	named := regexp.MustCompile(`Name: +"(rukpak_kapp_[a-z_]+)"`)
	found := 0
	registered := map[string]bool{}
	err = filepath.WalkDir(filepath.Join("..", "adapter"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range named.FindAllStringSubmatch(string(src), -1) {
			found++
			registered[m[1]] = true
			if !strings.Contains(doc, "`"+m[1]) {
				t.Errorf("metric %s (%s) is not named in docs/observability.md", m[1], path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("no metric found in the adapter's source")
	}
	for _, m := range regexp.MustCompile("`(rukpak_kapp_[a-z_]+)").FindAllStringSubmatch(doc, -1) {
		if !registered[m[1]] {
			t.Errorf("docs/observability.md names metric %s, which the adapter does not register", m[1])
		}
	}
}

// TestEveryPackageValueDocumented: docs/catalogs.md's Values table lists
// exactly the values a catalog Package accepts.
func TestEveryPackageValueDocumented(t *testing.T) {
	data, err := os.ReadFile("catalogs.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "\n### Values\n")
	if !ok {
		t.Fatal("docs/catalogs.md has no Values section")
	}
	row := regexp.MustCompile("^\\| `([A-Za-z]+)` \\|")
	documented := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		if m := row.FindStringSubmatch(line); m != nil {
			documented[m[1]] = true
		}
	}
	for _, name := range catalog.ValueNames() {
		if !documented[name] {
			t.Errorf("value %s of the catalog Packages has no row in docs/catalogs.md's Values table", name)
		}
		delete(documented, name)
	}
	for name := range documented {
		t.Errorf("docs/catalogs.md's Values table lists %s, which no catalog Package accepts", name)
	}
}

// TestNoWorkingNotes: a page says what the project does, not who worked on
// it when or what it did before: no sessions, submissions or authors, and
// no history of fixes (CHANGELOG.md says what changed; a measurement
// names its commit).
func TestNoWorkingNotes(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "README.md"), filepath.Join("..", "SECURITY.md"))
	notes := regexp.MustCompile(`(?i)\b(this session|sessions?'s|next submission|the author'?s?|fixed by|fixed in|(before|after) the fix(es)?|the fixed (adapter|code|spec)|was fixed|were fixed|reverted( since)?|since reverted|before this( work| change| fix| reader)?|used to|as fixed)\b`)
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := notes.FindString(line); m != "" {
				t.Errorf("%s:%d speaks of %q: say what the project does, with its commit and date where it is a measurement", page, i+1, m)
			}
		}
	}
}
