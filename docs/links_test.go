package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// link is a Markdown inline link's target; code spans and fenced blocks
// are left out before it is looked for.
var (
	link    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	fence   = regexp.MustCompile("(?ms)^```.*?^```")
	span    = regexp.MustCompile("`[^`\n]*`")
	heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
)

// TestLinks checks every relative link of README.md and docs/*.md: the file
// it names exists, and the heading its #fragment names is in that file (as
// GitHub makes fragments from headings).
func TestLinks(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "README.md"), filepath.Join("..", "SECURITY.md"))
	for _, page := range pages {
		for _, problem := range brokenLinks(t, page) {
			t.Error(problem)
		}
	}
}

func brokenLinks(t *testing.T, page string) []string {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := span.ReplaceAllString(fence.ReplaceAllString(string(data), ""), "")
	var out []string
	for _, m := range link.FindAllStringSubmatch(text, -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, fragment, _ := strings.Cut(target, "#")
		path := page
		if file != "" {
			path = filepath.Join(filepath.Dir(page), file)
			if _, err := os.Stat(path); err != nil {
				out = append(out, fmt.Sprintf("%s links to %s, which does not exist", page, target))
				continue
			}
		}
		if fragment == "" || !strings.HasSuffix(path, ".md") {
			continue
		}
		if !hasAnchor(t, path, fragment) {
			out = append(out, fmt.Sprintf("%s links to %s, but %s has no heading for #%s", page, target, path, fragment))
		}
	}
	return out
}

// hasAnchor says whether a heading of the Markdown file path makes the
// fragment anchor.
func hasAnchor(t *testing.T, path, anchor string) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(string(data), ""), -1) {
		slug := slugOf(m[1])
		if n := seen[slug]; n > 0 {
			seen[slug]++
			slug = fmt.Sprintf("%s-%d", slug, n)
		} else {
			seen[slug] = 1
		}
		if slug == anchor {
			return true
		}
	}
	return false
}

// slugOf is the fragment GitHub makes of a heading: lower case, letters,
// digits, hyphens and underscores kept, spaces made hyphens, the rest
// dropped.
func slugOf(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func TestSlugOf(t *testing.T) {
	for h, want := range map[string]string{
		"Serve mode: PackageInstalls instead of Apps": "serve-mode-packageinstalls-instead-of-apps",
		"What `make run` shows":                       "what-make-run-shows",
		"registry+v1 bundles (OLM operators)":         "registryv1-bundles-olm-operators",
	} {
		if got := slugOf(h); got != want {
			t.Errorf("slugOf(%q) = %q, want %q", h, got, want)
		}
	}
}

// A link to a missing file and one to a missing heading are both found.
func TestBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "a.md")
	if err := os.WriteFile(filepath.Join(dir, "b.md"), []byte("# B\n\n## Some part\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, []byte("[ok](b.md#some-part) [gone](c.md) [no heading](b.md#other) `[code](x.md)` [self](#a)\n\n# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := brokenLinks(t, page)
	if len(got) != 2 || !strings.Contains(got[0], "c.md, which does not exist") || !strings.Contains(got[1], "no heading for #other") {
		t.Errorf("broken links %q, want c.md and b.md#other", got)
	}
}
