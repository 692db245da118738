package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// Each command that prints objects prints YAML, or with -o json one v1
// List of them all, the same objects; the images lock prints as JSON too.
func TestObjectOutput_JSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bd := filepath.Join(dir, "bd.yaml")
	if err := os.WriteFile(bd, []byte(v1alpha1Example), 0o644); err != nil {
		t.Fatal(err)
	}
	const bundle = "registry.invalid/demo-bundle@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	catalog := catalogDir(t, demoCatalog(bundle))
	for _, tc := range []struct {
		args  []string
		kinds []string
	}{
		{[]string{"render", "-f", bd}, []string{"Bundle", "App"}},
		{[]string{"convert", "registry-v1", ownNamespaceBundle(t), "--install-namespace", "ns"}, []string{"Deployment"}},
		{[]string{"catalog", "render", "--catalog", catalog}, []string{"PackageMetadata", "Package"}},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Execute(append(tc.args, "-o", "json"), &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			var list struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Items      []struct {
					Kind string `json:"kind"`
				} `json:"items"`
			}
			if err := json.Unmarshal(out.Bytes(), &list); err != nil {
				t.Fatalf("%v: %s", err, out.String())
			}
			var kinds []string
			for _, i := range list.Items {
				kinds = append(kinds, i.Kind)
			}
			if list.APIVersion != "v1" || list.Kind != "List" || !slices.Equal(kinds, tc.kinds) {
				t.Errorf("%s %s of %v, want a v1 List of %v:\n%s", list.APIVersion, list.Kind, kinds, tc.kinds, out.String())
			}
		})
	}
	t.Run("images lock", func(t *testing.T) {
		var out, errOut bytes.Buffer
		if code := Execute([]string{"catalog", "render", "--catalog", catalog, "--images-lock", "--operator-images=false", "-o", "json"}, &out, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		var lock struct {
			Kind   string `json:"kind"`
			Images []struct {
				Image string `json:"image"`
			} `json:"images"`
		}
		if err := json.Unmarshal(out.Bytes(), &lock); err != nil || lock.Kind != "ImagesLock" || len(lock.Images) != 1 || lock.Images[0].Image != bundle {
			t.Errorf("%v: %s", err, out.String())
		}
	})
}

// convert registry-v1 prints, by default, what convert.YAML renders: its
// notes as comments, then the objects.
func TestConvertRegistryV1_YAMLIsTheConverters(t *testing.T) {
	t.Parallel()
	dir := ownNamespaceBundle(t)
	files, err := convert.ReadDir(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	want, err := convert.YAML(files, convert.Options{InstallNamespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Execute([]string{"convert", "registry-v1", dir, "--install-namespace", "ns"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if out.String() != string(want) {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// A note is a comment at the top of YAML; JSON has no comments, so there
// it goes to stderr and stdout stays one JSON value.
func TestObjectPrinter_Notes(t *testing.T) {
	t.Parallel()
	for format, want := range map[string][2]string{
		"yaml": {"# note: bd: two lines\n", ""},
		"json": {"{\n  \"apiVersion\": \"v1\",\n  \"items\": [],\n  \"kind\": \"List\"\n}\n", "note: bd: two lines\n"},
	} {
		var out, errOut bytes.Buffer
		p := &objectPrinter{out: &out, errOut: &errOut, format: format}
		if err := p.note("bd: ", "two\nlines"); err != nil {
			t.Fatal(err)
		}
		if err := p.flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want[0] || errOut.String() != want[1] {
			t.Errorf("%s: stdout %q, stderr %q; want %q, %q", format, out.String(), errOut.String(), want[0], want[1])
		}
	}
}
