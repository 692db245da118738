package convert

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSuggestedInstall(t *testing.T) {
	t.Parallel()
	rukpakBundle := func(name string) map[string][]byte {
		files, err := ReadDir(os.DirFS(filepath.Join("..", "test", "testdata", "rukpak-bundles", "registry", name)))
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	withoutSuggestion := rukpakBundle("valid")
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  Suggested
	}{
		// prometheus 0.47.0 names no namespace and supports AllNamespaces.
		{name: "no suggestion: <package>-system", files: withoutSuggestion, want: Suggested{Namespace: "prometheus-system", AllNamespaces: true}},
		// update-service-operator supports only MultiNamespace.
		{name: "the CSV's suggestion", files: rukpakBundle("invalid"), want: Suggested{Namespace: "openshift-update-service"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SuggestedInstall(tc.files)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, err := SuggestedInstall(map[string][]byte{"metadata/annotations.yaml": []byte("annotations: {}\n")}); err == nil {
		t.Fatal("a bundle without manifests/ is unreadable")
	}
}
