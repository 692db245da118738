package cmd

import (
	"strings"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/cmd/rukpak-kapp/client"
)

// A report prints as text, JSON or YAML with the same fields.
func TestPrintChecks_Formats(t *testing.T) {
	results := []client.CheckResult{{Name: "one", Status: client.CheckOK, Message: "fine"}, {Name: "two", Status: client.CheckFail, Message: "broken", Fix: "mend it"}}
	for format, want := range map[string]string{
		"text": "fail  two                    broken\n      fix: mend it",
		"json": `"fix": "mend it"`,
		"yaml": "fix: mend it",
	} {
		var out strings.Builder
		if err := printChecks(&out, results, format); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s:\n%s\nlacks %q", format, out.String(), want)
		}
	}
}
