package docs_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBudgetsAgree: the budgets docs/development.md gives every part of
// `make test` are .ci/budgets', which .ci/run's closing table reads.
func TestBudgetsAgree(t *testing.T) {
	ci := readBudgets(t, filepath.Join("..", ".ci", "budgets"))
	if len(ci) == 0 {
		t.Fatal(".ci/budgets names no budget")
	}
	doc := map[string]string{}
	data, err := os.ReadFile("development.md")
	if err != nil {
		t.Fatal(err)
	}
	// The table's rows: | `name` | minutes | ...
	row := regexp.MustCompile("^\\| `([a-z0-9-]+)` \\| ([0-9]+(?:\\.[0-9]+)?) \\|")
	for _, line := range strings.Split(string(data), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			doc[m[1]] = m[2]
		}
	}
	if diff := cmp.Diff(ci, doc); diff != "" {
		t.Errorf("docs/development.md's budgets differ from .ci/budgets (-.ci/budgets +development.md):\n%s", diff)
	}
}

func readBudgets(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		out[fields[0]] = fields[1]
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
