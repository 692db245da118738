package docs

import (
	"os"
	"strings"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/test/rbacmatrix"
)

// Markers around docs/install.md's permissions table.
const (
	permissionsStart = "<!-- the adapter's permissions: test/rbacmatrix, asked of a real kube-apiserver by test/api -->\n"
	permissionsEnd   = "<!-- end of the adapter's permissions -->"
)

// TestPermissionsTableIsTheMatrix keeps docs/install.md's table of what the
// adapter's account may do equal to the rows the API suite asks of a real
// kube-apiserver as SubjectAccessReviews: a rule widened or narrowed in
// config/rbac fails there, and its row changed here fails this until the
// page says it.
func TestPermissionsTableIsTheMatrix(t *testing.T) {
	page, err := os.ReadFile("install.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	start := strings.Index(text, permissionsStart)
	end := strings.Index(text, permissionsEnd)
	if start < 0 || end < start {
		t.Fatalf("install.md has no permissions table between %q and %q", permissionsStart, permissionsEnd)
	}
	if got, want := text[start+len(permissionsStart):end], rbacmatrix.Table(); got != want {
		t.Errorf("install.md's permissions table is not test/rbacmatrix's; the table is:\n%s", want)
	}
}
