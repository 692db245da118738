package docs_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The pages that report an upstream suite's own tests (their names are
// operator-controller's and rukpak's, not this repository's).
var upstreamReports = []string{"conformance.md", "conformance-olm.md"}

var (
	// testName is a Go test, benchmark or fuzz target named in a code span;
	// one ending in _ names every test of that prefix.
	testName = regexp.MustCompile("^(Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*$")
	// repoPath is a path of this repository named in a code span.
	repoPath = regexp.MustCompile(`^(adapter|api|cmd|config|convert|docs|examples|ocibundle|release|test|\.ci)/[A-Za-z0-9_./-]*$`)
	// makeCall is `make TARGET ...`: a code span or a line of a fenced
	// block that runs make.
	makeCall = regexp.MustCompile(`^\s*make +([a-z][a-z0-9-]*)`)
	// cliCall is a run of this repository's CLI.
	cliCall = regexp.MustCompile(`^\s*(?:bin/)?rukpak-kapp (.*)`)
	// goIdent ends a path that names a package's identifier
	// (templates.Status).
	goIdent  = regexp.MustCompile(`\.[A-Z]\w*$`)
	longFlag = regexp.MustCompile(`(?:^|\s)--([a-z][a-z0-9-]*)`)
	// flagDef is a flag defined in cmd/rukpak-kapp, with pflag or flag.
	flagDef = regexp.MustCompile(`\.(?:String|Bool|Int|Int64|Duration|StringSlice|StringArray|Float64|Uint)(?:Var)?P?\((?:&[\w.]+, )?"([a-z0-9-]+)"`)
	// target is a rule of the Makefile.
	target = regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):(?:[^=]|$)`)
)

// TestNamesExist: every test, path, make target and flag of rukpak-kapp's
// CLI that README.md and docs/*.md name exists, so a rename that leaves a
// page behind fails here.
func TestNamesExist(t *testing.T) {
	tests := goTests(t)
	targets := makeTargets(t)
	flags := cliFlags(t)
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "README.md"))
	for _, page := range pages {
		if slices.Contains(upstreamReports, page) {
			continue
		}
		for _, problem := range missingNames(t, page, tests, targets, flags) {
			t.Error(problem)
		}
	}
}

// TestMissingNames: what the check refuses and what it lets pass.
func TestMissingNames(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "page.md")
	text := "Run `make tset` and `make test`; `TestGone` fails where `TestKept` and `TestKept_` pass.\n" +
		"`adapter/nowhere` is gone, `docs/names_test.go` is here.\n" +
		"```sh\nrukpak-kapp catalog push --image x --no-such-flag\nmake fresh\n```\n"
	if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got := missingNames(t, page, map[string]bool{"TestKept": true, "TestKept_A": true}, map[string]bool{"test": true}, map[string]bool{"image": true})
	want := []string{
		"make target tset", "make target fresh", "test TestGone", "path adapter/nowhere", "flag --no-such-flag",
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("not refused: %s (got %q)", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("refused %d, want %d: %q", len(got), len(want), got)
	}
}

func missingNames(t *testing.T, page string, tests, targets, flags map[string]bool) []string {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	var out []string
	miss := func(what string) { out = append(out, fmt.Sprintf("%s names %s, which does not exist", page, what)) }
	// What a reader would run: every code span, every line of a fenced
	// block.
	var commands []string
	for _, block := range fence.FindAllString(text, -1) {
		commands = append(commands, strings.Split(block, "\n")...)
	}
	for _, s := range span.FindAllString(fence.ReplaceAllString(text, ""), -1) {
		name := strings.Trim(s, "`")
		commands = append(commands, name)
		switch {
		case testName.MatchString(name):
			if !testExists(tests, name) {
				miss("test " + name)
			}
		case repoPath.MatchString(name) && (!strings.HasPrefix(name, "cmd/") || strings.HasPrefix(name, "cmd/rukpak-kapp")):
			// Another project's cmd/ (rukpak's, kapp-controller's) is not
			// this repository's.
			path := goIdent.ReplaceAllString(strings.TrimSuffix(strings.TrimSuffix(name, "/..."), "/"), "")
			if _, err := os.Stat(filepath.Join("..", path)); err != nil {
				miss("path " + name)
			}
		}
	}
	for _, c := range commands {
		if m := makeCall.FindStringSubmatch(c); m != nil && !targets[m[1]] {
			miss("make target " + m[1])
		}
		if m := cliCall.FindStringSubmatch(c); m != nil {
			for _, f := range longFlag.FindAllStringSubmatch(m[1], -1) {
				if !flags[f[1]] {
					miss("flag --" + f[1] + " of rukpak-kapp")
				}
			}
		}
	}
	return out
}

func testExists(tests map[string]bool, name string) bool {
	if !strings.HasSuffix(name, "_") {
		return tests[name]
	}
	for t := range tests {
		if strings.HasPrefix(t, name) {
			return true
		}
	}
	return false
}

// goTests are the test, benchmark and fuzz functions of every _test.go file
// of the repository (the tool modules under test/tools included).
func goTests(t *testing.T) map[string]bool {
	t.Helper()
	fn := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)\w+)\(`)
	out := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range fn.FindAllStringSubmatch(string(data), -1) {
			out[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range target.FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = true
	}
	return out
}

// cliFlags are the long flags cmd/rukpak-kapp and the packages below it
// define, and the ones every command has (cobra's --help).
func cliFlags(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{"help": true}
	err := filepath.WalkDir(filepath.Join("..", "cmd", "rukpak-kapp"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range flagDef.FindAllStringSubmatch(string(data), -1) {
			out[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found only %d flags in cmd/rukpak-kapp: the pattern no longer matches how flags are defined", len(out))
	}
	return out
}

// issueRef is a reference to the project's issue tracker by number, which
// means nothing to a reader of the page.
var issueRef = regexp.MustCompile(`(?i)\bissues? #?\d+`)

// TestNoIssueNumbers: no page cites an issue by its number; a page says
// what the code does, not which issue brought it.
func TestNoIssueNumbers(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "README.md"))
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			if m := issueRef.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q: say what the code does instead", page, i+1, m)
			}
		}
	}
	if !issueRef.MatchString("the fix of Issue #12") || !issueRef.MatchString("issues 34 and 35") || issueRef.MatchString("no issue here") {
		t.Error("issueRef matches the wrong text")
	}
}
